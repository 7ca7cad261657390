package zabtest

import (
	"strings"

	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/invariant"
)

// CheckInvariants makes the cluster check Zab's invariants (package
// zab/invariant) after every Ready of every member from now on, and fail
// the test at the first violation with the members' status and the end of
// the trace. Attach it before anything happens: it must see every txn
// delivered. Calling it again returns the same checker.
func (c *Cluster) CheckInvariants() *invariant.Checker {
	if c.inv != nil {
		return c.inv
	}
	var voters []int64
	cfg := invariant.Config{}
	for _, n := range c.Nodes {
		cfg.Members = append(cfg.Members, n.ID)
		if !n.Observer {
			voters = append(voters, n.ID)
		}
	}
	q, err := election.NewMajority(voters)
	if err != nil {
		c.t.Fatalf("zabtest: %v", err)
	}
	cfg.Quorum = q
	c.inv = invariant.New(cfg, clusterShell{c})
	return c.inv
}

// clusterShell shows the invariant checker the cluster's members.
type clusterShell struct{ c *Cluster }

// Observe reads member id off its Peer and its in-memory disk.
func (s clusterShell) Observe(id int64, m *invariant.Member) {
	n := s.c.Node(id)
	if n == nil {
		return
	}
	if p := n.Peer; p != nil {
		m.Up = true
		m.State = p.State()
		m.Accepted, m.Current = p.Epochs()
		m.Applied, m.Digest = p.LastZxid(), p.Digest()
		m.FuzzyUntil = n.fuzzyUntil
	}
	m.DiskAccepted, m.DiskCurrent = n.Accepted, n.Current
	m.Log = make([]int64, len(n.Log)) // fresh: the checker may observe another member while it reads this one's
	for i := range n.Log {
		t := &n.Log[i]
		m.Log[i] = t.Header.Zxid
		if n.Peer != nil && t.Header.Zxid == m.Applied && t.Digest.Version != 0 {
			m.TxnDigest, m.HasTxnDigest = t.Digest.TreeDigest, true
		}
	}
	m.Durable = n.Durable
	m.Damaged = n.damage != nil
	if k := len(n.Snapshots); k > 0 {
		m.Snapshot = n.Snapshots[k-1].Zxid
	}
}

// checked fails the test on a violation.
func (c *Cluster) checked(n *Node, v *invariant.Violation) {
	if v == nil {
		return
	}
	c.t.Helper()
	tail := c.Trace
	if len(tail) > 60 {
		tail = tail[len(tail)-60:]
	}
	c.t.Fatalf("zabtest: server %d: %v\n%s\nlast trace lines:\n%s", n.ID, v, c.Status(), strings.Join(tail, "\n"))
}

// invStarted tells the checker that n recovered from its disk; a tree
// loaded from a fuzzy snapshot reaches the others' digests only once it
// has applied the last txn the snapshot may hold.
func (c *Cluster) invStarted(n *Node) {
	n.fuzzyUntil = 0
	if k := len(n.Snapshots); k > 0 && n.Snapshots[k-1].Digest.Zxid > n.Peer.LastZxid() {
		n.fuzzyUntil = n.Snapshots[k-1].Digest.Zxid
	}
	if c.inv != nil {
		c.checked(n, c.inv.Started(n.ID))
	}
}

// invAppended tells the checker of each append of a Ready.
func (c *Cluster) invAppended(n *Node, rd *zab.Ready) {
	if c.inv == nil {
		return
	}
	for i := range rd.Appends {
		t := &rd.Appends[i]
		c.checked(n, c.inv.Appended(n.ID, t.Header.Zxid, invariant.EntryHash(zab.EncodeTxnEntry(t))))
	}
}

// invStepped tells the checker that n carried out a Ready's disk work,
// then checks the zxid of every reply it sends.
func (c *Cluster) invStepped(n *Node, rd *zab.Ready) {
	if c.inv == nil {
		return
	}
	for i := range rd.Messages {
		if rd.Messages[i].Kind == zab.Reply {
			c.checked(n, c.inv.Answering(n.ID))
			break
		}
	}
	c.checked(n, c.inv.Stepped(n.ID))
	for i := range rd.Messages {
		if m := &rd.Messages[i]; m.Kind == zab.Reply {
			c.checked(n, c.inv.Replied(n.ID, m.Header.Zxid))
		}
	}
	for i := range rd.PeerMessages {
		c.checked(n, c.inv.Sent(n.ID, &rd.PeerMessages[i]))
	}
}

// invReceived tells the checker that n is about to take qp from member
// from.
func (c *Cluster) invReceived(n *Node, from int64, qp *wire.QuorumPacket) {
	if c.inv != nil {
		c.inv.Received(n.ID, from, qp)
	}
}
