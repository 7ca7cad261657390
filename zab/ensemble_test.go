package zab_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
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
