package zab

import (
	"math"
	"slices"
	"time"

	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/wire"
)

// This file is the LOOKING role and what every role shares: the election
// (package election, wired here, not reimplemented), entering a role, and
// the member's persistent epochs.

// never is a wakeup that is not due.
const never = time.Duration(math.MaxInt64)

// becomeLooking starts an election round. Whatever role the member had
// ends: its quorum connections close, and so do its client connections
// (their clients reconnect elsewhere or here once a leader serves),
// because a member that is not in broadcast serves nothing.
func (p *Peer) becomeLooking() {
	p.resetRole(RoleLooking, 0)
	p.elections++
	p.lookingSince = p.now.Mono
	p.reportState()
	// The round may be decided at once (votes that came early, an
	// unreachable leader): then the role it decides on is the one reported.
	p.election.Start(p.now.Mono, p.lastProposed, p.currentEpoch)
	p.collectVotes()
}

// resetRole leaves the current role for role: the role's state goes, its
// peers' connections close, and clients are disconnected.
func (p *Peer) resetRole(role Role, leader int64) {
	switch {
	case p.lead != nil:
		for _, h := range p.lead.handlers {
			p.closeConnection(h.sid)
		}
		// The txns it prepared and did not apply stay in its log as
		// proposals, but the tree must forget their changes: a later lead
		// prepares against the tree as synchronization leaves it (a stale
		// change made its next txns' digests wrong).
		p.tree.DiscardPending()
		// Likewise the sessions it decided to close (their closeSession
		// txns may be lost with its leadership) and their owners.
		if !p.cfg.Bugs.ClosingSurvivesStepDown {
			p.sessions.StepDown()
		}
	case p.learn != nil && !p.learn.leaderGone:
		p.closeConnection(p.learn.leader)
	}
	if p.role != RoleLooking || p.lead != nil || p.learn != nil {
		p.disconnectClients()
	}
	p.lead, p.learn = nil, nil
	p.role, p.leaderID = role, leader
}

// disconnectClients closes every client connection and forgets what they
// waited for: their sessions live on, and their clients reconnect.
func (p *Peer) disconnectClients() {
	for _, id := range sortedConnIDs(p.conns) {
		p.closeConn(p.conns[id])
	}
	clear(p.queues)
	p.syncWaiters = nil
}

// stepVote hands a notification to the election. Every role does: a
// member that is not looking answers a looking one with its vote.
func (p *Peer) stepVote(e PeerVote) {
	if p.election == nil {
		p.warn("standalone: ignoring a vote from server %d", e.From)
		return
	}
	p.election.Step(p.now.Mono, e.From, e.Notification)
	p.collectVotes()
}

// stepUnreachable tells the election that a voter's process is gone.
func (p *Peer) stepUnreachable(e PeerUnreachable) {
	if p.election == nil {
		return
	}
	p.election.SetUnreachable(e.Peer)
	p.collectVotes()
}

// collectVotes takes the election's sends and, if it decided, enters the
// role it decided on.
func (p *Peer) collectVotes() {
	rd := p.election.Ready()
	p.out.Votes = append(p.out.Votes, rd.Messages...)
	p.electionWakeup = rd.Wakeup
	if rd.Decision == nil || p.role != RoleLooking {
		return
	}
	v := rd.Decision.Vote
	p.notice("looking: elected server %d (vote epoch %d, zxid %s, round %d) after %v as %s",
		v.Leader, v.PeerEpoch, zxidHex(v.Zxid), v.ElectionEpoch, p.now.Mono-p.lookingSince, rd.Decision.State)
	switch rd.Decision.State {
	case wire.PeerLeading:
		p.becomeLeading()
	case wire.PeerFollowing:
		p.becomeFollowing(v.Leader)
	case wire.PeerObserving:
		p.becomeObserving(v.Leader)
	}
}

// announce makes the election answer with the new epoch once discovery
// fixed it (ZooKeeper's updateElectionVote), so that late joiners find the
// leader with the epoch it serves.
func (p *Peer) announce(epoch int64) {
	if p.election == nil {
		return
	}
	v := p.election.Vote()
	v.PeerEpoch = epoch
	state := wire.PeerFollowing
	switch p.role {
	case RoleLeading:
		state = wire.PeerLeading
	case RoleObserving:
		state = wire.PeerObserving
	}
	_ = p.election.Announce(state, v) // the role matches the vote by construction
}

// setAcceptedEpoch records the epoch this member accepted; the shell makes
// it durable before the Ready's peer messages leave.
func (p *Peer) setAcceptedEpoch(epoch int64) {
	p.acceptedEpoch = epoch
	p.epochsChanged()
}

// setCurrentEpoch records the epoch this member has joined (its history
// is the epoch's initial history); durable before the Ready's messages.
func (p *Peer) setCurrentEpoch(epoch int64) {
	p.currentEpoch = epoch
	p.epochsChanged()
}

