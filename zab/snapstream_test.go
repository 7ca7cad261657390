package zab_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// TestSnapStreamsWhileTheLeaderServes: a leader sends a learner its tree by
// SNAP two znodes a step, and commits and answers writes between the
// steps; the stream is fuzzy (the learner's snapshot of the tree it
// installed is not the leader's tree at the SNAP's zxid), and yet the
// learner ends with exactly the leader's tree, digest included, once the
// txns after the SNAP's zxid have applied again. For a follower and for an
// observer (which is sent committed txns only).
func TestSnapStreamsWhileTheLeaderServes(t *testing.T) {
	for _, observer := range []bool{false, true} {
		t.Run(map[bool]string{false: "follower", true: "observer"}[observer], func(t *testing.T) {
			cc := zabtest.ClusterConfig{Voters: 3, Tweak: func(_ int64, cfg *zab.Config) {
				cfg.CommittedWindow = 5
				cfg.SnapshotStepNodes = 2
			}}
			if observer {
				cc.Observers = 1
			}
			c := zabtest.NewCluster(t, cc, 21)
			for _, n := range c.Nodes {
				n.LogReadLimit = 1 // never worth sending from the log: SNAP
			}
			c.Run(time.Second, 50*time.Millisecond)
			leader := c.Leader()
			require.NotZero(t, leader, c.Status())
			behind := leader%3 + 1
			if observer {
				behind = 4
			}
			cl := c.Connect(leader, 0, nil, 30000)
			c.Stabilize(1000)
			const nodes = 60
			path := func(i int) string { return fmt.Sprintf("/n%02d", i) }
			for i := range nodes {
				cl.Send(wire.OpCreate, &wire.CreateRequest{Path: path(i), Data: []byte("v0"), ACL: wire.OpenACLUnsafe})
				c.Stabilize(1000)
			}
			c.Crash(behind)
			for i := range 10 {
				cl.Send(wire.OpSetData, &wire.SetDataRequest{Path: path(i), Data: []byte("v1"), Version: -1})
				c.Stabilize(1000)
			}
			cl.Take()
			c.Notices = nil
			c.Restart(behind)
			var snapZxid int64
			for i := 0; snapZxid == 0; i++ {
				require.Less(t, i, 5000, "no SNAP began:\n%s", strings.Join(c.Notices, "\n"))
				c.Stabilize(100000)
				c.Advance(time.Millisecond)
				for _, n := range c.Notices {
					if _, rest, ok := strings.Cut(n, fmt.Sprintf("synchronizing server %d by SNAP from ", behind)); ok {
						_, err := fmt.Sscanf(rest, "0x%x", &snapZxid)
						require.NoError(t, err, n)
					}
				}
			}
			// Write while the stream goes out: each write's request and
			// ACKs step the leader, and each Ready takes a step.
			sent := fmt.Sprintf("%d: send to %d: SNAP", leader, behind)
			streamed := func() bool {
				return slices.ContainsFunc(c.Trace, func(l string) bool { return strings.HasPrefix(l, sent) })
			}
			answered := 0
			for i := nodes - 1; !streamed(); i-- {
				require.Greater(t, i, 0, "the SNAP never ended")
				if i%3 == 0 {
					cl.Send(wire.OpDelete, &wire.PathVersionRequest{Path: path(i), Version: -1})
				} else {
					cl.Send(wire.OpSetData, &wire.SetDataRequest{Path: path(i), Data: []byte("v2"), Version: -1})
				}
				cl.Send(wire.OpCreate, &wire.CreateRequest{Path: fmt.Sprintf("/new%02d", i), ACL: wire.OpenACLUnsafe})
				c.Stabilize(100000)
				if !streamed() {
					answered += len(cl.Take())
				}
			}
			require.GreaterOrEqual(t, answered, 6, "the leader answered writes while the SNAP streamed")

			c.Run(5*time.Second, 50*time.Millisecond)
			notices := strings.Join(c.Notices, "\n")
			require.Equal(t, 1, strings.Count(notices, fmt.Sprintf("synchronizing server %d by", behind)), "one synchronization did it:\n%s", notices)
			require.NotContains(t, notices, "leaving leader")
			l, b := c.Node(leader), c.Node(behind)
			st := b.Peer.State()
			require.Equal(t, zab.SoftState{Role: map[bool]zab.Role{false: zab.RoleFollowing, true: zab.RoleObserving}[observer], Phase: zab.PhaseBroadcast, Leader: leader, Epoch: l.Peer.State().Epoch, Elections: st.Elections},
				st, c.Status())
			require.Equal(t, l.Peer.LastZxid(), b.Peer.LastZxid(), c.Status())
			require.Equal(t, l.Peer.Digest(), b.Peer.Digest(), "the learner ends with the leader's tree")
			for i := range nodes {
				lv, _, lerr := l.Peer.Tree().GetData(path(i), nil, false, 0)
				bv, _, berr := b.Peer.Tree().GetData(path(i), nil, false, 0)
				require.Equal(t, lerr, berr, path(i))
				require.Equal(t, string(lv), string(bv), path(i))
			}
			zabtest.RequireAgreement(t, c)

			// The snapshot the learner wrote of the tree it installed is
			// named after the SNAP's zxid but holds later txns: its digest
			// is not the one the leader's tree had at that zxid.
			i := slices.IndexFunc(b.Snapshots, func(s zabtest.Snapshot) bool { return s.Zxid == snapZxid })
			require.GreaterOrEqual(t, i, 0, "the learner wrote a snapshot of the installed tree at %#x", snapZxid)
			j := slices.IndexFunc(l.Log, func(t datatree.Txn) bool { return t.Header.Zxid == snapZxid })
			require.GreaterOrEqual(t, j, 0)
			require.NotEqual(t, l.Log[j].Digest.TreeDigest, b.Snapshots[i].Digest.Digest, "the SNAP was fuzzy")
		})
	}
}

