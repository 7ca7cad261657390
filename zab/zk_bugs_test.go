package zab_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// The historical ZooKeeper bugs of discovery, synchronization and
// broadcast, named by their ZOOKEEPER- JIRA ids, each driven
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

// laggard leaves server 2 behind in epoch 1 (holding /a0) while servers 3
// and 1 move on to epoch 2 and commit /a and /b; it returns a session on
// server 3, the leader of epoch 2.
func laggard(t *testing.T, c *zabtest.Cluster) *zabtest.ClusterClient {
	t.Helper()
	firstLeader(t, c)
	createOK(t, c, session(t, c, 3), "/a0")
	c.Crash(2)
	c.Crash(3)
	c.Restart(3)
	require.Equal(t, int64(3), serving(t, c))
	require.Equal(t, int64(2), c.Node(3).Current)
	cl := session(t, c, 3)
	createOK(t, c, cl, "/a")
	createOK(t, c, cl, "/b")
	require.Equal(t, int64(1), c.Node(2).Current)
	return cl
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
	drain(c, 2, 3)   // server 2's NEWLEADER ACK
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
	c.Node(3).LogReadLimit = 0 // the leader's log is not worth reading: SNAP
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

// TestZK335_NewEpochAboveEveryAcceptedOne: ZOOKEEPER-335, epochs were not
// persisted, so a new leader derived its epoch from its last zxid and two
// leaders used one zxid for different txns. A leader of epoch 2 logs a
// txn only it holds and crashes; the others must choose epoch 3 (above
// the acceptedEpoch 2 they persisted), never 2 again, and the old txn is
// truncated when its member returns.
func TestZK335_NewEpochAboveEveryAcceptedOne(t *testing.T) { zk335(t) }

func zk335(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	firstLeader(t, c)
	c.Crash(3) // epoch 2 is led by server 2, with server 1
	require.Equal(t, int64(2), serving(t, c))
	c.Restart(3)
	serving(t, c)
	cl := session(t, c, 2)
	createOK(t, c, cl, "/a")
	create(cl, "/orphan") // only the leader logs it
	lost := zxidOf(c, 2, "/orphan")
	require.Equal(t, int64(2), lost>>32)
	c.Crash(2)
	leader := serving(t, c)
	require.Greater(t, c.Node(leader).Peer.State().Epoch, int64(2), "the new epoch must exceed every acceptedEpoch (2)")
	c.Restart(2)
	serving(t, c)
	require.NotEqual(t, lost, zxidOf(c, 2, "/orphan"), "server 2 kept a txn of epoch 2 no quorum held")
	requireEverywhere(t, c, "/a")
	require.False(t, has(c, 2, "/orphan"))
	return c
}

// TestZK1154_TruncNotDiffAfterWholeEnsembleRestart: ZOOKEEPER-1154, the
// member with the highest zxid was absent when the others elected a
// leader after a whole-ensemble restart, and was later sent a DIFF that
// kept a txn the new leader never had. It must be truncated.
func TestZK1154_TruncNotDiffAfterWholeEnsembleRestart(t *testing.T) { zk1154(t) }

func zk1154(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	firstLeader(t, c)
	cl := session(t, c, 3)
	createOK(t, c, cl, "/a")
	create(cl, "/uncommitted") // logged by the leader only
	require.NotZero(t, zxidOf(c, 3, "/uncommitted"))
	for _, id := range []int64{1, 2, 3} {
		c.Crash(id)
	}
	c.Restart(1)
	c.Restart(2)
	serving(t, c)
	cl2 := session(t, c, 2)
	createOK(t, c, cl2, "/b")
	mark := len(c.Trace)
	c.Restart(3)
	serving(t, c)
	require.True(t, sent(c, mark, "->3 TRUNC"), "the old leader, ahead of the new one, is truncated")
	require.False(t, has(c, 3, "/uncommitted"))
	requireEverywhere(t, c, "/a", "/b")
	return c
}

// TestZK1653_CrashBetweenSnapshotAndCurrentEpoch: ZOOKEEPER-1653, a
// learner wrote a snapshot of the new epoch's txns and crashed before
// currentEpoch; on restart the epoch check refused to start. A zabd
// member restarts from such a disk, and rejoins with the leader's tree.
func TestZK1653_CrashBetweenSnapshotAndCurrentEpoch(t *testing.T) { zk1653(t) }

func zk1653(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3, Tweak: func(id int64, cfg *zab.Config) { cfg.CommittedWindow = 1 }})
	laggard(t, c)
	c.Node(3).LogReadLimit = 0
	mark := len(c.Trace)
	c.Restart(2)
	// Deliver until server 2 has taken the SNAP, not the NEWLEADER after it.
	for !sent(c, mark, "3->2 SNAP") {
		for _, l := range c.InFlight() {
			c.Deliver(l[0], l[1], false)
			if sent(c, mark, "3->2 SNAP") {
				break
			}
		}
		c.Advance(10 * time.Millisecond)
	}
	n2 := c.Node(2)
	require.NotEmpty(t, n2.Snapshots, "server 2 wrote the leader's snapshot")
	require.Equal(t, int64(2), n2.Snapshots[len(n2.Snapshots)-1].Zxid>>32, "of the new epoch's txns")
	c.Crash(2)
	require.Equal(t, int64(1), n2.Current, "crashed before currentEpoch")
	c.Restart(2)
	serving(t, c)
	requireEverywhere(t, c, "/a0", "/a", "/b")
	return c
}

