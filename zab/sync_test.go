package zab

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func z(epoch, counter int64) int64 { return makeZxid(epoch, counter) }

// window is a leader's sync history whose committed window (and
// unapplied proposals) hold zxids, or, empty, whose tree is at tree.
func window(tree int64, zxids ...int64) syncHistory {
	h := syncHistory{knownFrom: tree, zxids: zxids, last: tree}
	if len(zxids) > 0 {
		h.knownFrom, h.last = zxids[0], zxids[len(zxids)-1]
	}
	return h
}

// TestDecideSyncLearnerHandlerCases replays the situations of ZooKeeper's
// LearnerHandlerTest (zookeeper-server/src/test/java/org/apache/zookeeper/
// server/quorum/LearnerHandlerTest.java) against decideSync. zabd
// synchronizes from its committed window (plus its unapplied proposals)
// only: where ZooKeeper would replay its on-disk txn log for a learner
// older than the window, zabd sends a snapshot, and the case says so.
// A case whose zooKeeper plan is set is one where zabd's own rule and
// ZooKeeper's differ (Ensemble.ZooKeeperSync chooses ZooKeeper's); every
// other case holds under both. zabd's window cannot hold a txn twice
// (testDuplicatedTxn): txns are applied, and so kept, in strictly
// increasing zxid order.
func TestDecideSyncLearnerHandlerCases(t *testing.T) {
	cases := []struct {
		zkTest   string
		what     string
		history  syncHistory
		peerLast int64
		want     syncPlan
		// zooKeeper, if set, is the plan under ZooKeeper's rules.
		zooKeeper *syncPlan
	}{
		{"testEmptyCommittedLog", "a learner ahead of the leader (empty window): TRUNC to the leader's last",
			window(1), 3, syncPlan{mode: syncTrunc, after: 1}, nil},
		{"testEmptyCommittedLog", "a learner already in sync: empty DIFF",
			window(1), 1, syncPlan{mode: syncDiff, after: 1}, nil},
		{"testEmptyCommittedLog", "a new machine (zxid 0) with an empty window: SNAP",
			window(1), 0, syncPlan{mode: syncSnap}, nil},
		{"testCommittedLog", "a learner with a zxid the leader never saw, inside the window: TRUNC to the txn before it, then what follows",
			window(0, 2, 3, 5, 6), 4, syncPlan{mode: syncTrunc, after: 3}, nil},
		{"testCommittedLog", "a learner inside the window: DIFF from its zxid",
			window(0, 2, 3, 5, 6), 2, syncPlan{mode: syncDiff, after: 2}, nil},
		{"testCommittedLog", "a learner below the window: SNAP",
			window(0, 2, 3, 5, 6), 1, syncPlan{mode: syncSnap}, nil},
		{"testTxnLog", "a learner below the window with a zxid the leader never saw: ZooKeeper TRUNCs from its txn log; zabd sends SNAP",
			window(0, 6, 7, 8, 9), 4, syncPlan{mode: syncSnap}, nil},
		{"testTxnLog", "a learner below the window: ZooKeeper DIFFs from its txn log; zabd sends SNAP",
			window(0, 6, 7, 8, 9), 3, syncPlan{mode: syncSnap}, nil},
		{"testTxnLogProposalIteratorClosure", "an empty window and a learner behind the tree: SNAP",
			window(7), 4, syncPlan{mode: syncSnap}, nil},
		{"testTxnLogOnly", "an empty window, a learner with a zxid the leader never saw, behind its tree: SNAP (ZooKeeper TRUNCs from its log)",
			window(7), 4, syncPlan{mode: syncSnap}, nil},
		{"testTxnLogOnly", "an empty window, a learner behind the tree: SNAP (ZooKeeper DIFFs from its log)",
			window(7), 2, syncPlan{mode: syncSnap}, nil},
		{"testTxnLogOnly", "a learner older than anything the leader holds: SNAP",
			window(7), 1, syncPlan{mode: syncSnap}, nil},
		{"testTxnLogWithNegativeZxid", "zxids of a high epoch: TRUNC inside the window to the txn before the learner's",
			window(0, z(0xf, 6), z(0xf, 7), z(0xf, 9)), z(0xf, 8), syncPlan{mode: syncTrunc, after: z(0xf, 7)}, nil},
		{"testTxnLogWithNegativeZxid", "zxids of a high epoch: a learner below the window: SNAP",
			window(0, z(0xf, 6), z(0xf, 7), z(0xf, 8), z(0xf, 9)), z(0xf, 3), syncPlan{mode: syncSnap}, nil},
		{"testNewEpochZxid", "a learner of epoch 0 when the window begins in epoch 1: SNAP, never a DIFF from a history the leader has not seen",
			window(0, z(1, 1), z(1, 2)), z(0, 0), syncPlan{mode: syncSnap}, nil},
		{"testNewEpochZxid", "a learner at the leader's last txn: empty DIFF",
			window(0, z(1, 1), z(1, 2)), z(1, 2), syncPlan{mode: syncDiff, after: z(1, 2)}, nil},
		{"testCrossEpochTrunc", "a learner holding a txn of an epoch that never committed it, between two epochs of the leader: " +
			"TRUNC to the leader's txn before it (ZooKeeper sends SNAP, because its learner has applied what it holds; " +
			"a zabd learner applies nothing uncommitted, and leaves rather than truncate what it applied)",
			window(0, z(1, 1), z(2, 1), z(2, 2), z(4, 1)), z(3, 1), syncPlan{mode: syncTrunc, after: z(2, 2)}, &syncPlan{mode: syncSnap}},
		{"testTxnLogGap", "a learner older than the window (a gap between the txn log and the window): SNAP",
			window(0, 7, 8), 3, syncPlan{mode: syncSnap}, nil},
		{"(zabd) diverged txn in the same epoch", "a learner whose last txn is a proposal of an old epoch the leader does not hold: TRUNC to the last shared zxid",
			window(0, z(1, 1), z(1, 2), z(2, 1), z(2, 2)), z(1, 3), syncPlan{mode: syncTrunc, after: z(1, 2)}, &syncPlan{mode: syncSnap}},
		{"testNewEpochZxid", "a learner at a new-epoch zxid (a ZooKeeper member, or a zabd one a ZooKeeper leader's SNAP left there) inside the window: DIFF of what follows, never a TRUNC",
			window(0, z(1, 1), z(1, 2), z(2, 1), z(2, 2)), z(2, 0), syncPlan{mode: syncDiff, after: z(2, 0)}, nil},
		{"testNewEpochZxid", "a learner at a new-epoch zxid past the leader's last txn: SNAP (it has no txn to truncate to)",
			window(0, z(1, 1), z(1, 2)), z(2, 0), syncPlan{mode: syncSnap}, nil},
		{"(zabd) diverged txn past the leader's history", "a learner holding an orphan proposal beyond the leader's last txn: TRUNC under either rule",
			window(0, z(1, 1), z(1, 2)), z(1, 3), syncPlan{mode: syncTrunc, after: z(1, 2)}, nil},
		{"(zabd) learner at an unapplied proposal", "the leader's history includes its proposals not yet applied: DIFF from the learner's",
			window(0, z(1, 1), z(1, 2), z(1, 3)), z(1, 3), syncPlan{mode: syncDiff, after: z(1, 3)}, nil},
		{"(zabd) learner at the window's oldest txn", "DIFF of everything after it",
			window(0, z(1, 1), z(1, 2)), z(1, 1), syncPlan{mode: syncDiff, after: z(1, 1)}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.zkTest+"/"+tc.what, func(t *testing.T) {
			require.Equal(t, tc.want, decideSync(tc.peerLast, tc.history, false), "peer 0x%x, zabd's rules", tc.peerLast)
			zk := tc.want
			if tc.zooKeeper != nil {
				zk = *tc.zooKeeper
			}
			require.Equal(t, zk, decideSync(tc.peerLast, tc.history, true), "peer 0x%x, ZooKeeper's rules", tc.peerLast)
		})
	}
}

