package datatree

import (
	"sort"

	"github.com/zabd/zabd/wire"
)

// Apply applies a txn (DataTree.processTxn) and returns the result its
// request is answered with, appending the watch events it fires to events:
// per change the node's own event before its parent's NodeChildrenChanged,
// multi ops in order, the watchers of one trigger in WatcherID order.
//
// Txns from anywhere apply: this tree's Prepare, a leader's proposal, a txn
// log replayed over a fuzzy snapshot. As in ZooKeeper, a txn the tree
// already reflects is harmless: a create of an existing node answers
// NodeExists (and a plain create still raises the parent's cversion to the
// txn's), a delete of a missing node NoNode, and setData and setACL write
// the versions the txn carries. Pending changes of txns up to the header's
// zxid are dropped.
func (t *Tree) Apply(txn *Txn, events []WatchEvent) (Result, []WatchEvent) {
	r, events := t.applyTxn(&txn.Header, txn.Body, events)
	if txn.Header.Zxid > t.lastZxid {
		t.lastZxid = txn.Header.Zxid
	}
	t.dropApplied(txn.Header.Zxid)
	return r, events
}

// applyTxn applies one txn or sub-txn.
func (t *Tree) applyTxn(hdr *wire.TxnHeader, body wire.Record, events []WatchEvent) (Result, []WatchEvent) {
	r := Result{Op: hdr.Type}
	switch b := body.(type) {
	case *wire.CreateTxn:
		owner := int64(0)
		if b.Ephemeral {
			owner = hdr.ClientID
		}
		r.Path = b.Path
		r.Stat, r.Err, events = t.createNode(b.Path, b.Data, b.ACL, owner, b.ParentCVersion, hdr.Zxid, hdr.Time, events)
		if r.Err == wire.ErrNodeExists && hdr.Type == wire.OpCreate {
			// The snapshot may hold the node but not its parent's cversion:
			// bring the parent up to the txn's.
			t.raiseCversion(b.Path, b.ParentCVersion, hdr.Zxid)
		}
	case *wire.CreateTTLTxn:
		r.Path = b.Path
		r.Stat, r.Err, events = t.createNode(b.Path, b.Data, b.ACL, ttlOwner(b.TTL), b.ParentCVersion, hdr.Zxid, hdr.Time, events)
	case *wire.CreateContainerTxn:
		r.Path = b.Path
		r.Stat, r.Err, events = t.createNode(b.Path, b.Data, b.ACL, containerOwner, b.ParentCVersion, hdr.Zxid, hdr.Time, events)
	case *wire.DeleteTxn:
		r.Path = b.Path
		r.Err, events = t.deleteNode(b.Path, hdr.Zxid, events)
	case *wire.SetDataTxn:
		r.Path = b.Path
		r.Stat, r.Err, events = t.setData(b.Path, b.Data, b.Version, hdr.Zxid, hdr.Time, events)
	case *wire.SetACLTxn:
		r.Path = b.Path
		r.Stat, r.Err = t.setACL(b.Path, b.ACL, b.Version)
	case *wire.CheckVersionTxn:
		r.Path = b.Path
		if n := t.lookup(b.Path); n != nil {
			r.Stat = t.visibleStat(n)
		}
	case *wire.CloseSessionTxn:
		events = t.killSession(hdr.ClientID, hdr.Zxid, b.Paths2Delete, events)
	case *wire.CreateSessionTxn:
		// Sessions live in the session table, not in the tree.
	case *wire.ErrorTxn:
		r.Err = b.Err
	case *wire.MultiTxn:
		r, events = t.applyMulti(hdr, b, events)
	default:
		r.Err = wire.ErrMarshallingError
	}
	return r, events
}

