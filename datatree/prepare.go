package datatree

import (
	"fmt"
	"strings"

	"github.com/zabd/zabd/wire"
)

// Prepare turns a write request into the txn ZooKeeper's
// PrepRequestProcessor would log for it, with zxid and the wall-clock time
// timeMs in its header, validated against the tree plus every txn prepared
// before and not yet applied (or discarded), and records the txn's changes
// so that the next Prepare sees them.
//
// Writes are create, create2, createContainer, createTTL, delete,
// deleteContainer (Internal requests only), setData, setACL, check, multi,
// reconfig (always ReconfigDisabled), createSession and closeSession. A
// refused write becomes an ErrorTxn with ZooKeeper's code (header type
// OpError), which still takes its zxid; a refused multi becomes a MultiTxn
// whose ops before the failing one keep their txns, the failing one is an
// ErrorTxn with its code and the rest ErrorTxns of RuntimeInconsistency, as
// ZooKeeper logs it (Apply turns it into the results 0, code,
// RuntimeInconsistency and changes nothing). Session checks (expired,
// moved, local sessions) are the caller's: they need the session table.
func (t *Tree) Prepare(req *Request, zxid, timeMs int64) Txn {
	t.pending.undo = t.pending.undo[:0]
	txn := Txn{Header: wire.TxnHeader{ClientID: req.Session, Cxid: req.Cxid, Zxid: zxid, Time: timeMs, Type: req.Op}}
	var body wire.Record
	var err wire.ErrCode
	if req.Op == wire.OpMulti {
		body, err = t.prepareMulti(req, &txn.Header)
	} else {
		_, body, err = t.prepareOp(req.Op, req.Body, req, &txn.Header)
	}
	if err != wire.ErrOK {
		txn.Header.Type = wire.OpError
		txn.Body = &wire.ErrorTxn{Err: err}
		return txn
	}
	txn.Body = body
	txn.Digest = wire.TxnDigest{Version: DigestVersion, TreeDigest: t.currentDigest()}
	return txn
}

// prepareMulti prepares each op of a multi in order under the multi's zxid.
func (t *Tree) prepareMulti(req *Request, hdr *wire.TxnHeader) (wire.Record, wire.ErrCode) {
	mops, ok := multiOps(req.Body)
	if !ok {
		return nil, wire.ErrMarshallingError
	}
	for _, op := range mops {
		if !multiWriteOp(op.Op) || op.NullPath {
			// ZooKeeper fails to decode a multi that holds a read op (or
			// prepare one made of reads only). A null path is answered
			// without a txn (FailsBeforeTxn): only a multi a ZooKeeper
			// learner forwarded reaches here with one. ZooKeeper's leader
			// would propose nothing and that learner would never answer;
			// this error txn lets it answer MarshallingError.
			return nil, wire.ErrMarshallingError
		}
	}
	ops := make([]wire.Txn, 0, len(mops))
	mark := t.markPending()
	failed := false
	for _, op := range mops {
		if failed {
			// Once an op has failed ZooKeeper prepares none of the rest,
			// however malformed.
			ops = append(ops, errorSubTxn(wire.ErrRuntimeInconsistency))
			continue
		}
		opType, err := multiOpType(op)
		if err != wire.ErrOK {
			// A malformed op that is prepared fails the whole multi.
			t.rollbackPending(mark)
			return nil, err
		}
		typ, body, err := t.prepareOp(opType, op.Body, req, hdr)
		if err != wire.ErrOK {
			failed = true
			t.rollbackPending(mark)
			ops = append(ops, errorSubTxn(err))
			continue
		}
		ops = append(ops, wire.Txn{Type: typ, Data: wire.Marshal(body)})
	}
	return &wire.MultiTxn{Txns: ops}, wire.ErrOK
}

func errorSubTxn(code wire.ErrCode) wire.Txn {
	return wire.Txn{Type: wire.OpError, Data: wire.Marshal(&wire.ErrorTxn{Err: code})}
}

