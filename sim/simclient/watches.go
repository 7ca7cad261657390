package simclient

import (
	"slices"

	"github.com/zabd/zabd/wire"
)

// watchSet is what the client believes it has registered, by kind, so that it
// can re-register everything after a reconnect.
type watchSet struct {
	data, exist, child, persistent, recursive map[string]bool
}

func newWatchSet() watchSet {
	return watchSet{data: map[string]bool{}, exist: map[string]bool{}, child: map[string]bool{},
		persistent: map[string]bool{}, recursive: map[string]bool{}}
}

// registered updates the set after a successful (or, for exists, NoNode)
// reply to op.
func (w *watchSet) registered(op Op, err wire.ErrCode) {
	switch {
	case op.Code == wire.OpAddWatch && err == wire.ErrOK:
		if op.AddMode == wire.AddWatchPersistentRecursive {
			w.recursive[op.Path] = true
		} else {
			w.persistent[op.Path] = true
		}
	case !op.Watch:
	case op.Code == wire.OpExists && err == wire.ErrOK:
		w.data[op.Path] = true
	case op.Code == wire.OpExists && err == wire.ErrNoNode:
		w.exist[op.Path] = true
	case op.Code == wire.OpGetData && err == wire.ErrOK:
		w.data[op.Path] = true
	case (op.Code == wire.OpGetChildren || op.Code == wire.OpGetChildren2) && err == wire.ErrOK:
		w.child[op.Path] = true
	}
}

// removed forgets watches after removeWatches succeeded.
func (w *watchSet) removed(op Op) {
	if op.WType == wire.WatcherData || op.WType == wire.WatcherAny {
		delete(w.data, op.Path)
		delete(w.exist, op.Path)
	}
	if op.WType == wire.WatcherChildren || op.WType == wire.WatcherAny {
		delete(w.child, op.Path)
	}
	if op.WType == wire.WatcherAny {
		delete(w.persistent, op.Path)
		delete(w.recursive, op.Path)
	}
}

// fired forgets the one-shot watches an event consumes.
func (w *watchSet) fired(ev wire.WatcherEvent) {
	switch ev.Type {
	case wire.EventNodeCreated, wire.EventNodeDataChanged:
		delete(w.data, ev.Path)
		delete(w.exist, ev.Path)
	case wire.EventNodeDeleted:
		delete(w.data, ev.Path)
		delete(w.exist, ev.Path)
		delete(w.child, ev.Path)
	case wire.EventNodeChildrenChanged:
		delete(w.child, ev.Path)
	}
}

// setWatches builds the re-registration request, lists sorted so the
// request is the same on every run; the opcode is setWatches2 when
// persistent watches must be carried.
func (w *watchSet) setWatches(lastZxid int64) (wire.OpCode, *wire.SetWatchesRequest, bool) {
	req := &wire.SetWatchesRequest{
		RelativeZxid: lastZxid,
		DataWatches:  sortedKeys(w.data), ExistWatches: sortedKeys(w.exist), ChildWatches: sortedKeys(w.child),
		PersistentWatches: sortedKeys(w.persistent), PersistentRecursiveWatches: sortedKeys(w.recursive),
	}
	req.Persistent = len(req.PersistentWatches)+len(req.PersistentRecursiveWatches) > 0
	any := len(req.DataWatches)+len(req.ExistWatches)+len(req.ChildWatches) > 0 || req.Persistent
	if req.Persistent {
		return wire.OpSetWatches2, req, any
	}
	return wire.OpSetWatches, req, any
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
