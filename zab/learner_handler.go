package zab

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

// handlerStage is how far the leader has taken one learner: one step of
// Zab's phases each, in order, as the leader sees that learner.
type handlerStage uint8

const (
	// handlerAwaitingAckEpoch: discovery, its FOLLOWERINFO (or
	// OBSERVERINFO) arrived; it is sent LEADERINFO once the leader has
	// proposed the epoch; waiting for its ACKEPOCH (Zab.tla
	// LeaderProcessCEPOCH, for this learner).
	handlerAwaitingAckEpoch handlerStage = iota
	// handlerEpochAcked: discovery, its ACKEPOCH arrived, with its last
	// zxid; it is synchronized once a quorum has acknowledged the epoch
	// (Zab.tla LeaderProcessACKEPOCH while ackeRecv is not yet a quorum).
	handlerEpochAcked
	// handlerSyncing: synchronization, DIFF, TRUNC or SNAP sent, and every
	// later proposal and commit is forwarded to it; its SNAP's stream
	// (stream) is still being sent, and NEWLEADER follows it. This is the
	// only stage with a stream, and a handler is in it only while its
	// stream runs: a DIFF or a TRUNC goes on to NEWLEADER at once.
	handlerSyncing
	// handlerNewLeaderSent: synchronization, the txns that make its log the
	// leader's and NEWLEADER sent; waiting for its ACK (Zab.tla
	// LeaderProcessACKEPOCH's NEWLEADER to this learner).
	handlerNewLeaderSent
	// handlerNewLeaderAcked: synchronization, it ACKed NEWLEADER: its log
	// holds the initial history durably, and it counts towards the quorum
	// that establishes the epoch; UPTODATE waits for establishment
	// (Zab.tla LeaderProcessACKLD, for this learner).
	handlerNewLeaderAcked
	// handlerUpToDate: broadcast, UPTODATE sent: it serves clients (Zab.tla
	// LeaderProcessACKLD's COMMITLD to this learner).
	handlerUpToDate
)

func (s handlerStage) String() string {
	switch s {
	case handlerAwaitingAckEpoch:
		return "awaiting ACKEPOCH"
	case handlerEpochAcked:
		return "epoch acknowledged"
	case handlerSyncing:
		return "syncing"
	case handlerNewLeaderSent:
		return "NEWLEADER sent"
	case handlerNewLeaderAcked:
		return "NEWLEADER acknowledged"
	case handlerUpToDate:
		return "up to date"
	}
	return fmt.Sprintf("handlerStage(%d)", s)
}

// phase is the Zab phase the stage belongs to.
func (s handlerStage) phase() Phase {
	switch s {
	case handlerAwaitingAckEpoch, handlerEpochAcked:
		return PhaseDiscovery
	case handlerSyncing, handlerNewLeaderSent, handlerNewLeaderAcked:
		return PhaseSync
	}
	return PhaseBroadcast
}

// learnerHandler is the leader's record of one learner (ZooKeeper's
// LearnerHandler, etcd's tracker.Progress): where the learner is in Zab's
// phases and what the leader has sent it.
//
// Invariants: a handler exists only while a quorum connection with its
// learner is open; from handlerSyncing on, every proposal after
// proposedUpTo and every commit after committedUpTo goes to it, in zxid
// order, on its one FIFO connection.
type learnerHandler struct {
	sid      int64
	observer bool
	stage    handlerStage

	acceptedEpoch int64 // from FOLLOWERINFO
	// From ACKEPOCH: the learner's last logged zxid and currentEpoch (-1
	// when it had already accepted the new epoch before).
	lastZxid     int64
	currentEpoch int64

	// From handlerSyncing on: proposedUpTo is the last zxid the learner
	// has been sent (or already held), committedUpTo the last whose commit
	// it knows of.
	proposedUpTo  int64
	committedUpTo int64
	// syncedUpTo is the last zxid sent before NEWLEADER: all that the
	// learner's ACK of NEWLEADER vouches for (proposals forwarded after
	// NEWLEADER are acknowledged one by one).
	syncedUpTo int64

	// stream is the SNAP being streamed to the learner (snapstream.go),
	// set in handlerSyncing only: until it ends, nothing else is sent to
	// the learner.
	stream *snapStream

	lastHeard time.Duration
}

// handlerOf returns the handler of a learner that has introduced itself on
// the current connection.
func (l *leaderState) handlerOf(sid int64) *learnerHandler {
	if i, ok := l.indexOf(sid); ok {
		return l.handlers[i]
	}
	return nil
}