// TestZK2845_LoggedButUncommittedTxnNeverApplied: ZOOKEEPER-2845, a
// follower kept in memory a database that lacked txns it had logged, and
// later replayed an uncommitted one. A zabd follower that logged a
// proposal the new leader lacks has it truncated, and applies it never,
// neither while running nor after a restart.
func TestZK2845_LoggedButUncommittedTxnNeverApplied(t *testing.T) { zk2845(t) }

func zk2845(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	firstLeader(t, c)
	cl := session(t, c, 3)
	createOK(t, c, cl, "/a")
	create(cl, "/x")
	drain(c, 3, 1) // server 1 logs /x; nobody else acknowledges it
	require.NotZero(t, zxidOf(c, 1, "/x"))
	c.Crash(3) // the leader crashes before committing /x
	c.Crash(1) // and so does server 1
	c.Restart(1)
	require.False(t, has(c, 1, "/x"), "a logged txn is applied at restart before any leader committed it")
	// Server 2 leads (server 1 is ahead, but loses the election to nobody:
	// it is elected unless server 2 knows more; either way /x must end the
	// same everywhere).
	serving(t, c)
	c.Restart(3)
	serving(t, c)
	requireEverywhere(t, c, "/a")
	x := has(c, 1, "/x")
	for _, id := range []int64{2, 3} {
		require.Equal(t, x, has(c, id, "/x"))
	}
	return c
}

// TestZK3104_NewLeaderAckOnlyAfterTheSnapshotIsDurable: ZOOKEEPER-3104,
// NEWLEADER was queued before the SNAP's data, so a learner could ACK it
// before holding the snapshot. zabd sends NEWLEADER after the snapshot,
// and the learner ACKs only once the snapshot is durable.
func TestZK3104_NewLeaderAckOnlyAfterTheSnapshotIsDurable(t *testing.T) { zk3104(t) }

func zk3104(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3, Tweak: func(id int64, cfg *zab.Config) { cfg.CommittedWindow = 1 }})
	firstLeader(t, c)
	c.Crash(2)
	cl := session(t, c, 3)
	createOK(t, c, cl, "/a")
	createOK(t, c, cl, "/b")
	c.Node(3).LogReadLimit = 0
	c.Node(2).HoldSnapshots = true
	mark := len(c.Trace)
	c.Restart(2)
	settle(c, 300*time.Millisecond)
	var snapAt, newLeaderAt int
	for i, l := range c.Trace[mark:] {
		if snapAt == 0 && strings.Contains(l, "3->2 SNAP") {
			snapAt = i
		}
		if newLeaderAt == 0 && strings.Contains(l, "3->2 NEWLEADER") {
			newLeaderAt = i
		}
	}
	require.NotZero(t, snapAt)
	require.Greater(t, newLeaderAt, snapAt, "NEWLEADER after the snapshot")
	require.False(t, sent(c, mark, "2->3 ACK 0x"), "no ACK before the snapshot is durable")
	c.ReleaseSnapshots(2)
	serving(t, c)
	requireEverywhere(t, c, "/a", "/b")
	return c
}

// TestZK3911_SyncedTxnsDurableBeforeNewLeaderAck: ZOOKEEPER-3911, a
// learner ACKed NEWLEADER while the synced txns were durable only later
// (at UPTODATE), so a quorum "held" txns it could lose. zabd's learner
// ACKs NEWLEADER, and writes currentEpoch, only once every synced txn is
// durable; a crash before loses nothing acknowledged.
func TestZK3911_SyncedTxnsDurableBeforeNewLeaderAck(t *testing.T) { zk3911(t) }

