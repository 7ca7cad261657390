package invariant

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// fakeShell is an ensemble written by hand: the test sets each member's
// observation, then tells the Checker what happened.
type fakeShell map[int64]*Member

func (s fakeShell) Observe(id int64, m *Member) { *m = *s[id] }

// fixture is three voters (1, 2, 3) and an observer (4), all up in epoch
// 0, nothing logged; it keeps the first violation any call returned.
type fixture struct {
	shell fakeShell
	c     *Checker
	first *Violation
}

func newFixture(t *testing.T) *fixture {
	q, err := election.NewMajority([]int64{1, 2, 3})
	require.NoError(t, err)
	f := &fixture{shell: fakeShell{}}
	for id := int64(1); id <= 4; id++ {
		f.shell[id] = &Member{Up: true}
	}
	f.c = New(Config{Members: []int64{1, 2, 3, 4}, Quorum: q}, f.shell)
	return f
}

func (f *fixture) m(id int64) *Member { return f.shell[id] }

func (f *fixture) check(v *Violation) {
	if f.first == nil {
		f.first = v
	}
}

func (f *fixture) step(id int64) { f.check(f.c.Stepped(id)) }

// epochs sets a member's epochs, on disk and in its Peer.
func (f *fixture) epochs(id, accepted, current int64) {
	m := f.m(id)
	m.Accepted, m.Current, m.DiskAccepted, m.DiskCurrent = accepted, current, accepted, current
}

// establish makes id the leader of epoch: discovery, synchronization, then
// broadcast.
func (f *fixture) establish(id, epoch int64) {
	f.m(id).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: id}
	f.step(id) // gathering FOLLOWERINFO
	f.propose(id, epoch)
	f.acked(id)
	f.epochs(id, epoch, epoch)
	f.m(id).State.Phase = zab.PhaseSync
	f.step(id)
	f.m(id).State.Phase = zab.PhaseBroadcast
	f.step(id)
}

// propose makes leader id propose epoch: its acceptedEpoch, on disk.
func (f *fixture) propose(id, epoch int64) {
	m := f.m(id)
	m.Accepted, m.DiskAccepted = epoch, epoch
	m.State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: id, Epoch: epoch}
	f.step(id)
}

// acked gives leader id the ACKEPOCHs of every other voter, each accepting
// its epoch anew.
func (f *fixture) acked(id int64) {
	for v := int64(1); v <= 3; v++ {
		if v != id {
			f.c.Received(id, v, ackEpoch(0))
		}
	}
}

func followerInfo(accepted int64) *wire.QuorumPacket {
	return &wire.QuorumPacket{Type: wire.PacketFollowerInfo, Zxid: z(accepted, 0)}
}

func leaderInfo(epoch int64) wire.QuorumPacket {
	return wire.QuorumPacket{Type: wire.PacketLeaderInfo, Zxid: z(epoch, 0)}
}

func leaderInfoPacket(epoch int64) *wire.QuorumPacket {
	qp := leaderInfo(epoch)
	return &qp
}

func ackEpoch(current int32) *wire.QuorumPacket {
	return &wire.QuorumPacket{Type: wire.PacketAckEpoch, Data: wire.Marshal(&wire.AckEpoch{CurrentEpoch: current})}
}

// follow makes id serve under leader in epoch.
func (f *fixture) follow(id, leader, epoch int64) {
	f.epochs(id, epoch, epoch)
	f.m(id).State = zab.SoftState{Role: zab.RoleFollowing, Phase: zab.PhaseBroadcast, Leader: leader, Epoch: epoch}
	f.step(id)
}

// logAs appends zxid with the given hash to id's log, durably.
func (f *fixture) logAs(id, zxid int64, hash uint64) {
	m := f.m(id)
	m.Log = append(m.Log, zxid)
	f.check(f.c.Appended(id, zxid, hash))
	m.Durable = zxid
	f.step(id)
}

// log appends the txn zxid to id's log (a leader's own: a broadcast).
func (f *fixture) log(id, zxid int64) { f.logAs(id, zxid, hashOf(zxid)) }

// apply moves id's tree to zxid, with the digest every member has there.
func (f *fixture) apply(id, zxid int64) {
	f.m(id).Applied, f.m(id).Digest = zxid, digestOf(zxid)
	f.step(id)
}

