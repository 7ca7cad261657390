// Package invariant checks Zab's safety properties over what the members of
// an ensemble do, step by step: the properties of the Zab paper (Junqueira,
// Reed, Serafini, "Zab: High-performance broadcast for primary-backup
// systems", DSN 2011, §III), the invariants of apache/zookeeper's Zab.tla
// (zookeeper-specifications/protocol-spec), and the rules of epochs,
// digests and durability that keep them true across crashes.
//
// It knows nothing of how members are run. A shell — zabtest's in-memory
// Cluster, the simulator — tells a Checker when something happened to a
// member (Started, Appended, Installed, Stepped, Replied), and the Checker
// reads what it needs off the shell's members through Shell.Observe: role,
// epochs, tree, log and what of it is durable. Each call returns the first
// violation it finds, naming the invariant, the members and the zxids.
//
// The ghost state is Zab.tla's: every txn broadcast (by epoch and
// counter), the established leader of each epoch, and the delivered
// sequence. Delivering is applying to the tree. Since every member's
// delivered txns must be a prefix of every other's (PrefixConsistency),
// they are all kept as one sequence, the chain, and each member as its
// position in it; a member that delivers past the end of the chain extends
// it (a first delivery).
//
// Txns are told apart by zxid and by a hash of their log entry (EntryHash):
// every append is checked against the txn broadcast under its zxid
// (Integrity, Agreement), and a member delivers only what its log holds or
// what a snapshot installed, so the chain keeps zxids alone.
//
// The package is deterministic, like the core: no goroutines, clocks or
// files, and no map iteration reaches a result.
package invariant

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// The invariants a Violation names. Where Zab.tla has the invariant, the
// name is Zab.tla's; the others are the rules around them that zabd checks
// as well.
const (
	// Leadership (Zab.tla Leadership1, Leadership2): at most one member
	// establishes each epoch (leads it in synchronization or broadcast),
	// and only that member broadcasts in it.
	Leadership = "Leadership"
	// Integrity (Zab.tla Integrity): a member logs and delivers only txns
	// a leader broadcast.
	Integrity = "Integrity"
	// Agreement: every member holds under a zxid the txn broadcast under
	// it, and no zxid is broadcast with two txns (ZOOKEEPER-335). With
	// PrefixConsistency this gives Zab.tla's Agreement on delivered txns.
	Agreement = "Agreement"
	// PrefixConsistency (Zab.tla PrefixConsistency): every member's
	// delivered txns are a prefix of one sequence; a tree installed by a
	// snapshot holds a prefix of it; a member never undelivers a txn
	// (its tree never goes back while it runs).
	PrefixConsistency = "PrefixConsistency"
	// TotalOrder (Zab.tla TotalOrder): a member that delivers a txn
	// others delivered after some txn delivers that txn before it.
	TotalOrder = "TotalOrder"
	// LocalPrimaryOrder (Zab.tla LocalPrimaryOrder): a leader broadcasts
	// its epoch's txns with counters from 1 without a gap, and they are
	// delivered in that order.
	//
	// Zab.tla's GlobalPrimaryOrder (no txn of an older epoch delivered
	// after one of a newer epoch) needs no name of its own: a zxid's high
	// 32 bits are its epoch, the delivered sequence only grows upward in
	// zxid (a first delivery comes after the last one), and a member that
	// delivered something else, or out of that order, or undid a delivery,
	// breaks PrefixConsistency or TotalOrder first.
	LocalPrimaryOrder = "LocalPrimaryOrder"
	// PrimaryIntegrity (Zab.tla PrimaryIntegrity): a leader establishing
	// an epoch holds every delivered txn in its history, and has
	// delivered every delivered txn of an older epoch before it
	// broadcasts; no txn of an older epoch is delivered for the first
	// time after a newer epoch's leader began broadcasting.
	PrimaryIntegrity = "PrimaryIntegrity"
	// EpochOrder: acceptedEpoch ≥ currentEpoch on every disk, and neither
	// goes back, across restarts too (the paper's §IV-A; Zab.tla keeps
	// both per server and only raises them).
	EpochOrder = "EpochOrder"
	// EpochDurable: once its epoch writes are done, the member works with
	// the epochs its disk holds (ZOOKEEPER-335: an epoch not persisted can
	// be used twice after a restart).
	EpochDurable = "EpochDurable"
	// OneDigestPerZxid: every member that delivered up to a zxid has the
	// same tree digest there, the one the txn records (primary backup: a
	// member's state is a function of its delivered prefix).
	OneDigestPerZxid = "OneDigestPerZxid"
	// QuorumDurability: a txn delivered for the first time is committed,
	// so durable on a quorum of voters; so is every zxid a reply carries
	// (a standalone server: on its own disk). The paper's §IV-C: a leader
	// commits once a quorum acknowledged, and a follower acknowledges
	// only what is on stable storage.
	QuorumDurability = "QuorumDurability"
	// Serving: an ensemble member answers clients only in broadcast: a
	// leader once its epoch is established, a learner once UPTODATE came
	// (the paper's §IV-C: a follower delivers, and so serves, only after
	// the leader's commit of the new epoch's history; Zab.tla
	// FollowerProcessUPTODATE). Before, its tree lacks the initial history
	// it acknowledged, or is a fuzzy one a SNAP installed. A reply sent
	// with a Ready whose Steps left broadcast (its last commits, then a
	// step down) counts as in broadcast.
	Serving = "Serving"
	// FuzzyTreeServed: no member serves (is in broadcast) from a tree
	// loaded from a fuzzy snapshot before it has applied again every txn
	// that snapshot may partly hold.
	FuzzyTreeServed = "FuzzyTreeServed"
	// HistoryDurable: a member whose disk holds currentEpoch e, and no
	// later acceptedEpoch, holds durably (logged and fsynced, or in a
	// snapshot) the initial history of epoch e, the history its leader
	// had when it made e its currentEpoch. A learner writes currentEpoch
	// only once what it synchronized is durable, a leader only once its
	// own log is (ZOOKEEPER-3911, ZOOKEEPER-4643): a member restarting
	// with currentEpoch e and a shorter log would win an election over
	// members holding committed txns it lacks. A member whose log lost
	// txns to damage (Member.Damaged) is exempt until a leader has
	// synchronized it.
	HistoryDurable = "HistoryDurable"
	// AckDurable: a member acknowledges only what its disk holds. It sends
	// ACKEPOCH for the epoch its acceptedEpoch file holds, so for no epoch
	// below the one it accepted; its NEWLEADER ACK once its currentEpoch
	// file holds the new epoch and the snapshot of a SNAP it took is
	// installed (the ACK vouches for the history that snapshot holds); an ACK of a proposal once its log holds the
	// txn durably (the paper's §IV: a follower acknowledges only what is on
	// stable storage; Zab.tla FollowerProcessNEWEPOCH, FollowerProcessNEWLEADER).
	AckDurable = "AckDurable"
	// EpochProposal: a leader proposes (LEADERINFO) an epoch above the
	// acceptedEpoch its own disk held when it began to lead, and above the
	// acceptedEpoch of every voter whose FOLLOWERINFO it had when it fixed
	// the epoch; it sends it to no learner whose FOLLOWERINFO carried a
	// later acceptedEpoch (Zab.tla LeaderProcessCEPOCH: the new epoch
	// exceeds every acceptedEpoch of the quorum).
	EpochProposal = "EpochProposal"
	// EpochQuorum: a leader makes its new epoch its currentEpoch only once
	// a quorum of voters, itself included, acknowledged the epoch, each
	// with an ACKEPOCH that accepted it anew (Zab.tla
	// AckeRecvQuorumFormed), and synchronizes no learner (DIFF, TRUNC,
	// SNAP, NEWLEADER) before. A learner that had accepted
	// the epoch before answers with currentEpoch -1 and does not count
	// (ZooKeeper's Leader.waitForEpochAck): it may have acknowledged it to
	// a rival leader that proposed the same epoch, and the leader never
	// learnt whether its history is more recent than its own.
	EpochQuorum = "EpochQuorum"
	// InitialHistory: the history a leader makes its new epoch's initial
	// history is at least as recent, by (currentEpoch, last zxid), as that
	// of every learner whose ACKEPOCH it took before (the paper's §IV-A:
	// the leader proposes the most recent history of its quorum; ZooKeeper's
	// Leader.waitForEpochAck gives up the lead when a learner is ahead).
	InitialHistory = "InitialHistory"
	// ObserverInform: a leader sends an observer only committed txns:
	// while it synchronizes it, each PROPOSAL before NEWLEADER (with its
	// COMMIT), and after NEWLEADER no PROPOSAL at all, only INFORM, which
	// carries a txn already committed (an observer never votes, so a
	// proposal it logged would wait for no ACK of its, and it applies what
	// INFORM tells it at once).
	ObserverInform = "ObserverInform"
)

