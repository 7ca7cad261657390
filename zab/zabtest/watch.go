package zabtest

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/zab"
)

// CheckInvariants makes the cluster check Zab's invariants (Invariants)
// after every step of every member from now on, and fail the test at the
// first violation with the members' status and the end of the trace.
// Attach it before anything happens: it must see every txn delivered.
func (c *Cluster) CheckInvariants() *Invariants {
	w := &invariantWatch{c: c, v: NewInvariants(), applied: map[int64]int64{}, digestFrom: map[int64]int64{}}
	c.Observe(w)
	return w.v
}

// invariantWatch feeds a Cluster's members' effects to an Invariants.
type invariantWatch struct {
	c *Cluster
	v *Invariants
	// applied is the zxid each member's tree was at when last seen.
	applied map[int64]int64
	// digestFrom: a member restarted from a fuzzy snapshot reaches the
	// digests of the others only once it has applied the last txn the
	// snapshot may hold.
	digestFrom map[int64]int64
}

func (w *invariantWatch) fail(n *Node, err error) {
	w.c.t.Helper()
	tail := w.c.Trace
	if len(tail) > 60 {
		tail = tail[len(tail)-60:]
	}
	w.c.t.Fatalf("zabtest: server %d: %v\n%s\nlast trace lines:\n%s", n.ID, err, w.c.Status(), strings.Join(tail, "\n"))
}

func (w *invariantWatch) Started(n *Node) {
	last := n.Peer.LastZxid()
	w.applied[n.ID] = last
	w.digestFrom[n.ID] = 0
	if k := len(n.Snapshots); k > 0 && n.Snapshots[k-1].Digest.Zxid > last {
		w.digestFrom[n.ID] = n.Snapshots[k-1].Digest.Zxid
	}
	if err := w.v.Installed(n.ID, last); err != nil {
		w.fail(n, fmt.Errorf("restarting: %w", err))
	}
	w.checkDigest(n, nil)
}

func (w *invariantWatch) Ready(n *Node, rd *zab.Ready) {
	log := n.Log
	if rd.Truncate != nil {
		z := *rd.Truncate
		log = nil
		for _, t := range n.Log {
			if t.Header.Zxid <= z {
				log = append(log, t)
			}
		}
	}
	w.observeApplied(n, log, rd.Appends)
	st := w.observeRole(n)
	for i := range rd.Appends {
		t := &rd.Appends[i]
		e := epochOf(t.Header.Zxid)
		var err error
		if st.Role == zab.RoleLeading && st.Epoch == e || w.v.LeaderOf(e) == n.ID {
			err = w.v.Broadcast(n.ID, t)
		} else {
			err = w.v.Logged(n.ID, t)
		}
		if err != nil {
			w.fail(n, err)
		}
	}
}

func (w *invariantWatch) Settled(n *Node) {
	w.observeApplied(n, n.Log, nil)
	w.observeRole(n)
	if err := w.v.Epochs(n.ID, n.Accepted, n.Current); err != nil {
		w.fail(n, err)
	}
	if acc, cur := n.Peer.Epochs(); acc != n.Accepted || cur != n.Current {
		w.fail(n, fmt.Errorf("durability: the member works with epochs %d/%d, its disk holds %d/%d", acc, cur, n.Accepted, n.Current))
	}
}

// observeRole records an established leader.
func (w *invariantWatch) observeRole(n *Node) zab.SoftState {
	st := n.Peer.State()
	if st.Role == zab.RoleLeading && (st.Phase == zab.PhaseSync || st.Phase == zab.PhaseBroadcast) {
		if err := w.v.Leading(n.ID, st.Epoch); err != nil {
			w.fail(n, err)
		}
	}
	return st
}

// observeApplied reports what the member applied since it was last seen:
// the txns of its log (and of the Ready being carried out) up to its
// tree's zxid, or, when its log does not hold them, a snapshot installed.
func (w *invariantWatch) observeApplied(n *Node, log, appends []datatree.Txn) {
	last, prev := n.Peer.LastZxid(), w.applied[n.ID]
	if last < prev {
		w.fail(n, fmt.Errorf("its tree went back from %s to %s", hex(prev), hex(last)))
	}
	var lastTxn *datatree.Txn
	if last > prev {
		var txns []*datatree.Txn
		for _, l := range [][]datatree.Txn{log, appends} {
			for i := range l {
				if z := l[i].Header.Zxid; z > prev && z <= last {
					txns = append(txns, &l[i])
				}
			}
		}
		if k := len(txns); k > 0 && txns[k-1].Header.Zxid == last {
			for _, t := range txns {
				if !w.v.IsDelivered(t.Header.Zxid) {
					w.checkQuorumHolds(n, t)
				}
				if err := w.v.Delivered(n.ID, t); err != nil {
					w.fail(n, err)
				}
			}
			lastTxn = txns[k-1]
		} else if err := w.v.Installed(n.ID, last); err != nil {
			w.fail(n, err)
		}
		w.applied[n.ID] = last
	}
	if last > prev || lastTxn != nil {
		w.checkDigest(n, lastTxn)
	}
}

func (w *invariantWatch) checkDigest(n *Node, last *datatree.Txn) {
	if n.Peer.LastZxid() < w.digestFrom[n.ID] {
		return
	}
	if err := w.v.Digest(n.ID, n.Peer.Digest(), last); err != nil {
		w.fail(n, err)
	}
}

// checkQuorumHolds: a txn delivered for the first time is committed, so a
// quorum of voters holds it durably, in its log or in a durable snapshot.
//
// Reference: the paper's §IV-C (Phase 3: the leader commits a proposal
// once a quorum acknowledged it; a follower acknowledges a proposal only
// once it is on stable storage).
func (w *invariantWatch) checkQuorumHolds(n *Node, t *datatree.Txn) {
	z := t.Header.Zxid
	entry := zab.EncodeTxnEntry(t)
	var holders []int64
	voters := 0
	for _, m := range w.c.Nodes {
		if m.Observer {
			continue
		}
		voters++
		if k := len(m.Snapshots); k > 0 && m.Snapshots[k-1].Zxid >= z {
			holders = append(holders, m.ID)
			continue
		}
		if m.Durable < z {
			continue
		}
		for i := range m.Log {
			if m.Log[i].Header.Zxid == z {
				if bytes.Equal(zab.EncodeTxnEntry(&m.Log[i]), entry) {
					holders = append(holders, m.ID)
				}
				break
			}
		}
	}
	if 2*len(holders) <= voters {
		w.fail(n, fmt.Errorf("durability: %s is delivered while only %v of %d voters hold it durably", hex(z), holders, voters))
	}
}