// TestDecideSyncProperties: for any history and learner, under either
// rule, the plan is the one that leaves the learner's log exactly the
// leader's: DIFF only from a zxid the leader holds, or from a new-epoch
// zxid (counter 0, no txn) within its history; TRUNC to the greatest zxid
// the leader holds below the learner's, which the leader lacks, never for
// a new-epoch zxid, and under ZooKeeper's rules never across epochs; SNAP
// only when the learner is older than anything the leader can vouch for,
// is at a new-epoch zxid past the leader's history, or (ZooKeeper's rules)
// would be truncated across epochs.
func TestDecideSyncProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		zooKeeperRules := rapid.Bool().Draw(t, "zooKeeperRules")
		// Txns have counters 1..9 in epochs 0..11; a learner (and the tree a
		// leader with an empty window holds) may also be at a new-epoch zxid.
		txn := func(v int64) int64 { return z(v/9, v%9+1) }
		anyZxid := func(v int64) int64 { return z(v/10, v%10) }
		knownFrom := anyZxid(rapid.Int64Range(0, 50).Draw(t, "knownFrom"))
		var zxids []int64
		for _, v := range rapid.SliceOfNDistinct(rapid.Int64Range(0, 100), 0, 20, rapid.ID[int64]).Draw(t, "zxids") {
			if zx := txn(v); zx > knownFrom {
				zxids = append(zxids, zx)
			}
		}
		slices.Sort(zxids)
		h := syncHistory{knownFrom: knownFrom, last: knownFrom}
		if len(zxids) > 0 {
			if counterOf(knownFrom) != 0 && rapid.Bool().Draw(t, "windowHoldsKnownFrom") {
				zxids = append([]int64{knownFrom}, zxids...)
			}
			h.zxids, h.last = zxids, zxids[len(zxids)-1]
		}
		peer := anyZxid(rapid.Int64Range(0, 125).Draw(t, "peerLast"))
		held := func(z int64) bool { return z == h.knownFrom || slices.Contains(h.zxids, z) }
		newEpoch := counterOf(peer) == 0
		// crossEpoch: the leader's next txn after the learner's is of
		// another epoch.
		crossEpoch := false
		if i, _ := slices.BinarySearch(h.zxids, peer); i < len(h.zxids) && !held(peer) {
			crossEpoch = epochOf(h.zxids[i]) != epochOf(peer)
		}

		plan := decideSync(peer, h, zooKeeperRules)
		switch plan.mode {
		case syncSnap:
			require.True(t, peer < h.knownFrom || (peer > h.last && newEpoch) || (zooKeeperRules && crossEpoch && !newEpoch),
				"SNAP for a learner the leader could DIFF or TRUNC")
		case syncDiff:
			require.Equal(t, peer, plan.after)
			require.True(t, held(peer) || peer == h.last || (newEpoch && peer > h.knownFrom && peer < h.last),
				"DIFF from 0x%x, which the leader does not hold", peer)
		case syncTrunc:
			require.False(t, newEpoch, "TRUNC of a learner at a new-epoch zxid")
			require.False(t, zooKeeperRules && crossEpoch, "TRUNC across epochs under ZooKeeper's rules")
			require.False(t, held(peer), "TRUNC of a learner whose last txn the leader holds")
			require.Less(t, plan.after, peer)
			require.True(t, held(plan.after), "TRUNC to 0x%x, which the leader does not hold", plan.after)
			for _, z := range h.zxids {
				require.False(t, z > plan.after && z < peer, "TRUNC to 0x%x drops 0x%x, which the leader holds", plan.after, z)
			}
		}
		if peer >= h.knownFrom && !(peer > h.last && newEpoch) && !(zooKeeperRules && crossEpoch) {
			require.NotEqual(t, syncSnap, plan.mode, "SNAP for a learner within the leader's history")
		}
	})
}
