package zab_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// checkedCluster starts an ensemble whose invariants (package zab/invariant)
// are checked after every step.
func checkedCluster(t *testing.T, cc zabtest.ClusterConfig) *zabtest.Cluster {
	c := zabtest.NewCluster(t, cc, 1)
	c.CheckInvariants()
	return c
}

// settle runs the ensemble for d of virtual time, everything delivered.
func settle(c *zabtest.Cluster, d time.Duration) { c.Run(d, 50*time.Millisecond) }

// serving runs the ensemble until a leader is established and every
// running member serves under it, and returns the leader.
func serving(t *testing.T, c *zabtest.Cluster) int64 {
	t.Helper()
	for range 200 {
		settle(c, 100*time.Millisecond)
		if l := c.Leader(); l != 0 && allServe(c, l) {
			return l
		}
	}
	t.Fatalf("no leader served by every running member\n%s", c.Status())
	return 0
}

func allServe(c *zabtest.Cluster, leader int64) bool {
	for _, n := range c.Nodes {
		if n.Peer == nil {
			continue
		}
		if s := n.Peer.State(); s.Phase != zab.PhaseBroadcast || s.Leader != leader {
			return false
		}
	}
	return true
}

// drain delivers everything in flight from one member to another.
func drain(c *zabtest.Cluster, from, to int64) {
	for c.Deliver(from, to, false) {
	}
}

// session connects a client to member id and waits for its session.
func session(t *testing.T, c *zabtest.Cluster, id int64) *zabtest.ClusterClient {
	t.Helper()
	cl := c.Connect(id, 0, nil, 30000)
	c.Stabilize(10000)
	for _, m := range cl.TakeMessages() {
		if r, ok := m.Body.(*wire.ConnectResponse); ok && r.TimeOut > 0 {
			return cl
		}
	}
	t.Fatalf("no session from server %d\n%s", id, c.Status())
	return nil
}

// create sends a create of path (its data is the path) and returns its
// xid; the caller delivers what follows.
func create(cl *zabtest.ClusterClient, path string) int32 {
	return cl.Send(wire.OpCreate, &wire.CreateRequest{Path: path, Data: []byte(path), ACL: wire.OpenACLUnsafe})
}

// createOK creates path through cl, delivers everything, and requires the
// create to have succeeded.
func createOK(t *testing.T, c *zabtest.Cluster, cl *zabtest.ClusterClient, path string) {
	t.Helper()
	xid := create(cl, path)
	c.Stabilize(10000)
	for _, m := range cl.TakeMessages() {
		if m.Kind == zab.Reply && m.Header.Xid == xid {
			require.Equal(t, wire.ErrOK, m.Header.Err, "create %s", path)
			return
		}
	}
	t.Fatalf("create %s through server %d was not answered\n%s", path, cl.Node.ID, c.Status())
}

// has reports whether member id's tree holds path.
func has(c *zabtest.Cluster, id int64, path string) bool {
	_, err := c.Node(id).Peer.Tree().Exists(path, false, 0)
	return err == wire.ErrOK
}

// requireEverywhere requires every running member to hold every path,
// with one tree digest among them.
func requireEverywhere(t *testing.T, c *zabtest.Cluster, paths ...string) {
	t.Helper()
	var digest int64
	for i, n := range c.Nodes {
		if n.Peer == nil {
			continue
		}
		for _, p := range paths {
			require.True(t, has(c, n.ID, p), "server %d lacks %s\n%s", n.ID, p, c.Status())
		}
		if i == 0 || digest == 0 {
			digest = n.Peer.Digest()
		}
		require.Equal(t, digest, n.Peer.Digest(), "server %d's tree differs\n%s", n.ID, c.Status())
	}
}

// zxidOf returns the zxid of the txn creating path in member id's log, or 0.
func zxidOf(c *zabtest.Cluster, id int64, path string) int64 {
	for _, t := range c.Node(id).Log {
		if b, ok := t.Body.(*wire.CreateTxn); ok && b.Path == path {
			return t.Header.Zxid
		}
	}
	return 0
}

// sent reports whether the trace shows a line with every part, after
// index from.
func sent(c *zabtest.Cluster, from int, parts ...string) bool {
	for _, l := range c.Trace[from:] {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// fingerprint is everything a cluster run produced: its trace, the
// members' notices, their disks and what their clients were sent.
func fingerprint(c *zabtest.Cluster) []byte {
	var b bytes.Buffer
	b.WriteString(strings.Join(c.Trace, "\n"))
	b.WriteString(strings.Join(c.Notices, "\n"))
	b.WriteString(c.Status())
	for _, n := range c.Nodes {
		fmt.Fprintf(&b, "server %d: epochs %d/%d durable %x\n", n.ID, n.Accepted, n.Current, n.Durable)
		for i := range n.Log {
			b.Write(zab.EncodeTxnEntry(&n.Log[i]))
		}
		for _, s := range n.Snapshots {
			b.Write(s.Tree)
		}
		for i := range n.Replies {
			b.WriteString(zabtest.Format(&n.Replies[i]))
		}
	}
	return b.Bytes()
}
