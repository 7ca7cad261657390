package linearizability

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
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
	b       *builder
	zxid    int64
	nodes   map[string]*refNode
	rootCV  int32
	rootPZ  int64
	watches map[string][]int // path -> clients holding a data watch
	lost    int              // writes whose reply was dropped
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
func (s *refServer) step(t *rapid.T, c int, n int, allowLost bool) {
	path := fmt.Sprintf("/r/k%d", rapid.IntRange(0, 2).Draw(t, "key"))
	value := fmt.Sprintf("c%d-%d", c, n)
	node := s.nodes[path]
	dropReply := allowLost && rapid.IntRange(0, 15).Draw(t, "drop") == 0
	write := func(op string, fill func(*Entry), apply func() string) {
		if dropReply {
			s.lost++
			if rapid.Bool().Draw(t, "applied") {
				s.zxid++
				apply()
			}
			s.b.lost(c, session(c), op, path, fill)
			return
		}
		s.zxid++
		errName := apply()
		s.b.op(c, session(c), op, path, errName, s.zxid, fill)
	}
	switch rapid.IntRange(0, 5).Draw(t, "op") {
	case 0: // create
		ephemeral := rapid.Bool().Draw(t, "ephemeral")
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
		version := int32(rapid.IntRange(-1, 1).Draw(t, "version"))
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
		version := int32(rapid.IntRange(-1, 1).Draw(t, "version"))
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
		watch := rapid.Bool().Draw(t, "watch")
		op := OpGetData
		if rapid.Bool().Draw(t, "exists") {
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

// referenceHistory runs a random workload on the reference server.
func referenceHistory(t *rapid.T, allowLost bool) (History, int) {
	s := &refServer{b: newBuilder(), nodes: map[string]*refNode{}, watches: map[string][]int{}}
	s.zxid = 1
	s.b.op(0, session(0), OpCreate, "/r", ErrOK, s.zxid, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/r" })
	clients := rapid.IntRange(1, 4).Draw(t, "clients")
	ops := rapid.IntRange(1, 60).Draw(t, "ops")
	dead := map[int]bool{}
	for n := 0; n < ops; n++ {
		c := 1 + rapid.IntRange(0, clients-1).Draw(t, "client")
		if dead[c] {
			continue
		}
		before := s.lost
		s.step(t, c, n, allowLost)
		if s.lost > before {
			dead[c] = true // a client whose reply was lost stops
		}
	}
	// the final state, read by a fresh client
	for i := 0; i < 3; i++ {
		path := fmt.Sprintf("/r/k%d", i)
		if node := s.nodes[path]; node != nil {
			s.b.op(9, session(9), OpGetData, path, ErrOK, s.zxid, func(e *Entry) { e.Data, e.Stat = str(node.data), s.stat(node) })
		} else {
			s.b.op(9, session(9), OpGetData, path, "NoNode", s.zxid, nil)
		}
	}
	// every session closes, its ephemerals going with it
	for c := 1; c <= clients; c++ {
		s.zxid++
		for i := 0; i < 3; i++ {
			path := fmt.Sprintf("/r/k%d", i)
			if node := s.nodes[path]; node != nil && node.owner == session(c) {
				delete(s.nodes, path)
				s.watches[path] = slices.DeleteFunc(s.watches[path], func(w int) bool { return w <= c })
				s.fire(path, "NodeDeleted")
			}
		}
		s.b.op(c, session(c), OpClose, "", ErrOK, s.zxid, nil)
	}
	return s.b.h, s.lost
}

func TestReferenceHistoriesPass(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h, _ := referenceHistory(t, true)
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
		h, _ := referenceHistory(t, true)
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
		h, _ := referenceHistory(t, false)
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
