package datatree

import (
	"sort"
	"strings"

	"github.com/zabd/zabd/wire"
)

// watchMode is how a watcher watches one path in one table
// (ZooKeeper's WatcherMode).
type watchMode uint8

const (
	modeStandard            watchMode = iota // one-shot
	modePersistent                           // stays; this path only
	modePersistentRecursive                  // stays; this path and every descendant
)

type watchEntry struct {
	watcher WatcherID
	mode    watchMode
}

// watchTable is one of ZooKeeper's two WatchManagers (data, child): per path
// the watchers, each with one mode — a later registration on the same path
// replaces the mode, as ZooKeeper's WatcherModeManager does.
type watchTable struct {
	byPath    map[string][]watchEntry // sorted by watcher
	recursive int                     // entries in modePersistentRecursive: while 0, triggers skip ancestors
}

// Bits of watchManager.byWatcher: which tables hold the watcher for a path.
const (
	inData  uint8 = 1
	inChild uint8 = 2
)

// watchManager holds every watch of the tree, and the identities of the
// watchers, against which events are filtered.
type watchManager struct {
	data, child watchTable
	byWatcher   map[WatcherID]map[string]uint8
	auth        map[WatcherID][]wire.Id
}

func newWatchManager() watchManager {
	return watchManager{
		data:      watchTable{byPath: make(map[string][]watchEntry)},
		child:     watchTable{byPath: make(map[string][]watchEntry)},
		byWatcher: make(map[WatcherID]map[string]uint8),
		auth:      make(map[WatcherID][]wire.Id),
	}
}

func (m *watchManager) table(bit uint8) *watchTable {
	if bit == inData {
		return &m.data
	}
	return &m.child
}

// add registers w on path in the table bit with mode.
func (m *watchManager) add(bit uint8, path string, w WatcherID, mode watchMode) {
	tb := m.table(bit)
	list := tb.byPath[path]
	i := sort.Search(len(list), func(i int) bool { return list[i].watcher >= w })
	if i < len(list) && list[i].watcher == w {
		if list[i].mode == modePersistentRecursive {
			tb.recursive--
		}
		list[i].mode = mode
	} else {
		list = append(list, watchEntry{})
		copy(list[i+1:], list[i:])
		list[i] = watchEntry{watcher: w, mode: mode}
		tb.byPath[path] = list
	}
	if mode == modePersistentRecursive {
		tb.recursive++
	}
	paths := m.byWatcher[w]
	if paths == nil {
		paths = make(map[string]uint8)
		m.byWatcher[w] = paths
	}
	paths[path] |= bit
}

// remove drops w's watch on path from the table bit; false when there was none.
func (m *watchManager) remove(bit uint8, path string, w WatcherID) bool {
	tb := m.table(bit)
	list := tb.byPath[path]
	i := sort.Search(len(list), func(i int) bool { return list[i].watcher >= w })
	if i == len(list) || list[i].watcher != w {
		return false
	}
	m.dropEntry(bit, tb, path, list, i)
	return true
}

// dropEntry removes list[i] (of path in table tb) and its index entry.
func (m *watchManager) dropEntry(bit uint8, tb *watchTable, path string, list []watchEntry, i int) {
	w := list[i].watcher
	if list[i].mode == modePersistentRecursive {
		tb.recursive--
	}
	list = append(list[:i], list[i+1:]...)
	if len(list) == 0 {
		delete(tb.byPath, path)
	} else {
		tb.byPath[path] = list
	}
	if paths := m.byWatcher[w]; paths != nil {
		if b := paths[path] &^ bit; b != 0 {
			paths[path] = b
		} else {
			delete(paths, path)
			if len(paths) == 0 {
				delete(m.byWatcher, w)
			}
		}
	}
}

// removeWatcher drops every watch of w (its connection closed).
func (m *watchManager) removeWatcher(w WatcherID) {
	paths := m.byWatcher[w]
	// Sorted so that the work done does not depend on map order.
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		bits := paths[p]
		if bits&inData != 0 {
			m.remove(inData, p, w)
		}
		if bits&inChild != 0 {
			m.remove(inChild, p, w)
		}
	}
}

