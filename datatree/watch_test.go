package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
)

func ev(w WatcherID, typ wire.EventType, path string) WatchEvent {
	return WatchEvent{Watcher: w, Event: wire.WatcherEvent{Type: typ, State: wire.StateSyncConnected, Path: path}}
}

// TestWatchTriggerTable pins ZooKeeper's trigger table: which watches each
// change fires, which survive, and in which order the events come.
func TestWatchTriggerTable(t *testing.T) {
	const (
		dataW  WatcherID = 1 // getData on the node
		existW WatcherID = 2 // exists on the node (missing before a create)
		childW WatcherID = 3 // getChildren on the node
		parW   WatcherID = 4 // getChildren on the parent
		persW  WatcherID = 5 // addWatch PERSISTENT on the node
		recW   WatcherID = 6 // addWatch PERSISTENT_RECURSIVE on the root
		parPW  WatcherID = 7 // addWatch PERSISTENT on the parent
	)
	setup := func(t *testing.T, nodeExists bool) *harness {
		h := newHarness(t, Config{})
		h.mustCreate("/p")
		if nodeExists {
			h.mustCreate("/p/n")
			_, _, err := h.tree.GetData("/p/n", nil, true, dataW)
			require.Equal(t, wire.ErrOK, err)
			_, _, err = h.tree.GetChildren("/p/n", nil, true, childW)
			require.Equal(t, wire.ErrOK, err)
		}
		h.tree.Exists("/p/n", true, existW)
		h.tree.GetChildren("/p", nil, true, parW)
		require.Equal(t, wire.ErrOK, h.tree.AddWatch("/p/n", wire.AddWatchPersistent, persW))
		require.Equal(t, wire.ErrOK, h.tree.AddWatch("/", wire.AddWatchPersistentRecursive, recW))
		require.Equal(t, wire.ErrOK, h.tree.AddWatch("/p", wire.AddWatchPersistent, parPW))
		return h
	}

	t.Run("create", func(t *testing.T) {
		h := setup(t, false)
		_, events := h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/p/n", ACL: wire.OpenACLUnsafe}})
		assert.Equal(t, []WatchEvent{
			ev(existW, wire.EventNodeCreated, "/p/n"), ev(persW, wire.EventNodeCreated, "/p/n"), ev(recW, wire.EventNodeCreated, "/p/n"),
			ev(parW, wire.EventNodeChildrenChanged, "/p"), ev(parPW, wire.EventNodeChildrenChanged, "/p"),
		}, events)
		// One-shot watches are gone, persistent ones stay.
		assert.Equal(t, wire.ErrOK, h.tree.RemoveWatches("/p/n", wire.WatcherAny, persW))
		assert.Equal(t, wire.ErrNoWatcher, h.tree.RemoveWatches("/p/n", wire.WatcherData, existW))
		assert.Equal(t, wire.ErrNoWatcher, h.tree.CheckWatches("/p/n", wire.WatcherAny, existW), "no watch on /p/n left")
		assert.Equal(t, wire.ErrOK, h.tree.RemoveWatches("/p", wire.WatcherChildren, parPW))
		assert.Equal(t, wire.ErrNoWatcher, h.tree.CheckWatches("/p", wire.WatcherChildren, parW))
		assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("/", wire.WatcherData, recW))
	})

	t.Run("setData", func(t *testing.T) {
		h := setup(t, true)
		_, events := h.setData("/p/n", "x", -1)
		assert.Equal(t, []WatchEvent{
			ev(dataW, wire.EventNodeDataChanged, "/p/n"), ev(existW, wire.EventNodeDataChanged, "/p/n"),
			ev(persW, wire.EventNodeDataChanged, "/p/n"), ev(recW, wire.EventNodeDataChanged, "/p/n"),
		}, events)
		// The child watch is untouched by a data change.
		assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("/p/n", wire.WatcherChildren, childW))
		_, events = h.setData("/p/n", "y", -1)
		assert.Equal(t, []WatchEvent{ev(persW, wire.EventNodeDataChanged, "/p/n"), ev(recW, wire.EventNodeDataChanged, "/p/n")}, events)
	})

	t.Run("delete", func(t *testing.T) {
		h := setup(t, true)
		_, events := h.delete("/p/n", -1)
		assert.Equal(t, []WatchEvent{
			ev(dataW, wire.EventNodeDeleted, "/p/n"), ev(existW, wire.EventNodeDeleted, "/p/n"),
			ev(persW, wire.EventNodeDeleted, "/p/n"), ev(recW, wire.EventNodeDeleted, "/p/n"),
			ev(childW, wire.EventNodeDeleted, "/p/n"),
			ev(parW, wire.EventNodeChildrenChanged, "/p"), ev(parPW, wire.EventNodeChildrenChanged, "/p"),
		}, events)
	})

	t.Run("setACL fires nothing", func(t *testing.T) {
		h := setup(t, true)
		r, events := h.write(&Request{Op: wire.OpSetACL, Body: &wire.SetACLRequest{Path: "/p/n", ACL: wire.OpenACLUnsafe, Version: -1}})
		require.Equal(t, wire.ErrOK, r.Err)
		assert.Empty(t, events)
	})

	t.Run("child of the node", func(t *testing.T) {
		h := setup(t, true)
		_, events := h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/p/n/c", ACL: wire.OpenACLUnsafe}})
		// The recursive watch sees the descendant but no NodeChildrenChanged.
		assert.Equal(t, []WatchEvent{
			ev(recW, wire.EventNodeCreated, "/p/n/c"),
			ev(childW, wire.EventNodeChildrenChanged, "/p/n"), ev(persW, wire.EventNodeChildrenChanged, "/p/n"),
		}, events)
	})
}

