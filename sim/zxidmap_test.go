package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Property: a zxidMap answers every lookup as a plain map given the same
// puts, deletions above a zxid and clears does, across epochs, counters
// near the dense limit and zxids that are not positive.
func TestZxidMapMatchesMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		zxid := rapid.Custom(func(t *rapid.T) int64 {
			epoch := rapid.Int64Range(-1, 3).Draw(t, "epoch")
			counter := rapid.SampledFrom([]int64{0, 1, 2, 3, 7, 100, denseLimit - 1, denseLimit, 0xffffffff}).Draw(t, "counter")
			return epoch<<32 | counter
		})
		var m zxidMap[int]
		model := map[int64]int{}
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				z := zxid.Draw(t, "above")
				m.deleteAbove(z)
				for k := range model {
					if k > z {
						delete(model, k)
					}
				}
				_, kept := m.get(z) // the bound itself stays
				_, wantKept := model[z]
				require.Equal(t, wantKept, kept, "zxid %#x after deleting above it", z)
			case 1:
				m.clear()
				clear(model)
			default:
				z, v := zxid.Draw(t, "zxid"), rapid.Int().Draw(t, "value")
				m.put(z, v)
				model[z] = v
			}
			z := zxid.Draw(t, "lookup")
			got, ok := m.get(z)
			want, wantOK := model[z]
			require.Equal(t, wantOK, ok, "zxid %#x", z)
			require.Equal(t, want, got, "zxid %#x", z)
		}
		for k, v := range model {
			got, ok := m.get(k)
			require.True(t, ok, "zxid %#x", k)
			require.Equal(t, v, got, "zxid %#x", k)
		}
	})
}
