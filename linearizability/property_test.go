package linearizability

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/zab/zabtest/rapidseed"
)

// refNode and refServer are a deliberately plain sequential ZooKeeper — one
// level of persistent and ephemeral nodes under /r, whole-history zxids, one
// watch table — that executes a random workload one operation at a time and
// writes what each client would have seen. It shares no code with the
// checkers' model.
type refNode struct {
	data                string
	version             int32
	czxid, mzxid, owner int64
}

type refServer struct {
	pick    chooser
	b       *builder
	zxid    int64
	nodes   map[string]*refNode
	rootCV  int32
	rootPZ  int64
	keys    int
	watches map[string][]int // path -> clients holding a data watch
	// witness is every txn the server committed, named by the request's
	// session and xid (the builder's seq).
	witness Witness
}

// committed adds the txn of client c's latest request to the witness.
func (s *refServer) committed(c int, op, errName string) {
	if errName != ErrOK {
		op = "error"
	}
	if op == OpClose {
		op = "closeSession"
	}
	s.witness = append(s.witness, WitnessTxn{Zxid: Hex64(s.zxid), Session: Hex64(session(c)), Xid: int32(s.b.seq[c]), Op: op})
}

func session(client int) int64 { return int64(client) << 8 }

func (s *refServer) stat(n *refNode) *Stat {
	return &Stat{Czxid: Hex64(n.czxid), Mzxid: Hex64(n.mzxid), Pzxid: Hex64(n.czxid), Version: n.version,
		EphemeralOwner: Hex64(n.owner), DataLength: int32(len(n.data))}
}

// fire queues the data watch events of path before any later reply.
func (s *refServer) fire(path, typ string) {
	for _, c := range s.watches[path] {
		s.b.event(c, session(c), typ, path)
	}
	delete(s.watches, path)
}

// step executes one operation of client c.
func (s *refServer) step(c int, n int, lossOneIn int) {
	path := fmt.Sprintf("/r/k%d", s.pick.intRange("key", 0, s.keys-1))
	value := fmt.Sprintf("c%d-%d", c, n)
	node := s.nodes[path]
	dropReply := lossOneIn > 0 && s.pick.intRange("drop", 1, lossOneIn) == 1
	write := func(op string, fill func(*Entry), apply func() string) {
		if dropReply {
			applied := s.pick.boolean("applied")
			errName := ""
			if applied {
				s.zxid++
				errName = apply()
			}
			s.b.lost(c, session(c), op, path, fill)
			if applied {
				s.committed(c, op, errName)
			}
			return
		}
		s.zxid++
		errName := apply()
		s.b.op(c, session(c), op, path, errName, s.zxid, fill)
		s.committed(c, op, errName)
	}
	switch s.pick.intRange("op", 0, 5) {
	case 0: // create
		ephemeral := s.pick.boolean("ephemeral")
		mode := "persistent"
		if ephemeral {
			mode = "ephemeral"
		}
		write(OpCreate, func(e *Entry) {
			e.Data, e.Mode = str(value), mode
			if e.Err == ErrOK {
				e.Created = path
			}
		}, func() string {
			if node != nil {
				return "NodeExists"
			}
			n := &refNode{data: value, czxid: s.zxid, mzxid: s.zxid}
			if ephemeral {
				n.owner = session(c)
			}
			s.nodes[path] = n
			s.rootCV++
			s.rootPZ = s.zxid
			s.fire(path, "NodeCreated")
			return ErrOK
		})
	case 1: // delete
		version := int32(s.pick.intRange("version", -1, 1))
		write(OpDelete, func(e *Entry) { e.Version = ver(version) }, func() string {
			switch {
			case node == nil:
				return "NoNode"
			case version != -1 && version != node.version:
				return "BadVersion"
			}
			delete(s.nodes, path)
			s.rootCV++
			s.rootPZ = s.zxid
			s.fire(path, "NodeDeleted")
			return ErrOK
		})
	case 2: // setData
		version := int32(s.pick.intRange("version", -1, 1))
		var after *Stat
		write(OpSetData, func(e *Entry) {
			e.Data, e.Version = str(value), ver(version)
			e.Stat = after
		}, func() string {
			switch {
			case node == nil:
				return "NoNode"
			case version != -1 && version != node.version:
				return "BadVersion"
			}
			node.data, node.version, node.mzxid = value, node.version+1, s.zxid
			after = s.stat(node)
			s.fire(path, "NodeDataChanged")
			return ErrOK
		})
	case 3, 4: // getData / exists, maybe watching
		watch := s.pick.boolean("watch")
		op := OpGetData
		if s.pick.boolean("exists") {
			op = OpExists
		}
		if watch && (node != nil || op == OpExists) && !slices.Contains(s.watches[path], c) {
			s.watches[path] = append(s.watches[path], c)
		}
		if node == nil {
			s.b.op(c, session(c), op, path, "NoNode", s.zxid, func(e *Entry) { e.Watch = watch })
			return
		}
		s.b.op(c, session(c), op, path, ErrOK, s.zxid, func(e *Entry) {
			e.Watch, e.Stat = watch, s.stat(node)
			if op == OpGetData {
				e.Data = str(node.data)
			}
		})
	case 5: // sync then read
		s.b.op(c, session(c), OpSync, path, ErrOK, s.zxid, nil)
		if node == nil {
			s.b.op(c, session(c), OpGetData, path, "NoNode", s.zxid, nil)
		} else {
			s.b.op(c, session(c), OpGetData, path, ErrOK, s.zxid, func(e *Entry) { e.Data, e.Stat = str(node.data), s.stat(node) })
		}
	}
}

