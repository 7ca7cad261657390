package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
)

func TestGetEphemeralsAndCounts(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/a")
	h.mustCreate("/ab")
	h.create(3, "/a/e2", "", wire.ModeEphemeral)
	h.create(3, "/ab/e1", "", wire.ModeEphemeral)
	h.create(3, "/e0", "", wire.ModeEphemeral)
	h.create(4, "/a/other", "", wire.ModeEphemeral)
	assert.Equal(t, []string{"/a/e2", "/ab/e1", "/e0"}, h.tree.GetEphemerals(3, ""))
	assert.Equal(t, []string{"/a/e2", "/ab/e1", "/e0"}, h.tree.GetEphemerals(3, " / "))
	assert.Equal(t, []string{"/a/e2", "/ab/e1"}, h.tree.GetEphemerals(3, "/a"), "a plain string prefix")
	assert.Equal(t, []string{}, h.tree.GetEphemerals(9, ""))

	n, err := h.tree.GetAllChildrenNumber("/a", nil)
	assert.Equal(t, wire.ErrOK, err)
	assert.Equal(t, int32(2), n)
	n, _ = h.tree.GetAllChildrenNumber("/", nil)
	assert.Equal(t, int32(h.tree.NodeCount()-1), n)
	_, err = h.tree.GetAllChildrenNumber("/none", nil)
	assert.Equal(t, wire.ErrNoNode, err)
}

func TestReadDispatch(t *testing.T) {
	h := newHarness(t, Config{})
	h.create(1, "/n", "data", wire.ModePersistent)
	auth := []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}}
	read := func(op wire.OpCode, body wire.Record) Result {
		r, _ := h.tree.Read(&Request{Session: 1, Op: op, Body: body, Auth: auth}, 1, nil)
		return r
	}
	st := h.stat("/n")
	assert.Equal(t, Result{Op: wire.OpGetData, Data: []byte("data"), Stat: st}, read(wire.OpGetData, &wire.PathWatchRequest{Path: "/n"}))
	assert.Equal(t, Result{Op: wire.OpExists, Stat: st}, read(wire.OpExists, &wire.PathWatchRequest{Path: "/n"}))
	assert.Equal(t, Result{Op: wire.OpSync, Path: "/any/path"}, read(wire.OpSync, &wire.PathRequest{Path: "/any/path"}))
	assert.Equal(t, wire.ErrMarshallingError, read(wire.OpGetData, &wire.PathRequest{Path: "/n"}).Err, "wrong body type")
	assert.Equal(t, wire.ErrUnimplemented, read(wire.OpSetData, &wire.SetDataRequest{}).Err)
	mr := read(wire.OpMultiRead, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpGetData, Body: &wire.PathWatchRequest{Path: "/n"}},
		{Type: wire.OpGetChildren, Body: &wire.PathWatchRequest{Path: "/none"}},
		{Type: wire.OpGetChildren, Body: &wire.PathWatchRequest{Path: "/n"}},
	}})
	require.Len(t, mr.Multi, 3)
	assert.Equal(t, Result{Op: wire.OpGetData, Data: []byte("data"), Stat: st}, mr.Multi[0])
	assert.Equal(t, Result{Op: wire.OpError, Err: wire.ErrNoNode}, mr.Multi[1])
	assert.Equal(t, Result{Op: wire.OpGetChildren, Children: []string{}}, mr.Multi[2])
	// A multiRead of writes fails once ZooKeeper has begun its (empty)
	// response; one that mixes reads and writes cannot be decoded at all.
	deleteN := MultiOp{Op: wire.OpDelete, Body: &wire.PathVersionRequest{Path: "/n"}}
	getN := MultiOp{Op: wire.OpGetData, Body: &wire.PathWatchRequest{Path: "/n"}}
	assert.Equal(t, Result{Op: wire.OpMultiRead, Err: wire.ErrMarshallingError, Multi: []Result{}}, read(wire.OpMultiRead, &MultiRequest{Ops: []MultiOp{deleteN}}))
	assert.Equal(t, Result{Op: wire.OpMultiRead, Err: wire.ErrMarshallingError}, read(wire.OpMultiRead, &MultiRequest{Ops: []MultiOp{getN, deleteN}}))
	// A read op in a write multi fails the whole request.
	r, _ := h.write(&Request{Op: wire.OpMulti, Body: &MultiRequest{Ops: []MultiOp{{Op: wire.OpGetData, Body: &wire.PathWatchRequest{Path: "/n"}}}}})
	assert.Equal(t, Result{Op: wire.OpError, Err: wire.ErrMarshallingError}, r)
	// An empty multi succeeds with no results.
	r, _ = h.write(&Request{Op: wire.OpMulti, Body: &MultiRequest{}})
	assert.Equal(t, Result{Op: wire.OpMulti, Multi: []Result{}}, r)
}

