package datatree

import "hash/maphash"

// pathIndex finds a node by its path. It is a hash table of node pointers
// keyed by the path each node holds, so a path is stored once, in its node:
// a Go map[string]*node would hold a second string header per node (24
// bytes a slot, and as many again in free slots).
//
// The table is split the way Go's own maps are (extendible hashing): a
// directory, indexed by the top bits of a path's hash, of tables of at most
// maxTableSlots slots each, linear probing within a table. A full table
// doubles until it reaches maxTableSlots, then splits in two; so growing
// never rehashes more than one table's paths at once, and a million-node
// tree grows without a pause. Each slot has a tag byte: empty, deleted, or
// 7 bits of the hash, which rules out nearly every other path in the probe
// sequence without reading its node. Tags and pointers are kept in groups
// of 8, so that a probe's tag and pointer share a cache line.
//
// The hash is seeded per index, as Go's maps are: nothing iterates over the
// table (the tree walks children instead), so no order of it reaches any
// output, and a client cannot choose paths that collide.
type pathIndex struct {
	seed  maphash.Seed
	dir   []*indexTable // 1<<depth entries; a table of local depth d fills 1<<(depth-d) consecutive ones
	depth uint8
	count int
}

type indexTable struct {
	depth   uint8 // the top depth bits of the hash are the same for all its paths
	used    int   // live entries
	deleted int   // tombstones
	groups  []indexGroup
}

type indexGroup struct {
	tags  [8]uint8
	nodes [8]*node
}

func (t *indexTable) slots() int       { return len(t.groups) * 8 }
func (t *indexTable) tag(i int) uint8  { return t.groups[i>>3].tags[i&7] }
func (t *indexTable) node(i int) *node { return t.groups[i>>3].nodes[i&7] }
func (t *indexTable) set(i int, tag uint8, n *node) {
	g := &t.groups[i>>3]
	g.tags[i&7], g.nodes[i&7] = tag, n
}

const (
	maxTableSlots = 1024
	firstSlots    = 8
	tagEmpty      = 0
	tagDeleted    = 1
	tagFull       = 0x80 // a live slot's tag: this bit and the hash's low 7 bits
)

func newPathIndex() pathIndex {
	return pathIndex{
		seed: maphash.MakeSeed(),
		dir:  []*indexTable{newIndexTable(0, firstSlots)},
	}
}

func newIndexTable(depth uint8, slots int) *indexTable {
	return &indexTable{depth: depth, groups: make([]indexGroup, slots/8)}
}

func (x *pathIndex) hash(path string) uint64 { return maphash.String(x.seed, path) }

// table is the table that holds hash h. With depth 0 the shift is 64,
// which Go defines to give 0.
func (x *pathIndex) table(h uint64) *indexTable { return x.dir[h>>(64-x.depth)] }

func tagOf(h uint64) uint8 { return tagFull | uint8(h&0x7f) }

// home is h's first slot in a table of the given size (a power of two).
func home(h uint64, slots int) int { return int(h>>7) & (slots - 1) }

// get returns the node at path, or nil.
func (x *pathIndex) get(path string) *node {
	h := x.hash(path)
	t := x.table(h)
	tag, mask := tagOf(h), t.slots()-1
	for i := home(h, t.slots()); ; i = (i + 1) & mask {
		switch t.tag(i) {
		case tagEmpty:
			return nil
		case tag:
			if n := t.node(i); n.path() == path {
				return n
			}
		}
	}
}

// getChild returns the node at parent's child name: the same as
// get(joinPath(parent, name)), without building the path.
func (x *pathIndex) getChild(parent, name string) *node {
	var hs maphash.Hash
	hs.SetSeed(x.seed)
	if parent != "/" {
		hs.WriteString(parent)
	}
	hs.WriteByte('/')
	hs.WriteString(name)
	h := hs.Sum64()
	t := x.table(h)
	tag, mask := tagOf(h), t.slots()-1
	for i := home(h, t.slots()); ; i = (i + 1) & mask {
		switch t.tag(i) {
		case tagEmpty:
			return nil
		case tag:
			if n := t.node(i); isChildPath(n.path(), parent, name) {
				return n
			}
		}
	}
}