func zk3911(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	laggard(t, c)
	c.Node(2).Hold = true
	mark := len(c.Trace)
	c.Restart(2)
	settle(c, 300*time.Millisecond)
	require.True(t, sent(c, mark, "3->2 DIFF"))
	require.False(t, sent(c, mark, "2->3 ACK 0x"), "NEWLEADER ACKed before the synced txns are durable")
	require.Equal(t, int64(1), c.Node(2).Current, "currentEpoch written before the synced txns are durable")
	c.ReleaseTo(2, zxidOf(c, 2, "/a"))
	require.False(t, sent(c, mark, "2->3 ACK 0x"), "NEWLEADER ACKed with only part of the synced txns durable")
	require.Equal(t, int64(1), c.Node(2).Current)
	c.Crash(2) // losing /b, which it never acknowledged
	c.Node(2).Hold = false
	c.Restart(2)
	serving(t, c)
	requireEverywhere(t, c, "/a0", "/a", "/b")
	return c
}

// TestZK4394_CommitBetweenNewLeaderAckAndUpToDate: ZOOKEEPER-4394, a
// learner got a PROPOSAL and its COMMIT after it ACKed NEWLEADER and
// before UPTODATE, and failed on it. zabd's learner holds both and applies
// the txn, in order, once UPTODATE arrives.
func TestZK4394_CommitBetweenNewLeaderAckAndUpToDate(t *testing.T) { zk4394(t) }

func zk4394(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	firstLeader(t, c)
	cl := session(t, c, 3)
	rejoinHeld(t, c, cl)
	create(cl, "/b")
	drain(c, 3, 1)
	drain(c, 1, 3) // /b commits with server 1
	c.Release(2)   // server 2's NEWLEADER ACK leaves now
	mark := len(c.Trace)
	drain(c, 3, 2) // PROPOSAL and COMMIT of /b, before UPTODATE
	require.True(t, sent(c, mark, "3->2 COMMIT"))
	require.Equal(t, zab.PhaseSync, c.Node(2).Peer.State().Phase)
	drain(c, 2, 3)
	drain(c, 3, 2) // UPTODATE
	require.Equal(t, zab.PhaseBroadcast, c.Node(2).Peer.State().Phase)
	require.True(t, has(c, 2, "/b"))
	serving(t, c)
	requireEverywhere(t, c, "/a0", "/a", "/b")
	return c
}

// TestZK4394_OutstandingProposalsFollowNewLeader: ZooKeeper 3.8.0's
// learner logs and forgets, at NEWLEADER, the proposals it was sent
// before it, then fails (ZOOKEEPER-4394) on a COMMIT that arrives before
// UPTODATE with nothing proposed since NEWLEADER. ZooKeeper's own leader
// sends the proposals outstanding at synchronization before NEWLEADER and
// so trips it when one commits in that gap; zabd's sends them after
// NEWLEADER, so every COMMIT a syncing learner gets after NEWLEADER has a
// PROPOSAL between the two (found by the rolling-migration test: a
// ZooKeeper 3.8.0 follower of a zabd leader under load left the epoch).
func TestZK4394_OutstandingProposalsFollowNewLeader(t *testing.T) { zk4394Outstanding(t) }

func zk4394Outstanding(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	firstLeader(t, c)
	cl := session(t, c, 3)
	createOK(t, c, cl, "/a0")
	c.Crash(2)
	createOK(t, c, cl, "/a") // server 2 will have it to log before it ACKs NEWLEADER
	c.Node(1).Hold = true
	create(cl, "/b")
	drain(c, 3, 1) // server 1 logs /b, not durably: /b is outstanding
	mark := len(c.Trace)
	c.Node(2).Hold = true
	c.Restart(2)
	settle(c, 300*time.Millisecond)
	require.Equal(t, zab.PhaseSync, c.Node(2).Peer.State().Phase)
	c.Release(1) // server 1 ACKs /b: it commits while server 2 still synchronizes
	drain(c, 1, 3)
	require.True(t, has(c, 3, "/b"))
	sends := sentTo(c, mark, 3, 2)
	newLeader := slices.IndexFunc(sends, func(l string) bool { return strings.HasPrefix(l, "NEWLEADER") })
	require.GreaterOrEqual(t, newLeader, 0)
	proposedSince := false
	committed := false
	for _, l := range sends[newLeader+1:] {
		switch {
		case strings.HasPrefix(l, "PROPOSAL"):
			proposedSince = true
			require.Contains(t, l, "/b", "only /b was outstanding")
		case strings.HasPrefix(l, "COMMIT"):
			require.True(t, proposedSince, "COMMIT after NEWLEADER with no PROPOSAL since: %q", sends)
			committed = true
		}
	}
	require.True(t, committed, "/b's COMMIT reached server 2 during its synchronization: %q", sends)
	require.Equal(t, zab.PhaseSync, c.Node(2).Peer.State().Phase)
	c.Release(2)
	serving(t, c)
	requireEverywhere(t, c, "/a0", "/a", "/b")
	return c
}

