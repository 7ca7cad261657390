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
// sequence without reading its node.
//
// The hash is seeded per index: no order of the table reaches any output
// (each iteration over it is sorted or order-independent), and a client
// cannot choose paths that collide.
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
	tags    []uint8
	nodes   []*node
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
	return &indexTable{depth: depth, tags: make([]uint8, slots), nodes: make([]*node, slots)}
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
	tag, mask := tagOf(h), len(t.tags)-1
	for i := home(h, len(t.tags)); ; i = (i + 1) & mask {
		switch t.tags[i] {
		case tagEmpty:
			return nil
		case tag:
			if n := t.nodes[i]; n.path == path {
				return n
			}
		}
	}
}

// put adds n under n.path, which the index must not hold.
func (x *pathIndex) put(n *node) {
	h := x.hash(n.path)
	t := x.table(h)
	for (t.used+t.deleted+1)*8 > len(t.tags)*7 {
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
	mask := len(t.tags) - 1
	i := home(h, len(t.tags))
	for t.tags[i] >= tagFull {
		i = (i + 1) & mask
	}
	if t.tags[i] == tagDeleted {
		t.deleted--
	}
	t.tags[i], t.nodes[i] = tagOf(h), n
	t.used++
}

// remove drops path from the index, if it is there.
func (x *pathIndex) remove(path string) {
	h := x.hash(path)
	t := x.table(h)
	tag, mask := tagOf(h), len(t.tags)-1
	for i := home(h, len(t.tags)); ; i = (i + 1) & mask {
		switch t.tags[i] {
		case tagEmpty:
			return
		case tag:
			if t.nodes[i].path == path {
				t.tags[i], t.nodes[i] = tagDeleted, nil
				t.used--
				t.deleted++
				x.count--
				return
			}
		}
	}
}

// grow makes room in t: it rehashes t into a table of twice its size, or,
// at maxTableSlots, of the same size when tombstones fill half of it; or
// splits it in two by the next bit of the hash.
func (x *pathIndex) grow(t *indexTable) {
	switch {
	case len(t.tags) < maxTableSlots:
		x.replace(t, t.rehash(len(t.tags)*2, x))
	case t.deleted >= t.used:
		x.replace(t, t.rehash(len(t.tags), x))
	default:
		x.split(t)
	}
}

// rehash copies t's entries into a new table of the given size and depth.
func (t *indexTable) rehash(slots int, x *pathIndex) *indexTable {
	nt := newIndexTable(t.depth, slots)
	for i, tag := range t.tags {
		if tag >= tagFull {
			nt.insert(x.hash(t.nodes[i].path), t.nodes[i])
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
	lo, hi := newIndexTable(t.depth+1, len(t.tags)), newIndexTable(t.depth+1, len(t.tags))
	bit := uint64(1) << (63 - t.depth)
	for i, tag := range t.tags {
		if tag < tagFull {
			continue
		}
		h := x.hash(t.nodes[i].path)
		if h&bit == 0 {
			lo.insert(h, t.nodes[i])
		} else {
			hi.insert(h, t.nodes[i])
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

// each calls fn for every node, in no particular order.
func (x *pathIndex) each(fn func(*node)) {
	var prev *indexTable
	for _, t := range x.dir {
		if t == prev {
			continue
		}
		prev = t
		for i, tag := range t.tags {
			if tag >= tagFull {
				fn(t.nodes[i])
			}
		}
	}
}
