package datatree

import (
	"sort"
	"strings"

	"github.com/zabd/zabd/wire"
)

// GetData answers getData: the node's data and visible stat; READ needed.
// With watch, w gets a one-shot data watch (not on a missing node).
func (t *Tree) GetData(path string, auth []wire.Id, watch bool, w WatcherID) ([]byte, wire.Stat, wire.ErrCode) {
	n, code := t.readable(path, auth)
	if n == nil {
		return nil, wire.Stat{}, code
	}
	if watch {
		t.watches.add(inData, path, w, modeStandard)
	}
	t.countRead(path, int(n.dataLen))
	return n.data(), t.visibleStat(n), wire.ErrOK
}

// readable looks up path for a read that needs READ: the node, or nil with
// NoNode when there is none and NoAuth when auth may not read it.
func (t *Tree) readable(path string, auth []wire.Id) (*node, wire.ErrCode) {
	n := t.lookup(path)
	if n == nil {
		return nil, wire.ErrNoNode
	}
	if !checkACL(t.acls.list(n.acl), wire.PermRead, auth) {
		return nil, wire.ErrNoAuth
	}
	return n, wire.ErrOK
}

// Exists answers exists: the visible stat, no permission needed. With watch,
// w gets a one-shot data watch, also on a missing node (it then waits for
// NodeCreated). A path with a NUL is BadArguments.
func (t *Tree) Exists(path string, watch bool, w WatcherID) (wire.Stat, wire.ErrCode) {
	if strings.IndexByte(path, 0) >= 0 {
		return wire.Stat{}, wire.ErrBadArguments
	}
	if watch {
		t.watches.add(inData, path, w, modeStandard)
	}
	n := t.lookup(path)
	if n == nil {
		return wire.Stat{}, wire.ErrNoNode
	}
	t.countRead(path, 0)
	return t.visibleStat(n), wire.ErrOK
}

// GetChildren answers getChildren and getChildren2: the children's names,
// sorted (ZooKeeper gives hash order, which clients must not rely on), and
// the visible stat; READ needed. With watch, w gets a one-shot child watch
// (not on a missing node).
func (t *Tree) GetChildren(path string, auth []wire.Id, watch bool, w WatcherID) ([]string, wire.Stat, wire.ErrCode) {
	n, code := t.readable(path, auth)
	if n == nil {
		return nil, wire.Stat{}, code
	}
	if watch {
		t.watches.add(inChild, path, w, modeStandard)
	}
	if t.cfg.Traffic != nil {
		t.countRead(path, t.namesLength(n))
	}
	return t.childNames(n), t.visibleStat(n), wire.ErrOK
}

// childNames returns n's children's names, sorted; it sorts the children
// first if a change left them out of order.
func (t *Tree) childNames(n *node) []string {
	if !n.sortedChildren() {
		kids := t.kids(n)
		sort.Strings(kids)
		for i, c := range kids {
			t.child(n, c).setIndex(i)
		}
		n.setSortedChildren(true)
	}
	return append(make([]string, 0, len(t.kids(n))), t.kids(n)...)
}

// GetACL answers getACL: the node's ACL and visible stat; READ or ADMIN
// needed, and without ADMIN digest ids read "user:x".
func (t *Tree) GetACL(path string, auth []wire.Id) ([]wire.ACL, wire.Stat, wire.ErrCode) {
	n := t.lookup(path)
	if n == nil {
		return nil, wire.Stat{}, wire.ErrNoNode
	}
	acl := t.acls.list(n.acl)
	if !checkACL(acl, wire.PermRead|wire.PermAdmin, auth) {
		return nil, wire.Stat{}, wire.ErrNoAuth
	}
	out := make([]wire.ACL, len(acl))
	copy(out, acl)
	if !checkACL(acl, wire.PermAdmin, auth) {
		out = maskDigests(acl)
	}
	return out, t.visibleStat(n), wire.ErrOK
}

