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

func TestEnsembleElectsAndReplicates(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 1)
	c.Run(2*time.Second, 50*time.Millisecond)
	t.Log("\n" + strings.Join(c.Trace, "\n"))
	t.Log("\n" + strings.Join(c.Notices, "\n"))
	t.Log("\n" + c.Status())
	require.NotZero(t, c.Leader())
	cl := c.Connect(1, 0, nil, 4000)
	c.Stabilize(1000)
	t.Log(cl.Take())
	cl.Send(wire.OpCreate, &wire.CreateRequest{Path: "/a", Data: []byte("x"), ACL: wire.OpenACLUnsafe})
	c.Stabilize(1000)
	t.Log(cl.Take())
	t.Log("\n" + c.Status())
}

// TestDamagedLogCostsNoCommittedTxn: a member whose log lost committed txns
// to a damaged record must not help elect a leader that lacks them. Txns
// committed by members 1 and 2 alone; all crash; member 2 comes back with
// its log cut before them, beside member 3 that never had them: the two
// would elect a leader without the txns, so no leader may be elected.
// Once member 1 is back it leads with the txns, and member 2 recovers them.
// Reference: Protocol-Aware Recovery for Consensus-Based Storage
// (Alagappan et al., FAST 2018); issue 11, item 12.
func TestDamagedLogCostsNoCommittedTxn(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 3)
	c.Run(time.Second, 50*time.Millisecond)
	require.NotZero(t, c.Leader())
	c.Partition([]int64{3}, []int64{1, 2})
	c.Run(2*time.Second, 50*time.Millisecond)
	leader := c.Leader()
	require.Contains(t, []int64{1, 2}, leader)
	cl := c.Connect(leader, 0, nil, 30000)
	c.Stabilize(1000)
	cl.Send(wire.OpCreate, &wire.CreateRequest{Path: "/committed", Data: []byte("x"), ACL: wire.OpenACLUnsafe})
	c.Stabilize(1000)
	replies := cl.Take()
	require.Contains(t, replies[len(replies)-1], "ok /committed")
	before := c.Node(2).Peer.LastZxid() - 2 // before the session and the create

	for _, id := range []int64{1, 2, 3} {
		c.Crash(id)
	}
	c.Heal()
	c.DamageLog(2, before, "a damaged record in log.100000001 at offset 4096")
	c.Restart(2)
	c.Restart(3)
	c.Run(10*time.Second, 50*time.Millisecond)
	require.Zero(t, c.Leader(), "2 and 3 must not elect a leader without the committed txns:\n%s", c.Status())

	c.Restart(1)
	// Member 2 learns the leader at its next resend, its interval having
	// doubled while it looked: up to MaxNotificationInterval.
	c.Run(30*time.Second, 50*time.Millisecond)
	require.Equal(t, int64(1), c.Leader(), c.Status())
	for _, id := range []int64{1, 2, 3} {
		_, _, err := c.Node(id).Peer.Tree().GetData("/committed", nil, false, 0)
		require.Equal(t, wire.ErrOK, err, "server %d\n%s\n%s", id, c.Status(), strings.Join(c.Notices, "\n"))
	}
	require.Contains(t, strings.Join(c.Notices, "\n"), "2: following: the log damaged after zxid")
}

// TestObserverLearnsByInformAndNeverCounts: an observer is synchronized,
// learns each commit by INFORM, serves reads and forwards writes; with two
// of three voters down, the remaining voter and the observer commit
// nothing.
func TestObserverLearnsByInformAndNeverCounts(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3, Observers: 1}, 5)
	c.Run(time.Second, 50*time.Millisecond)
	require.NotZero(t, c.Leader())
	require.Equal(t, zab.RoleObserving, c.Node(4).Peer.State().Role)
	cl := c.Connect(4, 0, nil, 30000)
	c.Stabilize(1000)
	cl.Send(wire.OpCreate, &wire.CreateRequest{Path: "/o", Data: []byte("x"), ACL: wire.OpenACLUnsafe})
	c.Stabilize(1000)
	got := cl.Take()
	require.Contains(t, got[len(got)-1], "ok /o", strings.Join(c.Trace, "\n"))
	require.Contains(t, strings.Join(c.Trace, "\n"), "->4 INFORM")
	require.NotContains(t, strings.Join(c.Trace, "\n"), "->4 PROPOSAL 0x1")

	leader := c.Leader()
	for _, id := range []int64{1, 2, 3} {
		if id != leader {
			c.Crash(id)
		}
	}
	c.Run(3*time.Second, 50*time.Millisecond)
	require.Zero(t, c.Leader(), "a voter and an observer are no quorum:\n%s", c.Status())
}