// Violation is a broken invariant: its name, the members and zxids
// involved, and a sentence saying what happened.
type Violation struct {
	Invariant string
	Members   []int64
	Zxids     []int64
	Detail    string
}

func (v *Violation) Error() string { return v.Invariant + ": " + v.Detail }

// Member is what a shell observes of one member at one moment, off its
// Peer and its disk.
type Member struct {
	// Up: the member runs. State, Accepted, Current, Applied, Digest and
	// FuzzyUntil are its Peer's and mean nothing while it is down; the
	// disk (the epoch files, Log, Durable, Snapshot) outlives a crash.
	Up bool
	// State is the Peer's role, phase and epoch (Peer.State).
	State zab.SoftState
	// Accepted and Current are the epochs the Peer works with
	// (Peer.Epochs); DiskAccepted and DiskCurrent, its epoch files.
	Accepted, Current         int64
	DiskAccepted, DiskCurrent int64
	// EpochsPending: an epoch write is queued or under way (zab/member
	// carries a Ready's disk operations out in order, and holds every
	// send behind them), so the epoch files may hold older epochs than
	// the Peer works with until it is done.
	EpochsPending bool
	// Applied is the zxid of the last txn the tree applied (Peer.LastZxid)
	// and Digest the tree's digest (Peer.Digest).
	Applied, Digest int64
	// TxnDigest is the tree digest the txn at Applied records, if
	// HasTxnDigest (a shell that does not know it leaves it unset).
	TxnDigest    int64
	HasTxnDigest bool
	// FuzzyUntil, while above Applied: the tree was loaded from a fuzzy
	// snapshot that may hold some txns up to this zxid, which apply again
	// once a leader commits them; until then it is no member's tree at
	// Applied (0: the tree is whole).
	FuzzyUntil int64
	// Log is the zxids the member's log holds, ascending, durable or not;
	// the Checker reads it only during the call that observed it.
	Log []int64
	// Durable: the log holds durably every txn it holds up to this zxid.
	Durable int64
	// Snapshot is the zxid of the member's newest durable snapshot (0 for
	// none): it holds every txn up to there.
	Snapshot int64
	// Damaged: the member's log lost txns to damage at its last start
	// (zab.Restored.LogDamaged), and no leader has synchronized it since.
	Damaged bool
	// Installing: the snapshot of a SNAP the member took is not yet
	// installed; until it is, the member's log still holds what Log, cut
	// at the snapshot's zxid as the Ready asked, no longer lists.
	Installing bool
}

// durablyHolds reports whether the member's disk holds zxid durably.
func (m *Member) durablyHolds(zxid int64) bool {
	return zxid <= m.Snapshot || zxid <= m.Durable && m.logHolds(zxid)
}

func (m *Member) logHolds(zxid int64) bool {
	_, found := slices.BinarySearch(m.Log, zxid)
	return found
}

// Shell shows the Checker the members it runs.
type Shell interface {
	// Observe fills m with member id's state now.
	Observe(id int64, m *Member)
}