func z(epoch, counter int64) int64 { return epoch<<32 | counter }
func hashOf(zxid int64) uint64     { return uint64(zxid)*2654435761 + 1 }
func digestOf(zxid int64) int64    { return zxid*7 + 3 }

// epochOne: 1 leads epoch 1, 2 and 3 follow, 4 observes; 1:1 is logged
// by 1 and 2 and delivered by both.
func epochOne(f *fixture) {
	f.establish(1, 1)
	for id := int64(2); id <= 4; id++ {
		f.follow(id, 1, 1)
	}
	f.log(1, z(1, 1))
	f.log(2, z(1, 1))
	f.apply(1, z(1, 1))
	f.apply(2, z(1, 1))
}

// TestEachInvariantFiresAndStaysSilent: for each invariant, a small
// hand-built run that keeps it passes, and the same run with one thing
// broken fails naming it (a checker that cannot fail proves nothing).
func TestEachInvariantFiresAndStaysSilent(t *testing.T) {
	cases := []struct {
		name string
		want string // the invariant the broken run violates
		// valid and broken run after epochOne.
		valid, broken func(f *fixture)
	}{
		{
			name: "two leaders of one epoch", want: Leadership,
			valid: func(f *fixture) { f.establish(2, 2) },
			broken: func(f *fixture) {
				// Leading epoch 1 as it followed it (how it came to propose
				// it is EpochProposal's).
				f.m(2).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseSync, Leader: 2, Epoch: 1}
				f.step(2)
			},
		},
		{
			name: "a broadcast by a leader that has not established its epoch", want: Leadership,
			valid: func(f *fixture) {
				f.propose(3, 2)
				f.acked(3)
				f.epochs(3, 2, 2)
				f.m(3).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseSync, Epoch: 2}
				f.log(3, z(1, 1))
				f.apply(3, z(1, 1))
				f.log(3, z(2, 1))
			},
			broken: func(f *fixture) {
				f.epochs(3, 2, 1)
				f.m(3).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Epoch: 2}
				f.log(3, z(2, 1))
			},
		},
		{
			name: "a logged txn no leader broadcast", want: Integrity,
			valid:  func(f *fixture) { f.log(1, z(1, 2)); f.log(3, z(1, 2)) },
			broken: func(f *fixture) { f.log(3, z(1, 2)) },
		},
		{
			name: "a delivered txn no leader broadcast", want: Integrity,
			valid: func(f *fixture) { f.log(1, z(1, 2)); f.log(3, z(1, 2)); f.apply(1, z(1, 2)) },
			broken: func(f *fixture) {
				// Written to the logs behind the checker's back.
				for _, id := range []int64{1, 3} {
					f.m(id).Log = append(f.m(id).Log, z(1, 2))
					f.m(id).Durable = z(1, 2)
				}
				f.apply(1, z(1, 2))
			},
		},
		{
			name: "a member logging another txn under a broadcast zxid", want: Agreement,
			valid:  func(f *fixture) { f.logAs(3, z(1, 1), hashOf(z(1, 1))) },
			broken: func(f *fixture) { f.logAs(3, z(1, 1), hashOf(z(1, 1))+1) },
		},
		{
			name: "one zxid broadcast with two txns (ZOOKEEPER-335)", want: Agreement,
			valid:  func(f *fixture) { f.check(f.c.Appended(1, z(1, 1), hashOf(z(1, 1)))) },
			broken: func(f *fixture) { f.check(f.c.Appended(1, z(1, 1), hashOf(z(1, 1))+1)) },
		},
		{
			name: "a member delivering another txn where the others delivered 1:1", want: PrefixConsistency,
			valid: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(3, z(1, 1))
				f.log(3, z(1, 2))
				f.apply(3, z(1, 2))
			},
			broken: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(3, z(1, 2))
				f.apply(3, z(1, 2)) // 1:2 as its first txn: it never had 1:1
			},
		},
		{
			name: "a tree going back while its member runs", want: PrefixConsistency,
			valid: func(f *fixture) {
				f.m(2).Applied = 0
				f.check(f.c.Started(2)) // a restart from the empty snapshot
			},
			broken: func(f *fixture) { f.apply(2, 0) },
		},
		{
			name: "a SNAP of a txn nobody delivered", want: PrefixConsistency,
			valid: func(f *fixture) { f.c.Installed(3, z(1, 1)); f.apply(3, z(1, 1)) },
			broken: func(f *fixture) {
				f.log(1, z(1, 2))
				f.c.Installed(3, z(1, 2))
				f.apply(3, z(1, 2))
			},
		},
		{
			name: "a member skipping a txn the others delivered", want: TotalOrder,
			valid: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(2, z(1, 2))
				f.apply(1, z(1, 2))
				f.log(3, z(1, 1))
				f.log(3, z(1, 2))
				f.apply(3, z(1, 2))
			},
			broken: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(2, z(1, 2))
				f.apply(1, z(1, 2))
				f.log(3, z(1, 2))
				f.apply(3, z(1, 2)) // 1:2 before 1:1
			},
		},
		{
			name: "a broadcast skipping a counter", want: LocalPrimaryOrder,
			valid:  func(f *fixture) { f.log(1, z(1, 2)) },
			broken: func(f *fixture) { f.log(1, z(1, 3)) },
		},
		{
			name: "a first delivery skipping a broadcast txn", want: LocalPrimaryOrder,
			valid: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(1, z(1, 3))
				f.log(2, z(1, 2))
				f.log(2, z(1, 3))
				f.apply(1, z(1, 3))
			},
			broken: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(1, z(1, 3))
				f.log(2, z(1, 3))
				f.m(1).Log = []int64{z(1, 1), z(1, 3)} // as if 1:2 were lost from its log
				f.apply(1, z(1, 3))
			},
		},
		{
			// Zab.tla's GlobalPrimaryOrder: an older epoch's txn after a
			// newer one's can only come with the tree going back.
			name: "an older epoch's txn delivered after a newer epoch's", want: PrefixConsistency,
			valid: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(2, z(1, 2))
				f.apply(2, z(1, 2))
				f.establish(2, 2)
				f.log(2, z(2, 1))
				f.log(3, z(2, 1))
				f.apply(2, z(2, 1))
			},
			broken: func(f *fixture) {
				f.establish(2, 2)
				f.log(2, z(2, 1))
				f.log(3, z(2, 1))
				f.apply(2, z(2, 1))
				f.log(1, z(1, 2))
				f.m(2).Log = []int64{z(1, 1), z(1, 2), z(2, 1)}
				f.apply(2, z(1, 2))
			},
		},
		{
			name: "a new leader broadcasting before delivering what others delivered", want: PrimaryIntegrity,
			valid: func(f *fixture) {
				f.log(3, z(1, 1))
				f.apply(3, z(1, 1))
				f.establish(3, 2)
				f.log(3, z(2, 1))
			},
			broken: func(f *fixture) {
				f.log(3, z(1, 1))
				f.establish(3, 2)
				f.log(3, z(2, 1))
			},
		},
		{
			name: "a new leader whose history lacks a delivered txn", want: PrimaryIntegrity,
			valid: func(f *fixture) {
				f.m(3).Snapshot = z(1, 1)
				f.establish(3, 2)
			},
			broken: func(f *fixture) { f.establish(3, 2) },
		},
		{
			name: "an old epoch's txn delivered first after a new leader broadcast", want: PrimaryIntegrity,
			valid: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(3, z(1, 1))
				f.log(3, z(1, 2))
				f.apply(1, z(1, 2))
				f.apply(3, z(1, 2))
				f.establish(3, 2)
				f.log(3, z(2, 1))
			},
			broken: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(3, z(1, 1))
				f.log(3, z(1, 2))
				f.apply(3, z(1, 1))
				f.establish(3, 2)
				f.log(3, z(2, 1))
				f.apply(1, z(1, 2))
			},
		},
		{
			name: "acceptedEpoch below currentEpoch", want: EpochOrder,
			valid:  func(f *fixture) { f.epochs(2, 3, 2); f.step(2) },
			broken: func(f *fixture) { f.epochs(2, 2, 3); f.step(2) },
		},
		{
			name: "an epoch going back across a restart", want: EpochOrder,
			valid: func(f *fixture) { f.check(f.c.Started(2)) },
			broken: func(f *fixture) {
				f.epochs(2, 0, 0) // the epoch files lost
				f.check(f.c.Started(2))
			},
		},
		{
			name: "a member working with an epoch its disk does not hold", want: EpochDurable,
			valid: func(f *fixture) {
				f.m(2).Accepted = 2
				f.m(2).DiskAccepted = 2
				f.step(2)
			},
			broken: func(f *fixture) {
				f.m(2).Accepted = 2
				f.step(2)
			},
		},
		{
			name: "two digests at one zxid", want: OneDigestPerZxid,
			valid: func(f *fixture) {
				// A tree loaded from a fuzzy snapshot is no member's tree
				// at its zxid until it has applied what the snapshot holds.
				f.m(3).FuzzyUntil = z(1, 2)
				f.m(3).State.Phase = zab.PhaseSync
				f.c.Installed(3, z(1, 1))
				f.m(3).Applied, f.m(3).Digest = z(1, 1), 5
				f.step(3)
			},
			broken: func(f *fixture) {
				f.c.Installed(3, z(1, 1))
				f.m(3).Applied, f.m(3).Digest = z(1, 1), 5
				f.step(3)
			},
		},
		{
			name: "a digest differing from the txn's", want: OneDigestPerZxid,
			valid: func(f *fixture) {
				f.m(2).TxnDigest, f.m(2).HasTxnDigest = digestOf(z(1, 1)), true
				f.step(2)
			},
			broken: func(f *fixture) {
				f.m(2).TxnDigest, f.m(2).HasTxnDigest = 5, true
				f.step(2)
			},
		},
		{
			name: "a first delivery not durable on a quorum of voters", want: QuorumDurability,
			valid: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(3, z(1, 2))
				f.apply(1, z(1, 2))
			},
			broken: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(4, z(1, 2)) // an observer's disk makes no quorum
				f.apply(1, z(1, 2))
			},
		},
		{
			name: "a reply carrying a zxid not durable on a quorum", want: QuorumDurability,
			valid: func(f *fixture) {
				f.log(1, z(1, 2))
				f.m(3).Snapshot = z(1, 2) // a durable snapshot holds it too
				f.check(f.c.Replied(1, z(1, 2)))
			},
			broken: func(f *fixture) {
				f.log(1, z(1, 2))
				f.m(3).Log = []int64{z(1, 2)} // logged, not yet durable
				f.check(f.c.Replied(1, z(1, 2)))
			},
		},
		{
			name: "currentEpoch on a disk whose log has not made the initial history durable", want: HistoryDurable,
			valid: func(f *fixture) {
				f.establish(1, 2) // its initial history ends at 1:1
				f.log(3, z(1, 1))
				f.follow(3, 1, 2)
			},
			broken: func(f *fixture) {
				f.establish(1, 2)
				f.m(3).Log = []int64{z(1, 1)} // logged, not yet durable (ZOOKEEPER-3911)
				f.follow(3, 1, 2)
			},
		},
		{
			name: "a leader making its epoch current over a log not yet durable", want: HistoryDurable,
			valid: func(f *fixture) { f.establish(2, 2) },
			broken: func(f *fixture) {
				f.m(2).Log = append(f.m(2).Log, z(1, 2)) // logged, not yet durable (ZOOKEEPER-4643)
				f.establish(2, 2)
			},
		},
		{
			name: "an ACKEPOCH of an epoch below the accepted one", want: AckDurable,
			valid: func(f *fixture) {
				f.c.Received(2, 3, leaderInfoPacket(2))
				f.epochs(2, 2, 1)
				f.m(2).State = zab.SoftState{Role: zab.RoleFollowing, Phase: zab.PhaseSync, Leader: 3, Epoch: 2}
				f.step(2)
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 3, Packet: *ackEpoch(1)}))
			},
			broken: func(f *fixture) {
				f.epochs(2, 3, 1) // it accepted epoch 3 from another leader
				f.step(2)
				f.c.Received(2, 3, leaderInfoPacket(2))
				f.m(2).State = zab.SoftState{Role: zab.RoleFollowing, Phase: zab.PhaseSync, Leader: 3, Epoch: 2}
				f.step(2)
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 3, Packet: *ackEpoch(-1)}))
			},
		},
		{
			name: "a NEWLEADER ACK before currentEpoch is on disk", want: AckDurable,
			valid: func(f *fixture) {
				f.epochs(2, 2, 2)
				f.step(2)
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 3, Packet: wire.QuorumPacket{Type: wire.PacketAck, Zxid: z(2, 0)}}))
			},
			broken: func(f *fixture) {
				f.epochs(2, 2, 1)
				f.m(2).Current = 2
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 3, Packet: wire.QuorumPacket{Type: wire.PacketAck, Zxid: z(2, 0)}}))
			},
		},
		{
			name: "a proposal ACKed before it is durable", want: AckDurable,
			valid: func(f *fixture) {
				f.log(1, z(1, 2))
				f.log(2, z(1, 2))
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 1, Packet: wire.QuorumPacket{Type: wire.PacketAck, Zxid: z(1, 2)}}))
			},
			broken: func(f *fixture) {
				f.log(1, z(1, 2))
				f.m(2).Log = append(f.m(2).Log, z(1, 2)) // logged, not yet durable
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 1, Packet: wire.QuorumPacket{Type: wire.PacketAck, Zxid: z(1, 2)}}))
			},
		},
		{
			name: "a leader proposing an epoch it had accepted before it led", want: EpochProposal,
			valid: func(f *fixture) {
				f.epochs(2, 2, 1) // accepted epoch 2 from a leader that never established it
				f.step(2)
				f.establish(2, 3)
			},
			broken: func(f *fixture) {
				f.epochs(2, 2, 1)
				f.step(2)
				f.establish(2, 2)
			},
		},
		{
			name: "an epoch proposed to a voter that had accepted it", want: EpochProposal,
			valid: func(f *fixture) {
				f.m(2).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: 2}
				f.step(2)
				f.c.Received(2, 3, followerInfo(1))
				f.propose(2, 2)
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 3, Packet: leaderInfo(2)}))
			},
			broken: func(f *fixture) {
				f.m(2).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: 2}
				f.step(2)
				f.c.Received(2, 3, followerInfo(2)) // it accepted epoch 2 from another leader
				f.propose(2, 2)
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 3, Packet: leaderInfo(2)}))
			},
		},
		{
			name: "a LEADERINFO to a late learner that accepted a later epoch", want: EpochProposal,
			valid: func(f *fixture) {
				f.m(2).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: 2}
				f.step(2)
				f.propose(2, 2)
				f.step(2) // a later Ready: 3's FOLLOWERINFO comes after the proposal
				f.c.Received(2, 3, followerInfo(2))
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 3, Packet: leaderInfo(2)}))
			},
			broken: func(f *fixture) {
				f.m(2).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: 2}
				f.step(2)
				f.propose(2, 2)
				f.step(2)
				f.c.Received(2, 3, followerInfo(3))
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 3, Packet: leaderInfo(2)}))
			},
		},
		{
			name: "an epoch made current without a quorum accepting it anew", want: EpochQuorum,
			valid: func(f *fixture) {
				f.m(2).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: 2}
				f.step(2)
				f.propose(2, 2)
				f.c.Received(2, 3, ackEpoch(1))
				f.epochs(2, 2, 2)
				f.m(2).State.Phase = zab.PhaseSync
				f.step(2)
			},
			broken: func(f *fixture) {
				f.m(2).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: 2}
				f.step(2)
				f.propose(2, 2)
				f.c.Received(2, 3, ackEpoch(-1)) // it had accepted epoch 2 before
				f.epochs(2, 2, 2)
				f.m(2).State.Phase = zab.PhaseSync
				f.step(2)
			},
		},
		{
			name: "a learner synchronized before the epoch is the leader's currentEpoch", want: EpochQuorum,
			valid: func(f *fixture) {
				f.m(2).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: 2}
				f.step(2)
				f.propose(2, 2)
				f.acked(2)
				f.epochs(2, 2, 2)
				f.m(2).State.Phase = zab.PhaseSync
				f.step(2)
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 3, Packet: wire.QuorumPacket{Type: wire.PacketDiff, Zxid: z(1, 1)}}))
			},
			broken: func(f *fixture) {
				f.m(2).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: 2}
				f.step(2)
				f.propose(2, 2)
				f.acked(2)
				f.check(f.c.Sent(2, &zab.PeerMessage{To: 3, Packet: wire.QuorumPacket{Type: wire.PacketDiff, Zxid: z(1, 1)}}))
			},
		},
		{
			name: "an epoch made current over a learner's more recent history", want: InitialHistory,
			valid: func(f *fixture) {
				f.m(2).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: 2}
				f.step(2)
				f.propose(2, 2)
				ack := ackEpoch(1)
				ack.Zxid = z(1, 1) // its history: as recent as the leader's
				f.c.Received(2, 3, ack)
				f.epochs(2, 2, 2)
				f.m(2).State.Phase = zab.PhaseSync
				f.step(2)
			},
			broken: func(f *fixture) {
				f.m(2).State = zab.SoftState{Role: zab.RoleLeading, Phase: zab.PhaseDiscovery, Leader: 2}
				f.step(2)
				f.propose(2, 2)
				ack := ackEpoch(1)
				ack.Zxid = z(1, 2) // a txn the leader lacks
				f.c.Received(2, 3, ack)
				f.epochs(2, 2, 2)
				f.m(2).State.Phase = zab.PhaseSync
				f.step(2)
			},
		},
		{
			name: "a learner answering a client before UPTODATE", want: Serving,
			valid: func(f *fixture) {
				f.check(f.c.Answering(2))
				f.m(2).State.Phase = zab.PhaseElection // its last replies, then a step down
				f.check(f.c.Answering(2))
				f.step(2)
			},
			broken: func(f *fixture) {
				f.m(2).State.Phase = zab.PhaseSync
				f.step(2)
				f.check(f.c.Answering(2))
			},
		},
		{
			name: "an observer sent a proposal after NEWLEADER", want: ObserverInform,
			valid: func(f *fixture) {
				f.check(f.c.Sent(1, &zab.PeerMessage{To: 4, Packet: wire.QuorumPacket{Type: wire.PacketDiff, Zxid: z(1, 1)}}))
				f.check(f.c.Sent(1, &zab.PeerMessage{To: 4, Packet: wire.QuorumPacket{Type: wire.PacketProposal, Zxid: z(1, 1)}}))
				f.check(f.c.Sent(1, &zab.PeerMessage{To: 4, Packet: wire.QuorumPacket{Type: wire.PacketCommit, Zxid: z(1, 1)}}))
				f.check(f.c.Sent(1, &zab.PeerMessage{To: 4, Packet: wire.QuorumPacket{Type: wire.PacketNewLeader, Zxid: z(1, 0)}}))
				f.check(f.c.Sent(1, &zab.PeerMessage{To: 4, Packet: wire.QuorumPacket{Type: wire.PacketInform, Zxid: z(1, 2)}}))
			},
			broken: func(f *fixture) {
				f.check(f.c.Sent(1, &zab.PeerMessage{To: 4, Packet: wire.QuorumPacket{Type: wire.PacketDiff, Zxid: z(1, 1)}}))
				f.check(f.c.Sent(1, &zab.PeerMessage{To: 4, Packet: wire.QuorumPacket{Type: wire.PacketNewLeader, Zxid: z(1, 0)}}))
				f.check(f.c.Sent(1, &zab.PeerMessage{To: 4, Packet: wire.QuorumPacket{Type: wire.PacketProposal, Zxid: z(1, 2)}}))
			},
		},
		{
			name: "a member serving from a fuzzy tree", want: FuzzyTreeServed,
			valid: func(f *fixture) {
				f.m(3).FuzzyUntil = z(1, 2)
				f.m(3).State.Phase = zab.PhaseSync
				f.step(3)
			},
			broken: func(f *fixture) {
				f.m(3).FuzzyUntil = z(1, 2)
				f.step(3)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			epochOne(f)
			require.Nil(t, f.first, "the common start")
			tc.valid(f)
			require.Nil(t, f.first, "the valid run")

			f = newFixture(t)
			epochOne(f)
			tc.broken(f)
			require.NotNil(t, f.first, "the broken run")
			require.Equal(t, tc.want, f.first.Invariant, "%v", f.first)
			t.Log(f.first)
		})
	}
}

