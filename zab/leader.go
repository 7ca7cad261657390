package zab

import (
	"fmt"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

// This file is the LEADING role (ZooKeeper's Leader): discovery (a quorum
// agrees on a new epoch), synchronization (each learner is brought to the
// leader's history; learner_handler.go and sync.go), then broadcast
// (proposals, acknowledgements, commits in zxid order).

// leaderStage is how far a leader has taken its epoch: one step of Zab's
// phases each, in order. A leader only moves forward; it goes back to
// looking instead. Which members have answered at each step is data, kept
// in the quorum tracker and the learner handlers.
type leaderStage uint8

const (
	// leaderGathering: discovery, waiting for FOLLOWERINFO from a quorum
	// of voters, itself included (Zab.tla LeaderProcessCEPOCH while
	// cepochRecv is not yet a quorum).
	leaderGathering leaderStage = iota
	// leaderEpochProposed: discovery, the new epoch is fixed, durable as
	// the leader's acceptedEpoch, and proposed in LEADERINFO to every
	// learner; waiting for ACKEPOCH from a quorum, and for the leader's own
	// log to be durable (Zab.tla LeaderProcessCEPOCH's NEWEPOCH broadcast,
	// then LeaderProcessACKEPOCH while ackeRecv is not yet a quorum).
	leaderEpochProposed
	// leaderSynchronizing: synchronization, the epoch is the leader's
	// currentEpoch (durable) and its history the epoch's initial history;
	// every learner that acknowledged the epoch is synchronized and sent
	// NEWLEADER, now or once its ACKEPOCH comes; waiting for a quorum's
	// NEWLEADER ACK (Zab.tla LeaderProcessACKEPOCH once ackeRecv is a
	// quorum, then LeaderProcessACKLD while ackldRecv is not).
	leaderSynchronizing
	// leaderBroadcasting: broadcast, the epoch is established: the initial
	// history is committed, synchronized learners are sent UPTODATE, and
	// clients are served (Zab.tla LeaderProcessACKLD once ackldRecv is a
	// quorum; a standalone member starts here).
	leaderBroadcasting
)

func (s leaderStage) String() string {
	switch s {
	case leaderGathering:
		return "gathering FOLLOWERINFO"
	case leaderEpochProposed:
		return "epoch proposed"
	case leaderSynchronizing:
		return "synchronizing"
	case leaderBroadcasting:
		return "broadcasting"
	}
	return fmt.Sprintf("leaderStage(%d)", s)
}

// phase is the Zab phase the stage belongs to.
func (s leaderStage) phase() Phase {
	switch s {
	case leaderGathering, leaderEpochProposed:
		return PhaseDiscovery
	case leaderSynchronizing:
		return PhaseSync
	}
	return PhaseBroadcast
}

// leaderState is the LEADING role's state, reset by becomeLeading.
type leaderState struct {
	stage leaderStage
	// epoch is the new epoch; 0 until a quorum's FOLLOWERINFO fixed it
	// (a standalone member leads in epoch 0 from the start).
	epoch int64
	// initialEnd is the last zxid of the initial history, from
	// leaderSynchronizing on.
	initialEnd int64
	since      time.Duration
	nextPing   time.Duration

	handlers []*learnerHandler // sorted by sid: every loop over learners has one order
	// learnerSyncs are SYNC requests of learners waiting for the zxid
	// that was the last proposed when they arrived to commit. Each came
	// on its learner's current connection: forget and put drop a
	// learner's with its handler.
	learnerSyncs []learnerSync
}

type learnerSync struct {
	sid  int64
	zxid int64
}

// becomeLeading enters the LEADING role after an election chose this
// member: discovery starts, with the member's own acceptedEpoch counted.
func (p *Peer) becomeLeading() {
	p.resetRole(RoleLeading, p.self)
	p.lead = &leaderState{stage: leaderGathering, since: p.now.Mono}
	p.quorum = newQuorumTracker(p.members)
	p.quorum.ack(p.self, p.durableZxid())
	p.maybeProposeEpoch()
	p.reportState()
	p.admitHeld()
}

// becomeStandaloneLeader is the ensemble of one: it leads epoch 0 from the
// start, established, with no learners.
func (p *Peer) becomeStandaloneLeader() {
	p.resetRole(RoleLeading, p.self)
	p.lead = &leaderState{stage: leaderBroadcasting}
	p.quorum = newQuorumTracker(p.members)
	p.quorum.ack(p.self, p.lastProposed)
}

// stepLeader handles a packet from a learner.
func (p *Peer) stepLeader(from int64, qp *wire.QuorumPacket, snap []byte) {
	l := p.lead
	if !p.members.isMember(from) {
		p.refusePeer(from, qp, "it is not a member of the ensemble")
		return
	}
	h := l.handlerOf(from)
	if h != nil {
		h.lastHeard = p.now.Mono
	}
	switch qp.Type {
	case wire.PacketFollowerInfo, wire.PacketObserverInfo:
		p.leaderFollowerInfo(from, qp)
		return
	}
	if h == nil {
		p.refusePeer(from, qp, "it has not sent FOLLOWERINFO on this connection")
		return
	}
	if h.stream != nil {
		// It has not even read its SNAP yet: a learner sends nothing
		// before its NEWLEADER ACK.
		p.refusePeer(from, qp, "its SNAP is still being sent")
		return
	}
	switch qp.Type {
	case wire.PacketAckEpoch:
		p.leaderAckEpoch(h, qp)
	case wire.PacketAck:
		p.leaderAck(h, qp)
	case wire.PacketPing:
		p.leaderPingReply(h, qp)
	case wire.PacketRequest:
		p.leaderForwardedRequest(h, qp)
	case wire.PacketRevalidate:
		p.leaderRevalidate(h, qp)
	default:
		p.refusePeer(from, qp, "a leader never receives it")
	}
}

// refusePeer drops the connection of a learner that broke the protocol.
func (p *Peer) refusePeer(from int64, qp *wire.QuorumPacket, why string) {
	p.peerFault("%s: dropping the connection of server %d: %s %s in phase %s: %s", p.role, from, qp.Type, zxidHex(qp.Zxid), p.phase(), why)
	p.closePeer(from)
}

// closePeer closes the quorum connection with a peer and forgets its
// handler.
func (p *Peer) closePeer(sid int64) {
	if l := p.lead; l != nil {
		l.forget(sid)
	}
	p.closeConnection(sid)
}

// leaderFollowerInfo is discovery's first message: a learner introduces
// itself with its acceptedEpoch.
func (p *Peer) leaderFollowerInfo(from int64, qp *wire.QuorumPacket) {
	l := p.lead
	var info wire.LearnerInfo
	if err := wire.Unmarshal(qp.Data, &info); err != nil || info.ServerID != from {
		p.refusePeer(from, qp, "its LearnerInfo does not decode or names another server")
		return
	}
	observer := qp.Type == wire.PacketObserverInfo
	if observer != p.members.isObserver(from) {
		p.refusePeer(from, qp, "its role disagrees with the ensemble's configuration")
		return
	}
	// Acknowledgements from its earlier connection no longer count: the
	// synchronization ahead may truncate what it logged then.
	p.quorum.forget(from)
	if l.handlerOf(from) != nil {
		// A new connection replaces the old one (the learner restarted or
		// reconnected): start it afresh.
		p.notice("leader: server %d reconnected; its earlier connection is forgotten", from)
	}
	l.put(&learnerHandler{
		sid: from, observer: observer, stage: handlerAwaitingAckEpoch,
		acceptedEpoch: epochOf(qp.Zxid), lastHeard: p.now.Mono,
	})
	if l.stage >= leaderEpochProposed {
		if h := l.handlerOf(from); h.acceptedEpoch > l.epoch {
			// It accepted a later epoch (from a leader that never
			// established it) and will never take ours: only a new
			// election, whose epoch exceeds its acceptedEpoch, lets it
			// back in.
			p.warn("leader: server %d accepted epoch %d, above ours (%d): looking again for a later epoch", from, h.acceptedEpoch, l.epoch)
			p.becomeLooking()
			return
		}
		p.sendLeaderInfo(l.handlerOf(from))
		return
	}
	p.maybeProposeEpoch()
}

// maybeProposeEpoch fixes the new epoch once a quorum of voters (the
// leader included) has sent FOLLOWERINFO: one above every acceptedEpoch
// among the learners introduced so far, observers' too (as ZooKeeper's
// Leader.getEpochToPropose), so that none of them has accepted it before
// and each can take the LEADERINFO (hunt seed 257437: an observer that had
// accepted epoch 2 was offered epoch 1).
func (p *Peer) maybeProposeEpoch() {
	l := p.lead
	ids := []int64{p.self}
	epoch := p.acceptedEpoch
	for _, h := range l.handlers {
		epoch = max(epoch, h.acceptedEpoch)
		if !h.observer {
			ids = append(ids, h.sid)
		}
	}
	if !p.quorum.gathered(ids) {
		return
	}
	// The epoch must also exceed every epoch in the leader's own log, so
	// that its zxids are new (acceptedEpoch ≥ currentEpoch ≥ log epochs).
	epoch = max(epoch, p.currentEpoch, epochOf(p.lastProposed)) + 1
	l.epoch, l.stage = epoch, leaderEpochProposed
	p.setAcceptedEpoch(epoch)
	p.announce(epoch)
	p.notice("leader: proposing epoch %d to %v", epoch, ids)
	p.quorum.ackEpoch(p.self)
	for _, h := range l.handlers {
		p.sendLeaderInfo(h)
	}
	p.maybeEpochAcked()
}

func (p *Peer) sendLeaderInfo(h *learnerHandler) {
	p.sendToLearner(h, wire.PacketLeaderInfo, makeZxid(p.lead.epoch, 0), wire.Marshal(&wire.LeaderInfo{ProtocolVersion: wire.ProtocolVersion}))
}

// leaderAckEpoch takes a learner's acknowledgement of the new epoch with
// its last zxid; a learner more recent than the leader means this member
// should not lead, and it goes back to looking.
func (p *Peer) leaderAckEpoch(h *learnerHandler, qp *wire.QuorumPacket) {
	l := p.lead
	var ack wire.AckEpoch
	// A repeated ACKEPOCH before synchronization replaces the first.
	if h.stage > handlerEpochAcked || l.stage < leaderEpochProposed || wire.Unmarshal(qp.Data, &ack) != nil {
		p.refusePeer(h.sid, qp, "no epoch was proposed to it, or its data does not decode")
		return
	}
	h.lastZxid, h.currentEpoch, h.stage = qp.Zxid, int64(ack.CurrentEpoch), handlerEpochAcked
	if h.currentEpoch != -1 {
		if h.currentEpoch > p.currentEpoch || (h.currentEpoch == p.currentEpoch && h.lastZxid > p.lastProposed) {
			p.warn("leader: server %d is ahead of us (currentEpoch %d, last zxid %s; ours %d, %s): giving up the lead",
				h.sid, h.currentEpoch, zxidHex(h.lastZxid), p.currentEpoch, zxidHex(p.lastProposed))
			p.becomeLooking()
			return
		}
		if !h.observer {
			p.quorum.ackEpoch(h.sid)
		}
	}
	if l.stage >= leaderSynchronizing {
		p.syncLearner(h)
		return
	}
	p.maybeEpochAcked()
}

// maybeEpochAcked: once a quorum has acknowledged the epoch, and the
// leader's own log holds its history durably, the leader makes the epoch
// its currentEpoch (durable before anything later is sent: the Ready
// contract) and synchronizes every learner that acknowledged. Its log
// must be durable first: a currentEpoch above a log that a crash then
// shortens wins the next election with that short log, and truncates
// committed txns from the others (ZOOKEEPER-4643, on the leader's side).
func (p *Peer) maybeEpochAcked() {
	l := p.lead
	if l.stage != leaderEpochProposed || !p.quorum.epochAcked() || p.durableZxid() < p.lastProposed {
		return
	}
	l.stage = leaderSynchronizing
	p.setCurrentEpoch(l.epoch)
	l.initialEnd = p.lastProposed
	p.reportState()
	for _, h := range l.handlers {
		if h.stage == handlerEpochAcked {
			p.syncLearner(h)
		}
	}
	p.maybeEstablish()
}

// leaderAck takes an ACK: of NEWLEADER (the learner's log now holds the
// initial history durably) or of proposals up to a zxid.
func (p *Peer) leaderAck(h *learnerHandler, qp *wire.QuorumPacket) {
	l := p.lead
	if qp.Zxid == makeZxid(l.epoch, 0) {
		if h.stage >= handlerNewLeaderAcked {
			// A ZooKeeper 3.8 learner ACKs once more after UPTODATE
			// (Learner.syncWithLeader); ZooKeeper's leader ignores an ACK
			// whose counter is 0 (Leader.processAck), and so does zabd.
			return
		}
		if h.stage != handlerNewLeaderSent {
			p.refusePeer(h.sid, qp, "NEWLEADER was not awaiting its ACK")
			return
		}
		h.stage = handlerNewLeaderAcked
		if !h.observer {
			p.quorum.ack(h.sid, h.syncedUpTo)
		}
		if l.stage == leaderBroadcasting {
			// Its ACK may complete a quorum for proposals it was sent
			// during synchronization.
			p.sendUpToDate(h)
			p.applyCommittedProposals()
			return
		}
		p.maybeEstablish()
		return
	}
	if h.stage < handlerNewLeaderAcked && qp.Zxid <= h.syncedUpTo {
		// A ZooKeeper 3.8.0 learner hands the txns of its DIFF to its log
		// thread when NEWLEADER arrives, and that thread ACKs each as it
		// is written, possibly before the learner's NEWLEADER ACK leaves
		// (ZOOKEEPER-4685). They belong to the history the NEWLEADER ACK
		// vouches for and are committed: there is nothing to count.
		// Dropping the learner instead (as zabd did) aborts a DIFF it has
		// begun to log, and a 3.8.0 learner that synchronizes again after
		// that can apply part of it twice (ZOOKEEPER-4712): its tree then
		// differs from the leader's (docs/compatibility.md).
		return
	}
	if h.stage < handlerNewLeaderAcked || qp.Zxid > h.proposedUpTo {
		p.refusePeer(h.sid, qp, "it acknowledges a proposal before NEWLEADER or one it was never sent")
		return
	}
	if h.observer {
		return // observers do not vote; ZooKeeper ignores their ACKs too
	}
	p.quorum.ack(h.sid, qp.Zxid)
	p.applyCommittedProposals()
}

// maybeEstablish: once a quorum of voters (the leader counting itself once
// its own log holds the initial history durably) has ACKed NEWLEADER, the
// initial history is committed and the leader serves.
func (p *Peer) maybeEstablish() {
	l := p.lead
	if l.stage != leaderSynchronizing {
		return
	}
	ids := []int64{}
	if p.durableZxid() >= l.initialEnd {
		ids = append(ids, p.self)
	}
	for _, h := range l.handlers {
		if h.stage >= handlerNewLeaderAcked && !h.observer {
			ids = append(ids, h.sid)
		}
	}
	if !p.quorum.newLeaderAcked(ids) {
		return
	}
	l.stage = leaderBroadcasting
	// Establishment commits the initial history. The acknowledgements
	// that made the quorum may be withdrawn (a learner that reconnects is
	// forgotten), and a leader that applied its whole initial history in
	// an earlier epoch applies nothing now that would fix the commit point
	// at them: without this, its commit point could fall back to 0, and
	// a learner reconnecting with committed txns would be sent TRUNC below
	// them (simulator seed 6597, trace conformance).
	p.quorum.commitThrough(l.initialEnd)
	p.sessions.RestartExpiry(p.now.Mono)
	p.notice("leader: epoch %d established with %v after %v; serving", l.epoch, ids, p.now.Mono-l.since)
	p.reportState()
	p.applyCommittedProposals()
	for _, h := range l.handlers {
		if h.stage == handlerNewLeaderAcked {
			p.sendUpToDate(h)
		}
	}
	l.nextPing = p.now.Mono
}

func (p *Peer) sendUpToDate(h *learnerHandler) {
	p.sendToLearner(h, wire.PacketUpToDate, -1, nil)
	h.stage = handlerUpToDate
}

// leaderPingReply takes a learner's answer to PING: the sessions it saw
// active since, which the leader, who alone expires sessions, keeps alive.
// A touch says nothing of who serves a session (ZooKeeper's learners report
// sessions of other members' clients too): owners change only by
// createSession and REVALIDATE.
func (p *Peer) leaderPingReply(h *learnerHandler, qp *wire.QuorumPacket) {
	var touches wire.PingTouches
	if len(qp.Data) > 0 && wire.Unmarshal(qp.Data, &touches) != nil {
		p.refusePeer(h.sid, qp, "its session touches do not decode")
		return
	}
	for _, t := range touches.Touches {
		p.sessions.Touch(t.SessionID, p.now.Mono)
	}
}

// leaderForwardedRequest proposes a client write a learner forwarded, or
// answers its sync once every write proposed before it has committed.
func (p *Peer) leaderForwardedRequest(h *learnerHandler, qp *wire.QuorumPacket) {
	var fr wire.ForwardedRequest
	if p.lead.stage != leaderBroadcasting || wire.Unmarshal(qp.Data, &fr) != nil {
		p.refusePeer(h.sid, qp, "not serving yet, or the request does not decode")
		return
	}
	req := datatree.Request{Session: fr.SessionID, Cxid: fr.Cxid, Op: fr.Type, Auth: qp.AuthInfo}
	switch fr.Type {
	case wire.OpSync:
		p.lead.learnerSyncs = append(p.lead.learnerSyncs, learnerSync{sid: h.sid, zxid: p.lastProposed})
		p.answerLearnerSyncs()
		return
	case wire.OpCreateSession:
		d := wire.NewDecoder(fr.Body)
		timeout := d.ReadInt()
		if d.Err() != nil {
			p.refusePeer(h.sid, qp, "its createSession carries no timeout")
			return
		}
		req.Body = &wire.CreateSessionTxn{TimeOut: timeout}
		p.sessions.Track(fr.SessionID, timeout, p.now.Mono)
		_ = p.sessions.SetOwner(fr.SessionID, h.sid)
	default:
		body, err := wire.DecodeRequest(fr.Type, fr.Body)
		if err == nil {
			req.Body = treeBody(body)
		}
	}
	p.sessions.Touch(fr.SessionID, p.now.Mono)
	p.propose(&req, h.sid)
}

// answerLearnerSyncs sends SYNC to the learners whose sync requests' zxid
// has committed and been applied here (so its COMMIT has left, and no
// later one): the learner answers its client once it has applied what
// came before on the same connection, and nothing after.
func (p *Peer) answerLearnerSyncs() {
	l := p.lead
	if l == nil || len(l.learnerSyncs) == 0 {
		return
	}
	committed := p.tree.LastZxid()
	rest := l.learnerSyncs[:0]
	for _, s := range l.learnerSyncs {
		if s.zxid <= committed {
			p.sendToLearner(l.handlerOf(s.sid), wire.PacketSync, 0, nil)
			continue
		}
		rest = append(rest, s)
	}
	l.learnerSyncs = rest
}

// leaderRevalidate answers a learner whose client reconnected with an
// existing session: valid if the session lives, which now belongs to that
// learner.
func (p *Peer) leaderRevalidate(h *learnerHandler, qp *wire.QuorumPacket) {
	var rv wire.RevalidateRequest
	if wire.Unmarshal(qp.Data, &rv) != nil {
		p.refusePeer(h.sid, qp, "its data does not decode")
		return
	}
	valid := p.sessions.Revalidate(rv.SessionID, rv.Timeout, p.now.Mono)
	if valid {
		_ = p.sessions.SetOwner(rv.SessionID, h.sid)
	}
	p.sendToLearner(h, wire.PacketRevalidate, qp.Zxid, wire.Marshal(&wire.RevalidateReply{SessionID: rv.SessionID, Valid: valid}))
}

// leaderTick: pings every half tick; without a quorum of voters heard
// within syncLimit ticks (or, before establishment, within initLimit
// ticks of taking the lead) the leader goes back to looking.
func (p *Peer) leaderTick() {
	l := p.lead
	if p.standalone() {
		return
	}
	if l.stage != leaderBroadcasting {
		if p.now.Mono-l.since >= ticks(p.members.initLimit, p.cfg.Tick) {
			p.warn("leader: no quorum established epoch %d within initLimit (%d ticks): looking again", l.epoch, p.members.initLimit)
			p.becomeLooking()
		}
		return
	}
	if p.now.Mono < l.nextPing {
		return
	}
	l.nextPing = p.now.Mono + p.cfg.Tick/2
	heard := []int64{p.self}
	limit := ticks(p.members.syncLimit, p.cfg.Tick)
	var silent []int64
	for _, h := range l.handlers {
		if p.now.Mono-h.lastHeard <= limit && h.stage >= handlerNewLeaderAcked {
			heard = append(heard, h.sid)
		}
		// A learner still synchronizing (a SNAP to install) has
		// initLimit, as ZooKeeper's learner socket has during sync.
		own := limit
		if h.stage < handlerNewLeaderAcked {
			own = ticks(p.members.initLimit, p.cfg.Tick)
		}
		if p.now.Mono-h.lastHeard > own && h.stage >= handlerSyncing {
			// As ZooKeeper's LearnerHandler times out its socket read
			// after syncLimit ticks: a learner not heard for that long
			// loses its connection, so that nothing it sent long ago
			// (a REVALIDATE moving a session back to it, a REQUEST of a
			// client that has moved on) is acted on when it finally
			// arrives (simulator seed 68196: a clogged link held both
			// for 13 s).
			silent = append(silent, h.sid)
			continue
		}
		if h.stage >= handlerSyncing && h.stream == nil {
			// Only once synchronization began: before, the learner
			// expects LEADERINFO or the sync's first packet; and not
			// inside a SNAP's stream.
			p.sendToLearner(h, wire.PacketPing, p.lastProposed, nil)
		}
	}
	if !p.quorum.heard(heard) {
		p.warn("leader: only %v heard within syncLimit (%d ticks): not a quorum, looking again", heard, p.members.syncLimit)
		p.becomeLooking() // which closes every learner's connection
		return
	}
	for _, sid := range silent {
		p.warn("leader: server %d not heard in time (syncLimit %d ticks, initLimit %d while synchronizing): closing its connection", sid, p.members.syncLimit, p.members.initLimit)
		p.closePeer(sid)
	}
}

// leaderWakeup is when the leader next needs a Tick.
func (p *Peer) leaderWakeup() time.Duration {
	l := p.lead
	if p.standalone() {
		return never
	}
	if l.stage != leaderBroadcasting {
		return l.since + ticks(p.members.initLimit, p.cfg.Tick)
	}
	return l.nextPing
}

// leaderPeerGone: a learner's connection broke.
func (p *Peer) leaderPeerGone(sid int64) {
	if p.lead.handlerOf(sid) != nil {
		p.notice("leader: lost the connection of server %d", sid)
		p.lead.forget(sid)
	}
}
