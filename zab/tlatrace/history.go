package tlatrace

import "slices"

// history is a member's Zab history as the spec's `history` variable
// holds it: the zxids of its txns, ascending, from the first txn of the
// run (a snapshot's part included). Within an epoch a leader proposes
// counters 1, 2, 3… and every member holds a prefix of them, so a history
// is a handful of runs of consecutive zxids, one per epoch it holds txns
// of: appending, cutting and looking up cost a binary search over the
// runs, whatever the number of txns.
//
// Invariant: runs are ascending and do not touch (a run ends before the
// next one's first zxid minus one, or in another epoch).
type history struct {
	runs []zxidRun
}

// zxidRun is the zxids lo..hi, all of one epoch.
type zxidRun struct{ lo, hi int64 }

// last is the history's last zxid (0: empty).
func (h *history) last() int64 {
	if n := len(h.runs); n > 0 {
		return h.runs[n-1].hi
	}
	return 0
}

// add appends z, which must be above last.
func (h *history) add(z int64) {
	if n := len(h.runs); n > 0 {
		r := &h.runs[n-1]
		if z == r.hi+1 && epochOf(z) == epochOf(r.hi) {
			r.hi = z
			return
		}
	}
	h.runs = append(h.runs, zxidRun{z, z})
}

// find returns the index of the first run whose hi is at least z.
func (h *history) find(z int64) int {
	i, _ := slices.BinarySearchFunc(h.runs, z, func(r zxidRun, z int64) int {
		switch {
		case r.hi < z:
			return -1
		case r.hi > z:
			return 1
		}
		return 0
	})
	return i
}

// contains reports whether z is in the history; 0, the empty prefix's
// end, always is.
func (h *history) contains(z int64) bool {
	if z == 0 {
		return true
	}
	i := h.find(z)
	return i < len(h.runs) && h.runs[i].lo <= z
}

// next is the history's first zxid above z (0: none).
func (h *history) next(z int64) int64 {
	i := h.find(z + 1)
	if i == len(h.runs) {
		return 0
	}
	return max(h.runs[i].lo, z+1)
}

// below is the history's last zxid under z (0: none).
func (h *history) below(z int64) int64 {
	i := h.find(z) // runs before i end under z
	if i < len(h.runs) && h.runs[i].lo < z {
		return z - 1
	}
	if i == 0 {
		return 0
	}
	return h.runs[i-1].hi
}

// cut keeps the zxids up to z.
func (h *history) cut(z int64) {
	i := h.find(z)
	if i < len(h.runs) && h.runs[i].lo <= z {
		h.runs[i].hi = z
		i++
	}
	h.runs = h.runs[:i]
}

// copyUpTo makes h the zxids of from up to z.
func (h *history) copyUpTo(from *history, z int64) {
	h.runs = append(h.runs[:0], from.runs...)
	h.cut(z)
}

// samePrefix reports whether h and o hold the same zxids up to z.
func (h *history) samePrefix(o *history, z int64) bool {
	var a, b history
	a.copyUpTo(h, z)
	b.copyUpTo(o, z)
	return slices.Equal(a.runs, b.runs)
}