// TestViolationNamesMembersAndZxids: a violation says which invariant,
// which members and which zxids, in its fields and its message.
func TestViolationNamesMembersAndZxids(t *testing.T) {
	f := newFixture(t)
	epochOne(f)
	f.logAs(3, z(1, 1), 7)
	require.NotNil(t, f.first)
	require.Equal(t, Agreement, f.first.Invariant)
	require.Equal(t, []int64{3, 1}, f.first.Members)
	require.Equal(t, []int64{z(1, 1)}, f.first.Zxids)
	require.Equal(t, "Agreement: server 3 logs under 0x100000001 a txn differing from the one leader 1 broadcast under it", f.first.Error())
}

// TestDeliveredSequence: the checker tells each member's delivered zxids,
// in order, and each epoch's leader; the shell hears of each first
// delivery once, in order.
func TestDeliveredSequence(t *testing.T) {
	q, err := election.NewMajority([]int64{1, 2, 3})
	require.NoError(t, err)
	var firsts []int64
	f := &fixture{shell: fakeShell{}}
	for id := int64(1); id <= 4; id++ {
		f.shell[id] = &Member{Up: true}
	}
	f.c = New(Config{Members: []int64{1, 2, 3, 4}, Quorum: q, FirstDelivered: func(_, zxid int64) { firsts = append(firsts, zxid) }}, f.shell)
	epochOne(f)
	f.log(1, z(1, 2))
	f.log(2, z(1, 2))
	f.apply(2, z(1, 2))
	f.apply(1, z(1, 2))
	require.Nil(t, f.first)
	require.Equal(t, []int64{z(1, 1), z(1, 2)}, firsts)
	require.Equal(t, []int64{z(1, 1), z(1, 2)}, f.c.Delivered(1))
	require.Empty(t, f.c.Delivered(3))
	require.Equal(t, int64(1), f.c.LeaderOf(1))
	require.Equal(t, z(1, 2), f.c.LastDelivered())
	require.True(t, f.c.DurableOnQuorum(z(1, 2)))
	require.False(t, f.c.DurableOnQuorum(z(1, 3)))

	// A damaged member abstains until synchronized: a txn only one
	// intact voter holds is safe while the intact voters that lack it
	// are no quorum, and lost once they are.
	f.m(2).Damaged = true
	f.m(2).Durable, f.m(2).Log = 0, nil
	require.True(t, f.c.DurableOnQuorum(z(1, 2)), "server 3 alone lacks it: no quorum elects without server 1")
	require.False(t, f.c.DurableOnQuorum(z(1, 3)), "servers 1 and 3, a quorum, lack it")
}