// TestFiveMembersElectAndSurviveTwoCrashes: five voters elect a leader;
// with two crashed (the leader among them) the other three elect a new one
// that holds every acknowledged write.
func TestFiveMembersElectAndSurviveTwoCrashes(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 5}, 11)
	c.Run(time.Second, 50*time.Millisecond)
	leader := c.Leader()
	require.NotZero(t, leader)
	var acked []string
	cl := c.Connect(leader%5+1, 0, nil, 30000)
	c.Stabilize(1000)
	for i := range 5 {
		path := "/w" + string(rune('0'+i))
		cl.Send(wire.OpCreate, &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe})
		c.Stabilize(1000)
		if r := cl.Take(); strings.Contains(r[len(r)-1], "ok "+path) {
			acked = append(acked, path)
		}
	}
	require.Len(t, acked, 5)
	c.Crash(leader)
	c.Crash(leader%5 + 1)
	c.Run(5*time.Second, 50*time.Millisecond)
	newLeader := c.Leader()
	require.NotZero(t, newLeader, c.Status())
	for _, path := range acked {
		_, _, err := c.Node(newLeader).Peer.Tree().GetData(path, nil, false, 0)
		require.Equal(t, wire.ErrOK, err, path)
	}
}

// TestSyncFromTxnLogBeyondWindow: a follower that missed more txns than
// the committed window holds is synchronized by DIFF read from the
// leader's txn log when that is worth sending, and by SNAP when not.
func TestSyncFromTxnLogBeyondWindow(t *testing.T) {
	for _, tc := range []struct {
		name      string
		readLimit int
		want      string
	}{
		{"log", 1000, "from the txn log ("},
		{"snapshot", 3, "by SNAP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3, Tweak: func(_ int64, cfg *zab.Config) { cfg.CommittedWindow = 5 }}, 13)
			for _, n := range c.Nodes {
				n.LogReadLimit = tc.readLimit
			}
			c.Run(time.Second, 50*time.Millisecond)
			leader := c.Leader()
			behind := leader%3 + 1
			cl := c.Connect(leader, 0, nil, 30000)
			c.Stabilize(1000)
			c.Crash(behind)
			for i := range 20 {
				cl.Send(wire.OpCreate, &wire.CreateRequest{Path: "/n" + strings.Repeat("x", i+1), ACL: wire.OpenACLUnsafe})
				c.Stabilize(1000)
			}
			c.Notices = nil
			c.Restart(behind)
			c.Run(5*time.Second, 50*time.Millisecond)
			notices := strings.Join(c.Notices, "\n")
			require.Contains(t, notices, tc.want, notices)
			require.Equal(t, c.Node(leader).Peer.Digest(), c.Node(behind).Peer.Digest(), c.Status())
		})
	}
}