// TestOneEventPerWatcher: a connection with data, exist and child watches on
// a node gets one NodeDeleted; and a getData after an addWatch on the same
// path makes that watch one-shot, as ZooKeeper's WatcherModeManager does.
func TestOneEventPerWatcher(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/n")
	h.tree.GetData("/n", nil, true, 9)
	h.tree.Exists("/n", true, 9)
	h.tree.GetChildren("/n", nil, true, 9)
	_, events := h.delete("/n", -1)
	assert.Equal(t, []WatchEvent{ev(9, wire.EventNodeDeleted, "/n")}, events)
	assert.Zero(t, h.tree.WatchCount())

	h.mustCreate("/m")
	h.tree.AddWatch("/m", wire.AddWatchPersistent, 9)
	h.tree.GetData("/m", nil, true, 9)
	_, events = h.setData("/m", "a", -1)
	assert.Equal(t, []WatchEvent{ev(9, wire.EventNodeDataChanged, "/m")}, events)
	_, events = h.setData("/m", "b", -1)
	assert.Empty(t, events, "the data watch became one-shot")
	_, events = h.delete("/m", -1)
	assert.Equal(t, []WatchEvent{ev(9, wire.EventNodeDeleted, "/m")}, events, "the child watch is still persistent")
}

// TestReadsOnMissingNodes: exists leaves a watch on a missing node,
// getData and getChildren do not.
func TestReadsOnMissingNodes(t *testing.T) {
	h := newHarness(t, Config{})
	_, err := h.tree.Exists("/x", true, 1)
	assert.Equal(t, wire.ErrNoNode, err)
	_, _, err = h.tree.GetData("/y", nil, true, 1)
	assert.Equal(t, wire.ErrNoNode, err)
	_, _, err = h.tree.GetChildren("/y", nil, true, 1)
	assert.Equal(t, wire.ErrNoNode, err)
	assert.Equal(t, 1, h.tree.WatchCount())
	_, events := h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/y", ACL: wire.OpenACLUnsafe}})
	assert.Empty(t, events)
	_, events = h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/x", ACL: wire.OpenACLUnsafe}})
	assert.Equal(t, []WatchEvent{ev(1, wire.EventNodeCreated, "/x")}, events)
}

