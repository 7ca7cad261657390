package simclient

import (
	"slices"
	"strconv"
	"strings"

	"github.com/zabd/zabd/wire"
)

// driver chooses a client's operations: the random workload, or a recipe.
type driver interface {
	// next is the next operation, or false while the driver waits for a
	// watch event.
	next() (Op, bool)
	// learn sees every operation's end, those of unknown outcome too.
	learn(op Op, res Result)
	// notice sees each watch event and session state change.
	notice(t wire.EventType, s wire.KeeperState, path string)
	// stop: the client closes its session.
	stop()
	// pauses reports whether the client thinks before the next operation
	// (Config.MaxThink): the workload before each, a recipe between holds.
	pauses() bool
	// finished reports whether the driver is done before the client's
	// operations run out (the barrier, after its rounds).
	finished() bool
}

// Recipes a client can run instead of the random workload: ZooKeeper's
// lock and leader election (the algorithms of the recipes page, as kazoo's
// Lock and Election and Curator's InterProcessMutex and LeaderLatch
// implement them).
const (
	RecipeLock     = "lock"
	RecipeElection = "election"
)

// RecipeBugs put recipe mistakes back on purpose, to show that the recipe
// checkers catch them.
type RecipeBugs struct {
	// LockNoWatch: a waiter checks that its predecessor exists without
	// leaving a watch on it, and so waits for a deletion it is never told
	// of.
	LockNoWatch bool
	// ElectionNoSequenceCheck: a candidate takes the lead as soon as its
	// node exists, without checking that its sequence number is the
	// lowest.
	ElectionNoSequenceCheck bool
}

// Note is what a recipe client believes, or did under its belief, with
// the time it came to it: the recipe checkers judge these (sim's
// recipes.go).
type Note struct {
	Client  int
	Session int64
	Kind    NoteKind
	// Token is the fencing token of the hold or term: the czxid of the
	// client's lock or election node.
	Token int64
	At    int64 // monotonic, nanoseconds
}

// NoteKind is what a Note says.
type NoteKind string

// The notes.
const (
	NoteHold    NoteKind = "hold"    // the client holds the lock (or leads), from now
	NoteRelease NoteKind = "release" // it gives the hold up, from now
	NoteLost    NoteKind = "lost"    // it learns that its session expired while it held
	NoteFenced  NoteKind = "fenced"  // the protected resource holds a later token: it did not write
)

// recipe is the lock and the election, which share their algorithm: a
// client joins with an ephemeral sequential node under root, the lowest
// sequence holds (or leads), every other watches the node just before its
// own. The holder then does its protected work: it reads the resource's
// last token and writes its own only if it is not older (fencing by the
// lock node's czxid), then releases (the lock) or, after one such write,
// steps down (the election: a term per hold, for the checkers' sake).
type recipe struct {
	kind   string
	root   string // the parent of the contenders' nodes
	client int
	bugs   RecipeBugs
	note   func(Note)

	state   recipeState
	attempt int    // the prefix of this attempt's node: c<client>a<attempt>-
	mine    string // our node's name under root, once known
	pred    string // the contender we watch, while we wait
	orphan  string // a node of ours from an earlier attempt, to delete
	token   int64  // our node's czxid, once known
	// resourceVersion is the resource's version when we read its token:
	// our write is conditional on it.
	resourceVersion int32
}

type recipeState int

const (
	recipeSetup    recipeState = iota // make root
	recipeSetupRes                    // make the resource
	recipeJoin                        // create our node
	recipeFind                        // our create's outcome is unknown: look for our node
	recipeList                        // list the contenders
	recipeWatch                       // ask whether our predecessor exists, with a watch
	recipeWaiting                     // for our predecessor's deletion
	recipeToken                       // read our node's czxid
	recipeRead                        // read the resource's token
	recipeWrite                       // write ours, if not older
	recipeRelease                     // delete our node
	recipeOrphan                      // delete a node of an earlier attempt
)