// chooser makes the reference server's choices: rapid's draws in property
// tests, a seeded generator in benchmarks.
type chooser interface {
	intRange(label string, lo, hi int) int
	boolean(label string) bool
}

type rapidChooser struct{ t *rapid.T }

func (c rapidChooser) intRange(label string, lo, hi int) int {
	return rapid.IntRange(lo, hi).Draw(c.t, label)
}
func (c rapidChooser) boolean(label string) bool { return rapid.Bool().Draw(c.t, label) }

type randChooser struct{ r *rand.Rand }

func (c randChooser) intRange(_ string, lo, hi int) int { return lo + c.r.IntN(hi-lo+1) }
func (c randChooser) boolean(string) bool               { return c.r.IntN(2) == 0 }

// referenceHistory runs a workload of ops operations by clients over keys
// paths on the reference server, losing one reply in lossOneIn (none when
// 0). A client whose reply is lost carries on in the same session, as one
// that reconnects.
func referenceHistory(pick chooser, clients, ops, keys int, lossOneIn int) History {
	h, _ := referenceRun(pick, clients, ops, keys, lossOneIn)
	return h
}

// referenceRun is referenceHistory with the run's witness.
func referenceRun(pick chooser, clients, ops, keys int, lossOneIn int) (History, Witness) {
	s := &refServer{pick: pick, b: newBuilder(), nodes: map[string]*refNode{}, watches: map[string][]int{}, keys: keys}
	s.zxid = 1
	s.b.op(0, session(0), OpCreate, "/r", ErrOK, s.zxid, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/r" })
	s.committed(0, OpCreate, ErrOK)
	for n := 0; n < ops; n++ {
		s.step(1+pick.intRange("client", 0, clients-1), n, lossOneIn)
	}
	// the final state, read by a fresh client
	for i := 0; i < keys; i++ {
		path := fmt.Sprintf("/r/k%d", i)
		if node := s.nodes[path]; node != nil {
			s.b.op(clients+1, session(clients+1), OpGetData, path, ErrOK, s.zxid, func(e *Entry) { e.Data, e.Stat = str(node.data), s.stat(node) })
		} else {
			s.b.op(clients+1, session(clients+1), OpGetData, path, "NoNode", s.zxid, nil)
		}
	}
	// every session closes, its ephemerals going with it
	for c := 1; c <= clients; c++ {
		s.zxid++
		for i := 0; i < keys; i++ {
			path := fmt.Sprintf("/r/k%d", i)
			if node := s.nodes[path]; node != nil && node.owner == session(c) {
				delete(s.nodes, path)
				s.watches[path] = slices.DeleteFunc(s.watches[path], func(w int) bool { return w <= c })
				s.fire(path, "NodeDeleted")
			}
		}
		s.b.op(c, session(c), OpClose, "", ErrOK, s.zxid, nil)
		s.committed(c, OpClose, ErrOK)
	}
	return s.b.h, s.witness
}

func drawReference(t *rapid.T, allowLost bool) History {
	lossOneIn := 0
	if allowLost {
		lossOneIn = 16
	}
	return referenceHistory(rapidChooser{t}, rapid.IntRange(1, 4).Draw(t, "clients"), rapid.IntRange(1, 60).Draw(t, "ops"), 3, lossOneIn)
}

func TestReferenceHistoriesPass(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := drawReference(t, true)
		r := CheckAll(h, Options{})
		for g, vs := range r.Violations {
			if len(vs) > 0 {
				t.Fatalf("%s: %s", g, vs[0].Explanation)
			}
		}
	})
}