// TestMultiEventsInOrder: a multi's events come op by op, each node's
// before its parent's.
func TestMultiEventsInOrder(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/a")
	h.tree.Exists("/a/1", true, 1)
	h.tree.GetChildren("/a", nil, true, 2)
	h.tree.GetData("/a", nil, true, 3)
	m := &MultiRequest{Ops: []MultiOp{
		{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/a/1", ACL: wire.OpenACLUnsafe}},
		{Op: wire.OpSetData, Body: &wire.SetDataRequest{Path: "/a", Data: []byte("x"), Version: -1}},
	}}
	r, events := h.write(&Request{Op: wire.OpMulti, Body: m})
	require.Equal(t, []Result{{Op: wire.OpCreate, Path: "/a/1", Stat: h.stat("/a/1")}, {Op: wire.OpSetData, Path: "/a", Stat: h.stat("/a")}}, r.Multi)
	assert.Equal(t, []WatchEvent{
		ev(1, wire.EventNodeCreated, "/a/1"), ev(2, wire.EventNodeChildrenChanged, "/a"), ev(3, wire.EventNodeDataChanged, "/a"),
	}, events)

	// A failed multi fires nothing and changes nothing.
	h.tree.Exists("/a/2", true, 1)
	before := h.tree.Digest()
	m = &MultiRequest{Ops: []MultiOp{
		{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/a/2", ACL: wire.OpenACLUnsafe}},
		{Op: wire.OpDelete, Body: &wire.PathVersionRequest{Path: "/nope", Version: -1}},
		{Op: wire.OpCheck, Body: &wire.PathVersionRequest{Path: "/a", Version: -1}},
	}}
	r, events = h.write(&Request{Op: wire.OpMulti, Body: m})
	assert.Equal(t, []Result{{Op: wire.OpError, Err: wire.ErrOK}, {Op: wire.OpError, Err: wire.ErrNoNode}, {Op: wire.OpError, Err: wire.ErrRuntimeInconsistency}}, r.Multi)
	assert.Equal(t, wire.ErrOK, r.Err)
	assert.Empty(t, events)
	assert.Equal(t, before, h.tree.Digest())
}

// TestCloseSessionFiresWatches: closing a session deletes its ephemerals
// in its txn, firing every watcher's events, its own included.
func TestCloseSessionFiresWatches(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/g")
	h.create(21, "/g/m1", "", wire.ModeEphemeral)
	h.create(21, "/g/m2", "", wire.ModeEphemeral)
	h.create(22, "/g/m3", "", wire.ModeEphemeral)
	h.tree.GetData("/g/m2", nil, true, 21)
	h.tree.GetChildren("/g", nil, true, 22)
	r, events := h.write(&Request{Session: 21, Op: wire.OpCloseSession})
	require.Equal(t, wire.ErrOK, r.Err)
	// ZooKeeper's hash-set order puts /g/m2 before /g/m1: its delete fires
	// both watches, the one-shot child watch is gone for /g/m1's.
	assert.Equal(t, []WatchEvent{ev(21, wire.EventNodeDeleted, "/g/m2"), ev(22, wire.EventNodeChildrenChanged, "/g")}, events)
	kids, _, _ := h.tree.GetChildren("/g", nil, false, 0)
	assert.Equal(t, []string{"m3"}, kids)
	assert.Empty(t, h.tree.Ephemerals(21))
	assert.Equal(t, []int64{22}, h.tree.Sessions())
}

// TestRemoveAndCheckWatches: removeWatches is per connection and by type;
// checkWatches, as in ZooKeeper 3.8, finds any connection's watch on the
// path; an unknown type is MarshallingError; the empty path never matches.
func TestRemoveAndCheckWatches(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/n")
	h.tree.GetData("/n", nil, true, 1)
	h.tree.GetChildren("/n", nil, true, 1)
	assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("/n", wire.WatcherData, 1))
	assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("/n", wire.WatcherData, 2), "another connection's watch counts")
	assert.Equal(t, wire.ErrNoWatcher, h.tree.RemoveWatches("/n", wire.WatcherData, 2), "but is not removed")
	assert.Equal(t, wire.ErrOK, h.tree.RemoveWatches("/n", wire.WatcherChildren, 1))
	assert.Equal(t, wire.ErrNoWatcher, h.tree.RemoveWatches("/n", wire.WatcherChildren, 1))
	assert.Equal(t, wire.ErrNoWatcher, h.tree.CheckWatches("/n", wire.WatcherChildren, 1))
	assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("/n", wire.WatcherAny, 1))
	assert.Equal(t, wire.ErrOK, h.tree.RemoveWatches("/n", wire.WatcherAny, 1))
	assert.Equal(t, wire.ErrNoWatcher, h.tree.CheckWatches("/n", wire.WatcherAny, 1))
	for _, bad := range []wire.WatcherType{0, 4, -1} {
		assert.Equal(t, wire.ErrMarshallingError, h.tree.CheckWatches("/n", bad, 1))
		assert.Equal(t, wire.ErrMarshallingError, h.tree.RemoveWatches("/n", bad, 1))
	}
	// A watch set through "" is kept under "": checkWatches never sees
	// it, removeWatches does.
	h.tree.GetData("", nil, true, 1)
	assert.Equal(t, wire.ErrNoWatcher, h.tree.CheckWatches("", wire.WatcherData, 1))
	assert.Equal(t, wire.ErrNoWatcher, h.tree.CheckWatches("/", wire.WatcherAny, 1))
	assert.Equal(t, wire.ErrOK, h.tree.RemoveWatches("", wire.WatcherData, 1))

	// Paths that are not absolute: ZooKeeper's walk up the parents throws
	// (MarshallingError) at once for one without '/', and for "a/b" only
	// while the table holds a recursive watch (it then walks beyond the
	// path itself); removeWatches never walks.
	h.tree.Exists("bad", true, 1)
	assert.Equal(t, wire.ErrMarshallingError, h.tree.CheckWatches("bad", wire.WatcherData, 1), "even with a watch there")
	assert.Equal(t, wire.ErrMarshallingError, h.tree.CheckWatches("bad", wire.WatcherChildren, 1))
	assert.Equal(t, wire.ErrOK, h.tree.RemoveWatches("bad", wire.WatcherData, 1))
	assert.Equal(t, wire.ErrNoWatcher, h.tree.CheckWatches("a/b", wire.WatcherAny, 1))
	h.tree.Exists("a/b", true, 1)
	assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("a/b", wire.WatcherData, 1))
	require.Equal(t, wire.ErrOK, h.tree.AddWatch("/n", wire.AddWatchPersistentRecursive, 2))
	assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("a/b", wire.WatcherData, 1), "found at the path itself")
	assert.Equal(t, wire.ErrMarshallingError, h.tree.CheckWatches("a/b", wire.WatcherAny, 1), "the child table walks up")
	assert.Equal(t, wire.ErrMarshallingError, h.tree.CheckWatches("a/c", wire.WatcherData, 1))
	assert.Equal(t, wire.ErrNoWatcher, h.tree.CheckWatches("/a/b", wire.WatcherData, 1))
	require.Equal(t, wire.ErrOK, h.tree.RemoveWatches("/n", wire.WatcherAny, 2))
	assert.Equal(t, wire.ErrNoWatcher, h.tree.CheckWatches("a/c", wire.WatcherData, 1), "no recursive watch left")

	// Any also removes a persistent-recursive watch.
	h.tree.AddWatch("/", wire.AddWatchPersistentRecursive, 3)
	assert.Equal(t, wire.ErrOK, h.tree.RemoveWatches("/", wire.WatcherAny, 3))
	_, events := h.setData("/n", "x", -1)
	assert.Empty(t, events)

	for w := WatcherID(1); w <= 50; w++ {
		h.tree.GetData("/n", nil, true, w)
		h.tree.AddWatch("/n", wire.AddWatchPersistentRecursive, w+100)
	}
	for w := WatcherID(1); w <= 50; w++ {
		h.tree.RemoveWatcher(w)
		h.tree.RemoveWatcher(w + 100)
	}
	assert.Zero(t, h.tree.WatchCount())
	_, events = h.setData("/n", "y", -1)
	assert.Empty(t, events)
}