// FailsBeforeTxn reports whether ZooKeeper 3.8 fails the write req before
// its PrepRequestProcessor gives it a zxid: a multi that decodes (its ops
// all writes or all reads) holding an op, in any place, whose path is
// jute's null string. ZooKeeper looks at every op's path before it makes
// the txn header, fails on the null one and answers MarshallingError with
// an empty multi response and no txn, in the request's turn as it answers
// a read; Read answers it so.
func FailsBeforeTxn(req *Request) bool {
	if req.Op != wire.OpMulti {
		return false
	}
	ops, ok := multiOps(req.Body)
	if !ok || mixesReadsAndWrites(ops) {
		return false
	}
	for _, op := range ops {
		if op.NullPath {
			return true
		}
	}
	return false
}

// mixesReadsAndWrites reports whether a multi's ops are of both kinds,
// which ZooKeeper's MultiOperationRecord refuses to decode.
func mixesReadsAndWrites(ops []MultiOp) bool {
	var reads, writes bool
	for _, op := range ops {
		reads = reads || op.Op == wire.OpGetData || op.Op == wire.OpGetChildren
		writes = writes || multiWriteOp(op.Op)
	}
	return reads && writes
}

// multiWriteOp reports whether op is one of the write ops a multi may hold.
func multiWriteOp(op wire.OpCode) bool {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL,
		wire.OpDelete, wire.OpSetData, wire.OpCheck:
		return true
	}
	return false
}

// multiOpType is the opcode ZooKeeper's MultiOperationRecord gives a write
// op: a create's comes from its flags (TTL → createTTL; container →
// createContainer; else create). A TTL mode on a create sent without a TTL
// (through create, create2 or createContainer) is MarshallingError:
// ZooKeeper's prep casts that op's body to a CreateTTLRequest, which it is
// not.
func multiOpType(op MultiOp) (wire.OpCode, wire.ErrCode) {
	switch op.Op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		b, ok := op.Body.(*wire.CreateRequest)
		if !ok {
			return 0, wire.ErrMarshallingError
		}
		switch {
		case b.Flags.TTL():
			if !b.HasTTL {
				return 0, wire.ErrMarshallingError
			}
			return wire.OpCreateTTL, wire.ErrOK
		case b.Flags.Container():
			return wire.OpCreateContainer, wire.ErrOK
		}
		return wire.OpCreate, wire.ErrOK
	}
	return op.Op, wire.ErrOK
}

// prepareOp prepares one write (alone or inside a multi) and returns its txn
// type and body.
func (t *Tree) prepareOp(op wire.OpCode, body wire.Record, req *Request, hdr *wire.TxnHeader) (wire.OpCode, wire.Record, wire.ErrCode) {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		b, ok := body.(*wire.CreateRequest)
		if !ok {
			return 0, nil, wire.ErrMarshallingError
		}
		rec, err := t.prepareCreate(op, b, req, hdr)
		return op, rec, err
	case wire.OpDelete:
		b, ok := body.(*wire.PathVersionRequest)
		if !ok {
			return 0, nil, wire.ErrMarshallingError
		}
		rec, err := t.prepareDelete(b.Path, b.Version, req.Auth, false, hdr.Zxid)
		return op, rec, err
	case wire.OpDeleteContainer:
		if !req.Internal {
			// ZooKeeper reads a client's deleteContainer body as a raw
			// path, which then holds NULs: BadArguments.
			return 0, nil, wire.ErrBadArguments
		}
		b, ok := body.(*wire.PathRequest)
		if !ok {
			return 0, nil, wire.ErrMarshallingError
		}
		if req.ReapCzxid != 0 {
			// Only the node the reaper chose (Request.ReapCzxid).
			if n, ok := t.record(b.Path); ok && (n.stat.czxid != req.ReapCzxid ||
				(t.kindOf(n.stat.owner) == kindTTL && n.stat.mzxid != req.ReapMzxid)) {
				return op, nil, wire.ErrBadVersion
			}
		}
		rec, err := t.prepareDelete(b.Path, -1, nil, true, hdr.Zxid)
		return op, rec, err
	case wire.OpSetData:
		b, ok := body.(*wire.SetDataRequest)
		if !ok {
			return 0, nil, wire.ErrMarshallingError
		}
		rec, err := t.prepareSetData(b, req.Auth, hdr)
		return op, rec, err
	case wire.OpSetACL:
		b, ok := body.(*wire.SetACLRequest)
		if !ok {
			return 0, nil, wire.ErrMarshallingError
		}
		rec, err := t.prepareSetACL(b, req.Auth, hdr.Zxid)
		return op, rec, err
	case wire.OpCheck:
		b, ok := body.(*wire.PathVersionRequest)
		if !ok {
			return 0, nil, wire.ErrMarshallingError
		}
		rec, err := t.prepareCheck(b, req.Auth)
		return op, rec, err
	case wire.OpCreateSession:
		b, ok := body.(*wire.CreateSessionTxn)
		if !ok {
			return 0, nil, wire.ErrMarshallingError
		}
		return op, &wire.CreateSessionTxn{TimeOut: b.TimeOut}, wire.ErrOK
	case wire.OpCloseSession:
		return op, t.prepareCloseSession(req.Session, hdr.Zxid), wire.ErrOK
	case wire.OpReconfig:
		return 0, nil, wire.ErrReconfigDisabled
	}
	return 0, nil, wire.ErrUnimplemented
}