// TestNewLeaderAckCoversOnlyTheSync: a learner's ACK of NEWLEADER says its
// log holds what came before NEWLEADER, nothing sent after it. A proposal
// the leader made between sending NEWLEADER and receiving its ACK must not
// count that learner among its acknowledgers: here the only other voter is
// cut off, so the proposal may commit (and be answered) only once the
// resynchronized learner ACKs it. Found by the simulator (seed 575 of the
// first ensemble sweep): a reply whose zxid only the leader held durably.
// Reference: Zab.tla's ACK-LD/ACK handling; ZOOKEEPER-4685.
func TestNewLeaderAckCoversOnlyTheSync(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 5)
	c.Run(time.Second, 50*time.Millisecond)
	l := c.Leader()
	require.NotZero(t, l)
	var others []int64
	for _, id := range []int64{1, 2, 3} {
		if id != l {
			others = append(others, id)
		}
	}
	f, g := others[0], others[1]
	cl := c.Connect(l, 0, nil, 30000)
	c.Stabilize(1000)
	cl.Take()

	c.Crash(g)
	c.Restart(g)
	// Deliver everything but the learner's packets to the leader, one of
	// those at a time, until the learner has logged the sync durably:
	// then its NEWLEADER ACK is the next packet on its link to the leader.
	settle := func() {
		for moved := true; moved; {
			moved = false
			for _, a := range []int64{1, 2, 3} {
				for _, b := range []int64{1, 2, 3} {
					if a != b && !(a == g && b == l) && c.Deliver(a, b, false) {
						moved = true
					}
				}
			}
		}
	}
	restarted := len(c.Trace)
	synced := func() bool {
		newLeader := fmt.Sprintf("%d->%d NEWLEADER", l, g)
		return slices.ContainsFunc(c.Trace[restarted:], func(line string) bool { return strings.HasPrefix(line, newLeader) })
	}
	for i := 0; !synced(); i++ {
		require.Less(t, i, 200, "the learner never synchronized:\n%s\n%s", c.Status(), strings.Join(c.Trace, "\n"))
		settle()
		if !synced() && !c.Deliver(g, l, false) {
			c.Advance(10 * time.Millisecond)
		}
	}
	require.Equal(t, l, c.Leader())
	c.Partition([]int64{f}, []int64{l, g})
	// The leader's own fsync of the proposal completes only after the
	// ACK has arrived: then it counts the quorum.
	c.Node(l).Hold = true
	cl.Send(wire.OpCreate, &wire.CreateRequest{Path: "/x", Data: []byte("x"), ACL: wire.OpenACLUnsafe})
	require.True(t, c.Deliver(g, l, false), "the NEWLEADER ACK")
	c.Node(l).Hold = false
	c.Step(c.Node(l), zab.Tick{})
	for _, r := range cl.Take() {
		require.NotContains(t, r, "/x", "answered before any voter but the leader logged it:\n%s", strings.Join(c.Trace, "\n"))
	}
	c.Stabilize(1000)
	replies := cl.Take()
	require.NotEmpty(t, replies, "%s\n%s", c.Status(), strings.Join(c.Trace, "\n"))
	require.Contains(t, replies[len(replies)-1], "ok /x", "committed once the learner ACKs it")
}

// TestStaleAckFromAnEarlierConnectionDoesNotCommit: a follower ACKs a
// proposal, then reconnects; its synchronization cuts the proposal (TRUNC
// to the commit point) and sends it again. Until it ACKs it anew, its old
// ACK must not count: the leader alone holding the txn durably is no
// quorum. (The randomized fault test found this with five members.)
func TestStaleAckFromAnEarlierConnectionDoesNotCommit(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 21)
	c.Run(time.Second, 50*time.Millisecond)
	leader := c.Leader()
	require.NotZero(t, leader)
	a, b := leader%3+1, (leader+1)%3+1
	cl := c.Connect(leader, 0, nil, 30000)
	c.Stabilize(1000)
	c.Hold(b) // b logs /x but never acknowledges it here
	c.Hold(leader)
	cl.Send(wire.OpCreate, &wire.CreateRequest{Path: "/x", ACL: wire.OpenACLUnsafe})
	c.Stabilize(1000) // a logs /x durably and ACKs it; the leader's own log is held

	c.Crash(a)
	c.Hold(a)
	c.Restart(a) // a comes back with /x, is cut back to the commit point, and gets /x again
	c.Stabilize(1000)
	c.Release(leader)
	c.Stabilize(1000)
	_, _, err := c.Node(leader).Peer.Tree().GetData("/x", nil, false, 0)
	require.Equal(t, wire.ErrNoNode, err, "committed with only the leader holding it durably:\n%s", strings.Join(c.Trace, "\n"))

	c.Release(a)
	c.Stabilize(1000)
	_, _, err = c.Node(leader).Peer.Tree().GetData("/x", nil, false, 0)
	require.Equal(t, wire.ErrOK, err, "committed once a quorum holds it:\n%s\n%s", c.Status(), strings.Join(c.Trace[len(c.Trace)-60:], "\n"))
}

