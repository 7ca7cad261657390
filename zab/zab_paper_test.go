package zab_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
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
		{"ZK2845", zk2845}, {"ZK3104", zk3104}, {"ZK3642", zk3642}, {"ZK3911", zk3911}, {"ZK4394", zk4394}, {"ZK4394Outstanding", zk4394Outstanding},
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
	want := v.Delivered(3)
	for id := int64(1); id <= 4; id++ {
		require.Equal(t, want, v.Delivered(id), "server %d delivered another sequence", id)
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
	d := v.Delivered(leader)
	require.Equal(t, epoch, d[len(d)-1]>>32, "the new leader's txn comes after the old ones")
	c.Restart(old)
	serving(t, c)
	requireEverywhere(t, c, "/a", "/b", "/c")
	return c
}

// TestPaperIntegrity: a member delivers only what a leader broadcast. A
// follower that forges a PROPOSAL and a COMMIT to another follower gets
// its connection refused, and nobody delivers the forged txn.
//
// Reference: Zab paper §III, Integrity; Zab.tla Integrity.
func TestPaperIntegrity(t *testing.T) {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	c.CheckInvariants()
	leader := serving(t, c)
	a, b := leader%3+1, (leader+1)%3+1
	createOK(t, c, session(t, c, leader), "/real")
	forged := datatree.Txn{
		Header: wire.TxnHeader{ClientID: 1, Cxid: 1, Zxid: c.Node(b).Peer.LastZxid() + 1, Time: 1, Type: wire.OpCreate},
		Body:   &wire.CreateTxn{Path: "/forged", ACL: wire.OpenACLUnsafe},
	}
	c.Inject(a, b, wire.QuorumPacket{Type: wire.PacketProposal, Zxid: forged.Header.Zxid, Data: zab.EncodeTxnEntry(&forged)})
	c.Inject(a, b, wire.QuorumPacket{Type: wire.PacketCommit, Zxid: forged.Header.Zxid})
	settle(c, time.Second)
	for _, n := range c.Nodes {
		require.False(t, has(c, n.ID, "/forged"), "server %d delivered a txn no leader broadcast", n.ID)
	}
	requireEverywhere(t, c, "/real")
}

// TestPaperAgreementAndPrefixConsistency: whatever two members delivered,
// one's sequence is a prefix of the other's, and once both are up to date
// they delivered the same; here across a partitioned minority whose
// writes cannot commit, a new leader on the majority side, and the heal.
//
// Reference: Zab paper §III, Agreement and Total order; Zab.tla
// PrefixConsistency, Agreement, TotalOrder.
func TestPaperAgreementAndPrefixConsistency(t *testing.T) {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 5})
	v := c.CheckInvariants()
	old := serving(t, c)
	minority := []int64{old, old%5 + 1}
	var majority []int64
	for id := int64(1); id <= 5; id++ {
		if id != minority[0] && id != minority[1] {
			majority = append(majority, id)
		}
	}
	stuck := session(t, c, old)
	c.Partition(minority, majority)
	create(stuck, "/minority") // proposed, never committed
	leader := servingAmong(t, c, majority)
	createOK(t, c, session(t, c, leader), "/majority")
	c.Heal()
	settle(c, 5*time.Second)
	requireEverywhere(t, c, "/majority")
	for _, n := range c.Nodes {
		require.False(t, has(c, n.ID, "/minority"), "server %d delivered a write no quorum acknowledged", n.ID)
	}
	want := v.Delivered(leader)
	for id := int64(1); id <= 5; id++ {
		require.Equal(t, want, v.Delivered(id), "server %d", id)
	}
}

// TestTLALeadership: at most one member establishes each epoch, even with
// the old leader cut off and still leading its old epoch while the others
// elect a new one.
//
// Reference: Zab.tla Leadership (one established leader per epoch); Zab
// paper §IV-A (a leader is established only with a quorum's ACKEPOCH).
func TestTLALeadership(t *testing.T) {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	v := c.CheckInvariants()
	old := serving(t, c)
	oldEpoch := c.Node(old).Peer.State().Epoch
	c.Partition([]int64{old}, []int64{old%3 + 1, (old+1)%3 + 1})
	leader := servingAmong(t, c, []int64{old%3 + 1, (old+1)%3 + 1})
	newEpoch := c.Node(leader).Peer.State().Epoch
	require.NotEqual(t, old, leader)
	require.Greater(t, newEpoch, oldEpoch)
	require.Equal(t, old, v.LeaderOf(oldEpoch))
	require.Equal(t, leader, v.LeaderOf(newEpoch))
	c.Heal()
	settle(c, 5*time.Second)
	require.Equal(t, leader, serving(t, c), "the old leader rejoins as a follower")
}

// TestPaperLearnerNeverAcceptsALowerEpoch: a learner whose acceptedEpoch
// is above the epoch a leader proposes refuses it (it leaves that leader)
// and keeps its acceptedEpoch.
//
// Reference: Zab paper §IV-A, Phase 1 (a follower accepts a NEWEPOCH only
// if its epoch is above the follower's acceptedEpoch); Zab.tla's
// FollowerProcessNEWEPOCH.
func TestPaperLearnerNeverAcceptsALowerEpoch(t *testing.T) {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	c.CheckInvariants()
	l := serving(t, c)
	g := l%3 + 1
	c.Crash(g)
	c.Restart(g)
	// Step the restarted member until it follows l and waits in
	// discovery (FOLLOWERINFO sent, no LEADERINFO yet).
	inDiscovery := func() bool {
		s := c.Node(g).Peer.State()
		return s.Role == zab.RoleFollowing && s.Phase == zab.PhaseDiscovery
	}
	for range 100 {
		for !inDiscovery() && (c.Deliver(l, g, false) || c.Deliver(g, l, false) || c.Deliver((l+1)%3+1, g, false) || c.Deliver(g, (l+1)%3+1, false)) {
		}
		if inDiscovery() {
			break
		}
		c.Advance(10 * time.Millisecond)
	}
	require.True(t, inDiscovery(), c.Status())
	before, _ := c.Node(g).Peer.Epochs()
	c.Inject(l, g, wire.QuorumPacket{Type: wire.PacketLeaderInfo, Zxid: (before - 1) << 32, Data: wire.Marshal(&wire.LeaderInfo{ProtocolVersion: wire.ProtocolVersion})})
	after, current := c.Node(g).Peer.Epochs()
	require.Equal(t, before, after, "acceptedEpoch unchanged")
	require.GreaterOrEqual(t, after, current)
	require.Equal(t, zab.RoleLooking, c.Node(g).Peer.State().Role, "it left the leader that proposed a lower epoch")
	require.Contains(t, strings.Join(c.Notices, "\n"), "its epoch is below our acceptedEpoch")
	settle(c, 5*time.Second)
	serving(t, c) // and it rejoins
}

// servingAmong waits until a member of ids leads an established epoch that
// every member of ids serves (the others may be cut off).
func servingAmong(t *testing.T, c *zabtest.Cluster, ids []int64) int64 {
	t.Helper()
	for range 200 {
		settle(c, 100*time.Millisecond)
		for _, l := range ids {
			s := c.Node(l).Peer.State()
			if s.Role != zab.RoleLeading || s.Phase != zab.PhaseBroadcast {
				continue
			}
			all := true
			for _, id := range ids {
				if f := c.Node(id).Peer.State(); id != l && (f.Leader != l || f.Phase != zab.PhaseBroadcast) {
					all = false
				}
			}
			if all {
				return l
			}
		}
	}
	t.Fatalf("no leader served by all of %v\n%s", ids, c.Status())
	return 0
}
