package datatree

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
)

// harness drives a Tree as the pipeline does: Prepare then Apply, with
// increasing zxids and a fake wall clock.
type harness struct {
	t    *testing.T
	tree *Tree
	zxid int64
	now  int64
}

func newHarness(t *testing.T, cfg Config) *harness {
	return &harness{t: t, tree: New(cfg), now: 1_700_000_000_000}
}

// write prepares and applies one request at once.
func (h *harness) write(req *Request) (Result, []WatchEvent) {
	h.zxid++
	h.now++
	txn := h.tree.Prepare(req, h.zxid, h.now)
	return h.tree.Apply(&txn, nil)
}

func (h *harness) create(session int64, path string, data string, mode wire.CreateMode) Result {
	r, _ := h.write(&Request{Session: session, Op: wire.OpCreate2, Body: &wire.CreateRequest{
		Path: path, Data: []byte(data), ACL: wire.OpenACLUnsafe, Flags: mode}})
	return r
}

func (h *harness) mustCreate(path string) Result {
	r := h.create(1, path, "", wire.ModePersistent)
	require.Equal(h.t, wire.ErrOK, r.Err, "create %s", path)
	return r
}

func (h *harness) setData(path, data string, version int32) (Result, []WatchEvent) {
	return h.write(&Request{Session: 1, Op: wire.OpSetData, Body: &wire.SetDataRequest{Path: path, Data: []byte(data), Version: version}})
}

func (h *harness) delete(path string, version int32) (Result, []WatchEvent) {
	return h.write(&Request{Session: 1, Op: wire.OpDelete, Body: &wire.PathVersionRequest{Path: path, Version: version}})
}

func (h *harness) stat(path string) wire.Stat {
	st, err := h.tree.Exists(path, false, 0)
	require.Equal(h.t, wire.ErrOK, err, "exists %s", path)
	return st
}

// allNodes returns the tree's nodes by path.
func allNodes(t *Tree) map[string]*node {
	out := make(map[string]*node, t.NodeCount())
	t.nodes.each(func(n *node) { out[n.path()] = n })
	return out
}

// each calls fn for every node of the index, in no particular order.
func (x *pathIndex) each(fn func(*node)) {
	var prev *indexTable
	for _, t := range x.dir {
		if t == prev {
			continue
		}
		prev = t
		for i := range t.slots() {
			if n := t.node(i); n != nil {
				fn(n)
			}
		}
	}
}