// GetEphemerals answers getEphemerals: the session's ephemeral nodes whose
// path starts with prefix (plain string prefix; "", blanks or "/" mean all),
// sorted.
func (t *Tree) GetEphemerals(session int64, prefix string) []string {
	all := strings.TrimSpace(prefix) == "" || strings.TrimSpace(prefix) == "/"
	out := []string{}
	var paths map[string]uint64
	if s := t.ephemerals[session]; s != nil {
		paths = s.paths
	}
	for p := range paths {
		if all || strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Ephemerals returns the session's ephemeral nodes, sorted.
func (t *Tree) Ephemerals(session int64) []string { return t.GetEphemerals(session, "") }

// Sessions returns the sessions that own ephemerals, sorted.
func (t *Tree) Sessions() []int64 {
	out := make([]int64, 0, len(t.ephemerals))
	for s, set := range t.ephemerals {
		if len(set.paths) > 0 {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// GetAllChildrenNumber answers getAllChildrenNumber: the number of
// descendants at every depth; READ needed. As in ZooKeeper, "/" counts every
// node but the root, and "" (the root's alias) one more.
func (t *Tree) GetAllChildrenNumber(path string, auth []wire.Id) (int32, wire.ErrCode) {
	n, code := t.readable(path, auth)
	if n == nil {
		return 0, code
	}
	switch path {
	case "/":
		return int32(t.nodes.len() - 1), wire.ErrOK
	case "":
		return int32(t.nodes.len()), wire.ErrOK
	}
	return int32(t.countDescendants(n)), wire.ErrOK
}

func (t *Tree) countDescendants(n *node) int {
	c := len(t.kids(n))
	for _, name := range t.kids(n) {
		if ch := t.child(n, name); len(t.kids(ch)) > 0 {
			c += t.countDescendants(ch)
		}
	}
	return c
}

// Read answers a request that is not a txn — exists, getData, getChildren,
// getChildren2, getACL, getEphemerals, getAllChildrenNumber, multiRead,
// sync, addWatch, checkWatches, removeWatches, setWatches, setWatches2, and
// a multi that fails before it takes one (FailsBeforeTxn) — from the
// applied tree, registering watches for w where the request asks.
// Only setWatches appends events. Any other opcode answers Unimplemented.
//
// A request that registers a watch also records req.Auth as w's identities
// (see SetWatcherAuth); the slice is kept, so it must not be modified later.
func (t *Tree) Read(req *Request, w WatcherID, events []WatchEvent) (Result, []WatchEvent) {
	r := Result{Op: req.Op}
	if registersWatch(req) {
		t.SetWatcherAuth(w, req.Auth)
	}
	switch req.Op {
	case wire.OpExists:
		b, ok := req.Body.(*wire.PathWatchRequest)
		if !ok {
			return badBody(r), events
		}
		r.Stat, r.Err = t.Exists(b.Path, b.Watch, w)
	case wire.OpGetData:
		b, ok := req.Body.(*wire.PathWatchRequest)
		if !ok {
			return badBody(r), events
		}
		r.Data, r.Stat, r.Err = t.GetData(b.Path, req.Auth, b.Watch, w)
	case wire.OpGetChildren, wire.OpGetChildren2:
		b, ok := req.Body.(*wire.PathWatchRequest)
		if !ok {
			return badBody(r), events
		}
		r.Children, r.Stat, r.Err = t.GetChildren(b.Path, req.Auth, b.Watch, w)
	case wire.OpGetACL:
		b, ok := req.Body.(*wire.PathRequest)
		if !ok {
			return badBody(r), events
		}
		r.ACL, r.Stat, r.Err = t.GetACL(b.Path, req.Auth)
	case wire.OpGetEphemerals:
		b, ok := req.Body.(*wire.PathRequest)
		if !ok {
			return badBody(r), events
		}
		r.Children = t.GetEphemerals(req.Session, b.Path)
	case wire.OpGetAllChildrenNumber:
		b, ok := req.Body.(*wire.PathRequest)
		if !ok {
			return badBody(r), events
		}
		r.Count, r.Err = t.GetAllChildrenNumber(b.Path, req.Auth)
	case wire.OpSync:
		b, ok := req.Body.(*wire.PathRequest)
		if !ok {
			return badBody(r), events
		}
		r.Path = b.Path
	case wire.OpMultiRead:
		ops, ok := multiOps(req.Body)
		if !ok {
			return badBody(r), events
		}
		r = t.multiRead(ops, req.Auth)
	case wire.OpMulti:
		// Only a multi that fails before it takes a txn is answered here
		// (FailsBeforeTxn): ZooKeeper had begun its response, which stays
		// empty.
		if !FailsBeforeTxn(req) {
			r.Err = wire.ErrUnimplemented
			break
		}
		r.Err, r.Multi = wire.ErrMarshallingError, []Result{}
	case wire.OpAddWatch:
		b, ok := req.Body.(*wire.AddWatchRequest)
		if !ok {
			return badBody(r), events
		}
		r.Err = t.AddWatch(b.Path, b.Mode, w)
	case wire.OpCheckWatches:
		b, ok := req.Body.(*wire.PathTypeRequest)
		if !ok {
			return badBody(r), events
		}
		r.Err = t.CheckWatches(b.Path, b.Type, w)
	case wire.OpRemoveWatches:
		b, ok := req.Body.(*wire.PathTypeRequest)
		if !ok {
			return badBody(r), events
		}
		r.Err = t.RemoveWatches(b.Path, b.Type, w)
	case wire.OpSetWatches, wire.OpSetWatches2:
		b, ok := req.Body.(*wire.SetWatchesRequest)
		if !ok {
			return badBody(r), events
		}
		events, r.Err = t.SetWatches(b, w, events)
	default:
		r.Err = wire.ErrUnimplemented
	}
	return r, events
}

// registersWatch reports whether a read request may leave a watch.
func registersWatch(req *Request) bool {
	switch b := req.Body.(type) {
	case *wire.PathWatchRequest:
		return b.Watch
	case *wire.AddWatchRequest, *wire.SetWatchesRequest:
		return true
	}
	return false
}

func badBody(r Result) Result {
	r.Err = wire.ErrMarshallingError
	return r
}

// multiRead answers each getData / getChildren op on its own (an error is
// that op's ErrorResult); any other op, or one whose path is null, makes the
// request MarshallingError. ZooKeeper cannot decode a multiRead that mixes
// reads and writes (no results: Multi nil); one made of writes only
// decodes, and its loop over the ops throws at the first one, after the
// response was begun: the reply carries MarshallingError and the results so
// far, none (Multi empty). A null path throws the same way where its op is
// reached, after the results of the ops before it.
func (t *Tree) multiRead(ops []MultiOp, auth []wire.Id) Result {
	if mixesReadsAndWrites(ops) {
		return Result{Op: wire.OpMultiRead, Err: wire.ErrMarshallingError}
	}
	r := Result{Op: wire.OpMultiRead, Multi: make([]Result, 0, len(ops))}
	for _, op := range ops {
		b, ok := op.Body.(*wire.PathWatchRequest)
		if !ok || op.NullPath || (op.Op != wire.OpGetData && op.Op != wire.OpGetChildren) {
			r.Err = wire.ErrMarshallingError
			return r
		}
		sub := Result{Op: op.Op}
		if op.Op == wire.OpGetData {
			sub.Data, sub.Stat, sub.Err = t.GetData(b.Path, auth, false, 0)
		} else {
			sub.Children, _, sub.Err = t.GetChildren(b.Path, auth, false, 0)
		}
		if sub.Err != wire.ErrOK {
			sub = Result{Op: wire.OpError, Err: sub.Err}
		}
		r.Multi = append(r.Multi, sub)
	}
	return r
}
