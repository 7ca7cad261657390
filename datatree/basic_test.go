package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
)

func TestFreshTreeHasZooKeeperNodes(t *testing.T) {
	tr := New(Config{})
	kids, st, err := tr.GetChildren("/", nil, false, 0)
	require.Equal(t, wire.ErrOK, err)
	assert.Equal(t, []string{"zookeeper"}, kids)
	// The root's stored cversion is 0 with one child: visible -1, as ZooKeeper shows.
	assert.Equal(t, int32(-1), st.Cversion)
	kids, _, _ = tr.GetChildren("/zookeeper", nil, false, 0)
	assert.Equal(t, []string{"config", "quota"}, kids)
	acl, st, err := tr.GetACL("/zookeeper/config", nil)
	require.Equal(t, wire.ErrOK, err)
	assert.Equal(t, wire.ReadACLUnsafe, acl)
	assert.Equal(t, int32(-1), st.Aversion)
}

func TestCreateSetDeleteStats(t *testing.T) {
	h := newHarness(t, Config{})
	r := h.create(1, "/a", "hello", wire.ModePersistent)
	require.Equal(t, wire.ErrOK, r.Err)
	assert.Equal(t, "/a", r.Path)
	assert.Equal(t, wire.Stat{Czxid: 1, Mzxid: 1, Pzxid: 1, Ctime: h.now, Mtime: h.now, DataLength: 5}, r.Stat)

	r, ev := h.setData("/a", "bye", 0)
	require.Equal(t, wire.ErrOK, r.Err)
	assert.Empty(t, ev)
	assert.Equal(t, int32(1), r.Stat.Version)
	assert.Equal(t, int64(2), r.Stat.Mzxid)

	r, _ = h.setData("/a", "x", 0)
	assert.Equal(t, wire.ErrBadVersion, r.Err)
	assert.Equal(t, wire.OpError, r.Op)

	h.mustCreate("/a/b")
	st := h.stat("/a")
	assert.Equal(t, int32(1), st.Cversion)
	assert.Equal(t, int32(1), st.NumChildren)
	assert.Equal(t, int64(4), st.Pzxid)

	r, _ = h.delete("/a", -1)
	assert.Equal(t, wire.ErrNotEmpty, r.Err)
	r, _ = h.delete("/a/b", 0)
	require.Equal(t, wire.ErrOK, r.Err)
	st = h.stat("/a")
	// Stored cversion stays 1, visible = 2*1 - 0.
	assert.Equal(t, int32(2), st.Cversion)
	assert.Equal(t, int64(6), st.Pzxid)
}

func TestSequentialNaming(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/q")
	r := h.create(1, "/q/n-", "", wire.ModePersistentSequential)
	assert.Equal(t, "/q/n-0000000000", r.Path)
	h.delete("/q/n-0000000000", -1)
	r = h.create(1, "/q/n-", "", wire.ModePersistentSequential)
	assert.Equal(t, "/q/n-0000000001", r.Path)
	r = h.create(1, "/q/", "", wire.ModePersistentSequential)
	assert.Equal(t, "/q/0000000002", r.Path)
}

func TestPreparePipelined(t *testing.T) {
	tr := New(Config{})
	create := func(path string, mode wire.CreateMode) *Request {
		return &Request{Session: 7, Op: wire.OpCreate, Body: &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe, Flags: mode}}
	}
	t1 := tr.Prepare(create("/p", wire.ModePersistent), 1, 10)
	t2 := tr.Prepare(create("/p/s-", wire.ModePersistentSequential), 2, 11)
	t3 := tr.Prepare(create("/p/s-", wire.ModePersistentSequential), 3, 12)
	t4 := tr.Prepare(create("/p", wire.ModePersistent), 4, 13)
	require.Equal(t, wire.OpCreate, t2.Header.Type)
	assert.Equal(t, "/p/s-0000000000", t2.Body.(*wire.CreateTxn).Path)
	assert.Equal(t, "/p/s-0000000001", t3.Body.(*wire.CreateTxn).Path)
	assert.Equal(t, wire.OpError, t4.Header.Type)
	assert.Equal(t, wire.ErrNodeExists, t4.Body.(*wire.ErrorTxn).Err)
	for _, txn := range []Txn{t1, t2, t3} {
		r, _ := tr.Apply(&txn, nil)
		require.Equal(t, wire.ErrOK, r.Err)
		assert.Equal(t, txn.Digest.TreeDigest, tr.Digest(), "digest after zxid %d", txn.Header.Zxid)
	}
	assert.Equal(t, 0, tr.PendingCount())
}

