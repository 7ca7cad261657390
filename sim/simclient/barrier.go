package simclient

import (
	"slices"
	"strconv"
	"strings"

	"github.com/zabd/zabd/wire"
)

// RecipeBarrier is ZooKeeper's double barrier (the recipes page's,
// kazoo's DoubleBarrier): the recipe clients enter a round together and
// leave it together, round after round. Round k's barrier is
// /barrier/r<k>. To enter, a client watches for r<k>/ready, creates its
// ephemeral node r<k>/c<client>, and lists the round: with all the
// participants' nodes there it creates ready, otherwise it waits for ready
// to appear. To leave it lists the round: alone, it deletes its node and
// is out; the lowest node waits for the highest to go, every other deletes
// its own and waits for the lowest to go; then it lists again.
const RecipeBarrier = "barrier"

// BarrierPath holds the rounds' barriers.
const BarrierPath = "/barrier"

// BarrierRounds is how many rounds the barrier clients pass before they
// close their sessions.
const BarrierRounds = 8

// The barrier's notes carry the round in Token.
const (
	NoteEntered NoteKind = "entered" // passed the round's entry: all were there
	NoteLeaving NoteKind = "leaving" // begins to leave the round
	NoteLeft    NoteKind = "left"    // left the round: all have begun to leave
)

type barrier struct {
	client, parties int
	note            func(Note)
	round           int
	state           barrierState
	wait            string // the node whose deletion we wait for
}

type barrierState int

const (
	barrierRoot      barrierState = iota // make /barrier
	barrierRound                         // make this round's barrier
	barrierWatch                         // watch for ready
	barrierJoin                          // create our node
	barrierCount                         // list the round to count who is there
	barrierOpen                          // create ready: all are there
	barrierWaitReady                     // for ready to appear
	barrierList                          // leaving: list the round
	barrierDelete                        // leaving: delete our node
	barrierWatchGone                     // leaving: watch the node we wait on
	barrierWaitGone                      // leaving: for it to go
	barrierDone                          // every round passed
)

func newBarrier(client, parties int, note func(Note)) *barrier {
	return &barrier{client: client, parties: parties, note: note}
}

func (b *barrier) dir() string  { return BarrierPath + "/r" + strconv.Itoa(b.round) }
func (b *barrier) mine() string { return "c" + strconv.Itoa(b.client) }

func (b *barrier) next() (Op, bool) {
	switch b.state {
	case barrierRoot:
		return Op{Name: "create", Code: wire.OpCreate, Path: BarrierPath, Mode: wire.ModePersistent}, true
	case barrierRound:
		return Op{Name: "create", Code: wire.OpCreate, Path: b.dir(), Mode: wire.ModePersistent}, true
	case barrierWatch:
		return Op{Name: "exists", Code: wire.OpExists, Path: b.dir() + "/ready", Watch: true}, true
	case barrierJoin:
		return Op{Name: "create", Code: wire.OpCreate, Path: b.dir() + "/" + b.mine(), Mode: wire.ModeEphemeral}, true
	case barrierCount, barrierList:
		return Op{Name: "getChildren", Code: wire.OpGetChildren, Path: b.dir()}, true
	case barrierOpen:
		return Op{Name: "create", Code: wire.OpCreate, Path: b.dir() + "/ready", Mode: wire.ModePersistent}, true
	case barrierDelete:
		return Op{Name: "delete", Code: wire.OpDelete, Path: b.dir() + "/" + b.mine(), Version: -1}, true
	case barrierWatchGone:
		return Op{Name: "exists", Code: wire.OpExists, Path: b.dir() + "/" + b.wait, Watch: true}, true
	}
	return Op{}, false // waiting, or done
}

// participants are the round's participants' nodes, sorted by name (the
// order the leave protocol's "lowest" and "highest" refer to).
func participants(children []string) []string {
	out := slices.DeleteFunc(slices.Clone(children), func(c string) bool { return !strings.HasPrefix(c, "c") })
	slices.Sort(out)
	return out
}

