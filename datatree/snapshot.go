package datatree

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zabd/zabd/wire"
)

// Snapshot is a fuzzy snapshot of a Tree in progress: ZooKeeper 3.8's
// DataTree serialization (the ACL cache as a map of reference → ACL list,
// then every node as its path and DataNode{data, acl reference,
// StatPersisted} in pre-order, the root under the path "", ended by the path
// "/"). The storage layer wraps it in ZooKeeper's snapshot file (header,
// session table before it, digest and checksum after it).
//
// The tree's owner advances it with Step between applies, so it never reads
// the tree while it changes. Like ZooKeeper's, the result is fuzzy: a node
// may appear as it was at any moment between the start and its writing. It
// is made so that restoring it (Load) and replaying every txn after Zxid
// gives exactly the live tree, digest included: nodes created after the
// start are left out (their create txns are replayed), and a node whose ACL
// was set after the start to a list created after it refers to a list the
// map written first does not hold, until its replayed setACL sets it again
// (such a reference grants nothing meanwhile).
type Snapshot struct {
	t     *Tree
	zxid  int64
	acls  []snapACL
	stack []snapFrame
	begun bool
	done  bool
}

type snapACL struct {
	ref  int64
	acls []wire.ACL
}

// snapFrame is a node whose children are being written: their names as
// they were when the node was written.
type snapFrame struct {
	path  string
	names []string
	next  int
}

// StartSnapshot begins a fuzzy snapshot of the tree as of LastZxid.
func (t *Tree) StartSnapshot() *Snapshot {
	s := &Snapshot{t: t, zxid: t.lastZxid}
	for _, r := range t.acls.sortedRefs() {
		s.acls = append(s.acls, snapACL{ref: r, acls: t.acls.byRef[r].acls})
	}
	return s
}

// Zxid is the last zxid applied when the snapshot started: the name
// ZooKeeper gives the snapshot file, and where the replay that completes it
// starts (with the next zxid).
func (s *Snapshot) Zxid() int64 { return s.zxid }

// Step appends the next part of the snapshot to e — the ACL map on the first
// step, then up to maxNodes nodes (at least one) — and reports whether the
// snapshot is complete (its end marker written).
func (s *Snapshot) Step(e *wire.Encoder, maxNodes int) (done bool) {
	if s.done {
		return true
	}
	if !s.begun {
		s.begun = true
		e.WriteInt(int32(len(s.acls)))
		for _, a := range s.acls {
			e.WriteLong(a.ref)
			e.WriteACLs(a.acls)
		}
		s.writeNode(e, "", s.t.root)
		s.push("/", s.t.root)
		maxNodes--
	}
	if maxNodes < 1 {
		maxNodes = 1
	}
	for written := 0; written < maxNodes && len(s.stack) > 0; {
		top := &s.stack[len(s.stack)-1]
		if top.next == len(top.names) {
			s.stack[len(s.stack)-1] = snapFrame{}
			s.stack = s.stack[:len(s.stack)-1]
			continue
		}
		path := joinPath(top.path, top.names[top.next])
		top.next++
		n := s.t.nodes.get(path)
		if n == nil || n.czxid > s.zxid {
			continue
		}
		s.writeNode(e, path, n)
		written++
		s.push(path, n)
	}
	if len(s.stack) == 0 {
		e.WriteString("/")
		s.done = true
	}
	return s.done
}

func (s *Snapshot) push(path string, n *node) {
	if len(s.t.kids(n)) > 0 {
		s.stack = append(s.stack, snapFrame{path: path, names: s.t.childNames(n)})
	}
}

func (s *Snapshot) writeNode(e *wire.Encoder, path string, n *node) {
	e.WriteString(path)
	e.WriteBuffer(n.data())
	e.WriteLong(n.acl)
	stat := n.stat()
	st := stat.persisted()
	st.Encode(e)
}

// WriteSnapshot writes a complete snapshot of the tree at once (for tests
// and for a tree nobody changes meanwhile).
func (t *Tree) WriteSnapshot(e *wire.Encoder) {
	s := t.StartSnapshot()
	for !s.Step(e, 1<<30) {
	}
}

// ErrCorrupt is wrapped by every error Load returns for bad snapshot bytes.
var ErrCorrupt = errors.New("datatree: corrupt snapshot")

// SnapshotError says where a snapshot failed to load: Offset is the byte
// offset in the decoder's input.
type SnapshotError struct {
	Offset int
	Reason string
	Err    error // the decoding error, if any
}

func (e *SnapshotError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("datatree: corrupt snapshot at offset %d: %s: %v", e.Offset, e.Reason, e.Err)
	}
	return fmt.Sprintf("datatree: corrupt snapshot at offset %d: %s", e.Offset, e.Reason)
}