// applyMulti applies a multi's sub-txns in order; if any is an ErrorTxn the
// multi failed in Prepare and every op becomes an ErrorTxn: 0 before the
// failure, its code, RuntimeInconsistency after.
func (t *Tree) applyMulti(hdr *wire.TxnHeader, m *wire.MultiTxn, events []WatchEvent) (Result, []WatchEvent) {
	r := Result{Op: wire.OpMulti, Multi: make([]Result, 0, len(m.Txns))}
	failed := false
	for _, sub := range m.Txns {
		if sub.Type == wire.OpError {
			failed = true
			break
		}
	}
	postFailed := false
	for _, sub := range m.Txns {
		subHdr := *hdr
		subHdr.Type = sub.Type
		var body wire.Record
		if failed && sub.Type != wire.OpError {
			code := wire.ErrOK
			if postFailed {
				code = wire.ErrRuntimeInconsistency
			}
			subHdr.Type = wire.OpError
			body = &wire.ErrorTxn{Err: code}
		} else {
			d := wire.NewDecoder(sub.Data)
			var err error
			body, err = decodeSubTxn(sub.Type, d)
			if err != nil {
				r.Multi = append(r.Multi, Result{Op: wire.OpError, Err: wire.ErrMarshallingError})
				continue
			}
			if sub.Type == wire.OpError {
				postFailed = true
			}
		}
		var sr Result
		sr, events = t.applyTxn(&subHdr, body, events)
		if sr.Err != wire.ErrOK && subHdr.Type != wire.OpError {
			// A sub-op that fails when applied answers as an error result.
			sr = Result{Op: wire.OpError, Err: sr.Err}
		}
		switch {
		case subHdr.Type == wire.OpError:
			sr.Op = wire.OpError
		case sr.Op == wire.OpCreateTTL || sr.Op == wire.OpCreateContainer:
			sr.Op = wire.OpCreate2 // answered with path and stat
		case sr.Op == wire.OpDeleteContainer:
			sr.Op = wire.OpDelete
		}
		r.Multi = append(r.Multi, sr)
	}
	return r, events
}

// decodeSubTxn decodes a multi's sub-txn body: only the types ZooKeeper
// allows inside a multi.
func decodeSubTxn(t wire.OpCode, d *wire.Decoder) (wire.Record, error) {
	switch t {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateTTL, wire.OpCreateContainer,
		wire.OpDelete, wire.OpDeleteContainer, wire.OpSetData, wire.OpCheck, wire.OpError:
		return wire.DecodeTxnBody(t, d)
	}
	return nil, &wire.DecodeError{Offset: 0, What: "multi sub-txn", Err: wire.ErrShort}
}

// splitPath returns the parent path and the name of a path that has a '/'.
// ok is false for a path without one, and for one that starts with "//",
// whose parent would be the root under a name the root does not list it by
// (ZooKeeper's root alias makes such a node unreachable by its path).
func splitPath(path string) (parent, name string, ok bool) {
	i := lastSlash(path)
	if i < 0 || (i == 1 && path[0] == '/') {
		return "", "", false
	}
	return canonical(path[:i]), path[i+1:], true
}

// createNode is DataTree.createNode.
func (t *Tree) createNode(path string, data []byte, acl []wire.ACL, owner int64, parentCVersion int32, zxid, time int64, events []WatchEvent) (wire.Stat, wire.ErrCode, []WatchEvent) {
	parentPath, name, ok := splitPath(path)
	if !ok || path == "/" {
		return wire.Stat{}, wire.ErrNoNode, events
	}
	parent := t.nodes.get(parentPath)
	if parent == nil {
		return wire.Stat{}, wire.ErrNoNode, events
	}
	if t.nodes.get(path) != nil {
		return wire.Stat{}, wire.ErrNodeExists, events
	}
	t.raiseNodeCversion(parentPath, parent, parentCVersion, zxid)
	n := newNode(path)
	n.acl = t.acls.ref(acl)
	n.czxid, n.mzxid, n.pzxid, n.ctime, n.mtime, n.owner = zxid, zxid, zxid, time, time, owner
	n.setData(data)
	t.nodes.put(n)
	t.dataSize += nodeSize(path, data)
	t.link(parent, n)
	t.digest += int64(t.digestOf(path, n))
	t.trackKind(path, owner)
	t.quotaNodeCreated(parentPath, name)
	t.updateQuotaUsage(path, int64(len(data)), 1)
	t.countWrite(path, len(data))
	events = t.fireCreated(path, t.acls.list(n.acl), t.acls.list(parent.acl), events)
	return t.visibleStat(n), wire.ErrOK, events
}

// raiseCversion is DataTree.setCversionPzxid on the parent of path.
func (t *Tree) raiseCversion(path string, cversion int32, zxid int64) {
	parentPath, _, ok := splitPath(path)
	if !ok {
		return
	}
	if parent := t.nodes.get(parentPath); parent != nil {
		t.raiseNodeCversion(parentPath, parent, cversion, zxid)
	}
}

