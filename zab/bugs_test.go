package zab_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// Each deliberate bug must actually break its promise, or the simulator's
// tests that rely on it would prove nothing.

func TestBugReplyBeforeDurable(t *testing.T) {
	h := zabtest.New(t, zab.Config{ServerID: 1, Bugs: zab.Bugs{ReplyBeforeDurable: true}}, 1)
	a := h.Session(10000)
	h.Hold()
	a.Create("/x", "", wire.ModePersistent)
	h.Expect("c1 reply xid=1 zxid=0x2 ok /x")
	require.Equal(t, []int64{2}, h.Pending(), "answered while not durable")
}

func TestBugEventAfterReply(t *testing.T) {
	h := zabtest.New(t, zab.Config{ServerID: 1, Bugs: zab.Bugs{EventAfterReply: true}}, 1)
	a := h.Session(10000)
	a.Create("/n", "", wire.ModePersistent)
	a.GetData("/n", true)
	h.Take()
	a.SetData("/n", "x", -1)
	h.Expect(
		"c1 reply xid=3 zxid=0x3 ok {c=0x2 m=0x3 p=0x2 v=1 cv=0 eph=0x0 n=0}",
		"c1 event NodeDataChanged /n",
	)
}

func TestBugExpireWithoutTxn(t *testing.T) {
	h := zabtest.New(t, zab.Config{ServerID: 1, Bugs: zab.Bugs{ExpireWithoutTxn: true}}, 1)
	e := h.Session(4000)
	w := h.Session(30000)
	e.Create("/eph", "", wire.ModeEphemeral)
	h.Take()
	for range 4 {
		h.Advance(2 * time.Second)
		w.Ping()
	}
	w.Exists("/eph", false)
	got := h.Take()
	require.Contains(t, got, "c1 close")
	require.Contains(t, got[len(got)-1], " ok ", "the ephemeral outlived its session")
	require.Len(t, h.Peer.SessionTable(), 1)
}

func TestBugReadOvertakesWrite(t *testing.T) {
	h := zabtest.New(t, zab.Config{ServerID: 1, Bugs: zab.Bugs{ReadOvertakesWrite: true}}, 1)
	a := h.Session(10000)
	h.Hold()
	a.Create("/x", "", wire.ModePersistent)
	a.Exists("/x", false)
	h.Expect("c1 reply xid=2 zxid=0x1 NoNode")
}

// TestBugReplyBeforeDurableWithHeldRequests: requests pipelined behind a
// connect are submitted while the createSession txn is being applied; with
// commits happening at once, each txn must still be applied exactly once.
func TestBugReplyBeforeDurableWithHeldRequests(t *testing.T) {
	h := zabtest.New(t, zab.Config{ServerID: 1, Bugs: zab.Bugs{ReplyBeforeDurable: true}}, 1)
	h.Hold()
	c := h.Open()
	c.Connect(10000, 0)
	c.Create("/a", "", wire.ModePersistent)
	c.Create("/b", "", wire.ModePersistent)
	got := h.Take()
	require.Len(t, got, 3)
	require.Equal(t, []string{"c1 reply xid=1 zxid=0x2 ok /a", "c1 reply xid=2 zxid=0x3 ok /b"}, got[1:])
	require.Equal(t, int64(3), h.Peer.LastZxid())
}

// bugCluster is a three-voter cluster with bugs switched on in every
// member (no invariant checks: the bug is meant to break them).
func bugCluster(t *testing.T, bugs zab.Bugs) *zabtest.Cluster {
	return zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3, Tweak: func(_ int64, cfg *zab.Config) { cfg.Bugs = bugs }}, 1)
}

func TestBugDiffInsteadOfTrunc(t *testing.T) {
	// TestZK1154_TruncNotDiffAfterWholeEnsembleRestart's steps.
	c := bugCluster(t, zab.Bugs{DiffInsteadOfTrunc: true})
	firstLeader(t, c)
	cl := session(t, c, 3)
	createOK(t, c, cl, "/a")
	create(cl, "/uncommitted") // logged by the leader only
	for _, id := range []int64{1, 2, 3} {
		c.Crash(id)
	}
	c.Restart(1)
	c.Restart(2)
	serving(t, c)
	createOK(t, c, session(t, c, 2), "/b")
	mark := len(c.Trace)
	c.Restart(3)
	serving(t, c)
	require.True(t, sent(c, mark, "->3 DIFF"), "synchronized by DIFF")
	require.False(t, sent(c, mark, "->3 TRUNC"))
	require.True(t, has(c, 3, "/uncommitted"), "the old leader kept a txn that was never committed")
}

func TestBugEpochNotPersisted(t *testing.T) {
	c := bugCluster(t, zab.Bugs{EpochNotPersisted: true})
	firstLeader(t, c)
	for _, n := range c.Nodes {
		acc, cur := n.Peer.Epochs()
		require.Positive(t, acc, "server %d accepted an epoch", n.ID)
		require.Positive(t, cur, "server %d joined an epoch", n.ID)
		require.Zero(t, n.Accepted, "server %d's acceptedEpoch file was written", n.ID)
		require.Zero(t, n.Current, "server %d's currentEpoch file was written", n.ID)
	}
}

func TestBugAckNewLeaderBeforeDurable(t *testing.T) {
	// TestZK3911_SyncedTxnsDurableBeforeNewLeaderAck's steps.
	c := bugCluster(t, zab.Bugs{AckNewLeaderBeforeDurable: true})
	laggard(t, c)
	c.Node(2).Hold = true
	mark := len(c.Trace)
	c.Restart(2)
	settle(c, 300*time.Millisecond)
	require.True(t, sent(c, mark, "3->2 DIFF"))
	require.True(t, sent(c, mark, "2->3 ACK 0x"), "NEWLEADER ACKed with the synced txns not durable")
	require.Less(t, c.Node(2).Durable, zxidOf(c, 3, "/b"))
}