func TestMutatedReadIsCaught(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := drawReference(t, true)
		var reads []int
		for i := range h {
			if h[i].Op == OpGetData && h[i].Err == ErrOK {
				reads = append(reads, i)
			}
		}
		if len(reads) == 0 {
			t.Skip("no successful read")
		}
		i := rapid.SampledFrom(reads).Draw(t, "read")
		h[i].Data = str(*h[i].Data + "-mutated")
		require.False(t, CheckAll(h, Options{}).OK(), "a read of data never written went unnoticed")
	})
}

func TestMutatedWriteResultIsCaught(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := drawReference(t, false)
		var writes []int
		for i := range h {
			if h[i].IsWrite() && h[i].Op != OpClose && h[i].Returned() && h[i].Client != 0 {
				writes = append(writes, i)
			}
		}
		if len(writes) == 0 {
			t.Skip("no write")
		}
		i := rapid.SampledFrom(writes).Draw(t, "write")
		e := &h[i]
		if e.Err == ErrOK {
			e.Err, e.Stat, e.Created = map[string]string{OpCreate: "NodeExists", OpDelete: "NoNode", OpSetData: "NoNode"}[e.Op], nil, ""
		} else {
			e.Err = ErrOK
		}
		require.NotEmpty(t, CheckWrites(h, Options{}), "a changed write result went unnoticed: %s", e.describe())
	})
}

// TestSearchShortcutsKeepVerdicts: the set replay's shortcuts (see
// searchShortcuts) give every checker the verdict of the plain search, on
// correct histories with lost replies and on histories with one reply
// changed.
func TestSearchShortcutsKeepVerdicts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := referenceHistory(rapidChooser{t}, rapid.IntRange(1, 6).Draw(t, "clients"), rapid.IntRange(1, 60).Draw(t, "ops"),
			rapid.IntRange(1, 3).Draw(t, "keys"), rapid.IntRange(2, 16).Draw(t, "lossOneIn"))
		if rapid.Bool().Draw(t, "mutate") {
			mutateReply(t, h)
		}
		verdicts := func() map[string]bool {
			out := map[string]bool{}
			for g, vs := range CheckAll(h, Options{}).Violations {
				out[g] = len(vs) == 0
			}
			return out
		}
		fast := verdicts()
		searchShortcuts = false
		defer func() { searchShortcuts = true }()
		require.Equal(t, verdicts(), fast)
	})
}