func (p *Peer) epochsChanged() {
	if p.cfg.Bugs.EpochNotPersisted {
		return
	}
	p.out.Epochs = &EpochWrite{Accepted: p.acceptedEpoch, Current: p.currentEpoch}
}

// reportState hands the shells the role as it is now.
func (p *Peer) reportState() {
	s := p.State()
	p.out.State = &s
}

// sendPeer queues a packet for a peer on the quorum channel.
func (p *Peer) sendPeer(to int64, qp wire.QuorumPacket, snapshot []byte) {
	p.out.PeerMessages = append(p.out.PeerMessages, PeerMessage{To: to, Packet: qp, Snapshot: snapshot})
}

// closeConnection closes the quorum connection with sid. Until sid opens a
// new one, what else comes from it was on the closed connection, in flight
// when the close was asked for: a shell that steps every waiting event
// before it takes a Ready (zabd's loop) hands it over before the close is
// carried out, and it is ignored, neither taken for the next connection's
// nor for a fault of the peer's.
func (p *Peer) closeConnection(sid int64) {
	p.out.PeerMessages = append(p.out.PeerMessages, PeerMessage{To: sid, Kind: PeerClose})
	if !slices.Contains(p.closedConns, sid) {
		p.closedConns = append(p.closedConns, sid)
	}
}

// OpensConnection reports whether a quorum packet is the first on a new
// connection: a learner's introduction, or a leader's LEADERINFO on the
// connection a learner opened. Anything else from a peer whose connection
// a member closed came on the closed one (closeConnection).
func OpensConnection(t wire.PacketType) bool {
	return t == wire.PacketFollowerInfo || t == wire.PacketObserverInfo || t == wire.PacketLeaderInfo
}

// stepPeerPacket routes a quorum packet to the role's step function.
func (p *Peer) stepPeerPacket(e PeerPacket) {
	if i := slices.Index(p.closedConns, e.From); i >= 0 {
		if !OpensConnection(e.Packet.Type) {
			p.notice("%s: ignoring %s %s from server %d: it came on the connection this member closed", p.role, e.Packet.Type, zxidHex(e.Packet.Zxid), e.From)
			return
		}
		p.closedConns = slices.Delete(p.closedConns, i, i+1)
	}
	switch {
	case p.lead != nil && !p.standalone():
		p.stepLeader(e.From, &e.Packet, e.Snapshot)
	case p.learn != nil:
		p.stepLearner(e.From, &e.Packet, e.Snapshot)
	case p.holdLearner(e):
	default:
		p.warn("%s: ignoring %s %s from server %d: no leader or learner role", p.role, e.Packet.Type, zxidHex(e.Packet.Zxid), e.From)
		p.closeConnection(e.From)
	}
}

// stepPeerGone: a quorum connection broke.
func (p *Peer) stepPeerGone(e PeerDisconnected) {
	// What this Peer queued for that peer since the last Ready was meant
	// for the connection that is gone, and goes with it: a connection is
	// reported gone before anything from the peer's next one, so nothing
	// queued yet answers a packet of the next one. A shell that steps
	// several events before it takes a Ready (zabd's loop) would otherwise
	// carry it onto that next connection — a LEADERINFO meant for the old
	// connection, say, arriving second on the new one.
	p.out.PeerMessages = slices.DeleteFunc(p.out.PeerMessages, func(m PeerMessage) bool { return m.To == e.Peer })
	p.closedConns = slices.DeleteFunc(p.closedConns, func(sid int64) bool { return sid == e.Peer })
	switch {
	case p.lead != nil && !p.standalone():
		p.leaderPeerGone(e.Peer)
	case p.learn != nil && e.Peer == p.learn.leader:
		p.warn("%s: lost the connection to leader %d in phase %s: looking again", p.role, e.Peer, p.phase())
		p.learn.leaderGone = true // nothing left to close (learnerState.leaderGone)
		p.becomeLooking()
	default:
		p.forgetHeld(e.Peer)
	}
}

// roleTick runs the role's timers.
func (p *Peer) roleTick() {
	switch {
	case p.role == RoleLooking:
		p.refuseHeld(false, "it did not lead in time")
		if p.election != nil {
			p.election.Tick(p.now.Mono)
			p.collectVotes()
		}
	case p.lead != nil:
		p.leaderTick()
	case p.learn != nil:
		p.learnerTick()
	}
}

// roleWakeup is when the role next needs a Tick.
func (p *Peer) roleWakeup() time.Duration {
	switch {
	case p.role == RoleLooking:
		if p.electionWakeup == 0 {
			return never
		}
		return p.electionWakeup
	case p.lead != nil:
		return p.leaderWakeup()
	case p.learn != nil:
		return p.learnerDeadline()
	}
	return never
}

// newElection builds the member's election from its ensemble.
func newElection(self int64, e *Ensemble, m *members) (*election.Election, error) {
	cfg := e.Election
	cfg.ID, cfg.Voters, cfg.Observers, cfg.Quorum = self, m.voters, m.observers, m.quorum
	return election.New(cfg)
}