// Config is the ensemble a Checker watches.
type Config struct {
	// Members lists every member's id, voters and observers, ascending
	// (for a standalone server, its one id).
	Members []int64
	// Quorum decides which voters make a quorum; nil for a standalone
	// server, which runs no Zab: it may reuse the zxids a crash took before
	// they were durable, so only what it delivers is checked, and its own
	// disk is its quorum.
	Quorum election.QuorumVerifier
	// FirstDelivered, if set, is told of each txn as it is delivered for
	// the first time anywhere, in the delivered sequence's order.
	FirstDelivered func(member, zxid int64)
}

// EntryHash is the hash the Checker tells txns apart by: of the txn's log
// entry (zab.EncodeTxnEntry).
func EntryHash(entry []byte) uint64 {
	h := fnv.New64a()
	h.Write(entry)
	return h.Sum64()
}

// Checker checks the invariants as a shell reports its members' steps.
type Checker struct {
	cfg   Config
	shell Shell

	// chain is the delivered sequence, in zxid order: a first delivery
	// comes after the last one (see deliver).
	chain []delivery
	// broadcasts holds, per epoch, the hash of each txn its leader
	// broadcast, by counter-1: LocalPrimaryOrder keeps them dense.
	broadcasts map[int64][]uint64
	// leaders is the member that established each epoch.
	leaders map[int64]int64
	// primaryEpoch is the newest epoch whose leader has broadcast: no txn
	// of an older epoch may be delivered for the first time after that.
	primaryEpoch int64
	// primary is a leader's first broadcast of a newer epoch, appended
	// in the Ready being carried out: it is judged once that Ready's
	// deliveries are (Stepped), as the Peer made them before it.
	primary *firstBroadcast
	// initialEnd is, per epoch, the last zxid of its initial history: the
	// history of its leader when that leader's disk first held the epoch
	// as currentEpoch (HistoryDurable).
	initialEnd map[int64]int64

	members map[int64]*memberState
	// voters are the members whose disks make quorums (standalone: the
	// one server).
	voters []int64
	// obs and peer are scratch observations; holders, scratch ids.
	obs, peer Member
	holders   []int64
	lacking   []int64
}

type delivery struct {
	zxid      int64
	digest    int64
	hasDigest bool
}

type firstBroadcast struct {
	leader, zxid int64
}

// memberState is what the Checker remembers of one member.
type memberState struct {
	// delivered is how many txns of the chain its tree holds; applied,
	// its tree's zxid when last seen.
	delivered int
	applied   int64
	// installed: a SNAP replaced the tree at installedAt since the last
	// Stepped.
	installed   bool
	installedAt int64
	// The epoch files when last seen.
	accepted, current int64
	// state is its role when last seen (since it started).
	state zab.SoftState

	// peerCurrent is the currentEpoch its Peer worked with when last
	// seen: a leader decides to make its epoch current when it changes.
	peerCurrent int64
	// As a leader (EpochProposal, EpochQuorum): leadAccepted is the
	// acceptedEpoch its disk held when it last began to lead; infos, each
	// learner's last FOLLOWERINFO (or OBSERVERINFO) it received; acks, the
	// voters whose ACKEPOCH of ackEpoch, accepting it anew, it received.
	leadAccepted int64
	infos        map[int64]learnerInfo
	ackEpoch     int64
	acks         []ackEpochInfo
	// As a learner (AckDurable): the epoch of the last LEADERINFO it took.
	leaderInfo int64
	// synced: as a leader, the observers it sent NEWLEADER since their
	// last DIFF, TRUNC or SNAP (ObserverInform).
	synced map[int64]bool
}

// learnerInfo is a learner's introduction as its leader took it: the
// acceptedEpoch it carried, and whether the leader had not yet fixed its
// epoch (so the epoch is above it, for a voter).
type learnerInfo struct {
	accepted int64
	gathered bool
}

// ackEpochInfo is an ACKEPOCH that accepted a leader's epoch anew: its
// sender, and the sender's currentEpoch and last zxid.
type ackEpochInfo struct {
	sid, current, last int64
}

// New returns a Checker that has seen nothing yet: attach it before the
// members start, so that it sees every txn delivered.
func New(cfg Config, shell Shell) *Checker {
	c := &Checker{cfg: cfg, shell: shell, broadcasts: map[int64][]uint64{}, leaders: map[int64]int64{},
		members: map[int64]*memberState{}, initialEnd: map[int64]int64{}}
	for _, id := range cfg.Members {
		c.members[id] = &memberState{}
		if cfg.Quorum == nil || slices.Contains(cfg.Quorum.Voters(), id) {
			c.voters = append(c.voters, id)
		}
	}
	return c
}

func (c *Checker) standalone() bool { return c.cfg.Quorum == nil }

func (c *Checker) member(id int64) *memberState {
	ms := c.members[id]
	if ms == nil {
		ms = &memberState{}
		c.members[id] = ms
	}
	return ms
}

// observe fills c.obs with member id's state.
func (c *Checker) observe(id int64) *Member {
	c.obs = Member{}
	c.shell.Observe(id, &c.obs)
	return &c.obs
}

func violation(name string, members []int64, zxids []int64, format string, args ...any) *Violation {
	return &Violation{Invariant: name, Members: members, Zxids: zxids, Detail: fmt.Sprintf(format, args...)}
}

// Started reports that member id recovered from its disk and is about to
// run: its tree is what recovery made of its snapshot and log (it may
// have gone back), its epochs those of its epoch files.
func (c *Checker) Started(id int64) *Violation {
	ms := c.member(id)
	ms.installed, ms.state = false, zab.SoftState{}
	if c.primary != nil && c.primary.leader == id {
		c.primary = nil // it crashed in the Ready that broadcast
	}
	m := c.observe(id)
	if v := c.tree(id, ms, m, true); v != nil {
		return v
	}
	if v := c.digest(id, ms, m); v != nil {
		return v
	}
	if v := c.epochs(id, ms, m); v != nil {
		return v
	}
	return c.history(id, m)
}

