package linearizability

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/zabd/zabd/wire"
)

// node is one znode of the model tree. Nodes are never changed in place once
// stored (copy on write), so a state can share them with its predecessors.
//
// A zxid field of 0 means "set by a write whose zxid is not known" (an
// operation of unknown outcome, or a session expiry): it matches any value a
// reply shows. opaque nodes existed before the history began; only their
// existence and children are known.
type node struct {
	data                        string
	version, cversion, aversion int32
	czxid, mzxid, pzxid         int64
	owner                       int64
	seq                         int32 // children ever created: the next sequential suffix
	kids                        map[string]bool
	opaque                      bool
	reap                        reapKind // a container or TTL node the server may delete
}

// reapKind says which nodes the server deletes by itself, as ZooKeeper's
// ContainerManager (datatree.ReapCandidates) does.
type reapKind uint8

const (
	reapNever     reapKind = iota
	reapContainer          // once childless, if it ever had a child
	reapTTL                // once childless and its TTL passed (not modelled: any time)
)

func reapKindOf(m wire.CreateMode) reapKind {
	switch {
	case m.Container():
		return reapContainer
	case m.TTL():
		return reapTTL
	}
	return reapNever
}

// reapable reports whether the server may delete n, the node at p, now: a
// container without children that has had one (ZooKeeper's default; zabd's
// maxNeverUsed setting is not modelled), or a TTL node without children
// (whose TTL may have passed: the model knows no times).
//
// Also any other childless node but an ephemeral at a path where a
// reapable node was deleted before (staleReap): the server picks what to
// reap from its applied tree, which lags the txns it has accepted, and a
// deleteContainer is prepared checking only that the node has no children
// and is no ephemeral (ZooKeeper's PrepRequestProcessor; zabd's alike). So
// a reap decided while the old node was still applied deletes whatever was
// created at its path since: hunt seed 38940 (a container made again,
// never used, reaped 0.35 s later by a scan that still saw the old one
// behind a slow fsync), 35633 (a persistent node made where a TTL node was
// reaped, and reaped in turn).
func (t *tree) reapable(p string, n *node) bool {
	if len(n.kids) > 0 || n.owner != 0 || n.opaque {
		return false
	}
	switch n.reap {
	case reapContainer:
		return n.cversion > 0 || t.staleReap[p]
	case reapTTL:
		return true
	}
	return t.staleReap[p]
}

func (n *node) clone() *node {
	c := *n
	c.kids = make(map[string]bool, len(n.kids)+1)
	for k := range n.kids {
		c.kids[k] = true
	}
	return &c
}

func (n *node) sortedKids() []string {
	out := make([]string, 0, len(n.kids))
	for k := range n.kids {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tree is a model state: the nodes of one component of the history's paths
// and the sessions known closed or expired. fp is a fingerprint of both,
// kept up to date by every change, so that unequal trees are told apart
// without walking them.
type tree struct {
	nodes map[string]*node
	dead  map[int64]bool
	fp    uint64
	// dataRead lists the paths whose data some read of the component
	// returns (shared, never changed; nil: every path). Elsewhere a node
	// keeps only its data's length (which stats show): states that differ
	// only in data nothing reads are one state to the search.
	dataRead map[string]bool
	// reaping: the server may delete containers and TTL nodes (a
	// component holding tlReap operations), so creates record which they
	// made (node.reap). Otherwise they do not, so that a container and a
	// persistent node that no observation can tell apart stay one state.
	reaping bool
	// staleReap holds the paths where a reapable container was deleted:
	// a reap decided before that deletion applied may yet delete a
	// container created there since (see reapable). Never changed in
	// place once shared (nil: none).
	staleReap map[string]bool
}

// keptData is what the model stores as the data of the node at path.
func (t *tree) keptData(path, data string) string {
	if t.dataRead == nil || t.dataRead[path] {
		return data
	}
	return unreadData(len(data))
}

// unreadData stands for n bytes of data no read returns.
func unreadData(n int) string {
	const blank = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	if n <= len(blank) {
		return blank[:n]
	}
	return strings.Repeat("\x00", n)
}

// nodeHash fingerprints one node at path; XOR-ing them makes the tree's
// fingerprint independent of map order.
func nodeHash(path string, n *node) uint64 {
	var kids uint64
	for k := range n.kids {
		kids ^= fnv64(fnvOffset, k)
	}
	h := fnv64(fnvOffset, path)
	h = fnv64(h, n.data)
	for _, v := range []int64{int64(n.version), int64(n.cversion), int64(n.aversion), n.czxid, n.mzxid, n.pzxid,
		n.owner, int64(n.seq), int64(kids), int64(n.reap)} {
		h = fnvWord(h, uint64(v))
	}
	if n.opaque {
		h = fnvWord(h, 1)
	}
	return h
}

// FNV-1a, inlined so that fingerprinting allocates nothing; a separator byte
// after each string keeps ("ab","c") and ("a","bc") apart.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv64(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return (h ^ 0xff) * fnvPrime
}

func fnvWord(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h = (h ^ (v & 0xff)) * fnvPrime
		v >>= 8
	}
	return h
}