// TestLearnerWakeupIsNeverOverdue: a learner neither expires sessions nor
// reaps containers (the leader does), so their deadlines must not set its
// Ready.Wakeup: a session that lives on through the leader has an expiry
// long past in a learner's table, and a wakeup in the past makes a shell
// tick the member in a busy loop. Found by profiling the ensemble
// simulator: its followers were ticked every millisecond.
func TestLearnerWakeupIsNeverOverdue(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 7)
	c.Run(time.Second, 50*time.Millisecond)
	l := c.Leader()
	require.NotZero(t, l)
	cl := c.Connect(l, 0, nil, 4000)
	c.Stabilize(1000)
	for range 40 { // 10 s of pings every 250 ms keep the session alive
		cl.Send(wire.OpExists, &wire.PathWatchRequest{Path: "/"})
		c.Run(250*time.Millisecond, 50*time.Millisecond)
	}
	require.NotEmpty(t, c.Node(l).Peer.SessionTable())
	for _, n := range c.Nodes {
		if n.ID != l {
			require.NotEmpty(t, n.Peer.SessionTable(), "server %d knows the session", n.ID)
			require.Greater(t, n.Wakeup, c.Now.Mono, "server %d asks to be ticked in the past", n.ID)
		}
	}
}

// TestLearnerSyncIsOrderedWithCommits: the leader answers a learner's sync
// (SYNC) right after the COMMIT of the last proposal made before the sync
// arrived, ahead of later COMMITs, as ZooKeeper's Leader.commit sends its
// pending syncs. Sent after a whole batch of commits instead, a write the
// same client pipelined behind its sync was applied while the sync still
// waited, and then answered with the zxid and the result of whatever txn
// was applied last. Found by the ensemble simulator (seed 265: two
// acknowledged writes carrying one zxid).
func TestLearnerSyncIsOrderedWithCommits(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 11)
	c.Run(time.Second, 50*time.Millisecond)
	l := c.Leader()
	require.NotZero(t, l)
	f := int64(1)
	if f == l {
		f = 2
	}
	a := c.Connect(l, 0, nil, 30000)
	b := c.Connect(f, 0, nil, 30000)
	c.Stabilize(1000)
	a.Take()
	b.Take()
	create := func(cl *zabtest.ClusterClient, path string) {
		cl.Send(wire.OpCreate, &wire.CreateRequest{Path: path, Data: []byte("x"), ACL: wire.OpenACLUnsafe})
	}
	// The disks of the leader and the other follower hold everything
	// back: nothing commits until the end, when all of it commits in one
	// batch.
	g := 6 - l - f
	c.Node(l).Hold, c.Node(g).Hold = true, true
	create(a, "/a1")
	c.Stabilize(1000)
	b.Send(wire.OpSync, &wire.PathRequest{Path: "/"})
	create(b, "/b")
	c.Stabilize(1000)
	create(a, "/a2")
	c.Stabilize(1000)
	c.Node(l).Hold = false
	c.Step(c.Node(l), zab.Tick{})
	c.Stabilize(1000)
	replies := b.Take()
	require.Len(t, replies, 2, "%v\n%s", replies, strings.Join(c.Trace, "\n"))
	require.Contains(t, replies[0], "ok /")
	require.Regexp(t, `ok /b$`, replies[1], "the create's own result")
	aReplies := a.Take()
	require.Regexp(t, `ok /a2$`, aReplies[len(aReplies)-1])
	zxidOf := func(r string) string { return strings.Fields(r)[3] }
	require.NotEqual(t, zxidOf(aReplies[len(aReplies)-1]), zxidOf(replies[1]), "two writes answered with one zxid")
}

// TestLeaderIgnoresTheAckAfterUpToDate: a ZooKeeper 3.8 learner ACKs once
// more, with the new epoch's zxid, after UPTODATE (Learner.syncWithLeader),
// and ZooKeeper's leader ignores it (Leader.processAck: a zxid whose counter
// is 0). A zabd leader must too, or ZooKeeper followers lose their
// connection at every synchronization (found with a mixed zabd/ZooKeeper
// ensemble: zab/server/localens TestMixedEnsembleWithZooKeeper).
func TestLeaderIgnoresTheAckAfterUpToDate(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 1)
	c.Run(2*time.Second, 50*time.Millisecond)
	leader := c.Leader()
	require.NotZero(t, leader)
	follower := leader%3 + 1
	epoch := c.Node(leader).Peer.State().Epoch
	c.Step(c.Node(leader), zab.PeerPacket{From: follower, Packet: wire.QuorumPacket{Type: wire.PacketAck, Zxid: epoch << 32}})
	c.Stabilize(1000)
	require.Contains(t, c.Node(leader).Peer.Learners(), zab.LearnerStatus{ID: follower, Phase: zab.PhaseBroadcast, Synced: true},
		"%s", strings.Join(c.Notices, "\n"))
	for _, n := range c.Notices {
		require.NotContains(t, n, fmt.Sprintf("dropping the connection of server %d", follower))
	}
}