// Appended reports that member id appended the txn zxid, whose log entry
// hashes to hash (EntryHash), to its log: a leader's proposal (it leads
// that epoch), or what a member logs from its leader. Call it for every
// append, in order, as the shell carries out the Ready's Appends.
func (c *Checker) Appended(id, zxid int64, hash uint64) *Violation {
	if c.standalone() {
		return nil
	}
	m := c.observe(id)
	if v := c.leadership(id, m); v != nil {
		return v
	}
	e := epochOf(zxid)
	if m.State.Role == zab.RoleLeading && m.State.Epoch == e || c.leaders[e] == id {
		return c.broadcast(id, zxid, hash)
	}
	b, ok := c.broadcastOf(zxid)
	if !ok {
		return violation(Integrity, []int64{id}, []int64{zxid}, "server %d logs %s, which no leader broadcast", id, hex(zxid))
	}
	if b != hash {
		return violation(Agreement, []int64{id, c.leaders[e]}, []int64{zxid}, "server %d logs under %s a txn differing from the one leader %d broadcast under it", id, hex(zxid), c.leaders[e])
	}
	return nil
}

// Proposed reports that leader id proposes the txn zxid, whose log entry
// hashes to hash: its Ready asks to log it and sends it to the learners
// (Zab.tla's proposal). A shell that writes the leader's log beside the
// sends (zab/member does) calls it as it takes the Ready, since learners
// may log the txn before the leader's own log does; Appended of the
// leader's own append then finds it broadcast.
func (c *Checker) Proposed(id, zxid int64, hash uint64) *Violation {
	if c.standalone() {
		return nil
	}
	if v := c.leadership(id, c.observe(id)); v != nil {
		return v
	}
	return c.broadcast(id, zxid, hash)
}

// broadcast checks a leader's proposal.
//
// Reference: Zab.tla's proposalMsgsLog; the paper's §IV (a leader never
// proposes two txns with one zxid, two leaders never share an epoch, and
// a leader proposes in zxid order, counters of its epoch from 1 without
// a gap).
func (c *Checker) broadcast(id, zxid int64, hash uint64) *Violation {
	e := epochOf(zxid)
	if l, ok := c.leaders[e]; !ok || l != id {
		return violation(Leadership, []int64{id, l}, []int64{zxid}, "server %d broadcasts %s in epoch %d, which it has not established (its leader: %d)", id, hex(zxid), e, l)
	}
	if b, ok := c.broadcastOf(zxid); ok {
		if b != hash {
			return violation(Agreement, []int64{id}, []int64{zxid}, "leader %d broadcasts %s a second time with another txn", id, hex(zxid))
		}
		return nil
	}
	sent := c.broadcasts[e]
	if want := makeZxid(e, int64(len(sent))+1); zxid != want {
		return violation(LocalPrimaryOrder, []int64{id}, []int64{zxid, want - 1}, "leader %d broadcasts %s after %s in epoch %d", id, hex(zxid), hex(want-1), e)
	}
	if e > c.primaryEpoch && (c.primary == nil || e > epochOf(c.primary.zxid)) {
		c.primary = &firstBroadcast{leader: id, zxid: zxid}
	}
	c.broadcasts[e] = append(sent, hash)
	return nil
}

// broadcastOf returns the hash of the txn broadcast under zxid.
func (c *Checker) broadcastOf(zxid int64) (uint64, bool) {
	sent, i := c.broadcasts[epochOf(zxid)], counterOf(zxid)-1
	if i < 0 || i >= int64(len(sent)) {
		return 0, false
	}
	return sent[i], true
}

// Installed reports that a SNAP from the leader replaced member id's tree
// with the leader's at zxid (Ready.Installed), in the Ready the shell is
// carrying out; Stepped places the tree.
func (c *Checker) Installed(id, zxid int64) {
	ms := c.member(id)
	ms.installed, ms.installedAt = true, zxid
}

// Stepped reports that the shell carried out a Ready of member id: its log
// holds the Ready's appends (Appended) and its epoch files the Ready's
// epochs. The Checker reads what the member delivered since it last
// looked (the txns of its log up to its tree's zxid, or a snapshot
// installed), its digest, role and epochs.
func (c *Checker) Stepped(id int64) *Violation {
	ms := c.member(id)
	m := c.observe(id)
	if v := c.leadership(id, m); v != nil {
		return v
	}
	if v := c.tree(id, ms, m, false); v != nil {
		return v
	}
	if v := c.firstBroadcast(id); v != nil {
		return v
	}
	if v := c.digest(id, ms, m); v != nil {
		return v
	}
	if m.State.Phase == zab.PhaseBroadcast && m.FuzzyUntil > m.Applied {
		return violation(FuzzyTreeServed, []int64{id}, []int64{m.Applied, m.FuzzyUntil}, "server %d serves in epoch %d from a tree at %s loaded from a fuzzy snapshot that holds txns up to %s it has not applied again",
			id, m.State.Epoch, hex(m.Applied), hex(m.FuzzyUntil))
	}
	if v := c.leaderHistory(id, ms, m); v != nil {
		return v
	}
	if v := c.leaderEpoch(id, ms, m); v != nil {
		return v
	}
	ms.state = m.State
	if v := c.epochs(id, ms, m); v != nil {
		return v
	}
	return c.history(id, m)
}

// Replied reports that member id sends a client a reply carrying zxid: it
// must be durable on a quorum of voters (standalone: on the server's
// disk), or a crash pattern that leaves a quorum's disks intact could lose
// what the client was told of.
func (c *Checker) Replied(id, zxid int64) *Violation {
	if zxid <= 0 || c.DurableOnQuorum(zxid) {
		return nil
	}
	return violation(QuorumDurability, []int64{id}, []int64{zxid}, "server %d answers a client with zxid %s, which is not durable on a quorum (%s)", id, hex(zxid), c.durableReport(zxid))
}

