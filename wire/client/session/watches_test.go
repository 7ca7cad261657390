package session

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zabd/zabd/wire"
)

func TestWatchTableFiresAsTheJavaClient(t *testing.T) {
	w := newWatchTable()
	w.data["/a"], w.child["/a"], w.exist["/b"] = true, true, true
	w.recursive["/r"], w.persistent["/p"] = true, true

	assert.True(t, w.fire(wire.EventNodeDataChanged, "/a"))
	assert.False(t, w.data["/a"], "a data watch is one-shot")
	assert.True(t, w.child["/a"], "a data event leaves the child watch")
	assert.False(t, w.fire(wire.EventNodeDataChanged, "/a"), "nothing left to fire")
	assert.True(t, w.fire(wire.EventNodeDeleted, "/a"), "a delete fires the child watch")
	assert.True(t, w.fire(wire.EventNodeCreated, "/b"), "an exist watch fires on create")

	assert.True(t, w.fire(wire.EventNodeCreated, "/r/x/y"), "a recursive watch covers descendants")
	assert.True(t, w.fire(wire.EventNodeDataChanged, "/r"))
	assert.True(t, w.recursive["/r"], "persistent watches stay")
	assert.True(t, w.fire(wire.EventNodeChildrenChanged, "/p"))
	assert.False(t, w.fire(wire.EventNodeCreated, "/p/x"), "a plain persistent watch does not cover children")
	assert.False(t, w.fire(wire.EventNone, "/p"))
}

func TestWatchTableRemoval(t *testing.T) {
	w := newWatchTable()
	w.data["/a"], w.exist["/a"], w.child["/a"], w.persistent["/a"] = true, true, true, true
	assert.True(t, w.has(wire.WatcherChildren, "/a"))
	assert.Equal(t, []wire.EventType{wire.EventDataWatchRemoved}, w.remove(wire.WatcherData, "/a"))
	assert.Empty(t, w.remove(wire.WatcherData, "/a"), "data and exist watches went together")
	assert.True(t, w.has(wire.WatcherData, "/a"), "a persistent watch counts for has, as in ZKWatchManager.containsWatcher")
	assert.Equal(t, []wire.EventType{wire.EventChildWatchRemoved, wire.EventPersistentWatchRemoved}, w.remove(wire.WatcherAny, "/a"))
	assert.True(t, w.empty())

	w.recursive["/r"], w.child["/c"] = true, true
	req := w.setWatches(7)
	assert.Equal(t, wire.SetWatchesRequest{RelativeZxid: 7, DataWatches: []string{}, ExistWatches: []string{}, ChildWatches: []string{"/c"},
		PersistentWatches: []string{}, PersistentRecursiveWatches: []string{"/r"}, Persistent: true}, req)
}