// A null path in a multi (any op, any place) fails it before it takes a
// txn, unless the multi mixes reads and writes (then it cannot be decoded:
// an error txn); Read answers it MarshallingError with an empty multi
// response. In a multiRead it fails where its op is reached, after the
// results before it.
func TestNullPathInMulti(t *testing.T) {
	h := newHarness(t, Config{})
	h.create(1, "/n", "data", wire.ModePersistent)
	st := h.stat("/n")
	null := func(op wire.OpCode, body wire.Record) MultiOp { return MultiOp{Op: op, Body: body, NullPath: true} }
	createX := MultiOp{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/x", ACL: wire.OpenACLUnsafe}}
	getN := MultiOp{Op: wire.OpGetData, Body: &wire.PathWatchRequest{Path: "/n"}}
	nullOps := []MultiOp{
		null(wire.OpCreate, &wire.CreateRequest{ACL: wire.OpenACLUnsafe}),
		null(wire.OpCreateTTL, &wire.CreateRequest{ACL: wire.OpenACLUnsafe, Flags: wire.ModePersistentWithTTL, HasTTL: true, TTL: 1}),
		null(wire.OpDelete, &wire.PathVersionRequest{Version: -1}),
		null(wire.OpSetData, &wire.SetDataRequest{Version: -1}),
		null(wire.OpCheck, &wire.PathVersionRequest{Version: -1}),
	}
	for _, nullOp := range nullOps {
		for _, ops := range [][]MultiOp{{nullOp}, {createX, nullOp}, {nullOp, createX}} {
			req := &Request{Session: 1, Op: wire.OpMulti, Body: &MultiRequest{Ops: ops}}
			require.True(t, FailsBeforeTxn(req), "%v", ops)
			r, _ := h.tree.Read(req, 1, nil)
			assert.Equal(t, Result{Op: wire.OpMulti, Err: wire.ErrMarshallingError, Multi: []Result{}}, r)
			// Prepared anyway (a ZooKeeper learner forwarded it), it is
			// an error txn, and none of its ops takes effect.
			r, _ = h.write(req)
			assert.Equal(t, Result{Op: wire.OpError, Err: wire.ErrMarshallingError}, r)
		}
	}
	_, err := h.tree.Exists("/x", false, 0)
	assert.Equal(t, wire.ErrNoNode, err)
	readsOnly := &Request{Op: wire.OpMulti, Body: &wire.MultiRequest{Ops: []wire.MultiOp{{Type: wire.OpGetChildren, Body: &wire.PathWatchRequest{}, NullPath: true}}}}
	assert.True(t, FailsBeforeTxn(readsOnly), "a multi of reads decodes, as a *wire.MultiRequest too")
	mixed := &Request{Op: wire.OpMulti, Body: &MultiRequest{Ops: []MultiOp{nullOps[0], getN}}}
	assert.False(t, FailsBeforeTxn(mixed), "a multi mixing reads and writes does not decode")
	assert.False(t, FailsBeforeTxn(&Request{Op: wire.OpMulti, Body: &MultiRequest{Ops: []MultiOp{createX}}}))
	assert.False(t, FailsBeforeTxn(&Request{Op: wire.OpMulti}), "a multi that did not decode")
	assert.False(t, FailsBeforeTxn(&Request{Op: wire.OpMultiRead, Body: &MultiRequest{Ops: []MultiOp{nullOps[0]}}}))
	r, _ := h.tree.Read(&Request{Op: wire.OpMulti, Body: &MultiRequest{Ops: []MultiOp{createX}}}, 1, nil)
	assert.Equal(t, wire.ErrUnimplemented, r.Err, "a multi that takes a txn is no read")

	multiRead := func(ops ...MultiOp) Result {
		r, _ := h.tree.Read(&Request{Op: wire.OpMultiRead, Body: &MultiRequest{Ops: ops}}, 1, nil)
		return r
	}
	nullGet := null(wire.OpGetData, &wire.PathWatchRequest{})
	nullChildren := null(wire.OpGetChildren, &wire.PathWatchRequest{})
	missing := MultiOp{Op: wire.OpGetChildren, Body: &wire.PathWatchRequest{Path: "/none"}}
	gotN := Result{Op: wire.OpGetData, Data: []byte("data"), Stat: st}
	assert.Equal(t, Result{Op: wire.OpMultiRead, Err: wire.ErrMarshallingError, Multi: []Result{}}, multiRead(nullGet, getN))
	assert.Equal(t, Result{Op: wire.OpMultiRead, Err: wire.ErrMarshallingError, Multi: []Result{gotN}}, multiRead(getN, nullChildren, getN))
	assert.Equal(t, Result{Op: wire.OpMultiRead, Err: wire.ErrMarshallingError, Multi: []Result{{Op: wire.OpError, Err: wire.ErrNoNode}}}, multiRead(missing, nullGet))
	assert.Equal(t, Result{Op: wire.OpMultiRead, Err: wire.ErrMarshallingError}, multiRead(getN, nullOps[2]), "mixed: no results")
}