// Answering reports that member id's Peer, in the step just taken, asked
// for replies to clients: the Ready it returned, not yet carried out
// (Stepped), holds them. The member served before that step or after it.
//
// Reference: the paper's §IV-C; Zab.tla FollowerProcessUPTODATE.
func (c *Checker) Answering(id int64) *Violation {
	if c.standalone() {
		return nil
	}
	ms, m := c.member(id), c.observe(id)
	if ms.state.Phase != zab.PhaseBroadcast && m.State.Phase != zab.PhaseBroadcast {
		return violation(Serving, []int64{id}, nil, "server %d answers a client in phase %s (%s)", id, m.State.Phase, m.State.Role)
	}
	return nil
}

// leadership records an established leader: one leading its epoch in
// synchronization or broadcast.
//
// Reference: Zab.tla Leadership1 (an established leader is in
// SYNCHRONIZATION or BROADCAST) and Leadership2.
func (c *Checker) leadership(id int64, m *Member) *Violation {
	if c.standalone() || !m.Up {
		return nil
	}
	st := m.State
	if st.Role != zab.RoleLeading || st.Phase != zab.PhaseSync && st.Phase != zab.PhaseBroadcast {
		return nil
	}
	if l, ok := c.leaders[st.Epoch]; ok && l != id {
		return violation(Leadership, []int64{l, id}, nil, "servers %d and %d both establish epoch %d", l, id, st.Epoch)
	}
	c.leaders[st.Epoch] = id
	return nil
}

// tree places member id's tree in the chain: the txns its log holds up to
// its tree's zxid are delivered, in order; a tree installed by a snapshot
// (a SNAP, or a restart) holds a prefix of the chain.
func (c *Checker) tree(id int64, ms *memberState, m *Member, restart bool) *Violation {
	now, from := m.Applied, ms.applied
	if !restart && now < from {
		return violation(PrefixConsistency, []int64{id}, []int64{from, now}, "server %d's tree went back from %s to %s: it undid delivered txns", id, hex(from), hex(now))
	}
	if ms.installed {
		ms.installed = false
		if v := c.jump(id, ms, ms.installedAt); v != nil {
			return v
		}
		from = ms.installedAt
	}
	ms.applied = now
	if now < from {
		return c.jump(id, ms, now) // a restart from a snapshot
	}
	if now == from {
		return nil
	}
	lo, _ := slices.BinarySearch(m.Log, from+1)
	hi, _ := slices.BinarySearch(m.Log, now+1)
	if hi == lo || m.Log[hi-1] != now {
		// The log does not hold what the tree applied: a snapshot
		// installed it.
		return c.jump(id, ms, now)
	}
	for _, z := range m.Log[lo:hi] {
		if v := c.deliver(id, ms, z); v != nil {
			return v
		}
	}
	return nil
}

// jump places a member whose tree was replaced by a snapshot at zxid: it
// holds exactly the chain up to zxid.
func (c *Checker) jump(id int64, ms *memberState, zxid int64) *Violation {
	if zxid == 0 {
		ms.delivered = 0
		return nil
	}
	i, found := c.chainIndex(zxid)
	if !found {
		return violation(PrefixConsistency, []int64{id}, []int64{zxid}, "server %d holds a tree at %s, a txn no member delivered (last delivered: %s)", id, hex(zxid), c.lastDeliveredString())
	}
	ms.delivered = i + 1
	return nil
}

func (c *Checker) chainIndex(zxid int64) (int, bool) {
	return slices.BinarySearchFunc(c.chain, zxid, func(d delivery, z int64) int { return cmp.Compare(d.zxid, z) })
}

// deliver checks member id's delivery of zxid, the next txn after those it
// delivered.
//
// Reference: the paper's §III and Zab.tla's PrefixConsistency, TotalOrder,
// Integrity, LocalPrimaryOrder, GlobalPrimaryOrder and PrimaryIntegrity:
// all delivered sequences are prefixes of one sequence of broadcast txns,
// in which each epoch's txns come in its leader's order and epochs do not
// go back.
func (c *Checker) deliver(id int64, ms *memberState, zxid int64) *Violation {
	i := ms.delivered
	if i < len(c.chain) {
		if want := c.chain[i].zxid; want != zxid {
			if _, found := c.chainIndex(zxid); found {
				return violation(TotalOrder, []int64{id}, []int64{zxid, want}, "server %d delivers %s as its txn #%d, where the others delivered %s before it", id, hex(zxid), i+1, hex(want))
			}
			return violation(PrefixConsistency, []int64{id}, []int64{zxid, want}, "server %d delivers %s as its txn #%d, where another member delivered %s", id, hex(zxid), i+1, hex(want))
		}
		ms.delivered++
		return nil
	}
	// A first delivery.
	prev := int64(0)
	if n := len(c.chain); n > 0 {
		prev = c.chain[n-1].zxid
	}
	if !c.standalone() {
		if _, ok := c.broadcastOf(zxid); !ok {
			return violation(Integrity, []int64{id}, []int64{zxid}, "server %d delivers %s, which no leader broadcast", id, hex(zxid))
		}
	}
	// A member delivers from its log in zxid order, from where it is in
	// the chain, so a first delivery comes after the last one: only a gap
	// is left to see.
	switch e := epochOf(zxid); {
	case e == epochOf(prev) && zxid != prev+1:
		return violation(LocalPrimaryOrder, []int64{id}, []int64{zxid, prev}, "server %d delivers %s after %s, not its leader's next", id, hex(zxid), hex(prev))
	case e > epochOf(prev) && counterOf(zxid) != 1:
		return violation(LocalPrimaryOrder, []int64{id}, []int64{zxid}, "server %d delivers %s without its leader's earlier txns of epoch %d", id, hex(zxid), e)
	case e < c.primaryEpoch:
		return violation(PrimaryIntegrity, []int64{id}, []int64{zxid}, "server %d delivers %s of epoch %d for the first time after the leader of epoch %d began broadcasting", id, hex(zxid), e, c.primaryEpoch)
	}
	if !c.DurableOnQuorum(zxid) {
		return violation(QuorumDurability, []int64{id}, []int64{zxid}, "server %d delivers %s for the first time while it is not durable on a quorum (%s)", id, hex(zxid), c.durableReport(zxid))
	}
	c.chain = append(c.chain, delivery{zxid: zxid})
	ms.delivered++
	if c.cfg.FirstDelivered != nil {
		c.cfg.FirstDelivered(id, zxid)
	}
	return nil
}