// sentTo lists the packets server from sent to server to after trace index
// mark, as the trace describes them.
func sentTo(c *zabtest.Cluster, mark int, from, to int64) []string {
	prefix := fmt.Sprintf("%d: send to %d: ", from, to)
	var out []string
	for _, l := range c.Trace[mark:] {
		if p, ok := strings.CutPrefix(l, prefix); ok {
			out = append(out, p)
		}
	}
	return out
}

// TestZK4646_AsyncLoggingCannotAckEarly: ZOOKEEPER-4646 is ZOOKEEPER-4643
// with the synced txns logged asynchronously. zabd's core has no logging
// thread to race with: appends leave in a Ready and count only once the
// shell reports LogDurable, so the interleaving (NEWLEADER processed while
// the synced txns are still in the shell's queue, over several Readys)
// ends the same way: no currentEpoch, no ACK, until they are durable.
func TestZK4646_AsyncLoggingCannotAckEarly(t *testing.T) { zk4646(t) }

func zk4646(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	laggard(t, c)
	c.Node(2).Hold = true
	mark := len(c.Trace)
	c.Restart(2)
	// Deliver the synchronization one packet at a time: each is its own
	// Ready, the appends queued, none durable.
	for range 50 {
		for _, l := range c.InFlight() {
			c.Deliver(l[0], l[1], false)
		}
		c.Advance(10 * time.Millisecond)
		require.Equal(t, int64(1), c.Node(2).Current)
	}
	require.True(t, sent(c, mark, "3->2 NEWLEADER"))
	require.False(t, sent(c, mark, "2->3 ACK 0x"))
	c.Release(2)
	serving(t, c)
	requireEverywhere(t, c, "/a0", "/a", "/b")
	return c
}

// TestZK4685_NewLeaderAckBeforeProposalAcks: ZOOKEEPER-4685, a follower
// ACKed a proposal received during synchronization before it ACKed
// NEWLEADER, and the leader shut down. zabd's follower ACKs NEWLEADER
// first, whatever order its log makes things durable in.
func TestZK4685_NewLeaderAckBeforeProposalAcks(t *testing.T) { zk4685(t) }

func zk4685(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	firstLeader(t, c)
	cl := session(t, c, 3)
	rejoinHeld(t, c, cl)
	create(cl, "/b")
	drain(c, 3, 2) // /b's PROPOSAL reaches server 2 during its synchronization
	mark := len(c.Trace)
	c.Release(2) // everything durable at once, /b included
	drain(c, 2, 3)
	var acks []string
	for _, l := range c.Trace[mark:] {
		if strings.HasPrefix(l, "2->3 ACK") {
			acks = append(acks, l)
		}
	}
	require.NotEmpty(t, acks)
	require.Equal(t, "2->3 ACK 0x100000000", acks[0], "the NEWLEADER ACK goes first")
	require.Equal(t, zab.RoleLeading, c.Node(3).Peer.State().Role, "the leader keeps leading")
	serving(t, c)
	requireEverywhere(t, c, "/a0", "/a", "/b")
	return c
}

// TestZK4785_DiffRaceLosesNoTxn: ZOOKEEPER-4785, during a DIFF the
// learner's synced txns raced its NEWLEADER handling, and a txn was lost.
// However the durability of the synced txns and the proposals that follow
// NEWLEADER interleave, the learner ends with every txn.
func TestZK4785_DiffRaceLosesNoTxn(t *testing.T) { zk4785(t) }

func zk4785(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	firstLeader(t, c)
	cl := session(t, c, 3)
	createOK(t, c, cl, "/a0")
	c.Crash(2)
	createOK(t, c, cl, "/a")
	createOK(t, c, cl, "/b")
	c.Node(2).Hold = true
	c.Restart(2)
	settle(c, 300*time.Millisecond)
	create(cl, "/c")
	drain(c, 3, 2)
	c.ReleaseTo(2, zxidOf(c, 2, "/a")) // a part of the synced txns
	drain(c, 2, 3)
	c.ReleaseTo(2, zxidOf(c, 2, "/b")) // the rest: NEWLEADER ACK
	drain(c, 2, 3)
	c.Crash(1) // the quorum now needs server 2 for /c
	c.Release(2)
	settle(c, time.Second)
	require.True(t, has(c, 3, "/c"))
	c.Restart(1)
	serving(t, c)
	requireEverywhere(t, c, "/a0", "/a", "/b", "/c")
	return c
}

