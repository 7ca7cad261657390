package session

import (
	"slices"
	"strings"

	"github.com/zabd/zabd/wire"
)

// watchTable is the client-side record of a session's watches, one set of
// paths per kind, as the Java client's ZKWatchManager keeps them (every watch
// here belongs to the one default watcher, so a set of paths is enough).
type watchTable struct {
	data, exist, child, persistent, recursive map[string]bool
}

func newWatchTable() watchTable {
	return watchTable{data: map[string]bool{}, exist: map[string]bool{}, child: map[string]bool{},
		persistent: map[string]bool{}, recursive: map[string]bool{}}
}

func (w *watchTable) empty() bool {
	return len(w.data)+len(w.exist)+len(w.child)+len(w.persistent)+len(w.recursive) == 0
}

// setWatches is what re-registers the table on a new connection.
func (w *watchTable) setWatches(lastZxid int64) wire.SetWatchesRequest {
	req := wire.SetWatchesRequest{RelativeZxid: lastZxid,
		DataWatches: sortedKeys(w.data), ExistWatches: sortedKeys(w.exist), ChildWatches: sortedKeys(w.child),
		PersistentWatches: sortedKeys(w.persistent), PersistentRecursiveWatches: sortedKeys(w.recursive)}
	req.Persistent = len(req.PersistentWatches)+len(req.PersistentRecursiveWatches) > 0
	return req
}

// fire reports whether a server event on path matches a watch, and removes
// the one-shot watches it fires (ZKWatchManager.materialize).
func (w *watchTable) fire(t wire.EventType, path string) bool {
	matched := false
	take := func(set map[string]bool) {
		if set[path] {
			delete(set, path)
			matched = true
		}
	}
	switch t {
	case wire.EventNodeDataChanged, wire.EventNodeCreated:
		take(w.data)
		take(w.exist)
	case wire.EventNodeChildrenChanged:
		take(w.child)
	case wire.EventNodeDeleted:
		take(w.data)
		take(w.exist)
		take(w.child)
	default:
		return false
	}
	if w.persistent[path] {
		matched = true
	}
	// A persistent-recursive watch on the path or any ancestor matches.
	for p := path; ; p = parent(p) {
		if w.recursive[p] {
			matched = true
		}
		if p == "/" || p == "" {
			break
		}
	}
	return matched
}

// has reports whether the table holds a watch that removeWatches of type t
// could name on path (ZKWatchManager.containsWatcher: persistent watches
// count for every type).
func (w *watchTable) has(t wire.WatcherType, path string) bool {
	any := w.persistent[path] || w.recursive[path]
	switch t {
	case wire.WatcherChildren:
		return any || w.child[path]
	case wire.WatcherData:
		return any || w.data[path] || w.exist[path]
	default:
		return any || w.child[path] || w.data[path] || w.exist[path]
	}
}

// remove drops the watches of type t on path and returns the local events
// their removal delivers, in a fixed order (the Java client's order comes
// from a HashMap and is not fixed). Like the Java client, children and data
// removal leave persistent watches in place; only Any removes them.
func (w *watchTable) remove(t wire.WatcherType, path string) []wire.EventType {
	var evs []wire.EventType
	drop := func(sets ...map[string]bool) bool {
		found := false
		for _, set := range sets {
			if set[path] {
				delete(set, path)
				found = true
			}
		}
		return found
	}
	if (t == wire.WatcherChildren || t == wire.WatcherAny) && drop(w.child) {
		evs = append(evs, wire.EventChildWatchRemoved)
	}
	if (t == wire.WatcherData || t == wire.WatcherAny) && drop(w.data, w.exist) {
		evs = append(evs, wire.EventDataWatchRemoved)
	}
	if t == wire.WatcherAny && drop(w.persistent, w.recursive) {
		evs = append(evs, wire.EventPersistentWatchRemoved)
	}
	return evs
}

func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
