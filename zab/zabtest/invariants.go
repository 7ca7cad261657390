package zabtest

import (
	"bytes"
	"fmt"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/zab"
)

// Invariants checks Zab's safety properties over what an ensemble's
// members do, observation by observation: the properties of the Zab paper
// (Junqueira, Reed, Serafini, "Zab: High-performance broadcast for
// primary-backup systems", DSN 2011, §III) and the invariants of
// apache/zookeeper's Zab.tla. It knows nothing of how members are run: a
// shell (Cluster, the simulator) reports what each member broadcast,
// logged, delivered and persisted, and each report returns the first
// violation it finds as an error.
//
// The ghost state, as Zab.tla keeps it: every txn broadcast (by zxid, with
// its leader), the established leader of each epoch, and the delivered
// sequence. Delivering is applying to the tree. Since every member's
// delivered txns must be a prefix of every other's (PrefixConsistency),
// they are all kept as one sequence, chain, and each member as its
// position in it; a member that delivers past the end of chain extends it.
type Invariants struct {
	chain []delivery
	pos   map[int64]int // zxid -> index in chain

	broadcasts    map[int64]broadcast // zxid -> what was broadcast with it
	lastBroadcast map[int64]int64     // epoch -> last zxid its leader broadcast
	leaders       map[int64]int64     // epoch -> the member that leads it
	// primaryEpoch is the highest epoch whose leader has broadcast: no txn
	// of an older epoch may be delivered for the first time after that
	// (primary integrity).
	primaryEpoch int64

	members map[int64]*memberView
}

type delivery struct {
	zxid   int64
	entry  []byte // the txn as logged (EncodeTxnEntry)
	digest *int64 // the tree digest after it, once a member reported it
}

type broadcast struct {
	leader int64
	entry  []byte
}

// memberView is what the checker knows of one member.
type memberView struct {
	delivered int   // how many txns of chain it has delivered
	applied   int64 // the zxid of the last one (0 for none)
	accepted  int64
	current   int64
}

// NewInvariants returns a checker that has seen nothing yet.
func NewInvariants() *Invariants {
	return &Invariants{
		pos:           map[int64]int{},
		broadcasts:    map[int64]broadcast{},
		lastBroadcast: map[int64]int64{},
		leaders:       map[int64]int64{},
		members:       map[int64]*memberView{},
	}
}

func (v *Invariants) member(id int64) *memberView {
	m := v.members[id]
	if m == nil {
		m = &memberView{}
		v.members[id] = m
	}
	return m
}

// LeaderOf returns the member that leads epoch, or 0.
func (v *Invariants) LeaderOf(epoch int64) int64 { return v.leaders[epoch] }

// Leading reports that member leads epoch with the epoch acknowledged by a
// quorum (it persisted it as its currentEpoch: synchronization or
// broadcast).
//
// Reference: Zab.tla, Leadership1 and Leadership2 — at most one
// established leader per epoch.
func (v *Invariants) Leading(member, epoch int64) error {
	if l, ok := v.leaders[epoch]; ok && l != member {
		return fmt.Errorf("Leadership: servers %d and %d both lead epoch %d", l, member, epoch)
	}
	v.leaders[epoch] = member
	return nil
}