// trigger is WatchManager.triggerWatch: it collects the watchers of path in
// table bit that an event of type typ reaches — watchers of path itself
// (one-shot ones removed) and, for anything but NodeChildrenChanged,
// recursive watchers of its ancestors — and appends one event for each, in
// watcher order, skipping those in suppress and those whose identities are
// not granted READ by acl (the ACL of the node the event is about: Debian's
// ZooKeeper 3.8.0 carries the fix of CVE-2024-23944, which drops such
// events; the watch is used up all the same). It returns the watchers
// reached (suppressed and filtered ones included), sorted.
func (m *watchManager) trigger(bit uint8, path string, typ wire.EventType, acl []wire.ACL, suppress []WatcherID, events []WatchEvent) ([]WatchEvent, []WatcherID) {
	tb := m.table(bit)
	var reached []WatcherID
	if list := tb.byPath[path]; len(list) > 0 {
		for i := 0; i < len(list); {
			e := list[i]
			if e.mode == modePersistentRecursive && typ == wire.EventNodeChildrenChanged {
				i++
				continue
			}
			reached = append(reached, e.watcher)
			if e.mode == modeStandard {
				m.dropEntry(bit, tb, path, list, i)
				list = tb.byPath[path]
				continue
			}
			i++
		}
	}
	if tb.recursive > 0 && typ != wire.EventNodeChildrenChanged && path != "/" {
		for p := parentOf(path); ; p = parentOf(p) {
			for _, e := range tb.byPath[p] {
				if e.mode == modePersistentRecursive {
					reached = append(reached, e.watcher)
				}
			}
			if p == "/" {
				break
			}
		}
	}
	if len(reached) == 0 {
		return events, nil
	}
	if len(reached) > 1 {
		sort.Slice(reached, func(i, j int) bool { return reached[i] < reached[j] })
		reached = dedupSorted(reached)
	}
	for _, w := range reached {
		if containsSorted(suppress, w) || !checkACL(acl, wire.PermRead, m.auth[w]) {
			continue
		}
		events = append(events, WatchEvent{Watcher: w, Event: wire.WatcherEvent{Type: typ, State: wire.StateSyncConnected, Path: path}})
	}
	return events, reached
}

func dedupSorted(ws []WatcherID) []WatcherID {
	out := ws[:1]
	for _, w := range ws[1:] {
		if w != out[len(out)-1] {
			out = append(out, w)
		}
	}
	return out
}

func containsSorted(ws []WatcherID, w WatcherID) bool {
	i := sort.Search(len(ws), func(i int) bool { return ws[i] >= w })
	return i < len(ws) && ws[i] == w
}

// fireCreated appends the events of a node created at path with acl, under
// a parent with parentACL.
func (t *Tree) fireCreated(path string, acl, parentACL []wire.ACL, events []WatchEvent) []WatchEvent {
	events, _ = t.watches.trigger(inData, path, wire.EventNodeCreated, acl, nil, events)
	events, _ = t.watches.trigger(inChild, parentOf(path), wire.EventNodeChildrenChanged, parentACL, nil, events)
	return events
}

// fireDeleted appends the events of the node at path, which had acl,
// deleted: one NodeDeleted per watcher however many of its watches the node
// had.
func (t *Tree) fireDeleted(path string, acl, parentACL []wire.ACL, events []WatchEvent) []WatchEvent {
	events, reached := t.watches.trigger(inData, path, wire.EventNodeDeleted, acl, nil, events)
	events, _ = t.watches.trigger(inChild, path, wire.EventNodeDeleted, acl, reached, events)
	events, _ = t.watches.trigger(inChild, parentOf(path), wire.EventNodeChildrenChanged, parentACL, nil, events)
	return events
}

// fireDataChanged appends the events of path's data set.
func (t *Tree) fireDataChanged(path string, acl []wire.ACL, events []WatchEvent) []WatchEvent {
	events, _ = t.watches.trigger(inData, path, wire.EventNodeDataChanged, acl, nil, events)
	return events
}

// SetWatcherAuth records the identities of watcher w (its connection's, as
// in Request.Auth): the events w's watches fire are dropped when these do
// not grant READ on the node they are about, as Debian's ZooKeeper 3.8.0
// does (CVE-2024-23944). Read records the request's identities whenever it
// registers a watch; call this when a connection's identities change
// (addauth). A watcher never described has no identities: it gets events
// only for nodes anyone may read.
func (t *Tree) SetWatcherAuth(w WatcherID, auth []wire.Id) { t.watches.auth[w] = auth }