func (b *barrier) learn(op Op, res Result) {
	if op.Code == wire.OpCloseSession || res.Err == wire.ErrSessionExpired {
		return
	}
	ok := res.Err == wire.ErrOK
	switch b.state {
	case barrierRoot:
		if ok || res.Err == wire.ErrNodeExists {
			b.state = barrierRound
		}
	case barrierRound:
		if ok || res.Err == wire.ErrNodeExists {
			b.state = barrierWatch
		}
	case barrierWatch:
		switch {
		case ok:
			b.state = barrierJoin // ready exists: join, then we are in
		case res.Err == wire.ErrNoNode:
			b.state = barrierJoin
		}
	case barrierJoin:
		if ok || res.Err == wire.ErrNodeExists {
			b.state = barrierCount
		}
	case barrierCount:
		if !ok {
			return
		}
		if slices.Contains(res.Children, "ready") {
			b.enter()
		} else if len(participants(res.Children)) >= b.parties {
			b.state = barrierOpen
		} else {
			b.state = barrierWaitReady
		}
	case barrierOpen:
		if ok || res.Err == wire.ErrNodeExists {
			b.enter()
		}
	case barrierList:
		if ok {
			b.leaveStep(participants(res.Children))
		}
	case barrierDelete:
		if ok || res.Err == wire.ErrNoNode {
			b.state = barrierList
			if b.wait != "" {
				b.state = barrierWatchGone
			}
		}
	case barrierWatchGone:
		switch {
		case ok:
			b.state = barrierWaitGone
		case res.Err == wire.ErrNoNode:
			b.state = barrierList // gone already
		}
	}
}

// enter: all were there; the work of the round is nothing, so leaving
// begins at once.
func (b *barrier) enter() {
	b.note(Note{Kind: NoteEntered, Token: int64(b.round)})
	b.note(Note{Kind: NoteLeaving, Token: int64(b.round)})
	b.wait, b.state = "", barrierList
}

// leaveStep is one pass of the leave protocol over the round's nodes.
func (b *barrier) leaveStep(nodes []string) {
	i := slices.Index(nodes, b.mine())
	switch {
	case len(nodes) == 0:
		b.left()
	case i < 0:
		// Ours is gone (deleted, or with an expired session): wait for
		// the lowest.
		b.wait, b.state = nodes[0], barrierWatchGone
	case len(nodes) == 1:
		b.wait, b.state = "", barrierDelete // alone: delete ours, and out
	case i == 0:
		b.wait, b.state = nodes[len(nodes)-1], barrierWatchGone // lowest: wait for the highest
	default:
		b.wait, b.state = nodes[0], barrierDelete // delete ours, then wait for the lowest
	}
}

// left: every participant has begun to leave; on to the next round.
func (b *barrier) left() {
	b.note(Note{Kind: NoteLeft, Token: int64(b.round)})
	b.round++
	b.wait, b.state = "", barrierRound
	if b.round == BarrierRounds {
		b.state = barrierDone
	}
}

func (b *barrier) notice(t wire.EventType, s wire.KeeperState, path string) {
	switch {
	case t == wire.EventNone && s == wire.StateExpired:
		// Our node went with the session. Entering, join again; leaving,
		// go on: our node is gone, as it would be once we delete it.
		if b.state <= barrierWaitReady && b.state >= barrierWatch {
			b.state = barrierWatch
		} else if b.state >= barrierList && b.state < barrierDone {
			b.state = barrierList
		}
	case t == wire.EventNodeCreated && b.state == barrierWaitReady && path == b.dir()+"/ready":
		b.enter()
	case t == wire.EventNodeDeleted && b.state == barrierWaitGone && path == b.dir()+"/"+b.wait:
		b.state = barrierList
	}
}

func (b *barrier) stop() {}

// pauses: never — a barrier client that thinks holds every other at the
// barrier (and a seed's think time may be seconds).
func (b *barrier) pauses() bool { return false }

// finished: every round passed.
func (b *barrier) finished() bool { return b.state == barrierDone }