// isChildPath reports whether path is joinPath(parent, name).
func isChildPath(path, parent, name string) bool {
	if parent == "/" {
		parent = ""
	}
	return len(path) == len(parent)+1+len(name) && path[len(parent)] == '/' &&
		path[:len(parent)] == parent && path[len(parent)+1:] == name
}

// put adds n under its path, which the index must not hold.
func (x *pathIndex) put(n *node) {
	h := x.hash(n.path())
	t := x.table(h)
	for (t.used+t.deleted+1)*8 > t.slots()*7 {
		// A split may leave every path on one side: then again.
		x.grow(t)
		t = x.table(h)
	}
	t.insert(h, n)
	x.count++
}

// insert puts n in its first free slot: a table has no two entries for a
// path, so a tombstone met before any empty slot may be reused.
func (t *indexTable) insert(h uint64, n *node) {
	mask := t.slots() - 1
	i := home(h, t.slots())
	for t.tag(i) >= tagFull {
		i = (i + 1) & mask
	}
	if t.tag(i) == tagDeleted {
		t.deleted--
	}
	t.set(i, tagOf(h), n)
	t.used++
}

// remove drops path from the index, if it is there.
func (x *pathIndex) remove(path string) {
	h := x.hash(path)
	t := x.table(h)
	tag, mask := tagOf(h), t.slots()-1
	for i := home(h, t.slots()); ; i = (i + 1) & mask {
		switch t.tag(i) {
		case tagEmpty:
			return
		case tag:
			if t.node(i).path() == path {
				// A slot before an empty one ends no other path's probe
				// sequence: it becomes empty, not a tombstone.
				if t.tag((i+1)&mask) == tagEmpty {
					t.set(i, tagEmpty, nil)
				} else {
					t.set(i, tagDeleted, nil)
					t.deleted++
				}
				t.used--
				x.count--
				return
			}
		}
	}
}

// grow makes room in t: a table at most half full of live paths is
// rehashed at its size (its tombstones cleared; creates and deletes of
// the same paths stay in place), a fuller one into a table of twice its
// size, or, at maxTableSlots, split in two by the next bit of the hash.
func (x *pathIndex) grow(t *indexTable) {
	switch {
	case t.used*2 <= t.slots():
		x.replace(t, t.rehash(t.slots(), x))
	case t.slots() < maxTableSlots:
		x.replace(t, t.rehash(t.slots()*2, x))
	default:
		x.split(t)
	}
}

// rehash copies t's entries into a new table of the given size and depth.
func (t *indexTable) rehash(slots int, x *pathIndex) *indexTable {
	nt := newIndexTable(t.depth, slots)
	for i := range t.slots() {
		if n := t.node(i); n != nil {
			nt.insert(x.hash(n.path()), n)
		}
	}
	return nt
}

// replace points every directory entry of old at nt.
func (x *pathIndex) replace(old, nt *indexTable) {
	for i, t := range x.dir {
		if t == old {
			x.dir[i] = nt
		}
	}
}

// split divides t's entries between two tables by the hash bit after its
// depth, doubling the directory first if t already uses all its bits.
func (x *pathIndex) split(t *indexTable) {
	if t.depth == x.depth {
		dir := make([]*indexTable, 2*len(x.dir))
		for i, e := range x.dir {
			dir[2*i], dir[2*i+1] = e, e
		}
		x.dir, x.depth = dir, x.depth+1
	}
	lo, hi := newIndexTable(t.depth+1, t.slots()), newIndexTable(t.depth+1, t.slots())
	bit := uint64(1) << (63 - t.depth)
	for i := range t.slots() {
		n := t.node(i)
		if n == nil {
			continue
		}
		h := x.hash(n.path())
		if h&bit == 0 {
			lo.insert(h, n)
		} else {
			hi.insert(h, n)
		}
	}
	// t fills a run of directory entries; the first half of the run takes
	// the hashes whose next bit is 0.
	first := -1
	for i, e := range x.dir {
		if e == t {
			if first < 0 {
				first = i
			}
			run := 1 << (x.depth - t.depth)
			if i-first < run/2 {
				x.dir[i] = lo
			} else {
				x.dir[i] = hi
			}
		}
	}
}

// len is the number of paths held.
func (x *pathIndex) len() int { return x.count }