func (e *SnapshotError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrCorrupt, e.Err}
	}
	return []error{ErrCorrupt}
}

// Load reads a tree in the format Snapshot writes (and ZooKeeper 3.8 writes)
// from d, leaving d after its end marker, and returns it with lastZxid as
// its LastZxid (the snapshot's zxid). Truncated or inconsistent input (a
// node before its parent, a path twice, no root) gives a *SnapshotError with
// the offset; nothing is half-loaded. As ZooKeeper does on load, quota
// stats are recounted and ACL lists no node uses are dropped.
func Load(cfg Config, d *wire.Decoder, lastZxid int64) (*Tree, error) {
	t := newEmpty(cfg)
	t.lastZxid = lastZxid
	fail := func(reason string) error {
		return &SnapshotError{Offset: d.Offset(), Reason: reason, Err: d.Err()}
	}
	count := d.ReadInt()
	if d.Err() != nil {
		return nil, fail("ACL map size")
	}
	if count < 0 {
		return nil, fail(fmt.Sprintf("negative ACL map size %d", count))
	}
	for i := int32(0); i < count; i++ {
		at := d.Offset()
		ref := d.ReadLong()
		acls := d.ReadACLs()
		if d.Err() != nil {
			return nil, fail("ACL map entry")
		}
		if acls == nil {
			return nil, &SnapshotError{Offset: at, Reason: "ACL map entry without a list"}
		}
		if _, dup := t.acls.byRef[ref]; dup {
			return nil, &SnapshotError{Offset: at, Reason: fmt.Sprintf("ACL reference %d twice", ref)}
		}
		key := aclKey(acls)
		t.acls.byRef[ref] = &aclEntry{acls: acls, key: key}
		t.acls.byKey[key] = ref
		if ref > t.acls.last {
			t.acls.last = ref
		}
	}
	for {
		at := d.Offset()
		path := d.ReadString()
		if d.Err() != nil {
			return nil, fail("node path")
		}
		if path == "/" {
			break
		}
		n := &node{}
		n.setData(d.ReadBuffer())
		n.acl = d.ReadLong()
		var st wire.StatPersisted
		st.Decode(d)
		if d.Err() != nil {
			return nil, fail("node " + quoted(path))
		}
		stat := storedFrom(&st)
		n.setStat(&stat)
		if path == "" {
			if t.root != nil {
				return nil, &SnapshotError{Offset: at, Reason: "root twice"}
			}
			t.root = n
			n.setPath("/")
			t.insertLoaded(n)
			t.acls.addUsage(n.acl)
			t.acls.last = max(t.acls.last, n.acl)
			continue
		}
		// Paths are not validated beyond having a parent, as ZooKeeper's
		// loader does: a tree holds whatever its txns created.
		parentPath, _, ok := splitPath(path)
		if !ok {
			return nil, &SnapshotError{Offset: at, Reason: "path without a parent " + quoted(path)}
		}
		parent := t.nodes.get(parentPath)
		if parent == nil {
			return nil, &SnapshotError{Offset: at, Reason: "node " + quoted(path) + " before its parent"}
		}
		if t.nodes.get(path) != nil {
			return nil, &SnapshotError{Offset: at, Reason: "node " + quoted(path) + " twice"}
		}
		n.setPath(path)
		t.insertLoaded(n)
		t.link(parent, n)
		t.acls.addUsage(n.acl)
		// A reference the map lacks must not be handed out again to
		// another list.
		t.acls.last = max(t.acls.last, n.acl)
	}
	if t.root == nil {
		return nil, &SnapshotError{Offset: d.Offset(), Reason: "no root node"}
	}
	t.setupQuotas()
	t.acls.purgeUnused()
	return t, nil
}

func quoted(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// setupQuotas rebuilds the quota index from the limit nodes under
// /zookeeper/quota and recounts every quota's stats (DataTree.setupQuota).
func (t *Tree) setupQuotas() {
	suffix := "/" + quotaLimitNode
	var limits []string
	var walk func(n *node)
	walk = func(n *node) {
		for _, name := range t.kids(n) {
			c := t.child(n, name)
			if len(t.kids(c)) == 0 && strings.HasSuffix(c.path(), suffix) {
				limits = append(limits, c.path())
			}
			walk(c)
		}
	}
	if q := t.nodes.get(quotaPath); q != nil {
		walk(q)
	}
	for _, p := range limits {
		target := p[len(quotaPath) : len(p)-len(suffix)]
		if target == "" {
			continue
		}
		t.quotas.paths[target] = struct{}{}
		t.recountQuota(target)
	}
}