// checkVersion is ZooKeeper's checkAndIncVersion: expected -1 matches any.
func checkVersion(current, expected int32) (int32, wire.ErrCode) {
	if expected != -1 && expected != current {
		return 0, wire.ErrBadVersion
	}
	return current + 1, wire.ErrOK
}

// prepareCreate checks a create in ZooKeeper's order (so that the first
// failing check decides the code) and records the parent's and the node's
// changes.
func (t *Tree) prepareCreate(op wire.OpCode, b *wire.CreateRequest, req *Request, hdr *wire.TxnHeader) (wire.Record, wire.ErrCode) {
	mode := b.Flags
	if !mode.Valid() {
		return nil, wire.ErrBadArguments
	}
	ttl := int64(-1)
	if op == wire.OpCreateTTL {
		ttl = b.TTL
	}
	if mode.TTL() && !t.cfg.ExtendedTypesEnabled {
		return nil, wire.ErrUnimplemented
	}
	if mode.TTL() {
		if ttl <= 0 || ttl > maxTTL {
			return nil, wire.ErrBadArguments
		}
	} else if ttl >= 0 || op == wire.OpCreateTTL {
		// A TTL with a mode that has none; and a createTTL without a TTL
		// mode, which ZooKeeper would fail to apply.
		return nil, wire.ErrBadArguments
	}
	path := b.Path
	slash := lastSlash(path)
	if slash < 0 || strings.IndexByte(path, 0) >= 0 {
		return nil, wire.ErrBadArguments
	}
	parentPath := canonical(path[:slash])
	acl, ok := fixupACL(b.ACL, req.Auth, t.cfg)
	if !ok {
		return nil, wire.ErrInvalidACL
	}
	parent, ok := t.record(parentPath)
	if !ok {
		return nil, wire.ErrNoNode
	}
	if !checkACL(parent.acl, wire.PermCreate, req.Auth) {
		return nil, wire.ErrNoAuth
	}
	if mode.Sequential() {
		path += fmt.Sprintf("%010d", parent.stat.cversion)
	}
	if !validPath(path) {
		return nil, wire.ErrBadArguments
	}
	if _, exists := t.record(path); exists {
		return nil, wire.ErrNodeExists
	}
	if t.kindOf(parent.stat.owner) == kindEphemeral {
		return nil, wire.ErrNoChildrenForEphemerals
	}
	if err := t.checkQuota(path, 0, int64(len(b.Data)), 1); err != wire.ErrOK {
		return nil, err
	}
	newCversion := parent.stat.cversion + 1

	// The txn's type follows the opcode, but the pending node's owner — and
	// so the digest logged with the txn — follows the mode flags, as in
	// ZooKeeper: a create2 with the container flag or a createContainer in
	// persistent or ephemeral mode logs a digest its tree will not have
	// (the node applies as the txn says), and later prepares see the mode's
	// kind until it is applied.
	var rec wire.Record
	switch op {
	case wire.OpCreateContainer:
		rec = &wire.CreateContainerTxn{Path: path, Data: b.Data, ACL: acl, ParentCVersion: newCversion}
	case wire.OpCreateTTL:
		rec = &wire.CreateTTLTxn{Path: path, Data: b.Data, ACL: acl, ParentCVersion: newCversion, TTL: ttl}
	default:
		rec = &wire.CreateTxn{Path: path, Data: b.Data, ACL: acl, Ephemeral: mode.Ephemeral(), ParentCVersion: newCversion}
	}
	var owner int64
	switch {
	case mode.Container():
		owner = containerOwner
	case mode.TTL():
		owner = ttlOwner(ttl)
	case mode.Ephemeral():
		owner = req.Session
	}

	zxid := hdr.Zxid
	pc := parent.duplicate(zxid)
	pc.children++
	pc.stat.cversion = newCversion
	pc.stat.pzxid = zxid
	pc.digest = t.nodeDigest(parentPath, pc.data, &pc.stat)
	t.addChange(pc, parent.digest)

	nc := &change{
		zxid: zxid, path: path, data: b.Data, acl: acl,
		stat: stored{czxid: zxid, mzxid: zxid, pzxid: zxid, ctime: hdr.Time, mtime: hdr.Time, owner: owner},
	}
	nc.digest = t.nodeDigest(path, nc.data, &nc.stat)
	t.addChange(nc, 0)
	return rec, wire.ErrOK
}

