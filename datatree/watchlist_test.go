package datatree

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/wire"
)

func TestWatchesListing(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/a")
	h.mustCreate("/a/b")
	assert.Empty(t, h.tree.Watches())

	// Registered out of order, by two watchers.
	require.Equal(t, wire.ErrOK, h.tree.AddWatch("/a", wire.AddWatchPersistentRecursive, 9))
	_, _, err := h.tree.GetChildren("/a", nil, true, 2)
	require.Equal(t, wire.ErrOK, err)
	h.tree.Exists("/missing", true, 2)
	_, _, err = h.tree.GetData("/a/b", nil, true, 9)
	require.Equal(t, wire.ErrOK, err)
	_, _, err = h.tree.GetData("/a", nil, true, 2)
	require.Equal(t, wire.ErrOK, err)
	require.Equal(t, wire.ErrOK, h.tree.AddWatch("/a/b", wire.AddWatchPersistent, 2))
	require.Equal(t, wire.ErrOK, h.tree.RemoveWatches("/a/b", wire.WatcherChildren, 2))

	want := []WatchInfo{
		{Path: "/a", Watcher: 2, Table: DataTable, Mode: OneShot},
		{Path: "/a", Watcher: 2, Table: ChildTable, Mode: OneShot},
		{Path: "/a", Watcher: 9, Table: DataTable, Mode: PersistentRecursive},
		{Path: "/a", Watcher: 9, Table: ChildTable, Mode: PersistentRecursive},
		{Path: "/a/b", Watcher: 2, Table: DataTable, Mode: Persistent},
		{Path: "/a/b", Watcher: 9, Table: DataTable, Mode: OneShot},
		{Path: "/missing", Watcher: 2, Table: DataTable, Mode: OneShot},
	}
	assert.Equal(t, want, h.tree.Watches())
	assert.Equal(t, len(want), h.tree.WatchCount())

	// A data change uses up the one-shot data watches of /a/b only.
	_, events := h.setData("/a/b", "x", -1)
	assert.Equal(t, []WatchEvent{ev(2, wire.EventNodeDataChanged, "/a/b"), ev(9, wire.EventNodeDataChanged, "/a/b")}, events, "watcher 9: one event for its one-shot and its recursive watch")
	assert.Equal(t, append(want[:5:5], want[6]), h.tree.Watches())

	h.tree.RemoveWatcher(2)
	assert.Equal(t, []WatchInfo{want[2], want[3]}, h.tree.Watches())
}

// TestWatchesListingProperties: whatever watches are registered and removed,
// in whatever order, the listing is sorted by path, watcher, table, has one
// entry per registration, and agrees with CheckWatches.
func TestWatchesListingProperties(t *testing.T) {
	paths := []string{"/", "/a", "/a/b", "/c", "/zz"}
	rapid.Check(t, func(rt *rapid.T) {
		tree := New(Config{})
		for i := rapid.IntRange(0, 40).Draw(rt, "ops"); i > 0; i-- {
			p := rapid.SampledFrom(paths).Draw(rt, "path")
			w := WatcherID(rapid.IntRange(1, 4).Draw(rt, "watcher"))
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0:
				tree.Exists(p, true, w)
			case 1:
				tree.AddWatch(p, wire.AddWatchPersistent, w)
			case 2:
				tree.AddWatch(p, wire.AddWatchPersistentRecursive, w)
			case 3:
				tree.RemoveWatches(p, rapid.SampledFrom([]wire.WatcherType{wire.WatcherData, wire.WatcherChildren, wire.WatcherAny}).Draw(rt, "type"), w)
			case 4:
				tree.RemoveWatcher(w)
			}
		}
		list := tree.Watches()
		assert.Equal(rt, tree.WatchCount(), len(list))
		assert.True(rt, sort.SliceIsSorted(list, func(i, j int) bool {
			a, b := list[i], list[j]
			return fmt.Sprintf("%s\x00%020d%d", a.Path, a.Watcher, a.Table) < fmt.Sprintf("%s\x00%020d%d", b.Path, b.Watcher, b.Table)
		}))
		seen := map[WatchInfo]bool{}
		for _, wi := range list {
			key := WatchInfo{Path: wi.Path, Watcher: wi.Watcher, Table: wi.Table}
			assert.False(rt, seen[key], "one entry per watcher, path and table: %v", wi)
			seen[key] = true
			typ := wire.WatcherData
			if wi.Table == ChildTable {
				typ = wire.WatcherChildren
			}
			assert.Equal(rt, wire.ErrOK, tree.CheckWatches(wi.Path, typ, wi.Watcher))
		}
		assert.Equal(rt, list, tree.Watches(), "listing twice gives the same list")
	})
}
