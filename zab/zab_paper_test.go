package zab_test

import (
	"testing"

	"pgregory.net/rapid"
)

// TestPaperInvariantsUnderFaults is the strongest form of every claim
// below: a random schedule of deliveries, drops, ticks, crashes,
// restarts, partitions, held durability and client writes on several
// members, with all the invariants checked after every step, then
// healing and liveness: one leader, the same tree everywhere, and every
// acknowledged write in it.
//
// Reference: Zab paper §III (Integrity, Total order, Agreement, Local and
// Global primary order, Primary integrity); Zab.tla's Leadership,
// PrefixConsistency, Integrity, Agreement, TotalOrder, LocalPrimaryOrder,
// GlobalPrimaryOrder, PrimaryIntegrity.
func TestPaperInvariantsUnderFaults(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := newFaultDriver(t)
		steps := rapid.IntRange(20, 400).Draw(t, "steps")
		for range steps {
			d.step()
		}
		d.recover()
	})
}
