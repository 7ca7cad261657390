package datatree

import (
	"unsafe"

	"github.com/zabd/zabd/wire"
)

// Well-known paths that exist on every tree (ZooKeeper's DataTree constructor).
const (
	zookeeperPath = "/zookeeper"
	quotaPath     = "/zookeeper/quota"
	configPath    = "/zookeeper/config"
)

// stored is a znode's stored stat, ZooKeeper's StatPersisted: what the
// snapshot and the digest hold.
type stored struct {
	czxid, mzxid, pzxid int64
	ctime, mtime        int64
	version             int32
	cversion            int32 // children ever created (deletes do not count)
	aversion            int32
	owner               int64 // session, or the container / TTL encoding
}

// node is a znode, laid out in 96 bytes (a Go size class; TestNodeSize
// keeps it there): the stored stat's fields without padding, the ACL
// reference, and the data and the path as pointer and length each. What
// does not fit is kept elsewhere or computed: a node's digest term is
// computed again when the node changes (one CRC of its path, data and
// stat), and the children of the few nodes that have any are in the
// tree's children map.
//
// The path is the node's key in the tree's index and holds the only copy
// of its name, the part after its last '/': a parent's list of children is
// of names that point into their nodes' paths, so that listing children
// copies string headers without visiting the nodes. The list is in the
// order creates and deletes leave it; the first listing after a change
// that broke the order sorts it (sequential creates keep it).
type node struct {
	czxid, mzxid, pzxid int64
	ctime, mtime        int64
	owner               int64 // session, or the container / TTL encoding
	version             int32
	cversion            int32 // children ever created (deletes do not count)
	aversion            int32
	slot                uint32 // position in the parent's children, childrenSorted, hasChildren
	acl                 int64  // reference into the ACL cache (-1 = world:anyone ALL)
	dataLen, pathLen    uint32
	// dataPtr is the data's first byte: nil for jute's null buffer, and
	// &emptyData for an empty one. The data is never modified in place,
	// so readers may alias it. Neither the data nor the path keeps a
	// capacity or a 64-bit length, which is what fits the node in 96 bytes.
	dataPtr, pathPtr *byte
}

// newNode returns a node at path whose children are in order (it has none).
func newNode(path string) *node {
	n := &node{}
	n.setPath(path)
	return n
}

// path is n's path, "/" for the root.
func (n *node) path() string { return unsafe.String(n.pathPtr, n.pathLen) }

// setPath puts n at path, whose children are in order (it has none).
func (n *node) setPath(path string) {
	n.pathPtr, n.pathLen = unsafe.StringData(path), uint32(len(path))
	n.slot = childrenSorted
}

// emptyData is what an empty, non-null data points at.
var emptyData byte

// data returns n's data; nil for a null buffer.
func (n *node) data() []byte { return unsafe.Slice(n.dataPtr, n.dataLen) }

// setData makes b n's data, aliasing it: b must never be modified.
func (n *node) setData(b []byte) {
	switch {
	case b == nil:
		n.dataPtr = nil
	case len(b) == 0:
		n.dataPtr = &emptyData
	default:
		n.dataPtr = unsafe.SliceData(b)
	}
	n.dataLen = uint32(len(b))
}

// stat returns n's stored stat.
func (n *node) stat() stored {
	return stored{czxid: n.czxid, mzxid: n.mzxid, pzxid: n.pzxid, ctime: n.ctime, mtime: n.mtime,
		version: n.version, cversion: n.cversion, aversion: n.aversion, owner: n.owner}
}

// setStat sets n's stored stat.
func (n *node) setStat(s *stored) {
	n.czxid, n.mzxid, n.pzxid, n.ctime, n.mtime = s.czxid, s.mzxid, s.pzxid, s.ctime, s.mtime
	n.version, n.cversion, n.aversion, n.owner = s.version, s.cversion, s.aversion, s.owner
}

// name is the last component of n's path ("" for the root).
func (n *node) name() string {
	p := n.path()
	return p[lastSlash(p)+1:]
}

// Bits of node.slot: childrenSorted says the node's own children are in
// name order, hasChildren that it has some (an entry in the tree's
// children map); the other bits are the node's position in its parent's
// children (at most 2^30 children).
const (
	childrenSorted = 1 << 31
	hasChildren    = 1 << 30
	slotFlags      = childrenSorted | hasChildren
)

func (n *node) index() int           { return int(n.slot &^ slotFlags) }
func (n *node) setIndex(i int)       { n.slot = n.slot&slotFlags | uint32(i) }
func (n *node) sortedChildren() bool { return n.slot&childrenSorted != 0 }
func (n *node) setSortedChildren(sorted bool) {
	if sorted {
		n.slot |= childrenSorted
	} else {
		n.slot &^= childrenSorted
	}
}