// raiseNodeCversion sets the cversion of n (at path) to cversion (-1: one
// more than it is) and its pzxid to zxid, where that raises its cversion.
func (t *Tree) raiseNodeCversion(path string, n *node, cversion int32, zxid int64) {
	if cversion == -1 {
		cversion = n.cversion + 1
	}
	if cversion > n.cversion {
		before := t.digestOf(path, n)
		n.cversion = cversion
		n.pzxid = zxid
		t.redigest(path, n, before)
	}
}

// deleteNode is DataTree.deleteNode. The parent's pzxid moves up even when
// the child is already gone (a replay over a fuzzy snapshot).
func (t *Tree) deleteNode(path string, zxid int64, events []WatchEvent) (wire.ErrCode, []WatchEvent) {
	parentPath, name, ok := splitPath(path)
	if !ok || path == "/" {
		return wire.ErrNoNode, events
	}
	parent := t.nodes.get(parentPath)
	if parent == nil {
		return wire.ErrNoNode, events
	}
	n := t.nodes.get(path)
	if n != nil {
		t.unlink(parent, n)
	}
	if zxid > parent.pzxid {
		before := t.digestOf(parentPath, parent)
		parent.pzxid = zxid
		t.redigest(parentPath, parent, before)
	}
	if n == nil {
		return wire.ErrNoNode, events
	}
	// A txn never deletes a node with children; were a replay to, the
	// subtree goes with it so that no node is left without a parent.
	for len(t.kids(n)) > 0 {
		c := t.kids(n)[len(t.kids(n))-1]
		_, events = t.deleteNode(joinPath(path, c), zxid, events)
	}
	acl := t.acls.list(n.acl)
	t.removeNode(path, parentPath, name, n)
	t.countWrite(path, 0)
	return wire.ErrOK, t.fireDeleted(path, acl, t.acls.list(parent.acl), events)
}

// removeNode forgets a node already unlinked from its parent.
func (t *Tree) removeNode(path, parentPath, name string, n *node) {
	t.nodes.remove(path)
	t.dataSize -= nodeSize(path, n.data())
	t.digest -= int64(t.digestOf(path, n))
	t.acls.release(n.acl)
	t.untrackKind(path, n.owner)
	t.quotaNodeDeleted(parentPath, name)
	t.updateQuotaUsage(path, -int64(n.dataLen), -1)
}

// setData is DataTree.setData: version is the node's new version.
func (t *Tree) setData(path string, data []byte, version int32, zxid, time int64, events []WatchEvent) (wire.Stat, wire.ErrCode, []WatchEvent) {
	n := t.lookup(path)
	if n == nil {
		return wire.Stat{}, wire.ErrNoNode, events
	}
	old := int(n.dataLen)
	before := t.digestOf(canonical(path), n)
	t.dataSize += int64(len(data) - old)
	n.setData(data)
	n.mtime = time
	n.mzxid = zxid
	n.version = version
	t.redigest(canonical(path), n, before)
	t.updateQuotaUsage(canonical(path), int64(len(data)-old), 0)
	t.countWrite(path, len(data))
	return t.visibleStat(n), wire.ErrOK, t.fireDataChanged(path, t.acls.list(n.acl), events)
}

// setACL is DataTree.setACL: version is the node's new aversion.
func (t *Tree) setACL(path string, acl []wire.ACL, version int32) (wire.Stat, wire.ErrCode) {
	n := t.lookup(path)
	if n == nil {
		return wire.Stat{}, wire.ErrNoNode
	}
	before := t.digestOf(canonical(path), n)
	t.acls.release(n.acl)
	n.acl = t.acls.ref(acl)
	n.aversion = version
	t.redigest(canonical(path), n, before)
	return t.visibleStat(n), wire.ErrOK
}

// killSession deletes a closed session's ephemerals: those the txn lists, in
// its order, then any others the tree knows of, sorted (ZooKeeper logs a
// warning for those).
func (t *Tree) killSession(session, zxid int64, listed []string, events []WatchEvent) []WatchEvent {
	local := t.ephemerals[session]
	delete(t.ephemerals, session)
	rest := map[string]struct{}{}
	if local != nil {
		for p := range local.paths {
			rest[p] = struct{}{}
		}
	}
	for _, p := range listed {
		_, events = t.deleteNode(p, zxid, events)
		delete(rest, p)
	}
	for _, p := range sortedKeys(rest) {
		_, events = t.deleteNode(p, zxid, events)
	}
	return events
}

func sortedKeys(set map[string]struct{}) []string {
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