// prepareDelete checks a delete (or, with container, a server-issued
// deleteContainer: no ACL or version check, and refused on ephemerals).
func (t *Tree) prepareDelete(path string, version int32, auth []wire.Id, container bool, zxid int64) (wire.Record, wire.ErrCode) {
	slash := lastSlash(path)
	if slash < 0 || strings.IndexByte(path, 0) >= 0 || isSpecialPath(path) {
		return nil, wire.ErrBadArguments
	}
	parentPath := canonical(path[:slash])
	var parent, n *change
	var ok bool
	if container {
		if n, ok = t.record(path); !ok {
			return nil, wire.ErrNoNode
		}
		if n.children > 0 {
			return nil, wire.ErrNotEmpty
		}
		if t.kindOf(n.stat.owner) == kindEphemeral {
			return nil, wire.ErrBadVersion
		}
		if parent, ok = t.record(parentPath); !ok {
			return nil, wire.ErrNoNode
		}
	} else {
		if parent, ok = t.record(parentPath); !ok {
			return nil, wire.ErrNoNode
		}
		if !checkACL(parent.acl, wire.PermDelete, auth) {
			return nil, wire.ErrNoAuth
		}
		if n, ok = t.record(path); !ok {
			return nil, wire.ErrNoNode
		}
		if _, err := checkVersion(n.stat.version, version); err != wire.ErrOK {
			return nil, err
		}
		if n.children > 0 {
			return nil, wire.ErrNotEmpty
		}
	}
	t.recordDelete(parent, n, zxid)
	return &wire.DeleteTxn{Path: path}, wire.ErrOK
}

// recordDelete records the changes of deleting n under parent.
func (t *Tree) recordDelete(parent, n *change, zxid int64) {
	pc := parent.duplicate(zxid)
	pc.children--
	pc.stat.pzxid = zxid
	pc.digest = t.nodeDigest(pc.path, pc.data, &pc.stat)
	t.addChange(pc, parent.digest)
	t.addChange(&change{zxid: zxid, path: n.path, deleted: true}, n.digest)
}

// permitted returns the pending record of path for a request that needs
// perm: nil with NoNode when there is none, nil with NoAuth when auth lacks
// perm.
func (t *Tree) permitted(path string, perm int32, auth []wire.Id) (*change, wire.ErrCode) {
	n, ok := t.record(path)
	if !ok {
		return nil, wire.ErrNoNode
	}
	if !checkACL(n.acl, perm, auth) {
		return nil, wire.ErrNoAuth
	}
	return n, wire.ErrOK
}

