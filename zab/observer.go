package zab

import "github.com/zabd/zabd/wire"

// This file is the OBSERVING role (ZooKeeper's Observer): a learner that
// never votes and never counts in a quorum. It registers with
// OBSERVERINFO, is synchronized like a follower, and then learns each
// committed txn at once from INFORM, which carries the txn (it is sent no
// PROPOSAL and no COMMIT, and ACKs nothing but NEWLEADER). It serves reads
// and forwards writes like a follower (learner.go).

// becomeObserving enters OBSERVING under leader.
func (p *Peer) becomeObserving(leader int64) { p.becomeLearner(leader, true) }

// observerBroadcastTxn takes the leader's INFORM once up to date; PROPOSAL
// and COMMIT are for followers.
func (p *Peer) observerBroadcastTxn(qp *wire.QuorumPacket) {
	switch qp.Type {
	case wire.PacketInform:
		p.observerInform(qp)
	case wire.PacketProposal:
		p.leaveEpoch(qp, "an observer is sent INFORM, not PROPOSAL")
	default:
		p.leaveEpoch(qp, "an observer is sent INFORM, not COMMIT")
	}
}

// observerInform logs the committed txn an INFORM carries, in order like
// any proposal, and knows it committed: once up to date the observer
// applies it at once (the voters decided the commit, so the observer's own
// fsync is part of no quorum); before, at UPTODATE.
func (p *Peer) observerInform(qp *wire.QuorumPacket) {
	l := p.learn
	p.learnerProposal(qp)
	if p.learn != l {
		return // it left the epoch: the txn was out of order
	}
	l.committed = max(l.committed, qp.Zxid)
	if l.stage == learnerUpToDate {
		p.applyCommittedProposals()
	}
}