// TestManyWatchersInIDOrder: the watchers one change reaches get their
// events in WatcherID order, whatever the registration order.
func TestManyWatchersInIDOrder(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/n")
	for _, w := range []WatcherID{42, 7, 99, 1, 63, 8} {
		h.tree.GetData("/n", nil, true, w)
	}
	_, events := h.setData("/n", "x", -1)
	var order []WatcherID
	for _, e := range events {
		order = append(order, e.Watcher)
	}
	assert.Equal(t, []WatcherID{1, 7, 8, 42, 63, 99}, order)
}

// TestSetWatches: on reconnect, changes after the client's zxid fire at
// once and the rest is registered again.
func TestSetWatches(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/same")     // zxid 1
	h.mustCreate("/changed")  // 2
	h.mustCreate("/kids")     // 3
	h.mustCreate("/kids/old") // 4
	last := h.zxid
	h.setData("/changed", "x", -1)
	h.mustCreate("/kids/new")
	h.mustCreate("/born")
	req := &wire.SetWatchesRequest{
		RelativeZxid:               last,
		DataWatches:                []string{"/same", "/changed", "/gone"},
		ExistWatches:               []string{"/born", "/unborn"},
		ChildWatches:               []string{"/kids", "/same", "/gone"},
		PersistentWatches:          []string{},
		PersistentRecursiveWatches: []string{"/same"},
		Persistent:                 true,
	}
	events, err := h.tree.SetWatches(req, 5, nil)
	require.Equal(t, wire.ErrOK, err)
	assert.Equal(t, []WatchEvent{
		ev(5, wire.EventNodeDataChanged, "/changed"), ev(5, wire.EventNodeDeleted, "/gone"),
		ev(5, wire.EventNodeCreated, "/born"),
		ev(5, wire.EventNodeChildrenChanged, "/kids"), ev(5, wire.EventNodeDeleted, "/gone"),
	}, events)
	assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("/same", wire.WatcherData, 5))
	assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("/same", wire.WatcherChildren, 5))
	assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("/unborn", wire.WatcherData, 5))
	assert.Equal(t, wire.ErrNoWatcher, h.tree.CheckWatches("/kids", wire.WatcherChildren, 5))
	// The recursive watch registered last on /same replaced the one-shot
	// data and child watches there (one mode per path and table): a child
	// shows as NodeCreated only, and they survive.
	_, events = h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/same/c", ACL: wire.OpenACLUnsafe}})
	assert.Equal(t, []WatchEvent{ev(5, wire.EventNodeCreated, "/same/c")}, events)
	_, events = h.setData("/same", "x", -1)
	assert.Equal(t, []WatchEvent{ev(5, wire.EventNodeDataChanged, "/same")}, events)
	_, events = h.setData("/same", "y", -1)
	assert.Equal(t, []WatchEvent{ev(5, wire.EventNodeDataChanged, "/same")}, events)
}

