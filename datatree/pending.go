package datatree

import "github.com/zabd/zabd/wire"

// change is the would-be state of one path after a prepared txn that is not
// applied yet (ZooKeeper's ChangeRecord). deleted marks a path the txn
// removes.
type change struct {
	zxid     int64
	path     string
	deleted  bool
	stat     stored
	data     []byte
	acl      []wire.ACL
	children int32  // number of children
	digest   uint32 // the path's digest term after the change
}

// undoEntry restores one path's previous change when a multi fails.
type undoEntry struct {
	path string
	prev *change
}

// pendingChanges is the overlay Prepare works against: per path the latest
// prepared change, and every change in zxid order so that Apply can drop
// them as their txns land (ZooKeeper's outstandingChanges).
type pendingChanges struct {
	byPath map[string]*change
	list   []*change
	digest int64 // the tree digest after the last change in list
	undo   []undoEntry
}

func newPendingChanges() pendingChanges {
	return pendingChanges{byPath: make(map[string]*change)}
}

// currentDigest is the digest of the tree with every prepared txn applied.
func (t *Tree) currentDigest() int64 {
	if len(t.pending.list) == 0 {
		return t.digest
	}
	return t.pending.digest
}

// record returns the would-be state of path: the latest pending change or
// the applied node. ok is false when the path does not exist there.
func (t *Tree) record(path string) (c *change, ok bool) {
	if c := t.pending.byPath[canonical(path)]; c != nil {
		return c, !c.deleted
	}
	n := t.lookup(path)
	if n == nil {
		return nil, false
	}
	return &change{
		zxid:     -1,
		path:     canonical(path),
		stat:     n.stat(),
		data:     n.data(),
		acl:      t.acls.list(n.acl),
		children: int32(len(t.kids(n))),
		digest:   t.digestOf(canonical(path), n),
	}, true
}

// canonical maps the root's alias "" to "/".
func canonical(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

// duplicate copies c as the base of a new change of zxid.
func (c *change) duplicate(zxid int64) *change {
	d := *c
	d.zxid = zxid
	return &d
}

// addChange records c, whose path's digest term was prevDigest before it.
func (t *Tree) addChange(c *change, prevDigest uint32) {
	p := &t.pending
	p.digest = t.currentDigest() - int64(prevDigest) + int64(c.digest)
	p.undo = append(p.undo, undoEntry{path: c.path, prev: p.byPath[c.path]})
	p.byPath[c.path] = c
	p.list = append(p.list, c)
}

// pendingMark is where a request's changes start, for rolling them back.
type pendingMark struct {
	list   int
	undo   int
	digest int64
}

func (t *Tree) markPending() pendingMark {
	return pendingMark{list: len(t.pending.list), undo: len(t.pending.undo), digest: t.pending.digest}
}

// rollbackPending forgets every change recorded since m (a multi failed).
func (t *Tree) rollbackPending(m pendingMark) {
	p := &t.pending
	for i := len(p.undo) - 1; i >= m.undo; i-- {
		u := p.undo[i]
		if u.prev == nil {
			delete(p.byPath, u.path)
		} else {
			p.byPath[u.path] = u.prev
		}
	}
	p.undo = p.undo[:m.undo]
	for i := m.list; i < len(p.list); i++ {
		p.list[i] = nil
	}
	p.list = p.list[:m.list]
	p.digest = m.digest
}

// dropApplied forgets the changes of txns up to zxid, now in the tree.
func (t *Tree) dropApplied(zxid int64) {
	p := &t.pending
	i := 0
	for ; i < len(p.list) && p.list[i].zxid <= zxid; i++ {
		c := p.list[i]
		if p.byPath[c.path] == c {
			delete(p.byPath, c.path)
		}
		p.list[i] = nil
	}
	if i > 0 {
		p.list = p.list[i:]
		if len(p.list) == 0 {
			p.list = nil
		}
	}
}

// DiscardPending forgets every prepared txn not yet applied: they will never
// be (this member stopped leading). The next Prepare works against the
// applied tree again.
func (t *Tree) DiscardPending() {
	t.pending.byPath = make(map[string]*change)
	t.pending.list = nil
	t.pending.undo = nil
	t.pending.digest = 0
}

// PendingCount returns the number of pending changes (for tests and metrics).
func (t *Tree) PendingCount() int { return len(t.pending.list) }