// AddWatch registers a persistent or persistent-recursive watch (addWatch):
// on both tables, as ZooKeeper does. ZooKeeper 3.8 checks no ACL and does
// not need the node to exist.
func (t *Tree) AddWatch(path string, mode wire.AddWatchMode, w WatcherID) wire.ErrCode {
	var m watchMode
	switch mode {
	case wire.AddWatchPersistent:
		m = modePersistent
	case wire.AddWatchPersistentRecursive:
		m = modePersistentRecursive
	default:
		return wire.ErrMarshallingError
	}
	t.watches.add(inData, path, w, m)
	t.watches.add(inChild, path, w, m)
	return wire.ErrOK
}

// tableBits maps a WatcherType to the tables it selects; ok is false for a
// type ZooKeeper does not know, which it answers with MarshallingError.
func tableBits(typ wire.WatcherType) (uint8, bool) {
	switch typ {
	case wire.WatcherChildren:
		return inChild, true
	case wire.WatcherData:
		return inData, true
	case wire.WatcherAny:
		return inData | inChild, true
	}
	return 0, false
}

// RemoveWatches removes w's watches of type typ on path, whatever their mode
// (removeWatches); NoWatcher when it had none.
func (t *Tree) RemoveWatches(path string, typ wire.WatcherType, w WatcherID) wire.ErrCode {
	bits, ok := tableBits(typ)
	if !ok {
		return wire.ErrMarshallingError
	}
	removed := false
	if bits&inChild != 0 && t.watches.remove(inChild, path, w) {
		removed = true
	}
	if bits&inData != 0 && t.watches.remove(inData, path, w) {
		removed = true
	}
	if !removed {
		return wire.ErrNoWatcher
	}
	return wire.ErrOK
}

// CheckWatches answers checkWatches as ZooKeeper 3.8's
// WatchManager.containsWatcher does: OK when the tables typ selects hold a
// watch on exactly path — any connection's, not only w's — else NoWatcher.
// The empty path (the root's alias) never has one. A path that is not
// absolute can make ZooKeeper fail the request (see containsWatcher); the
// child table is asked first, and both are asked whatever the first says.
func (t *Tree) CheckWatches(path string, typ wire.WatcherType, w WatcherID) wire.ErrCode {
	bits, ok := tableBits(typ)
	if !ok {
		return wire.ErrMarshallingError
	}
	found := false
	for _, tb := range []struct {
		bit   uint8
		table *watchTable
	}{{inChild, &t.watches.child}, {inData, &t.watches.data}} {
		if bits&tb.bit == 0 {
			continue
		}
		has, ok := tb.table.containsWatcher(path)
		if !ok {
			return wire.ErrMarshallingError
		}
		found = found || has
	}
	if !found {
		return wire.ErrNoWatcher
	}
	return wire.ErrOK
}

// containsWatcher is one table's WatchManager.containsWatcher. ZooKeeper
// walks from path up through its parents (beyond path itself only while
// the table holds a recursive watch), computing each parent with
// path.substring(0, path.lastIndexOf('/')) as it goes: a path with no '/'
// throws at once, and a relative one with a '/' ("a/b") throws on the way
// up. ok false is that exception, which fails the request with
// MarshallingError.
func (tb *watchTable) containsWatcher(path string) (found, ok bool) {
	switch {
	case path == "":
		return false, true // no level to visit
	case !strings.Contains(path, "/"):
		return false, false
	case len(tb.byPath[path]) > 0:
		return true, true
	case tb.recursive > 0 && path[0] != '/':
		return false, false
	}
	return false, true
}

// RemoveWatcher drops every watch of w and its identities: its connection
// closed.
func (t *Tree) RemoveWatcher(w WatcherID) {
	t.watches.removeWatcher(w)
	delete(t.watches.auth, w)
}

// WatchCount returns the number of (watcher, path, table) registrations.
func (t *Tree) WatchCount() int {
	n := 0
	for _, l := range t.watches.data.byPath {
		n += len(l)
	}
	for _, l := range t.watches.child.byPath {
		n += len(l)
	}
	return n
}

