package zab_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/zab/zabtest"
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

// TestClusterScenariosDeterministic: every cluster scenario of these tests,
// run twice, gives byte-identical traces, notices, disks and client
// messages (the determinism_test.go standard, for ensembles).
func TestClusterScenariosDeterministic(t *testing.T) {
	scenarios := []struct {
		name string
		run  func(*testing.T) *zabtest.Cluster
	}{
		{"NewLeaderAck", newLeaderAckScenario}, {"ZK335", zk335}, {"ZK1154", zk1154}, {"ZK1653", zk1653},
		{"ZK2845", zk2845}, {"ZK3104", zk3104}, {"ZK3642", zk3642}, {"ZK3911", zk3911}, {"ZK4394", zk4394},
		{"ZK4643", zk4643}, {"ZK4646", zk4646}, {"ZK4685", zk4685}, {"ZK4785", zk4785}, {"ZK4925", zk4925},
		{"Broadcast", paperBroadcast}, {"Recovery", paperRecovery},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			first := fingerprint(s.run(t))
			require.True(t, bytes.Equal(first, fingerprint(s.run(t))), "two runs of %s differ", s.name)
		})
	}
}

// TestPaperBroadcastOrder: a leader's proposals are delivered by every
// member in the order it broadcast them, with every member's tree the
// same; writes from several clients on several members go through the
// one leader.
//
// Reference: Zab paper §III, Local primary order, Total order, Agreement;
// §IV-C (Phase 3, broadcast); Zab.tla LocalPrimaryOrder, TotalOrder,
// Agreement.
func TestPaperBroadcastOrder(t *testing.T) { paperBroadcast(t) }

func paperBroadcast(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3, Observers: 1})
	v := c.CheckInvariants()
	serving(t, c)
	var paths []string
	for i := range 12 {
		cl := session(t, c, int64(1+i%4))
		p := fmt.Sprintf("/w%02d", i)
		createOK(t, c, cl, p)
		paths = append(paths, p)
	}
	requireEverywhere(t, c, paths...)
	want := v.DeliveredZxids(3)
	for id := int64(1); id <= 4; id++ {
		require.Equal(t, want, v.DeliveredZxids(id), "server %d delivered another sequence", id)
	}
	return c
}

// TestPaperRecoveryKeepsCommittedTxns: after the leader crashes, the new
// epoch is above every accepted one, its initial history holds every
// committed txn, a member never accepts an epoch below its acceptedEpoch,
// and the new leader delivers the old txns before it broadcasts.
//
// Reference: Zab paper §IV-A (Phase 1: the new epoch e' exceeds every
// acceptedEpoch of the quorum), §IV-B (Phase 2: the initial history
// contains every committed txn), §III Primary integrity and Global primary
// order; Zab.tla Leadership, PrimaryIntegrity, GlobalPrimaryOrder.
func TestPaperRecoveryKeepsCommittedTxns(t *testing.T) { paperRecovery(t) }

func paperRecovery(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 5})
	v := c.CheckInvariants()
	old := serving(t, c)
	cl := session(t, c, old)
	createOK(t, c, cl, "/a")
	createOK(t, c, cl, "/b")
	accepted := map[int64]int64{}
	for _, n := range c.Nodes {
		accepted[n.ID] = n.Accepted
	}
	c.Crash(old)
	leader := serving(t, c)
	epoch := c.Node(leader).Peer.State().Epoch
	for id, a := range accepted {
		if id != old {
			require.Greater(t, epoch, a, "the new epoch is not above server %d's acceptedEpoch", id)
		}
	}
	requireEverywhere(t, c, "/a", "/b")
	createOK(t, c, session(t, c, leader), "/c")
	d := v.DeliveredZxids(leader)
	require.Equal(t, epoch, d[len(d)-1]>>32, "the new leader's txn comes after the old ones")
	c.Restart(old)
	serving(t, c)
	requireEverywhere(t, c, "/a", "/b", "/c")
	return c
}