// TestLearnerAcksEveryProposal: a follower whose disk made several
// proposals durable at once ACKs each of them, in zxid order, whether or
// not the leader committed them meanwhile with others' ACKs. A ZooKeeper
// 3.8 leader counts an ACK for its own zxid only (Leader.processAck) and
// drops a learner that leaves a proposal unacknowledged for syncLimit
// (SyncLimitCheck): one ACK per batch stalled a ZooKeeper leader's
// proposals and cost zabd followers their connection (found with a mixed
// zabd/ZooKeeper ensemble).
func TestLearnerAcksEveryProposal(t *testing.T) {
	for _, committedMeanwhile := range []bool{false, true} {
		c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 1)
		c.Run(2*time.Second, 50*time.Millisecond)
		leader := c.Leader()
		require.NotZero(t, leader)
		follower, other := leader%3+1, (leader+1)%3+1
		cl := c.Connect(leader, 0, nil, 30000)
		c.Stabilize(1000)
		c.Hold(follower)
		if !committedMeanwhile {
			c.Hold(other) // no quorum without the follower: the proposals wait for its ACKs
		}
		for i := range 3 {
			cl.Send(wire.OpCreate, &wire.CreateRequest{Path: fmt.Sprintf("/n%d", i), ACL: wire.OpenACLUnsafe})
		}
		c.Stabilize(1000)
		mark := len(c.Trace)
		c.Release(follower)
		c.Stabilize(1000)
		var acks []string
		for _, line := range c.Trace[mark:] {
			if strings.HasPrefix(line, fmt.Sprintf("%d->%d ACK ", follower, leader)) {
				acks = append(acks, strings.TrimPrefix(line, fmt.Sprintf("%d->%d ", follower, leader)))
			}
		}
		last := c.Node(leader).Peer.LastZxid()
		require.Equal(t, []string{
			fmt.Sprintf("ACK %#x", last-2), fmt.Sprintf("ACK %#x", last-1), fmt.Sprintf("ACK %#x", last),
		}, acks, "committed meanwhile: %v\n%s", committedMeanwhile, strings.Join(c.Trace[mark:], "\n"))
	}
}

// TestLearnerAnswersNoPingBeforeItsNewLeaderAck: a learner synchronizing
// answers the leader's PINGs only once it has ACKed NEWLEADER. A ZooKeeper
// 3.8 learner ignores PING until UPTODATE (Learner.syncWithLeader has no
// case for it), and a ZooKeeper leader, which pings a learner from the
// moment NEWLEADER is queued, takes the learner's next packet for the
// NEWLEADER ACK and drops it if it is anything else (LearnerHandler: "Next
// packet was supposed to be an ACK"): a zabd follower whose synchronized
// txns took longer than half a tick to become durable — a SNAP — answered
// a PING first and was dropped at every attempt (found with a mixed
// zabd/ZooKeeper ensemble, localens TestMixedSync).
func TestLearnerAnswersNoPingBeforeItsNewLeaderAck(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 1)
	c.Run(2*time.Second, 50*time.Millisecond)
	leader := c.Leader()
	require.NotZero(t, leader)
	follower := leader%3 + 1
	c.Crash(follower)
	cl := c.Connect(leader, 0, nil, 30000)
	for i := range 3 {
		cl.Send(wire.OpCreate, &wire.CreateRequest{Path: fmt.Sprintf("/n%d", i), ACL: wire.OpenACLUnsafe})
	}
	c.Stabilize(1000)
	mark := len(c.Trace)
	c.Restart(follower)
	c.Hold(follower) // its synchronized txns do not become durable: no NEWLEADER ACK yet
	c.Run(time.Second, 50*time.Millisecond)
	c.Release(follower)
	c.Run(time.Second, 50*time.Millisecond)
	epochStart := fmt.Sprintf("%d->%d ACK %#x", follower, leader, c.Node(leader).Peer.State().Epoch<<32)
	pingsToFollower, acked, pingsAfter := 0, false, 0
	for _, line := range c.Trace[mark:] {
		switch {
		case strings.HasPrefix(line, fmt.Sprintf("%d->%d PING", leader, follower)):
			pingsToFollower++
		case strings.HasPrefix(line, epochStart):
			acked = true
		case strings.HasPrefix(line, fmt.Sprintf("%d->%d PING", follower, leader)):
			require.True(t, acked, "a PING reply before the NEWLEADER ACK:\n%s", strings.Join(c.Trace[mark:], "\n"))
			pingsAfter++
		}
	}
	require.True(t, acked, "no NEWLEADER ACK:\n%s", strings.Join(c.Trace[mark:], "\n"))
	require.Positive(t, pingsToFollower, "the leader pinged while the follower synchronized")
	require.Positive(t, pingsAfter, "the follower answers PINGs once it has ACKed NEWLEADER")
}