// mutateReply changes one recorded reply: a write's error, a read's data or
// a returned stat's version.
func mutateReply(t *rapid.T, h History) {
	var replies []int
	for i := range h {
		if e := &h[i]; e.Kind == KindOp && e.Returned() && !e.OutcomeUnknown() && e.Client != 0 && e.Op != OpClose {
			replies = append(replies, i)
		}
	}
	if len(replies) == 0 {
		return
	}
	e := &h[rapid.SampledFrom(replies).Draw(t, "reply")]
	switch {
	case e.Stat != nil && rapid.Bool().Draw(t, "stat"):
		s := *e.Stat
		s.Version += int32(rapid.IntRange(-1, 1).Draw(t, "version"))
		e.Stat = &s
	case e.Data != nil && !e.IsWrite():
		e.Data = str(*e.Data + "-mutated")
	case e.Err == ErrOK:
		e.Err, e.Stat, e.Created = map[string]string{OpCreate: "NodeExists", OpDelete: "NoNode", OpSetData: "NoNode", OpGetData: "NoNode", OpExists: "NoNode", OpSync: "NoNode"}[e.Op], nil, ""
	default:
		e.Err = ErrOK
	}
}

// TestSampledSearchIsSound: when the set replay keeps only a sample of the
// possible states, a component it passes passes the full search too, and a
// violation it reports (rather than calling the component undecided) is
// one the full search reports. The bounds are shrunk so that the sample is
// one state.
func TestSampledSearchIsSound(t *testing.T) {
	rapid.Check(t, sampledSearchIsSound)
}

// TestSampledSearchIsSoundSeeds replays the seeds at which
// TestSampledSearchIsSound failed (zab/zabtest/rapidseed; a change to the
// property's draws or to referenceHistory's sends them elsewhere):
//
//   - 3789100357834152932: a mutated history of 48 operations on one key,
//     16 of unknown outcome, which the full search called undecided (its
//     states outgrew maxStates and no sample explained the mutated reply);
//     the property required the full search to decide every component.
func TestSampledSearchIsSoundSeeds(t *testing.T) {
	rapidseed.Check(t, sampledSearchIsSound,
		3789100357834152932,
	)
}

func sampledSearchIsSound(t *rapid.T) {
	h := referenceHistory(rapidChooser{t}, rapid.IntRange(1, 6).Draw(t, "clients"), rapid.IntRange(1, 60).Draw(t, "ops"),
		rapid.IntRange(1, 3).Draw(t, "keys"), rapid.IntRange(2, 8).Draw(t, "lossOneIn"))
	if rapid.Bool().Draw(t, "mutate") {
		mutateReply(t, h)
	}
	deadline := time.Now().Add(time.Minute)
	comps := buildTimeline(h, true, false).components()
	full := make([]*replayResult, len(comps))
	for i, comp := range comps {
		full[i] = replayComponent(comp, deadline)
	}
	defer func(states, sample, steps, minSteps int) {
		maxStates, sampleStates, maxSearchSteps, minResolveSteps = states, sample, steps, minSteps
	}(maxStates, sampleStates, maxSearchSteps, minResolveSteps)
	maxStates, sampleStates, maxSearchSteps, minResolveSteps = 1, 1, 2, 2
	for i, comp := range buildTimeline(h, true, false).components() {
		if full[i] != nil && full[i].gaveUp {
			// The full search is bounded too (maxStates, the deadline):
			// a component whose states outgrow maxStates and that no
			// sample of them explains is undecided — a failure to the
			// checkers, never a pass. Within these sizes it happens to a
			// history with a mutated reply (seed 3789100357834152932; the
			// same history unmutated passes), and then there is no
			// verdict to hold the sample to.
			continue
		}
		res := replayComponent(comp, deadline)
		switch {
		case res == nil:
			require.Nil(t, full[i], "the sample passed what the full search fails: %s", full[i])
		case !res.gaveUp:
			require.NotNil(t, full[i], "the sample failed what the full search passes: %s %s", res.failed.describe(), res.why)
		}
	}
}