func sessionHash(session int64) uint64 {
	return fnvWord(fnv64(fnvOffset, "dead session"), uint64(session))
}

// markDead records a session's end.
func (t *tree) markDead(session int64) {
	if !t.dead[session] {
		t.dead[session] = true
		t.fp ^= sessionHash(session)
	}
}

// staleReapHash is what a staleReap mark adds to a tree's fingerprint.
func staleReapHash(p string) uint64 { return fnvWord(nodeHash(p, &node{}), 0x5ea1) }

// freshTree is the tree of a new ZooKeeper server: "/" and the /zookeeper
// subtree, all opaque.
func freshTree(dataRead map[string]bool, reaping bool) *tree {
	t := &tree{nodes: map[string]*node{}, dead: map[int64]bool{}, dataRead: dataRead, reaping: reaping}
	t.nodes["/"] = &node{opaque: true, kids: map[string]bool{"zookeeper": true}}
	t.nodes["/zookeeper"] = &node{opaque: true, kids: map[string]bool{"config": true, "quota": true}}
	t.nodes["/zookeeper/config"] = &node{opaque: true, kids: map[string]bool{}}
	t.nodes["/zookeeper/quota"] = &node{opaque: true, kids: map[string]bool{}}
	for p, n := range t.nodes {
		t.fp ^= nodeHash(p, n)
	}
	return t
}

func (t *tree) clone() *tree {
	return &tree{nodes: maps.Clone(t.nodes), dead: maps.Clone(t.dead), fp: t.fp, dataRead: t.dataRead, reaping: t.reaping, staleReap: t.staleReap}
}

func (t *tree) equal(o *tree) bool {
	if t == o {
		return true
	}
	if t.fp != o.fp || len(t.nodes) != len(o.nodes) || len(t.dead) != len(o.dead) || !maps.Equal(t.staleReap, o.staleReap) {
		return false
	}
	for s := range t.dead {
		if !o.dead[s] {
			return false
		}
	}
	for p, n := range t.nodes {
		m, ok := o.nodes[p]
		if !ok {
			return false
		}
		if n == m {
			continue
		}
		if n.data != m.data || n.version != m.version || n.cversion != m.cversion ||
			n.aversion != m.aversion || n.czxid != m.czxid || n.mzxid != m.mzxid ||
			n.pzxid != m.pzxid || n.owner != m.owner || n.seq != m.seq || n.opaque != m.opaque ||
			n.reap != m.reap || len(n.kids) != len(m.kids) {
			return false
		}
		for k := range n.kids {
			if !m.kids[k] {
				return false
			}
		}
	}
	return true
}

func (t *tree) describe() string {
	paths := make([]string, 0, len(t.nodes))
	for p := range t.nodes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		n := t.nodes[p]
		if n.opaque {
			continue
		}
		fmt.Fprintf(&b, "%s=%q(v%d) ", p, n.data, n.version)
	}
	return strings.TrimSpace(b.String())
}

// txn applies the sub-operations of one write to an overlay over a tree, so
// that a failing multi leaves the tree untouched.
type txn struct {
	base *tree
	// changed: nil value: deleted. Every node in it was made by this txn
	// (put is only given new nodes), so until commit shares them with a
	// tree the txn may change them in place (see writable).
	changed map[string]*node
	order   []string
}

func (x *txn) get(p string) *node {
	if n, ok := x.changed[p]; ok {
		return n
	}
	if n, ok := x.base.nodes[p]; ok {
		return n
	}
	return nil
}

// writable returns the node at p for the txn to change in place (nil if
// there is none): the one it made already, or a copy of the base's. A
// session's close removes all its ephemerals, often hundreds under one
// parent with hundreds of children: copying the parent once per child
// would make a close quadratic.
func (x *txn) writable(p string) *node {
	if n, ok := x.changed[p]; ok {
		return n
	}
	n := x.base.nodes[p]
	if n == nil {
		return nil
	}
	c := n.clone()
	x.put(p, c)
	return c
}

func (x *txn) put(p string, n *node) {
	if _, seen := x.changed[p]; !seen {
		x.order = append(x.order, p)
	}
	x.changed[p] = n
}

// commit writes the overlay into t (which may be x.base, or a clone of it).
func (x *txn) commit(t *tree) {
	for _, p := range x.order {
		if old := t.nodes[p]; old != nil {
			t.fp ^= nodeHash(p, old)
			if x.changed[p] == nil && !t.staleReap[p] && t.reapable(p, old) {
				t.staleReap = maps.Clone(t.staleReap) // shared with the trees cloned from t
				if t.staleReap == nil {
					t.staleReap = map[string]bool{}
				}
				t.staleReap[p] = true
				t.fp ^= staleReapHash(p)
			}
		}
		if n := x.changed[p]; n != nil {
			t.nodes[p] = n
			t.fp ^= nodeHash(p, n)
		} else {
			delete(t.nodes, p)
		}
	}
}