// TestEventsFilteredByACL: a watcher only gets events about nodes its
// identities may read (Debian's ZooKeeper 3.8.0, CVE-2024-23944): the
// node's own ACL for created, changed and deleted nodes, the parent's for
// NodeChildrenChanged; the one-shot watch is used up all the same;
// setWatches' events are not filtered.
func TestEventsFilteredByACL(t *testing.T) {
	h := newHarness(t, Config{})
	owner := []wire.Id{{Scheme: "digest", ID: DigestID("owner:pw")}}
	private := []wire.ACL{{Perms: wire.PermAll, ID: owner[0]}}
	createWith := func(path string, acl []wire.ACL) {
		r, _ := h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: path, ACL: acl}, Auth: owner})
		require.Equal(t, wire.ErrOK, r.Err)
	}
	createWith("/s", private)
	createWith("/open", wire.OpenACLUnsafe)
	const stranger, friend WatcherID = 1, 2
	read := func(w WatcherID, auth []wire.Id, op wire.OpCode, body wire.Record) {
		h.tree.Read(&Request{Op: op, Body: body, Auth: auth}, w, nil)
	}
	read(stranger, nil, wire.OpExists, &wire.PathWatchRequest{Path: "/s", Watch: true})
	read(friend, owner, wire.OpExists, &wire.PathWatchRequest{Path: "/s", Watch: true})
	read(stranger, nil, wire.OpAddWatch, &wire.AddWatchRequest{Path: "/open", Mode: wire.AddWatchPersistentRecursive})
	read(stranger, nil, wire.OpGetChildren, &wire.PathWatchRequest{Path: "/open", Watch: true})

	_, events := h.write(&Request{Op: wire.OpSetData, Body: &wire.SetDataRequest{Path: "/s", Version: -1}, Auth: owner})
	assert.Equal(t, []WatchEvent{ev(friend, wire.EventNodeDataChanged, "/s")}, events)
	assert.Equal(t, wire.ErrNoWatcher, h.tree.RemoveWatches("/s", wire.WatcherData, stranger), "used up though dropped")

	createWith("/open/hidden", private)
	_, events = h.write(&Request{Op: wire.OpDelete, Body: &wire.PathVersionRequest{Path: "/open/hidden", Version: -1}, Auth: owner})
	// NodeCreated and NodeDeleted of /open/hidden were dropped; the parent
	// is readable, so NodeChildrenChanged /open went through (at the create).
	assert.Empty(t, events)

	// Once the connection authenticates, events flow.
	h.tree.SetWatcherAuth(stranger, owner)
	createWith("/open/hidden2", private)
	_, events = h.write(&Request{Op: wire.OpSetData, Body: &wire.SetDataRequest{Path: "/open/hidden2", Version: -1}, Auth: owner})
	assert.Equal(t, []WatchEvent{ev(stranger, wire.EventNodeDataChanged, "/open/hidden2")}, events)

	// setWatches fires at once, unfiltered.
	h.tree.SetWatcherAuth(stranger, nil)
	got, err := h.tree.SetWatches(&wire.SetWatchesRequest{RelativeZxid: 0, DataWatches: []string{"/s"}, ExistWatches: []string{}, ChildWatches: []string{}}, stranger, nil)
	assert.Equal(t, wire.ErrOK, err)
	assert.Equal(t, []WatchEvent{ev(stranger, wire.EventNodeDataChanged, "/s")}, got)
}