// Tree is a ZooKeeper data tree. The zero value is not usable; call New or Load.
type Tree struct {
	cfg   Config
	nodes pathIndex // by path; the root is "/"
	// children holds the names of each node's children, for the nodes
	// that have any (hasChildren).
	children map[*node]*[]string
	root     *node
	acls     aclCache
	digest   int64 // sum of every node's digest term (wrapping, as Java's long)
	// dataSize is approximate_data_size without the root's "" alias: each
	// node's path (UTF-16 units) and data, kept as nodes come, go and
	// change, as ZooKeeper keeps nodeDataSize (cachedApproximateDataSize).
	dataSize int64
	lastZxid int64 // highest zxid applied

	ephemerals map[int64]*ephemeralSet // session → its ephemerals; kept until the session closes
	ephSeq     uint64                  // insertion sequence of ephemeral paths
	containers map[string]struct{}
	ttls       map[string]struct{}
	quotas     quotaIndex

	watches watchManager
	pending pendingChanges
	scratch []byte // reused by nodeDigest
}

// New returns a fresh tree as a ZooKeeper 3.8 server starts with: the root,
// /zookeeper, /zookeeper/quota and /zookeeper/config (ACL world:anyone READ).
func New(cfg Config) *Tree {
	t := newEmpty(cfg)
	t.root = newNode("/")
	t.root.acl = openACLRef
	t.root.setData([]byte{})
	t.insertLoaded(t.root)
	for _, p := range []string{zookeeperPath, quotaPath, configPath} {
		n := newNode(p)
		n.acl = openACLRef
		n.setData([]byte{})
		t.insertLoaded(n)
		t.link(t.nodes.get(parentOf(p)), n)
	}
	// ZooKeeper sets this ACL with setACL(..., version -1), which stores -1
	// as the aversion.
	cfgNode := t.nodes.get(configPath)
	cfgNode.acl = t.acls.ref(wire.ReadACLUnsafe)
	cfgNode.aversion = -1
	return t
}

func newEmpty(cfg Config) *Tree {
	return &Tree{
		cfg:        cfg,
		nodes:      newPathIndex(),
		children:   make(map[*node]*[]string),
		acls:       newACLCache(),
		ephemerals: make(map[int64]*ephemeralSet),
		containers: make(map[string]struct{}),
		ttls:       make(map[string]struct{}),
		quotas:     newQuotaIndex(),
		watches:    newWatchManager(),
		pending:    newPendingChanges(),
	}
}

// insertLoaded indexes n under its path and accounts its digest and kind;
// the caller links it to its parent.
func (t *Tree) insertLoaded(n *node) {
	t.nodes.put(n)
	t.dataSize += nodeSize(n.path(), n.data())
	t.digest += int64(t.digestOf(n.path(), n))
	t.trackKind(n.path(), n.owner)
}

// kids returns the names of n's children.
func (t *Tree) kids(n *node) []string {
	if n.slot&hasChildren == 0 {
		return nil
	}
	return *t.children[n]
}

// child returns the node of parent's child named name.
func (t *Tree) child(parent *node, name string) *node {
	return t.nodes.getChild(parent.path(), name)
}

// link appends n to parent's children.
func (t *Tree) link(parent, n *node) {
	kids := t.children[parent]
	if kids == nil {
		kids = new([]string)
		t.children[parent] = kids
		parent.slot |= hasChildren
	}
	name := n.name()
	if last := len(*kids) - 1; last >= 0 && name < (*kids)[last] {
		parent.setSortedChildren(false)
	}
	n.setIndex(len(*kids))
	*kids = append(*kids, name)
}

// unlink removes n from parent's children in O(1): the last child takes its
// place.
func (t *Tree) unlink(parent, n *node) {
	kids := t.children[parent]
	i, last := n.index(), len(*kids)-1
	if i != last {
		moved := (*kids)[last]
		(*kids)[i] = moved
		t.child(parent, moved).setIndex(i)
		parent.setSortedChildren(false)
	}
	(*kids)[last] = ""
	if last == 0 {
		delete(t.children, parent)
		parent.slot &^= hasChildren
		parent.setSortedChildren(true)
		return
	}
	*kids = (*kids)[:last]
}

// lookup finds a node; "" is the root, as in ZooKeeper.
func (t *Tree) lookup(path string) *node {
	if path == "" {
		return t.root
	}
	return t.nodes.get(path)
}

// digestOf is n's digest term, n being at path (its own, or the root's
// alias "").
func (t *Tree) digestOf(path string, n *node) uint32 {
	st := n.stat()
	return t.nodeDigest(path, n.data(), &st)
}

// redigest replaces n's digest term, which was before, after a change to
// the data or stat of n, at path.
func (t *Tree) redigest(path string, n *node, before uint32) {
	t.digest += int64(t.digestOf(path, n)) - int64(before)
}

