package zab

import "github.com/zabd/zabd/wire"

// This file is the FOLLOWING role (ZooKeeper's Follower): a learner that
// votes. It ACKs every proposal once durable, so that the leader can count
// it in quorums, and it takes COMMIT for each proposal in zxid order
// (learner.go holds the phases it shares with observers).

// becomeFollowing enters FOLLOWING under leader.
func (p *Peer) becomeFollowing(leader int64) { p.becomeLearner(leader, false) }

// followerBroadcastTxn takes the leader's PROPOSAL or COMMIT once up to
// date; INFORM is for observers.
func (p *Peer) followerBroadcastTxn(qp *wire.QuorumPacket) {
	switch qp.Type {
	case wire.PacketProposal:
		p.learnerProposal(qp)
	case wire.PacketCommit:
		p.followerCommit(qp)
	default:
		p.leaveEpoch(qp, "INFORM is for observers")
	}
}

// followerCommit marks txns committed up to a zxid in broadcast, and
// applies them: the zxid must be the oldest proposal not yet committed. A
// ZooKeeper 3.8.0 follower's process exits on any other
// (FollowerZooKeeperServer.commit, requestSystemExit); a zabd follower
// leaves the epoch.
func (p *Peer) followerCommit(qp *wire.QuorumPacket) {
	l := p.learn
	if qp.Zxid > p.lastProposed || qp.Zxid <= l.committed {
		p.leaveEpoch(qp, "it commits a txn we do not hold, or one committed already")
		return
	}
	if head := p.oldestUncommitted(); head != qp.Zxid {
		p.leaveEpoch(qp, "it is not our oldest pending proposal "+zxidHex(head))
		return
	}
	l.committed = max(l.committed, qp.Zxid)
	p.applyCommittedProposals()
}

// oldestUncommitted is the zxid of the first proposal the follower holds
// that it does not know committed.
func (p *Peer) oldestUncommitted() int64 {
	for i := p.inflightHead; i < len(p.inflight); i++ {
		if z := p.inflight[i].txn.Header.Zxid; z > p.learn.committed {
			return z
		}
	}
	return 0
}

// maybeAckProposals ACKs, once NEWLEADER is ACKed, every proposal after
// it now durable, each with its own ACK, in zxid order, applied or not: a
// ZooKeeper leader counts an ACK for its own zxid only (Leader.processAck),
// and drops a learner that leaves a proposal it was sent unacknowledged for
// syncLimit (LearnerHandler's SyncLimitCheck). A zabd leader counts an ACK
// for everything up to its zxid, and takes these as well. Observers do not
// ACK proposals.
func (p *Peer) maybeAckProposals() {
	l := p.learn
	if l == nil || l.observer || l.stage < learnerNewLeaderAcked {
		return
	}
	d := p.durableZxid()
	n := 0
	for n < len(l.toAck) && l.toAck[n] <= d {
		p.sendPeer(l.leader, wire.QuorumPacket{Type: wire.PacketAck, Zxid: l.toAck[n]}, nil)
		n++
	}
	l.toAck = l.toAck[n:]
}