// ResourcePath is the protected resource, which holds the last token
// written to it (the contenders' nodes are under /lock or /election).
const ResourcePath = "/resource"

func newRecipe(kind string, client int, bugs RecipeBugs, note func(Note)) *recipe {
	return &recipe{kind: kind, root: "/" + kind, client: client, bugs: bugs, note: note}
}

func (r *recipe) prefix() string {
	return "c" + strconv.Itoa(r.client) + "a" + strconv.Itoa(r.attempt) + "-"
}

func (r *recipe) next() (Op, bool) {
	switch r.state {
	case recipeSetup:
		return Op{Name: "create", Code: wire.OpCreate, Path: r.root, Mode: wire.ModePersistent}, true
	case recipeSetupRes:
		return Op{Name: "create", Code: wire.OpCreate, Path: ResourcePath, Data: "0", Mode: wire.ModePersistent}, true
	case recipeJoin:
		return Op{Name: "create", Code: wire.OpCreate, Path: r.root + "/" + r.prefix(), Data: "c" + strconv.Itoa(r.client), Mode: wire.ModeEphemeralSequential}, true
	case recipeFind, recipeList:
		return Op{Name: "getChildren", Code: wire.OpGetChildren, Path: r.root}, true
	case recipeWatch:
		return Op{Name: "exists", Code: wire.OpExists, Path: r.root + "/" + r.pred, Watch: !r.bugs.LockNoWatch}, true
	case recipeToken:
		return Op{Name: "exists", Code: wire.OpExists, Path: r.root + "/" + r.mine}, true
	case recipeRead:
		return Op{Name: "getData", Code: wire.OpGetData, Path: ResourcePath}, true
	case recipeWrite:
		return Op{Name: "setData", Code: wire.OpSetData, Path: ResourcePath, Data: strconv.FormatInt(r.token, 10), Version: r.resourceVersion}, true
	case recipeRelease:
		return Op{Name: "delete", Code: wire.OpDelete, Path: r.root + "/" + r.mine, Version: -1}, true
	case recipeOrphan:
		return Op{Name: "delete", Code: wire.OpDelete, Path: r.root + "/" + r.orphan, Version: -1}, true
	}
	return Op{}, false // recipeWaiting
}

// children are the contenders' names, in sequence order (the ten digits
// ZooKeeper appends; prefixes differ per client and attempt).
func sortBySequence(children []string) []string {
	out := slices.Clone(children)
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(sequenceOf(a), sequenceOf(b)) })
	return out
}

func sequenceOf(name string) string {
	if len(name) < 10 {
		return name
	}
	return name[len(name)-10:]
}

