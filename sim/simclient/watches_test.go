package simclient

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
)

func TestWatchSetFollowsRegistrationsEventsAndRemovals(t *testing.T) {
	w := newWatchSet()
	w.registered(Op{Code: wire.OpGetData, Path: "/a", Watch: true}, wire.ErrOK)
	w.registered(Op{Code: wire.OpExists, Path: "/b", Watch: true}, wire.ErrNoNode)
	w.registered(Op{Code: wire.OpGetChildren2, Path: "/a", Watch: true}, wire.ErrOK)
	w.registered(Op{Code: wire.OpGetData, Path: "/c", Watch: true}, wire.ErrNoNode) // no watch on a missing node
	w.registered(Op{Code: wire.OpAddWatch, Path: "/p", AddMode: wire.AddWatchPersistentRecursive}, wire.ErrOK)

	code, req, any := w.setWatches(7)
	require.True(t, any)
	require.Equal(t, wire.OpSetWatches2, code, "persistent watches need setWatches2")
	require.Equal(t, int64(7), req.RelativeZxid)
	require.Equal(t, []string{"/a"}, req.DataWatches)
	require.Equal(t, []string{"/b"}, req.ExistWatches)
	require.Equal(t, []string{"/a"}, req.ChildWatches)
	require.Equal(t, []string{"/p"}, req.PersistentRecursiveWatches)

	w.fired(wire.WatcherEvent{Type: wire.EventNodeCreated, Path: "/b"})
	w.fired(wire.WatcherEvent{Type: wire.EventNodeDeleted, Path: "/a"})
	require.Empty(t, w.exist)
	require.Empty(t, w.data)
	require.Empty(t, w.child, "NodeDeleted ends child watches too")

	require.Equal(t, []wire.EventType{wire.EventPersistentWatchRemoved}, w.removed(Op{Path: "/p", WType: wire.WatcherAny}))
	require.Empty(t, w.removed(Op{Path: "/p", WType: wire.WatcherAny}), "nothing left to remove, no event")
	code, _, any = w.setWatches(8)
	require.False(t, any)
	require.Equal(t, wire.OpSetWatches, code)
}
