package tlatrace

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestHistoryMatchesAPlainList: the runs answer every question as the
// sorted list of zxids they stand for, whatever the appends and cuts.
func TestHistoryMatchesAPlainList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var h history
		var list []int64
		last := func() int64 {
			if len(list) == 0 {
				return 0
			}
			return list[len(list)-1]
		}
		zxid := rapid.Custom(func(t *rapid.T) int64 {
			return makeZxid(rapid.Int64Range(0, 4).Draw(t, "epoch"), rapid.Int64Range(0, 6).Draw(t, "counter"))
		})
		for range rapid.IntRange(0, 60).Draw(t, "ops") {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0, 1: // append: mostly the next counter, sometimes a jump
				z := last() + 1
				if rapid.Bool().Draw(t, "jump") {
					z = zxid.Draw(t, "z")
				}
				if z > last() {
					h.add(z)
					list = append(list, z)
				}
			case 2:
				z := zxid.Draw(t, "cut")
				h.cut(z)
				list = slices.DeleteFunc(list, func(e int64) bool { return e > z })
			case 3:
				var c history
				z := zxid.Draw(t, "copy")
				c.copyUpTo(&h, z)
				h = c
				list = slices.DeleteFunc(list, func(e int64) bool { return e > z })
			}
			if h.last() != last() {
				t.Fatalf("last %x, want %x (runs %v)", h.last(), last(), h.runs)
			}
			for range 5 {
				z := zxid.Draw(t, "ask")
				if got, want := h.contains(z), z == 0 || slices.Contains(list, z); got != want {
					t.Fatalf("contains(%x) = %v, want %v (runs %v, list %x)", z, got, want, h.runs, list)
				}
				want := int64(0)
				if i, _ := slices.BinarySearch(list, z+1); i < len(list) {
					want = list[i]
				}
				if got := h.next(z); got != want {
					t.Fatalf("next(%x) = %x, want %x (runs %v, list %x)", z, got, want, h.runs, list)
				}
				want = 0
				if i, _ := slices.BinarySearch(list, z); i > 0 {
					want = list[i-1]
				}
				if got := h.below(z); got != want {
					t.Fatalf("below(%x) = %x, want %x (runs %v, list %x)", z, got, want, h.runs, list)
				}
			}
			for i := 1; i < len(h.runs); i++ {
				a, b := h.runs[i-1], h.runs[i]
				if a.hi >= b.lo || a.hi+1 == b.lo && epochOf(a.hi) == epochOf(b.lo) || epochOf(b.lo) != epochOf(b.hi) {
					t.Fatalf("runs %v break the invariant", h.runs)
				}
			}
		}
	})
}