func (r *recipe) learn(op Op, res Result) {
	if res.Err == wire.ErrSessionExpired || op.Code == wire.OpCloseSession {
		return // the Expired notice resets the recipe; the close ends it
	}
	switch r.state {
	case recipeSetup:
		if res.Err == wire.ErrOK || res.Err == wire.ErrNodeExists {
			r.state = recipeSetupRes
		}
	case recipeSetupRes:
		if res.Err == wire.ErrOK || res.Err == wire.ErrNodeExists {
			r.state = recipeJoin
		}
	case recipeJoin:
		switch {
		case res.Unknown:
			r.state = recipeFind // Curator's protected mode: our prefix finds it
		case res.Err == wire.ErrOK && strings.HasPrefix(res.Created, r.root+"/"):
			r.mine = res.Created[len(r.root)+1:]
			r.state = recipeList
		}
	case recipeFind:
		if res.Err != wire.ErrOK {
			return
		}
		for _, c := range res.Children {
			if strings.HasPrefix(c, r.prefix()) {
				r.mine, r.state = c, recipeList
				return
			}
		}
		r.state = recipeJoin // the create never happened
	case recipeList:
		if res.Err != wire.ErrOK {
			return
		}
		r.contend(res.Children)
	case recipeWatch:
		switch {
		case res.Err == wire.ErrNoNode:
			r.state = recipeList // gone already: look again
		case res.Err == wire.ErrOK && !res.Unknown:
			r.state = recipeWaiting
		}
	case recipeToken:
		switch {
		case res.Err == wire.ErrOK && res.HasStat:
			r.token = res.Stat.Czxid
			r.note(Note{Kind: NoteHold, Token: r.token})
			r.state = recipeRead
		case res.Err == wire.ErrNoNode:
			r.restart() // our node is gone: the session expired meanwhile
		}
	case recipeRead:
		if res.Err != wire.ErrOK || !res.HasStat {
			return
		}
		stored, _ := strconv.ParseInt(res.Data, 10, 64)
		r.resourceVersion = res.Stat.Version
		if stored > r.token {
			r.note(Note{Kind: NoteFenced, Token: r.token})
			r.release()
			return
		}
		r.state = recipeWrite
	case recipeWrite:
		switch {
		case res.Err == wire.ErrBadVersion:
			r.state = recipeRead // written meanwhile: read again
		case res.Err == wire.ErrOK || res.Unknown:
			r.release()
		}
	case recipeRelease:
		if res.Err == wire.ErrOK || res.Err == wire.ErrNoNode {
			r.attempt++
			r.mine, r.token, r.state = "", 0, recipeJoin
		}
	case recipeOrphan:
		if res.Err == wire.ErrOK || res.Err == wire.ErrNoNode {
			r.orphan, r.state = "", recipeList
		}
	}
}

// contend places us among the contenders: the lowest holds; the others
// watch their predecessor.
func (r *recipe) contend(children []string) {
	// A create whose reply was lost may take effect after the search that
	// did not find it (it was still on its way to the leader), leaving a
	// node of ours that we do not know as ours: every contender behind it
	// would wait for ever. Ours carry our client's prefix; any but the
	// current one goes (as Curator's protected mode finds its own).
	ours := "c" + strconv.Itoa(r.client) + "a"
	for _, c := range children {
		if c != r.mine && strings.HasPrefix(c, ours) {
			r.orphan, r.state = c, recipeOrphan
			return
		}
	}
	sorted := sortBySequence(children)
	i := slices.Index(sorted, r.mine)
	switch {
	case i < 0:
		r.restart() // our node is gone: the session expired meanwhile
	case i == 0 || (r.kind == RecipeElection && r.bugs.ElectionNoSequenceCheck):
		r.pred, r.state = "", recipeToken
	default:
		r.pred, r.state = sorted[i-1], recipeWatch
	}
}

// release gives the hold up (the note first: from the delete on, another
// may hold) and deletes our node.
func (r *recipe) release() {
	r.note(Note{Kind: NoteRelease, Token: r.token})
	r.state = recipeRelease
}

// restart begins a new attempt after our node was lost.
func (r *recipe) restart() {
	r.attempt++
	r.mine, r.token, r.pred, r.state = "", 0, "", recipeJoin
}

func (r *recipe) notice(t wire.EventType, s wire.KeeperState, path string) {
	switch {
	case t == wire.EventNone && s == wire.StateExpired:
		if r.holds() {
			r.note(Note{Kind: NoteLost, Token: r.token})
		}
		if r.state >= recipeJoin {
			r.restart()
		}
	case t == wire.EventNodeDeleted && r.state == recipeWaiting && path == r.root+"/"+r.pred:
		r.state = recipeList
	}
}

func (r *recipe) pauses() bool { return r.state == recipeJoin }

func (r *recipe) finished() bool { return false }

// stop: a holder closing its session releases (the close deletes its node).
func (r *recipe) stop() {
	if r.holds() {
		r.release()
	}
}

// holds reports whether we believe we hold (between the hold and release
// notes).
func (r *recipe) holds() bool {
	return r.token != 0 && (r.state == recipeRead || r.state == recipeWrite)
}