// TestLeaderDropsALearnerSilentPastSyncLimit: as ZooKeeper's LearnerHandler
// times out its socket read after syncLimit ticks, a leader that keeps its
// quorum closes the connection of a learner it has not heard from for that
// long, so that what the learner sent long ago (a REVALIDATE moving a
// session back to it, a forwarded write of a client that has moved on) is
// never acted on when it finally arrives (simulator seed 68196, where a
// clogged link delivered both 13 s late and a write landed after its
// session's later writes).
func TestLeaderDropsALearnerSilentPastSyncLimit(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 5)
	c.Run(time.Second, 50*time.Millisecond)
	leader := c.Leader()
	require.NotZero(t, leader)
	silent := leader%3 + 1
	var others []int64
	for id := int64(1); id <= 3; id++ {
		if id != silent {
			others = append(others, id)
		}
	}
	c.Partition([]int64{silent}, others)
	c.Run(2*time.Second, 50*time.Millisecond)
	want := fmt.Sprintf("%d: warning: leader: server %d not heard in time", leader, silent)
	require.True(t, slices.ContainsFunc(c.Trace, func(l string) bool { return strings.Contains(l, want) }),
		"%q not in the trace:\n%s", want, strings.Join(c.Trace, "\n"))
	require.Equal(t, leader, c.Leader(), "the leader keeps its quorum and its lead")
}

// TestReelectedLeaderKeepsItsInitialHistoryCommitted: a leader elected
// again in a new epoch, with its whole initial history applied in the
// epoch before, commits that history at establishment. When the learners
// whose NEWLEADER ACKs made the quorum introduce themselves again (a
// reconnect: their acknowledgements are withdrawn), a learner is still
// synchronized by DIFF: the commit point, fallen back to 0, sent it TRUNC
// 0, below committed txns (simulator seed 6597, found by trace
// conformance; scenario leader-keeps-initial-history-committed).
func TestReelectedLeaderKeepsItsInitialHistoryCommitted(t *testing.T) {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	l := serving(t, c)
	a, b := l%3+1, (l+1)%3+1
	cl := session(t, c, l)
	createOK(t, c, cl, "/a")
	createOK(t, c, cl, "/b")
	last := zxidOf(c, l, "/b")

	// The leader loses its followers and looks; they come back, and it
	// leads again, having applied its whole initial history before.
	c.Crash(a)
	c.Crash(b)
	settle(c, 2*time.Second)
	c.Restart(a)
	c.Restart(b)
	require.Equal(t, l, serving(t, c))
	epoch := c.Node(l).Peer.State().Epoch
	require.Greater(t, epoch, int64(1))

	// Both introduce themselves again, as after reconnecting, and b
	// acknowledges the epoch with the history it holds.
	from := len(c.Notices)
	for _, id := range []int64{a, b} {
		c.Inject(id, l, wire.QuorumPacket{Type: wire.PacketFollowerInfo, Zxid: epoch << 32,
			Data: wire.Marshal(&wire.LearnerInfo{ServerID: id, ProtocolVersion: wire.ProtocolVersion})})
	}
	c.Inject(b, l, wire.QuorumPacket{Type: wire.PacketAckEpoch, Zxid: last, Data: wire.Marshal(&wire.AckEpoch{CurrentEpoch: -1})})
	want := fmt.Sprintf("synchronizing server %d by DIFF from %#x", b, last)
	require.True(t, slices.ContainsFunc(c.Notices[from:], func(n string) bool { return strings.Contains(n, want) }),
		"committed txns are never truncated: %s", strings.Join(c.Notices[from:], "\n"))
}
