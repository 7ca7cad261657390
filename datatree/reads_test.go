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