// TestStandalone: a standalone server may reuse a zxid a crash took before
// it was durable (its appends are not checked), but what it delivers and
// answers is: a prefix of one sequence, durable on its own disk.
func TestStandalone(t *testing.T) {
	shell := fakeShell{1: &Member{Up: true}}
	c := New(Config{Members: []int64{1}}, shell)
	m := shell[1]
	require.Nil(t, c.Started(1))
	m.Log, m.Durable = []int64{1}, 1
	require.Nil(t, c.Appended(1, 1, 10))
	m.Applied, m.Digest = 1, 100
	require.Nil(t, c.Stepped(1))
	m.Log = []int64{1, 2}
	require.Nil(t, c.Appended(1, 2, 20))
	require.Nil(t, c.Stepped(1))
	// A crash loses 2 before it is durable; the restarted server logs
	// another txn under it.
	m.Log = []int64{1}
	require.Nil(t, c.Started(1))
	m.Log = []int64{1, 2}
	require.Nil(t, c.Appended(1, 2, 21))
	require.Nil(t, c.Stepped(1))
	require.Equal(t, QuorumDurability, c.Replied(1, 2).Invariant, "2 is not yet durable")
	m.Durable = 2
	require.Nil(t, c.Replied(1, 2))
	m.Applied, m.Digest = 2, 200
	require.Nil(t, c.Stepped(1))
	m.Applied = 1
	require.Equal(t, PrefixConsistency, c.Stepped(1).Invariant, "its tree went back")
}
