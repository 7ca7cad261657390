package zab_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// The historical ZooKeeper bugs of discovery, synchronization and
// broadcast (../shared/SPEC.md, "Historical ZooKeeper bugs"), each driven
// through its interleaving on a Cluster whose invariants are checked after
// every step, with the outcome zabd must show. Every scenario returns its
// cluster so that TestClusterScenariosDeterministic can run it twice.
//
// In each, server 3 leads the first epoch: the election breaks ties by
// the highest id.

func firstLeader(t *testing.T, c *zabtest.Cluster) {
	t.Helper()
	require.Equal(t, int64(3), serving(t, c))
}

// TestNewLeaderAckCoversOnlyTheSyncedHistory: a learner's NEWLEADER ACK
// says it holds durably what the leader sent before NEWLEADER, not the
// proposals forwarded after it. zabd's leader counted that ACK for every
// proposal it had forwarded by the time the ACK arrived, and so committed
// a txn only it held durably (found by TestPaperInvariantsUnderFaults).
func TestNewLeaderAckCoversOnlyTheSyncedHistory(t *testing.T) { newLeaderAckScenario(t) }

func newLeaderAckScenario(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	firstLeader(t, c)
	cl := session(t, c, 3)
	createOK(t, c, cl, "/a0")
	c.Crash(2)
	createOK(t, c, cl, "/a")
	c.Node(2).Hold = true
	c.Restart(2)
	settle(c, 500*time.Millisecond)
	require.Equal(t, zab.PhaseSync, c.Node(2).Peer.State().Phase, "server 2 waits for its synced txns to be durable")

	create(cl, "/b")
	drain(c, 3, 1) // server 1 logs /b; its ACK stays in flight
	drain(c, 3, 2) // server 2 logs /b, not durably
	c.ReleaseTo(2, zxidOf(c, 2, "/a"))
	drain(c, 2, 3) // server 2's NEWLEADER ACK
	create(cl, "/c") // the leader logs /c: it looks again at what a quorum holds
	require.False(t, has(c, 3, "/b"), "the leader committed /b on a NEWLEADER ACK that does not cover it")

	c.Release(2)
	c.Stabilize(10000)
	requireEverywhere(t, c, "/a0", "/a", "/b", "/c")
	return c
}

// TestZK4643_CurrentEpochOnlyOnceTheHistoryIsDurable: a member's
// currentEpoch must not be written before the history it takes into that
// epoch is durable. ZOOKEEPER-4643 is a follower writing currentEpoch
// before its synced txns were durable; a crash then left a short log with
// a new currentEpoch, which won the next election and truncated committed
// txns from the others. zabd had the same defect on the leader's side
// (found by TestPaperInvariantsUnderFaults): a member elected with txns
// logged but not yet durable made the new epoch its currentEpoch at once.
func TestZK4643_CurrentEpochOnlyOnceTheHistoryIsDurable(t *testing.T) { zk4643(t) }

func zk4643(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	firstLeader(t, c)
	cl := session(t, c, 3)
	c.Node(2).Hold = true
	createOK(t, c, cl, "/a") // committed by servers 3 and 1; server 2 logs it, not durably
	a := zxidOf(c, 2, "/a")
	require.NotZero(t, a)
	require.Less(t, c.Node(2).Durable, a)

	// The leader crashes; server 2 (as recent as server 1, and a higher
	// id) is elected, its log still not durable.
	c.Crash(3)
	settle(c, time.Second)
	require.Equal(t, zab.RoleLeading, c.Node(2).Peer.State().Role)
	require.Equal(t, int64(1), c.Node(2).Current, "the new leader wrote currentEpoch before its log held its history durably")
	require.Equal(t, int64(1), c.Node(1).Current, "a follower took the new epoch before its leader's history was durable")

	// Servers 2 and 1 crash (server 2 loses /a); servers 2 and 3 come
	// back: server 3, which holds /a, must win.
	c.Crash(2)
	c.Crash(1)
	c.Node(2).Hold = false
	c.Restart(2)
	c.Restart(3)
	serving(t, c)
	c.Restart(1)
	serving(t, c)
	requireEverywhere(t, c, "/a")
	return c
}

// TestZK3642_LeaderCrashAfterSnapBeforeNewLeader: ZOOKEEPER-3642, a
// learner took a SNAP into memory, the leader crashed before NEWLEADER,
// and the learner, elected with the snapshot's zxid it had not persisted,
// lost data. In zabd (found by TestPaperInvariantsUnderFaults): until the
// snapshot of a SNAP is durable, the member counts nothing as durable (so
// it neither makes a new epoch its currentEpoch nor ACKs), and no txn
// after the snapshot reaches its log (a crash would leave a log that skips
// the snapshot's txns, replayed later without them).
func TestZK3642_LeaderCrashAfterSnapBeforeNewLeader(t *testing.T) { zk3642(t) }

func zk3642(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3, Tweak: func(id int64, cfg *zab.Config) { cfg.CommittedWindow = 2 }})
	firstLeader(t, c)
	c.Crash(2)
	cl := session(t, c, 3)
	var paths []string
	for i := range 5 {
		paths = append(paths, fmt.Sprintf("/a%d", i))
		createOK(t, c, cl, paths[i])
	}
	c.Node(2).HoldSnapshots = true
	mark := len(c.Trace)
	c.Restart(2)
	settle(c, 500*time.Millisecond)
	require.True(t, sent(c, mark, "3->2 SNAP"), "server 2, behind the leader's window, is sent a snapshot")
	require.Equal(t, zab.PhaseSync, c.Node(2).Peer.State().Phase, "no NEWLEADER ACK before the snapshot is durable")

	create(cl, "/late")
	drain(c, 3, 1)
	drain(c, 1, 3)
	drain(c, 3, 2) // /late's PROPOSAL and COMMIT reach server 2
	require.True(t, has(c, 3, "/late"))
	require.Zero(t, zxidOf(c, 2, "/late"), "a txn after the SNAP reached the log before the snapshot was durable")

	// The leader crashes before server 2's NEWLEADER ACK; server 2, as
	// recent as server 1 and a higher id, is elected.
	c.Crash(3)
	settle(c, time.Second)
	require.Equal(t, int64(1), c.Node(2).Current, "currentEpoch written over a snapshot that is not durable")

	// Server 2 crashes, its snapshot lost, and so does server 1; servers
	// 2 and 3 come back: server 3 must win, with every write.
	c.Crash(2)
	c.Crash(1)
	c.Node(2).HoldSnapshots = false
	c.Restart(2)
	c.Restart(3)
	serving(t, c)
	c.Restart(1)
	serving(t, c)
	requireEverywhere(t, c, append(paths, "/late")...)
	return c
}