// firstBroadcast judges a leader's first broadcast of a newer epoch, once
// the deliveries of the Ready that carried it are placed: the leader has
// delivered every txn of an older epoch that any member delivered.
func (c *Checker) firstBroadcast(id int64) *Violation {
	p := c.primary
	if p == nil || p.leader != id {
		return nil
	}
	c.primary = nil
	e := epochOf(p.zxid)
	for _, d := range c.chain[c.member(id).delivered:] {
		if epochOf(d.zxid) < e {
			return violation(PrimaryIntegrity, []int64{id}, []int64{p.zxid, d.zxid}, "leader %d of epoch %d broadcasts %s before delivering %s, which another member delivered", id, e, hex(p.zxid), hex(d.zxid))
		}
	}
	c.primaryEpoch = max(c.primaryEpoch, e)
	return nil
}

// leaderHistory checks a leader entering broadcast: its history (log and
// snapshot) holds every delivered txn.
//
// Reference: the paper's §IV-B (the initial history of an established
// leader holds every committed txn); Zab.tla PrimaryIntegrity.
func (c *Checker) leaderHistory(id int64, ms *memberState, m *Member) *Violation {
	st := m.State
	if c.standalone() || st.Role != zab.RoleLeading || st.Phase != zab.PhaseBroadcast || ms.state == st {
		return nil
	}
	for _, d := range c.chain {
		if d.zxid > m.Snapshot && !m.logHolds(d.zxid) {
			return violation(PrimaryIntegrity, []int64{id}, []int64{d.zxid}, "server %d establishes epoch %d without delivered txn %s in its history (log %s, snapshot at %s)",
				id, st.Epoch, hex(d.zxid), describeZxids(m.Log), hex(m.Snapshot))
		}
	}
	return nil
}

// digest checks member id's tree digest at its last delivered txn against
// every other member's there, and the txn's own.
func (c *Checker) digest(id int64, ms *memberState, m *Member) *Violation {
	if ms.delivered == 0 || !m.Up || m.FuzzyUntil > m.Applied {
		return nil
	}
	d := &c.chain[ms.delivered-1]
	if !d.hasDigest {
		d.digest, d.hasDigest = m.Digest, true
	} else if d.digest != m.Digest {
		return violation(OneDigestPerZxid, []int64{id}, []int64{d.zxid}, "server %d's tree digest at %s is %#x; another member's was %#x", id, hex(d.zxid), m.Digest, d.digest)
	}
	if m.HasTxnDigest && m.TxnDigest != m.Digest {
		return violation(OneDigestPerZxid, []int64{id}, []int64{d.zxid}, "server %d's tree digest at %s is %#x, but the txn records %#x", id, hex(d.zxid), m.Digest, m.TxnDigest)
	}
	return nil
}

// epochs checks member id's epoch files, and that its Peer works with
// them.
//
// Reference: the paper's §IV-A (Phase 1: a follower accepts a new epoch
// only above its acceptedEpoch, and makes it durable before it answers)
// and Zab.tla's acceptedEpoch ≥ currentEpoch.
func (c *Checker) epochs(id int64, ms *memberState, m *Member) *Violation {
	if c.standalone() {
		return nil
	}
	acc, cur := m.DiskAccepted, m.DiskCurrent
	switch {
	case acc < cur:
		return violation(EpochOrder, []int64{id}, nil, "server %d's disk has acceptedEpoch %d below currentEpoch %d", id, acc, cur)
	case acc < ms.accepted:
		return violation(EpochOrder, []int64{id}, nil, "server %d's acceptedEpoch went back from %d to %d", id, ms.accepted, acc)
	case cur < ms.current:
		return violation(EpochOrder, []int64{id}, nil, "server %d's currentEpoch went back from %d to %d", id, ms.current, cur)
	case m.Up && !m.EpochsPending && (m.Accepted != acc || m.Current != cur):
		return violation(EpochDurable, []int64{id}, nil, "server %d works with acceptedEpoch %d and currentEpoch %d, but its disk holds %d and %d", id, m.Accepted, m.Current, acc, cur)
	}
	ms.accepted, ms.current = acc, cur
	return nil
}

// leaderEpoch follows a leader through discovery, as its Ready is carried
// out (before its sends): the acceptedEpoch it began to lead with, the
// epoch it proposes, and the quorum of ACKEPOCHs behind the currentEpoch
// it writes.
//
// Reference: Zab.tla LeaderProcessCEPOCH (the new epoch exceeds every
// acceptedEpoch of the quorum) and LeaderProcessACKEPOCH (ackeRecv a
// quorum before NEWLEADER); ZooKeeper's Leader.getEpochToPropose and
// waitForEpochAck.
func (c *Checker) leaderEpoch(id int64, ms *memberState, m *Member) *Violation {
	st := m.State
	decided := m.Current != ms.peerCurrent
	ms.peerCurrent = m.Current
	if c.standalone() || !m.Up || st.Role != zab.RoleLeading {
		return nil
	}
	if st.Phase == zab.PhaseDiscovery && st.Epoch == 0 {
		// Gathering FOLLOWERINFO: nothing written yet.
		ms.leadAccepted = m.DiskAccepted
	} else if ms.state.Role != zab.RoleLeading {
		ms.leadAccepted = ms.accepted // it began to lead and proposed in one Ready
	}
	e := st.Epoch
	if e != 0 && e <= ms.leadAccepted && st.Phase == zab.PhaseDiscovery {
		return violation(EpochProposal, []int64{id}, nil, "server %d proposes epoch %d, not above the acceptedEpoch %d its disk held when it began to lead", id, e, ms.leadAccepted)
	}
	if e == 0 || m.Current != e || !decided {
		return nil
	}
	// Its Peer has just made e its currentEpoch: the end of discovery.
	var acks []ackEpochInfo
	if ms.ackEpoch == e {
		acks = ms.acks
	}
	ids := []int64{id}
	for _, a := range acks {
		ids = append(ids, a.sid)
	}
	if !c.contains(ids) {
		return violation(EpochQuorum, ids, nil, "server %d makes epoch %d its currentEpoch with ACKEPOCHs accepting it anew from %v only (and its own): not a quorum of voters", id, e, ids[1:])
	}
	last := historyEnd(m, e)
	c.initialEnd[e] = last
	for _, a := range acks {
		if a.current > ms.current || a.current == ms.current && a.last > last {
			return violation(InitialHistory, []int64{id, a.sid}, []int64{last, a.last}, "server %d makes epoch %d its currentEpoch with its history (currentEpoch %d, last zxid %s) although server %d acknowledged it with a more recent one (currentEpoch %d, last zxid %s)",
				id, e, ms.current, hex(last), a.sid, a.current, hex(a.last))
		}
	}
	return nil
}