// Broadcast reports that leader proposed txn in its epoch.
//
// Reference: Zab.tla's proposalMsgsLog; the paper's zxid uniqueness (§IV:
// a leader never proposes two txns with one zxid, and two leaders never
// share an epoch) and local primary order (the leader proposes in zxid
// order, counters of its epoch from 1 without a gap).
func (v *Invariants) Broadcast(leader int64, txn *datatree.Txn) error {
	z := txn.Header.Zxid
	e := epochOf(z)
	if l, ok := v.leaders[e]; !ok || l != leader {
		return fmt.Errorf("Leadership: server %d broadcast %s in epoch %d, which it does not lead (leader %d)", leader, hex(z), e, l)
	}
	entry := zab.EncodeTxnEntry(txn)
	if b, ok := v.broadcasts[z]; ok {
		if b.leader != leader || !bytes.Equal(b.entry, entry) {
			return fmt.Errorf("Integrity: zxid %s broadcast twice with different txns (by servers %d and %d)", hex(z), b.leader, leader)
		}
		return nil
	}
	want := v.lastBroadcast[e] + 1
	if v.lastBroadcast[e] == 0 {
		want = makeZxid(e, 1)
	}
	if z != want {
		return fmt.Errorf("LocalPrimaryOrder: leader %d broadcast %s after %s in epoch %d", leader, hex(z), hex(v.lastBroadcast[e]), e)
	}
	if e > v.primaryEpoch {
		// Primary integrity: before its first broadcast, the leader has
		// delivered every txn of an older epoch that anyone delivered.
		m := v.member(leader)
		for _, d := range v.chain[m.delivered:] {
			if epochOf(d.zxid) < e {
				return fmt.Errorf("PrimaryIntegrity: leader %d of epoch %d broadcasts %s before delivering %s, which another member delivered", leader, e, hex(z), hex(d.zxid))
			}
		}
		v.primaryEpoch = e
	}
	v.broadcasts[z] = broadcast{leader: leader, entry: entry}
	v.lastBroadcast[e] = z
	return nil
}

// Logged reports that a member appended txn to its log (a proposal it
// received, or its synchronization).
//
// Reference: Zab.tla, Integrity (on logs): a member logs only what a
// leader broadcast; two leaders never use one zxid for different txns
// (ZOOKEEPER-335).
func (v *Invariants) Logged(member int64, txn *datatree.Txn) error {
	z := txn.Header.Zxid
	b, ok := v.broadcasts[z]
	if !ok {
		return fmt.Errorf("Integrity: server %d logged %s, which no leader broadcast", member, hex(z))
	}
	if !bytes.Equal(b.entry, zab.EncodeTxnEntry(txn)) {
		return fmt.Errorf("Integrity: server %d logged %s differing from what leader %d broadcast with that zxid", member, hex(z), b.leader)
	}
	return nil
}

// Delivered reports that member applied txn, the next after the last it
// delivered.
//
// Reference: the paper's §III properties, and Zab.tla's Integrity,
// PrefixConsistency, Agreement, TotalOrder, LocalPrimaryOrder,
// GlobalPrimaryOrder and PrimaryIntegrity: all delivered sequences are
// prefixes of one sequence of broadcast txns, in which each epoch's txns
// come in its leader's order and epochs do not go back.
func (v *Invariants) Delivered(member int64, txn *datatree.Txn) error {
	m := v.member(member)
	z := txn.Header.Zxid
	entry := zab.EncodeTxnEntry(txn)
	if m.delivered < len(v.chain) {
		d := v.chain[m.delivered]
		if d.zxid != z || !bytes.Equal(d.entry, entry) {
			return fmt.Errorf("PrefixConsistency/TotalOrder: server %d delivers %s as its txn #%d after %s, where another member delivered %s",
				member, hex(z), m.delivered+1, hex(m.applied), describeChain(d))
		}
		m.delivered++
		m.applied = z
		return nil
	}
	// A txn delivered for the first time.
	b, ok := v.broadcasts[z]
	if !ok || !bytes.Equal(b.entry, entry) {
		return fmt.Errorf("Integrity: server %d delivers %s, which no leader broadcast", member, hex(z))
	}
	// Each epoch's txns are delivered in its leader's order, from its
	// first, and epochs never go back.
	prev := int64(0)
	if n := len(v.chain); n > 0 {
		prev = v.chain[n-1].zxid
	}
	switch {
	case epochOf(z) < epochOf(prev):
		return fmt.Errorf("GlobalPrimaryOrder: server %d delivers %s of epoch %d after %s", member, hex(z), epochOf(z), hex(prev))
	case epochOf(z) == epochOf(prev) && z != prev+1:
		return fmt.Errorf("LocalPrimaryOrder: server %d delivers %s after %s, not its leader's next", member, hex(z), hex(prev))
	case epochOf(z) > epochOf(prev) && counterOf(z) != 1:
		return fmt.Errorf("LocalPrimaryOrder: server %d delivers %s without its leader's earlier txns of epoch %d", member, hex(z), epochOf(z))
	}
	if epochOf(z) < v.primaryEpoch {
		return fmt.Errorf("PrimaryIntegrity: server %d delivers %s of epoch %d after the leader of epoch %d began broadcasting without it", member, hex(z), epochOf(z), v.primaryEpoch)
	}
	v.pos[z] = len(v.chain)
	v.chain = append(v.chain, delivery{zxid: z, entry: entry})
	m.delivered++
	m.applied = z
	return nil
}