// TestZK4925_NoHoleInTheCommittedWindowAfterDiff: ZOOKEEPER-4925, a stale
// follower synchronized by DIFF kept a committed window with a hole, and,
// leading later, sent DIFFs that skipped txns. zabd's window gets every
// txn the member applies; led by that member, a learner left behind before
// the txns its DIFF brought (an observer, down since /a0) is synchronized
// from the window with every txn it lacks, none skipped.
func TestZK4925_NoHoleInTheCommittedWindowAfterDiff(t *testing.T) { zk4925(t) }

func zk4925(t *testing.T) *zabtest.Cluster {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3, Observers: 1})
	firstLeader(t, c)
	createOK(t, c, session(t, c, 3), "/a0")
	c.Crash(2)
	c.Crash(4)
	createOK(t, c, session(t, c, 3), "/a")
	createOK(t, c, session(t, c, 3), "/b")
	c.Restart(2) // server 2, stale, is synchronized by DIFF
	serving(t, c)
	createOK(t, c, session(t, c, 3), "/c")
	for _, id := range []int64{1, 2, 3} {
		c.Node(id).LogReadLimit = 0 // only the window may serve a DIFF
	}
	c.Crash(1)
	createOK(t, c, session(t, c, 3), "/d") // server 1 misses it
	c.Crash(3)                             // server 2, the once-stale follower, leads with server 1
	c.Restart(1)
	leader := serving(t, c)
	require.Equal(t, int64(2), leader)

	log := c.Node(4).Log
	last := log[len(log)-1].Header.Zxid
	require.Less(t, last, zxidOf(c, 2, "/a"), "the observer missed what server 2's DIFF brought")
	sync := &packetsSent{from: 2, to: 4}
	c.Observe(sync)
	c.Restart(4)
	c.Stabilize(10000)
	diff := slices.IndexFunc(sync.packets, func(qp wire.QuorumPacket) bool { return qp.Type == wire.PacketDiff })
	require.NotEqual(t, -1, diff, "server 2 synchronizes the observer by DIFF from its window: %v", sync.packets)
	var proposed, want []int64
	for _, qp := range sync.packets[diff+1:] {
		if qp.Type == wire.PacketNewLeader {
			break
		}
		if qp.Type == wire.PacketProposal {
			proposed = append(proposed, qp.Zxid)
		}
	}
	for _, txn := range c.Node(2).Log {
		if z := txn.Header.Zxid; z > last && z <= sync.packets[diff].Zxid {
			want = append(want, z)
		}
	}
	require.Equal(t, want, proposed, "the DIFF from server 2's window skips or repeats a txn")
	serving(t, c)
	requireEverywhere(t, c, "/a0", "/a", "/b", "/c")

	c.Restart(3)
	serving(t, c)
	requireEverywhere(t, c, "/a0", "/a", "/b", "/c")
	return c
}

// packetsSent records the quorum packets one member's Readys send to
// another (a zabtest.Observer).
type packetsSent struct {
	from, to int64
	packets  []wire.QuorumPacket
}

func (o *packetsSent) Started(*zabtest.Node) {}
func (o *packetsSent) Settled(*zabtest.Node) {}
func (o *packetsSent) Ready(n *zabtest.Node, rd *zab.Ready) {
	if n.ID != o.from {
		return
	}
	for _, m := range rd.PeerMessages {
		if m.To == o.to && m.Kind == zab.PeerSend {
			o.packets = append(o.packets, m.Packet)
		}
	}
}

// rejoinHeld commits /a0 everywhere, then /a while server 2 is down, and
// restarts server 2 with its disk held: it rejoins and synchronizes, but
// nothing it logs becomes durable until the test releases it.
func rejoinHeld(t *testing.T, c *zabtest.Cluster, cl *zabtest.ClusterClient) {
	t.Helper()
	createOK(t, c, cl, "/a0")
	c.Crash(2)
	createOK(t, c, cl, "/a")
	c.Node(2).Hold = true
	c.Restart(2)
	settle(c, 300*time.Millisecond)
}