// Digest returns the tree digest (ZooKeeper's DigestCalculator version 2),
// kept up to date by every change.
func (t *Tree) Digest() int64 { return t.digest }

// DigestVersion is the digest algorithm version ZooKeeper 3.8 writes with its digests.
const DigestVersion = 2

// LastZxid returns the highest zxid applied (ZooKeeper's lastProcessedZxid).
func (t *Tree) LastZxid() int64 { return t.lastZxid }

// NodeCount returns the number of znodes, the root and /zookeeper's included.
func (t *Tree) NodeCount() int { return t.nodes.len() }

// kind is a znode's kind as ZooKeeper's EphemeralType derives it from the
// stored ephemeralOwner.
type kind uint8

const (
	kindPersistent kind = iota // VOID
	kindEphemeral              // NORMAL
	kindContainer
	kindTTL
)

// Encodings of ephemeralOwner (ZooKeeper's EphemeralType).
const (
	containerOwner   int64 = -1 << 63              // Long.MIN_VALUE
	extendedMask     int64 = -0x0100000000000000   // 0xff00000000000000: extended type marker
	reservedBitsMask int64 = 0x00ffff0000000000    // extended type number (0 = TTL)
	maxTTL           int64 = 0x000000ffffffffff    // 2^40-1 ms
	ttlOwnerBase           = extendedMask | 0x0000 // TTL's extended type bits are 0
)

// kindOf derives the kind of a node from its stored owner; TTL encodings are
// only recognised with extended types enabled, as in ZooKeeper.
func (t *Tree) kindOf(owner int64) kind {
	if t.cfg.ExtendedTypesEnabled && owner&extendedMask == extendedMask && owner&reservedBitsMask == 0 {
		return kindTTL
	}
	switch {
	case owner == containerOwner:
		return kindContainer
	case owner == 0:
		return kindPersistent
	}
	return kindEphemeral
}

// ttlOwner encodes a TTL in ephemeralOwner.
func ttlOwner(ttl int64) int64 { return ttlOwnerBase | ttl }

// ttlOf decodes the TTL of a TTL node's owner.
func ttlOf(owner int64) int64 { return owner & maxTTL }

// trackKind records path in the index of its kind.
func (t *Tree) trackKind(path string, owner int64) {
	switch t.kindOf(owner) {
	case kindContainer:
		t.containers[path] = struct{}{}
	case kindTTL:
		t.ttls[path] = struct{}{}
	case kindEphemeral:
		s := t.ephemerals[owner]
		if s == nil {
			s = &ephemeralSet{paths: make(map[string]uint64)}
			t.ephemerals[owner] = s
		}
		t.ephSeq++
		s.add(path, t.ephSeq)
	}
}

// untrackKind removes path from the index of its kind.
func (t *Tree) untrackKind(path string, owner int64) {
	switch t.kindOf(owner) {
	case kindContainer:
		delete(t.containers, path)
	case kindTTL:
		delete(t.ttls, path)
	case kindEphemeral:
		// The set stays, even empty, until its session closes: its size
		// decides ZooKeeper's order (see javaHashSetOrder).
		if s := t.ephemerals[owner]; s != nil {
			delete(s.paths, path)
		}
	}
}

// visibleStat is ZooKeeper's DataNode.copyStat: the stat a client sees.
func (t *Tree) visibleStat(n *node) wire.Stat {
	st := n.stat()
	return t.visible(&st, int(n.dataLen), len(t.kids(n)))
}

func (t *Tree) visible(s *stored, dataLen, numChildren int) wire.Stat {
	owner := s.owner
	if k := t.kindOf(owner); k == kindContainer || k == kindTTL {
		owner = 0
	}
	return wire.Stat{
		Czxid:          s.czxid,
		Mzxid:          s.mzxid,
		Ctime:          s.ctime,
		Mtime:          s.mtime,
		Version:        s.version,
		Cversion:       s.cversion*2 - int32(numChildren),
		Aversion:       s.aversion,
		EphemeralOwner: owner,
		DataLength:     int32(dataLen),
		NumChildren:    int32(numChildren),
		Pzxid:          s.pzxid,
	}
}

// persisted converts a stored stat to its jute record.
func (s *stored) persisted() wire.StatPersisted {
	return wire.StatPersisted{
		Czxid: s.czxid, Mzxid: s.mzxid, Ctime: s.ctime, Mtime: s.mtime,
		Version: s.version, Cversion: s.cversion, Aversion: s.aversion,
		EphemeralOwner: s.owner, Pzxid: s.pzxid,
	}
}

func storedFrom(p *wire.StatPersisted) stored {
	return stored{
		czxid: p.Czxid, mzxid: p.Mzxid, pzxid: p.Pzxid, ctime: p.Ctime, mtime: p.Mtime,
		version: p.Version, cversion: p.Cversion, aversion: p.Aversion, owner: p.EphemeralOwner,
	}
}