// TestSnapStreamCutShort: a learner that crashes while its SNAP streams
// loses the stream with its connection; the leader drops it (and the
// stream) and goes on serving, and the learner, restarted, is synchronized
// afresh and ends with the leader's tree.
func TestSnapStreamCutShort(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3, Tweak: func(_ int64, cfg *zab.Config) {
		cfg.CommittedWindow = 5
		cfg.SnapshotStepNodes = 1
	}}, 8)
	for _, n := range c.Nodes {
		n.LogReadLimit = 1
	}
	c.Run(time.Second, 50*time.Millisecond)
	leader := c.Leader()
	require.NotZero(t, leader, c.Status())
	behind := leader%3 + 1
	cl := c.Connect(leader, 0, nil, 30000)
	c.Stabilize(1000)
	for i := range 40 {
		cl.Send(wire.OpCreate, &wire.CreateRequest{Path: fmt.Sprintf("/n%02d", i), ACL: wire.OpenACLUnsafe})
		c.Stabilize(1000)
	}
	c.Crash(behind)
	for i := range 10 {
		cl.Send(wire.OpSetData, &wire.SetDataRequest{Path: fmt.Sprintf("/n%02d", i), Data: []byte("x"), Version: -1})
		c.Stabilize(1000)
	}
	c.Notices = nil
	c.Restart(behind)
	began := fmt.Sprintf("synchronizing server %d by SNAP", behind)
	for i := 0; !slices.ContainsFunc(c.Notices, func(n string) bool { return strings.Contains(n, began) }); i++ {
		require.Less(t, i, 5000, "no SNAP began")
		c.Stabilize(100000)
		c.Advance(time.Millisecond)
	}
	c.Advance(time.Millisecond) // a step or two of the stream
	require.False(t, slices.ContainsFunc(c.Trace, func(l string) bool { return strings.Contains(l, fmt.Sprintf("send to %d: SNAP", behind)) }),
		"the stream of 40 znodes one a step has not ended yet")
	c.Crash(behind)
	cl.Take()
	cl.Send(wire.OpSetData, &wire.SetDataRequest{Path: "/n39", Data: []byte("after"), Version: -1})
	c.Stabilize(100000)
	require.Len(t, cl.Take(), 1, "the leader goes on serving")
	c.Restart(behind)
	c.Run(5*time.Second, 50*time.Millisecond)
	notices := strings.Join(c.Notices, "\n")
	require.Equal(t, 2, strings.Count(notices, began), notices)
	l, b := c.Node(leader), c.Node(behind)
	require.Equal(t, zab.PhaseBroadcast, b.Peer.State().Phase, c.Status())
	require.Equal(t, l.Peer.LastZxid(), b.Peer.LastZxid(), c.Status())
	require.Equal(t, l.Peer.Digest(), b.Peer.Digest(), "the learner ends with the leader's tree")
}
