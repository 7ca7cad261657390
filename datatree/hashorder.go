package datatree

import "sort"

// ephemeralSet is one session's ephemeral paths, kept as ZooKeeper's
// DataTree keeps them — a java.util.HashSet — to the extent that decides
// the order ZooKeeper lists them in a closeSession txn (and so the order it
// deletes them and fires their watches): each path's insertion sequence,
// and the largest size the set reached, which fixed its table size (a
// HashSet never shrinks, and lives until its session closes, even empty).
type ephemeralSet struct {
	paths   map[string]uint64 // path → insertion sequence
	maxSize int
}

func (s *ephemeralSet) add(path string, seq uint64) {
	if _, ok := s.paths[path]; ok {
		return
	}
	s.paths[path] = seq
	s.maxSize = max(s.maxSize, len(s.paths))
}

// setOp is a change made to the clone of a session's set: a pending
// delete removes its path, a pending create of the session adds it.
type setOp struct {
	path string
	add  bool
}

// javaHashSetOrder returns the paths of a closed session in the order
// ZooKeeper's PrepRequestProcessor lists them: it clones the session's
// HashSet (a table sized for its current size, filled in the original's
// iteration order), applies the pending changes' ops in order, and
// iterates. HashMap iterates bin by bin, a bin in insertion order, and a
// resize keeps that order within the bins it splits; so the order is by the
// final table's bin, then the original table's bin (paths added to the
// clone come after), then insertion. (Bins of 8 or more entries, which
// HashMap turns into trees, are not modelled: that takes dozens of one
// session's ephemerals colliding.)
func javaHashSetOrder(set *ephemeralSet, ops []setOp) []string {
	type entry struct {
		hash      uint32
		sourceBin uint64 // bin in the original table; 1<<63 for paths added to the clone
		seq       uint64
	}
	entries := map[string]*entry{}
	sourceCap, capacity := 16, 16
	if set != nil {
		sourceCap = javaTableSize(set.maxSize)
		if len(set.paths) > 0 {
			capacity = tableSizeFor(int(float32(len(set.paths))/0.75 + 1))
		}
		for p, seq := range set.paths {
			h := javaMapHash(p)
			entries[p] = &entry{hash: h, sourceBin: uint64(h & uint32(sourceCap-1)), seq: seq}
		}
	}
	var added uint64
	for _, op := range ops {
		_, present := entries[op.path]
		switch {
		case !op.add:
			delete(entries, op.path)
		case !present:
			entries[op.path] = &entry{hash: javaMapHash(op.path), sourceBin: 1 << 63, seq: added}
			added++
			if float32(len(entries)) > float32(capacity)*0.75 {
				capacity *= 2
			}
		}
	}
	out := make([]string, 0, len(entries))
	for p := range entries {
		out = append(out, p)
	}
	mask := uint32(capacity - 1)
	sort.Slice(out, func(i, j int) bool {
		a, b := entries[out[i]], entries[out[j]]
		if a.hash&mask != b.hash&mask {
			return a.hash&mask < b.hash&mask
		}
		if a.sourceBin != b.sourceBin {
			return a.sourceBin < b.sourceBin
		}
		return a.seq < b.seq
	})
	return out
}

// javaTableSize is the table size of a HashSet that has held at most n
// entries: 16, doubled each time the size passed 3/4 of it.
func javaTableSize(n int) int {
	c := 16
	for float32(n) > float32(c)*0.75 {
		c *= 2
	}
	return c
}

// tableSizeFor is HashMap.tableSizeFor: the smallest power of two ≥ c.
func tableSizeFor(c int) int {
	n := 1
	for n < c {
		n *= 2
	}
	return n
}

// javaMapHash is HashMap.hash of a String key: its hashCode with the high
// half folded into the low half.
func javaMapHash(s string) uint32 {
	h := uint32(javaStringHash(s))
	return h ^ h>>16
}