// TestSetWatchesNullList: ZooKeeper 3.8 loops over each list of a
// setWatches request in turn, so a null list (jute's null vector) throws
// there: MarshallingError, after the lists before it fired and registered.
// setWatches (not setWatches2) carries no persistent lists to be null.
func TestSetWatchesNullList(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/here")
	events, err := h.tree.SetWatches(&wire.SetWatchesRequest{DataWatches: []string{"/gone"}, ExistWatches: []string{"/unborn", "/here"}}, 5, nil)
	assert.Equal(t, wire.ErrMarshallingError, err)
	assert.Equal(t, []WatchEvent{ev(5, wire.EventNodeDeleted, "/gone"), ev(5, wire.EventNodeCreated, "/here")}, events)
	assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("/unborn", wire.WatcherData, 5), "the exist list was registered")

	events, err = h.tree.SetWatches(&wire.SetWatchesRequest{ChildWatches: []string{"/here"}}, 6, nil)
	assert.Equal(t, wire.ErrMarshallingError, err)
	assert.Empty(t, events, "the null data list comes first")
	assert.Equal(t, wire.ErrNoWatcher, h.tree.CheckWatches("/here", wire.WatcherChildren, 6))

	empty := []string{}
	_, err = h.tree.SetWatches(&wire.SetWatchesRequest{DataWatches: empty, ExistWatches: empty, ChildWatches: empty}, 7, nil)
	assert.Equal(t, wire.ErrOK, err, "setWatches has no persistent lists")
	_, err = h.tree.SetWatches(&wire.SetWatchesRequest{DataWatches: empty, ExistWatches: empty, ChildWatches: empty,
		PersistentWatches: []string{"/here"}, Persistent: true}, 7, nil)
	assert.Equal(t, wire.ErrMarshallingError, err, "setWatches2's recursive list is null")
	assert.Equal(t, wire.ErrOK, h.tree.CheckWatches("/here", wire.WatcherChildren, 7), "the persistent list was registered")
}