// historyEnd is the last zxid of member m's history before epoch e: its
// log, snapshot and tree hold nothing of e while it leads e's discovery.
func historyEnd(m *Member, e int64) int64 {
	end := int64(0)
	for _, z := range []int64{m.Snapshot, m.Applied} {
		if epochOf(z) < e {
			end = max(end, z)
		}
	}
	i, _ := slices.BinarySearch(m.Log, makeZxid(e, 0))
	if i > 0 {
		end = max(end, m.Log[i-1])
	}
	return end
}

// contains reports whether ids (any order, repeats and non-voters ignored)
// hold a quorum of voters.
func (c *Checker) contains(ids []int64) bool {
	var vs []int64
	for _, id := range ids {
		if slices.Contains(c.voters, id) {
			vs = append(vs, id)
		}
	}
	slices.Sort(vs)
	return c.cfg.Quorum.ContainsQuorum(slices.Compact(vs))
}

// history checks that member id's disk holds its currentEpoch's initial
// history durably (recorded by leaderEpoch when the epoch's leader made it
// its currentEpoch).
//
// Reference: the paper's §IV-B (a follower makes the new epoch current
// only once it has accepted the leader's history, on stable storage);
// Zab.tla FollowerProcessNEWLEADER; ZOOKEEPER-3911 and ZOOKEEPER-4643.
func (c *Checker) history(id int64, m *Member) *Violation {
	if c.standalone() || m.Damaged || m.Installing {
		return nil
	}
	// The disk's epochs, and the Peer's: an executor may order an epoch
	// write after earlier appends' fsync on its own, but the Peer must not
	// count on more than the Ready contract, so it asks for currentEpoch
	// only once it has heard that the history is durable.
	views := []struct {
		whose             string
		current, accepted int64
	}{{"disk", m.DiskCurrent, m.DiskAccepted}}
	if m.Up {
		views = append(views, struct {
			whose             string
			current, accepted int64
		}{"Peer", m.Current, m.Accepted})
	}
	for _, v := range views {
		e := v.current
		end := c.initialEnd[e]
		if e == 0 || end == 0 || v.accepted != e || m.durablyHolds(end) {
			continue
		}
		return violation(HistoryDurable, []int64{id, c.leaders[e]}, []int64{end}, "server %d's %s holds currentEpoch %d but its disk does not hold durably %s, the last txn of that epoch's initial history (log %s durable to %s, snapshot at %s)",
			id, v.whose, e, hex(end), describeZxids(m.Log), hex(m.Durable), hex(m.Snapshot))
	}
	return nil
}

// Received reports that member id is about to take qp from member from on
// their quorum connection (before the Peer steps on it). The Checker keeps
// what a leader learns in discovery: each learner's acceptedEpoch, and
// which voters acknowledged its epoch anew.
func (c *Checker) Received(id, from int64, qp *wire.QuorumPacket) {
	if c.standalone() {
		return
	}
	ms := c.member(id)
	switch qp.Type {
	case wire.PacketFollowerInfo, wire.PacketObserverInfo:
		if ms.infos == nil {
			ms.infos = map[int64]learnerInfo{}
		}
		m := c.observe(id)
		gathering := m.Up && m.State.Role == zab.RoleLeading && m.State.Epoch == 0
		ms.infos[from] = learnerInfo{accepted: epochOf(qp.Zxid), gathered: gathering}
	case wire.PacketLeaderInfo:
		ms.leaderInfo = epochOf(qp.Zxid)
	case wire.PacketAckEpoch:
		var ack wire.AckEpoch
		if wire.Unmarshal(qp.Data, &ack) != nil || ack.CurrentEpoch == -1 {
			return
		}
		m := c.observe(id)
		if !m.Up || m.State.Role != zab.RoleLeading || m.State.Epoch == 0 {
			return
		}
		if m.Current == m.State.Epoch {
			return // a late learner: the epoch's discovery is over
		}
		if ms.ackEpoch != m.State.Epoch {
			ms.ackEpoch, ms.acks = m.State.Epoch, nil
		}
		ms.acks = append(ms.acks, ackEpochInfo{sid: from, current: int64(ack.CurrentEpoch), last: qp.Zxid})
	}
}