// TestDiscardPending: prepared txns that will never be applied (leadership
// lost) stop counting once discarded.
func TestDiscardPending(t *testing.T) {
	tr := New(Config{})
	create := &Request{Session: 1, Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/x", ACL: wire.OpenACLUnsafe}}
	first := tr.Prepare(create, 1, 10)
	require.Equal(t, wire.OpCreate, first.Header.Type)
	again := tr.Prepare(create, 2, 11)
	assert.Equal(t, wire.OpError, again.Header.Type, "the pending create makes /x exist")
	assert.Equal(t, 2, tr.PendingCount())
	tr.DiscardPending()
	assert.Zero(t, tr.PendingCount())
	fresh := tr.Prepare(create, 1, 10)
	assert.Equal(t, wire.OpCreate, fresh.Header.Type)
	assert.Equal(t, first.Digest, fresh.Digest)
}

// TestLoadRejectsInconsistentTrees: a path twice, the root twice, no root, a
// list-less ACL entry, a negative ACL map size.
func TestLoadRejectsInconsistentTrees(t *testing.T) {
	node := func(e *wire.Encoder, path string) {
		e.WriteString(path)
		e.WriteBuffer(nil)
		e.WriteLong(-1)
		(&wire.StatPersisted{}).Encode(e)
	}
	cases := map[string]func(e *wire.Encoder){
		"path twice": func(e *wire.Encoder) { e.WriteInt(0); node(e, ""); node(e, "/a"); node(e, "/a"); e.WriteString("/") },
		"root twice": func(e *wire.Encoder) { e.WriteInt(0); node(e, ""); node(e, ""); e.WriteString("/") },
		"no root":    func(e *wire.Encoder) { e.WriteInt(0); e.WriteString("/") },
		"bad path":   func(e *wire.Encoder) { e.WriteInt(0); node(e, ""); node(e, "/a/"); e.WriteString("/") },
		"null ACL list": func(e *wire.Encoder) {
			e.WriteInt(1)
			e.WriteLong(1)
			e.WriteInt(-1)
		},
		"negative ACL map": func(e *wire.Encoder) { e.WriteInt(-2) },
		"ACL ref twice": func(e *wire.Encoder) {
			e.WriteInt(2)
			e.WriteLong(1)
			e.WriteACLs(wire.OpenACLUnsafe)
			e.WriteLong(1)
			e.WriteACLs(wire.ReadACLUnsafe)
		},
	}
	for name, build := range cases {
		var e wire.Encoder
		build(&e)
		tr, err := Load(Config{}, wire.NewDecoder(e.Bytes()), 0)
		assert.Nil(t, tr, name)
		var se *SnapshotError
		assert.ErrorAs(t, err, &se, name)
	}
}

// TestMultiMalformedOps: ZooKeeper prepares a multi's ops in order and stops
// preparing at the first failure, so a create with a TTL mode sent without a
// TTL fails the whole multi with MarshallingError only when it is reached;
// after a failed op it is one more RuntimeInconsistency. A read op fails
// the multi wherever it stands (ZooKeeper cannot decode it).
func TestMultiMalformedOps(t *testing.T) {
	h := newHarness(t, Config{ExtendedTypesEnabled: true})
	h.mustCreate("/a")
	ttlByCreate := MultiOp{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/t", ACL: wire.OpenACLUnsafe, Flags: wire.ModePersistentWithTTL}}
	deleteMissing := MultiOp{Op: wire.OpDelete, Body: &wire.PathVersionRequest{Path: "/missing", Version: -1}}
	createB := MultiOp{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/b", ACL: wire.OpenACLUnsafe}}
	getData := MultiOp{Op: wire.OpGetData, Body: &wire.PathWatchRequest{Path: "/a"}}
	multi := func(ops ...MultiOp) Result {
		r, _ := h.write(&Request{Op: wire.OpMulti, Body: &MultiRequest{Ops: ops}})
		return r
	}
	failedWith := func(codes ...wire.ErrCode) []Result {
		var out []Result
		for _, c := range codes {
			out = append(out, Result{Op: wire.OpError, Err: c})
		}
		return out
	}
	before := h.tree.Digest()

	r := multi(deleteMissing, ttlByCreate, createB)
	require.Equal(t, wire.ErrOK, r.Err)
	require.Equal(t, failedWith(wire.ErrNoNode, wire.ErrRuntimeInconsistency, wire.ErrRuntimeInconsistency), r.Multi)

	for _, ops := range [][]MultiOp{{ttlByCreate, deleteMissing}, {createB, ttlByCreate}, {deleteMissing, getData}, {getData}} {
		r = multi(ops...)
		require.Equal(t, wire.ErrMarshallingError, r.Err, "%v", ops)
		require.Empty(t, r.Multi)
	}
	require.Equal(t, before, h.tree.Digest(), "nothing changed")
	_, err := h.tree.Exists("/b", false, 0)
	require.Equal(t, wire.ErrNoNode, err, "the create before the malformed op was undone")
	// The pending changes of that undone create are gone too.
	require.Equal(t, wire.ErrOK, h.create(1, "/b", "", wire.ModePersistent).Err)
}