func parentOf(p string) (parent, name string) {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/", p[i+1:]
	}
	return p[:i], p[i+1:]
}

// writeOp is one write as the model applies it: a top-level operation or a
// sub-operation of a multi.
type writeOp struct {
	op      string
	path    string
	data    string
	version int32 // -1: any
	mode    wire.CreateMode
}

// opResult is what the model says a write or sub-write returns.
type opResult struct {
	err     string
	created string
	node    *node // the node after the op, for comparing a returned stat
	path    string
}

var (
	errNoNode    = wire.ErrNoNode.String()
	errNodeExist = wire.ErrNodeExists.String()
	errBadVer    = wire.ErrBadVersion.String()
	errNotEmpty  = wire.ErrNotEmpty.String()
	errNoKids    = wire.ErrNoChildrenForEphemerals.String()
	errRuntime   = wire.ErrRuntimeInconsistency.String()
)

// modeledErrs are the results the model can predict; any other error (NoAuth,
// BadArguments, Unimplemented, …) depends on things a history does not record
// (ACLs, server configuration) and is accepted as a write without effect.
var modeledErrs = set(ErrOK, errNoNode, errNodeExist, errBadVer, errNotEmpty, errNoKids, errRuntime)

// applyOne applies one sub-operation; zxid 0 means unknown.
func applyOne(x *txn, w writeOp, zxid, session int64) opResult {
	switch w.op {
	case OpCreate:
		return applyCreate(x, w, zxid, session)
	case OpDelete:
		n := x.get(w.path)
		switch {
		case n == nil:
			return opResult{err: errNoNode}
		case w.version != -1 && !n.opaque && n.version != w.version:
			return opResult{err: errBadVer}
		case len(n.kids) > 0:
			return opResult{err: errNotEmpty}
		}
		x.put(w.path, nil)
		x.removeChild(w.path, zxid)
		return opResult{err: ErrOK}
	case OpSetData:
		n := x.get(w.path)
		if n == nil {
			return opResult{err: errNoNode}
		}
		if w.version != -1 && !n.opaque && n.version != w.version {
			return opResult{err: errBadVer}
		}
		c := n.clone()
		c.data, c.version, c.mzxid = x.base.keptData(w.path, w.data), n.version+1, zxid
		x.put(w.path, c)
		return opResult{err: ErrOK, node: c, path: w.path}
	case OpSetACL:
		n := x.get(w.path)
		if n == nil {
			return opResult{err: errNoNode}
		}
		if w.version != -1 && !n.opaque && n.aversion != w.version {
			return opResult{err: errBadVer}
		}
		c := n.clone()
		c.aversion++
		x.put(w.path, c)
		return opResult{err: ErrOK, node: c, path: w.path}
	case OpCheck:
		n := x.get(w.path)
		if n == nil {
			return opResult{err: errNoNode}
		}
		if w.version != -1 && !n.opaque && n.version != w.version {
			return opResult{err: errBadVer}
		}
		return opResult{err: ErrOK}
	}
	return opResult{err: wire.ErrUnimplemented.String()}
}

func applyCreate(x *txn, w writeOp, zxid, session int64) opResult {
	parentPath, _ := parentOf(w.path)
	if w.path == "/" {
		return opResult{err: errNodeExist}
	}
	parent := x.get(parentPath)
	if parent == nil {
		return opResult{err: errNoNode}
	}
	if parent.owner != 0 {
		return opResult{err: errNoKids}
	}
	name := w.path
	if w.mode.Sequential() {
		name = fmt.Sprintf("%s%010d", w.path, parent.seq)
	}
	if x.get(name) != nil {
		return opResult{err: errNodeExist}
	}
	n := &node{data: x.base.keptData(name, w.data), czxid: zxid, mzxid: zxid, pzxid: zxid, kids: map[string]bool{}}
	if x.base.reaping {
		n.reap = reapKindOf(w.mode)
	}
	if w.mode.Ephemeral() {
		n.owner = session
	}
	x.put(name, n)
	p := x.writable(parentPath)
	_, base := parentOf(name)
	p.kids[base] = true
	p.seq++
	p.cversion++
	p.pzxid = zxid
	return opResult{err: ErrOK, created: name, node: n, path: name}
}

func (x *txn) removeChild(p string, zxid int64) {
	parentPath, base := parentOf(p)
	c := x.writable(parentPath)
	if c == nil {
		return
	}
	delete(c.kids, base)
	c.cversion++
	c.pzxid = zxid
}