func (t *Tree) prepareSetData(b *wire.SetDataRequest, auth []wire.Id, hdr *wire.TxnHeader) (wire.Record, wire.ErrCode) {
	if !validPath(b.Path) {
		return nil, wire.ErrBadArguments
	}
	n, code := t.permitted(b.Path, wire.PermWrite, auth)
	if n == nil {
		return nil, code
	}
	if err := t.checkQuota(b.Path, int64(len(n.data)), int64(len(b.Data)), 0); err != wire.ErrOK {
		return nil, err
	}
	version, err := checkVersion(n.stat.version, b.Version)
	if err != wire.ErrOK {
		return nil, err
	}
	c := n.duplicate(hdr.Zxid)
	c.stat.version = version
	c.stat.mtime = hdr.Time
	c.stat.mzxid = hdr.Zxid
	c.data = b.Data
	c.digest = t.nodeDigest(c.path, c.data, &c.stat)
	t.addChange(c, n.digest)
	return &wire.SetDataTxn{Path: b.Path, Data: b.Data, Version: version}, wire.ErrOK
}

func (t *Tree) prepareSetACL(b *wire.SetACLRequest, auth []wire.Id, zxid int64) (wire.Record, wire.ErrCode) {
	if !validPath(b.Path) {
		return nil, wire.ErrBadArguments
	}
	acl, ok := fixupACL(b.ACL, auth, t.cfg)
	if !ok {
		return nil, wire.ErrInvalidACL
	}
	n, code := t.permitted(b.Path, wire.PermAdmin, auth)
	if n == nil {
		return nil, code
	}
	version, err := checkVersion(n.stat.aversion, b.Version)
	if err != wire.ErrOK {
		return nil, err
	}
	// The pending change keeps the old ACL, as ZooKeeper's does: requests
	// prepared before this txn is applied are checked against the ACL the
	// node had (seen on ZooKeeper 3.8: a pipelined setData right after a
	// setACL that takes WRITE away succeeds).
	c := n.duplicate(zxid)
	c.stat.aversion = version
	c.digest = t.nodeDigest(c.path, c.data, &c.stat)
	t.addChange(c, n.digest)
	return &wire.SetACLTxn{Path: b.Path, ACL: acl, Version: version}, wire.ErrOK
}

func (t *Tree) prepareCheck(b *wire.PathVersionRequest, auth []wire.Id) (wire.Record, wire.ErrCode) {
	if !validPath(b.Path) {
		return nil, wire.ErrBadArguments
	}
	n, code := t.permitted(b.Path, wire.PermRead, auth)
	if n == nil {
		return nil, code
	}
	version, err := checkVersion(n.stat.version, b.Version)
	if err != wire.ErrOK {
		return nil, err
	}
	return &wire.CheckVersionTxn{Path: b.Path, Version: version}, wire.ErrOK
}

// prepareCloseSession lists the session's ephemerals — applied ones, minus
// pending deletes, plus pending creates — in ZooKeeper's order (see
// javaHashSetOrder), and records their deletes.
func (t *Tree) prepareCloseSession(session, zxid int64) wire.Record {
	var ops []setOp
	for _, c := range t.pending.list {
		if c.deleted {
			ops = append(ops, setOp{path: c.path})
		} else if c.stat.owner == session && t.kindOf(c.stat.owner) == kindEphemeral {
			ops = append(ops, setOp{path: c.path, add: true})
		}
	}
	paths := javaHashSetOrder(t.ephemerals[session], ops)
	for _, p := range paths {
		n, ok := t.record(p)
		if !ok {
			continue
		}
		parent, ok := t.record(parentOf(p))
		if !ok {
			continue
		}
		t.recordDelete(parent, n, zxid)
	}
	return &wire.CloseSessionTxn{Paths2Delete: paths}
}