// Sent reports that member id sends pm on the quorum channel, once the
// Ready that carries it has been carried out up to its sends (after
// Stepped): an acknowledgement must be backed by its disk, a LEADERINFO
// by the acceptedEpochs the leader heard.
func (c *Checker) Sent(id int64, pm *zab.PeerMessage) *Violation {
	if c.standalone() || pm.Kind != zab.PeerSend {
		return nil
	}
	qp := &pm.Packet
	switch qp.Type {
	case wire.PacketAckEpoch:
		m, e := c.observe(id), c.member(id).leaderInfo
		if m.DiskAccepted != e {
			return violation(AckDurable, []int64{id, pm.To}, nil, "server %d acknowledges epoch %d to server %d while its disk's acceptedEpoch is %d", id, e, pm.To, m.DiskAccepted)
		}
	case wire.PacketAck:
		m := c.observe(id)
		if counterOf(qp.Zxid) == 0 {
			if e := epochOf(qp.Zxid); m.DiskCurrent != e {
				return violation(AckDurable, []int64{id, pm.To}, []int64{qp.Zxid}, "server %d acknowledges NEWLEADER of epoch %d to server %d while its disk's currentEpoch is %d", id, e, pm.To, m.DiskCurrent)
			}
			if m.Installing {
				return violation(AckDurable, []int64{id, pm.To}, []int64{qp.Zxid}, "server %d acknowledges NEWLEADER of epoch %d to server %d before the snapshot of the SNAP it took is installed on its disk", id, epochOf(qp.Zxid), pm.To)
			}
		} else if !m.durablyHolds(qp.Zxid) {
			return violation(AckDurable, []int64{id, pm.To}, []int64{qp.Zxid}, "server %d acknowledges proposal %s to server %d, which its disk does not hold durably (log %s durable to %s, snapshot at %s)",
				id, hex(qp.Zxid), pm.To, describeZxids(m.Log), hex(m.Durable), hex(m.Snapshot))
		}
	case wire.PacketDiff, wire.PacketTrunc, wire.PacketSnap, wire.PacketNewLeader:
		m := c.observe(id)
		if m.State.Role == zab.RoleLeading && m.DiskCurrent != m.State.Epoch {
			return violation(EpochQuorum, []int64{id, pm.To}, nil, "server %d synchronizes server %d (%s) in epoch %d before its disk's currentEpoch (%d) is the epoch",
				id, pm.To, qp.Type, m.State.Epoch, m.DiskCurrent)
		}
		if !slices.Contains(c.voters, pm.To) {
			ms := c.member(id)
			if ms.synced == nil {
				ms.synced = map[int64]bool{}
			}
			ms.synced[pm.To] = qp.Type == wire.PacketNewLeader
		}
	case wire.PacketProposal:
		if c.member(id).synced[pm.To] {
			return violation(ObserverInform, []int64{id, pm.To}, []int64{qp.Zxid}, "server %d sends observer %d a PROPOSAL of %s after its NEWLEADER: an observer is sent committed txns only, by INFORM", id, pm.To, hex(qp.Zxid))
		}
	case wire.PacketLeaderInfo:
		info, ok := c.member(id).infos[pm.To]
		e, a := epochOf(qp.Zxid), info.accepted
		voter := slices.Contains(c.voters, pm.To)
		switch {
		case !ok:
		case info.gathered && voter && e <= a:
			return violation(EpochProposal, []int64{id, pm.To}, nil, "server %d proposes epoch %d to voter %d, whose FOLLOWERINFO carried acceptedEpoch %d before the epoch was fixed", id, e, pm.To, a)
		case e < a && (voter || !info.gathered):
			return violation(EpochProposal, []int64{id, pm.To}, nil, "server %d sends LEADERINFO of epoch %d to server %d, whose FOLLOWERINFO carried the later acceptedEpoch %d", id, e, pm.To, a)
		}
	}
	return nil
}

// DurableOnQuorum reports whether zxid is durable on a quorum of voters
// (for a standalone server, on its disk). A member whose log was damaged
// abstains from elections until a leader has synchronized it (Member.Damaged),
// so while one is, what makes zxid safe is weaker and exact: the intact
// voters that lack it are no quorum, so that every quorum able to elect
// meets a voter that holds it, and the most recent history among them
// wins. Without damage the check is the quorum of holders, unchanged.
func (c *Checker) DurableOnQuorum(zxid int64) bool {
	holders, lacking := c.holders[:0], c.lacking[:0] // asked for every reply: no allocation
	damaged := false
	for _, id := range c.voters {
		c.peer = Member{}
		c.shell.Observe(id, &c.peer)
		damaged = damaged || c.peer.Damaged
		switch {
		case c.peer.durablyHolds(zxid):
			holders = append(holders, id)
		case !c.peer.Damaged:
			lacking = append(lacking, id)
		}
	}
	c.holders, c.lacking = holders, lacking
	switch {
	case c.standalone():
		return len(holders) > 0
	case damaged:
		return !c.cfg.Quorum.ContainsQuorum(lacking)
	}
	return c.cfg.Quorum.ContainsQuorum(holders)
}

// durableReport says which voters hold zxid durably, for a violation.
func (c *Checker) durableReport(zxid int64) string {
	var parts []string
	for _, id := range c.voters {
		c.peer = Member{}
		c.shell.Observe(id, &c.peer)
		parts = append(parts, fmt.Sprintf("server %d durable to %s holds it: %v", id, hex(c.peer.Durable), c.peer.durablyHolds(zxid)))
	}
	return strings.Join(parts, "; ")
}

// LeaderOf returns the member that established epoch, or 0.
func (c *Checker) LeaderOf(epoch int64) int64 { return c.leaders[epoch] }

// Delivered returns the zxids member id's tree holds, in delivery order.
func (c *Checker) Delivered(id int64) []int64 {
	ms := c.member(id)
	out := make([]int64, ms.delivered)
	for i := range out {
		out[i] = c.chain[i].zxid
	}
	return out
}

// LastDelivered returns the last zxid of the delivered sequence (0: none).
func (c *Checker) LastDelivered() int64 {
	if n := len(c.chain); n > 0 {
		return c.chain[n-1].zxid
	}
	return 0
}

func (c *Checker) lastDeliveredString() string {
	if len(c.chain) == 0 {
		return "none"
	}
	return hex(c.LastDelivered())
}

func describeZxids(zs []int64) string {
	if len(zs) == 0 {
		return "empty"
	}
	return fmt.Sprintf("%d txns %s..%s", len(zs), hex(zs[0]), hex(zs[len(zs)-1]))
}

func hex(z int64) string            { return fmt.Sprintf("0x%x", z) }
func epochOf(zxid int64) int64      { return zxid >> 32 }
func counterOf(zxid int64) int64    { return zxid & 0xffffffff }
func makeZxid(epoch, c int64) int64 { return epoch<<32 | c }