func (l *leaderState) indexOf(sid int64) (int, bool) {
	return slices.BinarySearchFunc(l.handlers, sid, func(h *learnerHandler, sid int64) int { return cmp.Compare(h.sid, sid) })
}

// put adds a learner's handler, replacing any earlier one of it (and what
// came on the earlier connection: see forget).
func (l *leaderState) put(h *learnerHandler) {
	i, ok := l.indexOf(h.sid)
	if ok {
		l.dropSyncs(h.sid)
		l.handlers[i] = h
		return
	}
	l.handlers = slices.Insert(l.handlers, i, h)
}

// forget drops a learner's handler (its connection is gone or refused),
// and the sync requests that came on that connection: the learner forgot
// them with it, so a SYNC answering one on a later connection would answer
// a sync request it made since, before that one's zxid committed
// (ZooKeeper answers each on the handler it came by, whose socket is dead).
func (l *leaderState) forget(sid int64) {
	if i, ok := l.indexOf(sid); ok {
		l.handlers = slices.Delete(l.handlers, i, i+1)
	}
	l.dropSyncs(sid)
}

// dropSyncs forgets a learner's pending sync requests.
func (l *leaderState) dropSyncs(sid int64) {
	l.learnerSyncs = slices.DeleteFunc(l.learnerSyncs, func(s learnerSync) bool { return s.sid == sid })
}

// sendToLearner queues a packet for one learner.
func (p *Peer) sendToLearner(h *learnerHandler, t wire.PacketType, zxid int64, data []byte) {
	p.sendPeer(h.sid, wire.QuorumPacket{Type: t, Zxid: zxid, Data: data}, nil)
}

// forwardProposal sends a new proposal to every follower being
// synchronized or later.
// Observers learn it with its commit (INFORM).
func (p *Peer) forwardProposal(t *datatree.Txn) {
	zxid := t.Header.Zxid
	var entry []byte
	for _, h := range p.lead.handlers {
		if h.stage < handlerSyncing || h.observer || zxid <= h.proposedUpTo {
			continue
		}
		if h.stream != nil {
			entry = h.backlogTxn(t, entry)
			continue
		}
		if entry == nil {
			entry = EncodeTxnEntry(t)
		}
		p.sendToLearner(h, wire.PacketProposal, zxid, entry)
		h.proposedUpTo = zxid
	}
}

// forwardCommit tells every learner being synchronized or later that a txn
// is committed: COMMIT to followers, INFORM (with the txn) to observers.
// Invariant: a txn is committed here before it is applied, so every txn a
// streaming SNAP may hold is known committed when its stream ends.
func (p *Peer) forwardCommit(t *datatree.Txn) {
	zxid := t.Header.Zxid
	var entry []byte
	for _, h := range p.lead.handlers {
		if h.stage < handlerSyncing || zxid <= h.committedUpTo {
			continue
		}
		if h.stream != nil {
			// Its commit is known when the stream ends (finishSync); an
			// observer is sent only committed txns, so it gets the txn now.
			if h.observer {
				entry = h.backlogTxn(t, entry)
			}
			continue
		}
		if h.observer {
			if entry == nil {
				entry = EncodeTxnEntry(t)
			}
			p.sendToLearner(h, wire.PacketInform, zxid, entry)
			h.proposedUpTo = zxid
		} else {
			p.sendToLearner(h, wire.PacketCommit, zxid, nil)
		}
		h.committedUpTo = zxid
	}
}

// LearnerStatus is one learner as its leader sees it, for the shells'
// metrics (mntr's zk_learners, zk_synced_followers).
type LearnerStatus struct {
	ID       int64
	Observer bool
	Phase    Phase
	// Synced: it has been sent UPTODATE and serves clients.
	Synced bool
}

// Learners returns the learners connected to a leading member, by id; nil
// when the member does not lead an ensemble.
func (p *Peer) Learners() []LearnerStatus {
	if p.lead == nil || p.standalone() {
		return nil
	}
	var out []LearnerStatus
	for _, h := range p.lead.handlers {
		out = append(out, LearnerStatus{ID: h.sid, Observer: h.observer, Phase: h.stage.phase(), Synced: h.stage == handlerUpToDate})
	}
	return out
}

// PendingSyncs counts the learners' sync requests a leader has not yet
// answered (ZooKeeper's pending_syncs).
func (p *Peer) PendingSyncs() int {
	if p.lead == nil {
		return 0
	}
	return len(p.lead.learnerSyncs)
}

// Voters returns the ensemble's voting members (one, the member itself,
// when standalone).
func (p *Peer) Voters() []int64 { return slices.Clone(p.members.voters) }