// SetWatches re-registers a reconnecting client's watches (setWatches and
// setWatches2) as DataTree.setWatches does: relative to the client's last
// seen zxid it appends at once NodeDeleted for data and child watches on
// missing nodes, NodeDataChanged for data watches on nodes modified after
// it, NodeCreated for exist watches on nodes that now exist and
// NodeChildrenChanged for child watches on nodes whose children changed
// after it; every other watch is registered again, persistent ones always.
// The events come in the request's list order (data, exist, child), and
// are not filtered by ACL (ZooKeeper does not filter them either).
//
// A null list (nil: wire decodes jute's null vector so) makes ZooKeeper's
// loop over it throw: the request fails with MarshallingError once the
// lists before it have fired and registered their watches. Only the lists
// the opcode carries count: setWatches has no persistent ones.
func (t *Tree) SetWatches(req *wire.SetWatchesRequest, w WatcherID, events []WatchEvent) ([]WatchEvent, wire.ErrCode) {
	ev := func(typ wire.EventType, path string) {
		events = append(events, WatchEvent{Watcher: w, Event: wire.WatcherEvent{Type: typ, State: wire.StateSyncConnected, Path: path}})
	}
	// oneShot re-registers one-shot data or child watches: a missing node
	// fires NodeDeleted, a node whose zxid (mzxid for data, pzxid for
	// children) is past the client's fires changed, any other is watched.
	oneShot := func(paths []string, bit uint8, zxid func(*node) int64, changed wire.EventType) {
		for _, p := range paths {
			switch n := t.lookup(p); {
			case n == nil:
				ev(wire.EventNodeDeleted, p)
			case zxid(n) > req.RelativeZxid:
				ev(changed, p)
			default:
				t.watches.add(bit, p, w, modeStandard)
			}
		}
	}
	persistent := func(paths []string, mode watchMode) {
		for _, p := range paths {
			t.watches.add(inChild, p, w, mode)
			t.watches.add(inData, p, w, mode)
		}
	}
	// One step per list, in ZooKeeper's order.
	type listStep struct {
		paths    []string
		register func([]string)
	}
	steps := []listStep{
		{req.DataWatches, func(l []string) {
			oneShot(l, inData, func(n *node) int64 { return n.mzxid }, wire.EventNodeDataChanged)
		}},
		{req.ExistWatches, func(l []string) {
			for _, p := range l {
				if t.lookup(p) != nil {
					ev(wire.EventNodeCreated, p)
				} else {
					t.watches.add(inData, p, w, modeStandard)
				}
			}
		}},
		{req.ChildWatches, func(l []string) {
			oneShot(l, inChild, func(n *node) int64 { return n.pzxid }, wire.EventNodeChildrenChanged)
		}},
	}
	if req.Persistent {
		steps = append(steps,
			listStep{req.PersistentWatches, func(l []string) { persistent(l, modePersistent) }},
			listStep{req.PersistentRecursiveWatches, func(l []string) { persistent(l, modePersistentRecursive) }})
	}
	for _, step := range steps {
		if step.paths == nil {
			return events, wire.ErrMarshallingError
		}
		step.register(step.paths)
	}
	return events, wire.ErrOK
}

// WatchTable names which of ZooKeeper's two watch tables holds a watch.
// ZooKeeper keeps getData and exists watches in one table (data): once
// registered they cannot be told apart, so neither can a listing.
type WatchTable uint8

const (
	DataTable  WatchTable = iota // getData and exists watches; persistent ones
	ChildTable                   // getChildren watches; persistent ones
)

// WatchMode is how a watch fires: once, or on every event until removed.
type WatchMode uint8

const (
	OneShot             WatchMode = WatchMode(modeStandard)
	Persistent          WatchMode = WatchMode(modePersistent)
	PersistentRecursive WatchMode = WatchMode(modePersistentRecursive)
)

// WatchInfo is one registered watch: a watcher's entry for a path in one
// table. An addWatch registration is two entries, one per table.
type WatchInfo struct {
	Path    string
	Watcher WatcherID
	Table   WatchTable
	Mode    WatchMode
}

// Watches lists every registered watch sorted by path, then watcher, then
// table (data first): the same tree state always gives the same list. The
// four-letter words wchs, wchc and wchp report the data table's entries, as
// ZooKeeper 3.8 does.
func (t *Tree) Watches() []WatchInfo {
	out := make([]WatchInfo, 0, t.WatchCount())
	for _, table := range []WatchTable{DataTable, ChildTable} {
		tb := &t.watches.data
		if table == ChildTable {
			tb = &t.watches.child
		}
		for path, list := range tb.byPath {
			for _, e := range list {
				out = append(out, WatchInfo{Path: path, Watcher: e.watcher, Table: table, Mode: WatchMode(e.mode)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Watcher != b.Watcher {
			return a.Watcher < b.Watcher
		}
		return a.Table < b.Table
	})
	return out
}
