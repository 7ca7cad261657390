package election

import (
	"fmt"

	"github.com/zabd/zabd/wire"
)

// Vote is a proposal for leader: the proposed leader's server id, the zxid
// and epoch it is proposed with, and the election round it was made in.
type Vote struct {
	Leader        int64
	Zxid          int64
	ElectionEpoch int64 // the round (ZooKeeper's logicalclock) the vote belongs to
	PeerEpoch     int64 // the proposed leader's currentEpoch
}

func (v Vote) String() string {
	return fmt.Sprintf("(leader %d, zxid 0x%x, peerEpoch 0x%x, round 0x%x)", v.Leader, v.Zxid, v.PeerEpoch, v.ElectionEpoch)
}

// Beats reports whether v ranks above o in FLE's total order: higher
// peerEpoch first, then higher zxid, then higher server id. The round is not
// part of the order; rounds are compared before votes are.
func (v Vote) Beats(o Vote) bool {
	if v.PeerEpoch != o.PeerEpoch {
		return v.PeerEpoch > o.PeerEpoch
	}
	if v.Zxid != o.Zxid {
		return v.Zxid > o.Zxid
	}
	return v.Leader > o.Leader
}

// ballot is a vote as a server holds it after receiving it: with the
// sender's state and the notification format version, both of which decide
// when two ballots count as the same vote.
type ballot struct {
	vote    Vote
	state   wire.PeerState
	version int32
}

// agrees is ZooKeeper's vote equality (Vote.equals). While either side is
// LOOKING every field counts. Between servers that have left the election
// only the leader and its epoch count: their zxid and round may have moved
// on since (ZOOKEEPER-1805); and if only one side's notification format
// carries a version, only the leader counts, because older servers report a
// different peerEpoch (ZOOKEEPER-1732).
func (b ballot) agrees(o ballot) bool {
	if b.state == wire.PeerLooking || o.state == wire.PeerLooking {
		return b.vote == o.vote
	}
	if (b.version > 0) != (o.version > 0) {
		return b.vote.Leader == o.vote.Leader
	}
	return b.vote.Leader == o.vote.Leader && b.vote.PeerEpoch == o.vote.PeerEpoch
}