// Installed reports that member's tree was replaced by a snapshot whose
// last txn is zxid (a SNAP from the leader, or its own snapshot at a
// restart): it has delivered exactly the txns up to zxid.
//
// Reference: Zab.tla, PrefixConsistency: a snapshot holds a prefix of the
// delivered sequence.
func (v *Invariants) Installed(member, zxid int64) error {
	m := v.member(member)
	if zxid == 0 {
		m.delivered, m.applied = 0, 0
		return nil
	}
	i, ok := v.pos[zxid]
	if !ok {
		return fmt.Errorf("PrefixConsistency: server %d installs a tree at %s, a txn no member delivered", member, hex(zxid))
	}
	m.delivered, m.applied = i+1, zxid
	return nil
}

// Digest reports member's tree digest after its last delivered txn: it
// must be the digest every other member had there, and what the txn
// itself records (the leader's digest after it).
//
// Reference: the paper's §III, primary backup: every member's state is the
// same function of the same delivered prefix.
func (v *Invariants) Digest(member int64, digest int64, last *datatree.Txn) error {
	m := v.member(member)
	if m.delivered == 0 {
		return nil
	}
	d := &v.chain[m.delivered-1]
	if d.digest == nil {
		d.digest = &digest
	} else if *d.digest != digest {
		return fmt.Errorf("PrefixConsistency: server %d's tree digest after %s is %#x; another member's was %#x", member, hex(d.zxid), digest, *d.digest)
	}
	if last != nil && last.Header.Zxid == d.zxid && last.Digest.Version != 0 && last.Digest.TreeDigest != digest {
		return fmt.Errorf("PrefixConsistency: server %d's tree digest after %s is %#x, but the txn records %#x", member, hex(d.zxid), digest, last.Digest.TreeDigest)
	}
	return nil
}

// Epochs reports member's persisted acceptedEpoch and currentEpoch.
//
// Reference: the paper's §IV-A (Phase 1: a follower accepts a new epoch
// only if it is above its acceptedEpoch) and Zab.tla's acceptedEpoch ≥
// currentEpoch; both only grow, across restarts too.
func (v *Invariants) Epochs(member, accepted, current int64) error {
	m := v.member(member)
	switch {
	case accepted < current:
		return fmt.Errorf("epochs: server %d has acceptedEpoch %d below currentEpoch %d", member, accepted, current)
	case accepted < m.accepted:
		return fmt.Errorf("epochs: server %d's acceptedEpoch went back from %d to %d", member, m.accepted, accepted)
	case current < m.current:
		return fmt.Errorf("epochs: server %d's currentEpoch went back from %d to %d", member, m.current, current)
	}
	m.accepted, m.current = accepted, current
	return nil
}

// IsDelivered reports whether some member has delivered zxid.
func (v *Invariants) IsDelivered(zxid int64) bool {
	_, ok := v.pos[zxid]
	return ok
}

// DeliveredZxids returns the zxids member has delivered, in order.
func (v *Invariants) DeliveredZxids(member int64) []int64 {
	m := v.member(member)
	out := make([]int64, m.delivered)
	for i := range out {
		out[i] = v.chain[i].zxid
	}
	return out
}

// Applied returns the zxid of the last txn member delivered.
func (v *Invariants) Applied(member int64) int64 { return v.member(member).applied }

func describeChain(d delivery) string {
	t, err := zab.DecodeTxnEntry(d.entry)
	if err != nil {
		return hex(d.zxid)
	}
	return hex(d.zxid) + " " + describeTxn(&t)
}

func epochOf(zxid int64) int64      { return zxid >> 32 }
func counterOf(zxid int64) int64    { return zxid & 0xffffffff }
func makeZxid(epoch, c int64) int64 { return epoch<<32 | c }
