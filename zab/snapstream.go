package zab

import (
	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

// This file is the leader's side of a SNAP: the tree streamed to a learner
// a bounded step per Ready while the leader goes on serving.
//
// The stream is fuzzy, as ZooKeeper's is, not a copy-on-write view. Its
// SNAP names the zxid of the last txn applied when it began (Z); each
// step serializes the live tree as it is then, so a node may appear as a
// later txn left it (datatree.Snapshot: nodes created after Z are left out,
// so that their creates replay). Every txn after Z goes to the learner
// after the stream, the committed ones with their COMMIT and before
// NEWLEADER (finishSync, run once the last piece is out). A txn is
// committed before it is applied, so every txn the stream may hold is
// among them, and the learner, which applies nothing before UPTODATE,
// applies them all over the fuzzy tree before it serves (idempotently:
// datatree's rules for a log replayed over a fuzzy snapshot file), ending
// with exactly the leader's tree at that commit. The snapshot the learner
// writes of the tree it installed is fuzzy too, named Z, like a ZooKeeper
// learner's; a restart replays its log over it. A ZooKeeper 3.8 learner
// expects just this: its leader serializes the live tree on the
// LearnerHandler's thread, queues every proposal and commit after the
// SNAP's zxid meanwhile (startForwarding), and queues NEWLEADER after the
// stream.
//
// Why not a copy-on-write view: datatree's nodes are mutable in place;
// freezing them would need a copy of the tree (the time and memory the
// SNAP streams to avoid) or versioned nodes throughout datatree, while the
// fuzzy replay rules already exist and are exercised by every snapshot
// file and every restart, and the learner's side must take a fuzzy SNAP
// anyway, from a ZooKeeper leader.

// snapStream is a SNAP being sent to one learner. Nothing else goes to the
// learner until it ends (the quorum connection carries the stream right
// after the SNAP packet), so the txns proposed or committed meanwhile wait
// in backlog.
type snapStream struct {
	tree *datatree.Snapshot
	// backlog is every txn after the SNAP's zxid the learner is to be sent,
	// in zxid order: those held when the stream began, then each forwarded
	// since (a follower's proposals, an observer's commits).
	backlog []syncTxn
}

// startSnapStream sends a learner the SNAP packet with the session table
// and the first step of the tree, and streams the rest from Ready.
func (p *Peer) startSnapStream(h *learnerHandler, committed int64) {
	zxid := p.tree.LastZxid()
	s := &snapStream{tree: p.tree.StartSnapshot()}
	end := p.lastSentTo(h, committed)
	s.backlog = p.appendTxnsAfter(nil, zxid, end)
	h.stream, h.proposedUpTo, h.committedUpTo = s, end, zxid
	e := wire.NewEncoder(nil)
	table := p.sessions.Table()
	e.WriteInt(int32(len(table)))
	for _, s := range table {
		e.WriteLong(s.ID)
		e.WriteInt(s.Timeout)
	}
	p.out.PeerMessages = append(p.out.PeerMessages, PeerMessage{To: h.sid, Packet: wire.QuorumPacket{Type: wire.PacketSnap, Zxid: zxid}})
	p.stepSnapStream(h, e)
}

// stepSnapStream serializes the next bounded piece of a learner's SNAP
// into e (which may hold its start already) and hands it to the last
// message queued for the learner, the SNAP or a PeerSnapshotPart; after
// the last piece, the synchronization goes on with the txns after the
// SNAP's zxid and NEWLEADER.
func (p *Peer) stepSnapStream(h *learnerHandler, e *wire.Encoder) {
	s := h.stream
	done := s.tree.Step(e, p.cfg.SnapshotStepNodes)
	if done {
		e.WriteString(wire.SnapshotSignature)
	}
	m := &p.out.PeerMessages[len(p.out.PeerMessages)-1]
	m.Snapshot, m.SnapshotEnd = e.Bytes(), done
	if !done {
		return
	}
	h.stream = nil
	p.finishSync(h, s.backlog)
}

// advanceSnapStreams takes one step of every SNAP being streamed.
func (p *Peer) advanceSnapStreams() {
	if p.lead == nil {
		return
	}
	for _, h := range p.lead.handlers {
		if h.stream != nil {
			p.out.PeerMessages = append(p.out.PeerMessages, PeerMessage{To: h.sid, Kind: PeerSnapshotPart})
			p.stepSnapStream(h, wire.NewEncoder(nil))
		}
	}
}

// streaming reports whether a SNAP is being streamed to some learner.
func (p *Peer) streaming() bool {
	if p.lead == nil {
		return false
	}
	for _, h := range p.lead.handlers {
		if h.stream != nil {
			return true
		}
	}
	return false
}

// backlogTxn keeps a txn for a learner whose SNAP is still streaming, if
// it is after what the learner has been given: it follows the stream.
func (h *learnerHandler) backlogTxn(t *datatree.Txn, entry []byte) []byte {
	z := t.Header.Zxid
	if z <= h.proposedUpTo {
		return entry
	}
	if entry == nil {
		entry = EncodeTxnEntry(t)
	}
	h.stream.backlog = append(h.stream.backlog, syncTxn{zxid: z, entry: entry})
	h.proposedUpTo = z
	return entry
}

// SnapJoiner joins the pieces of the SNAPs a Peer streams, for shells that
// carry whole packets rather than bytes (the simulator, tests): each SNAP
// comes out once, with its whole stream, when its last piece is handed
// over. A shell that writes bytes (zabd) needs none: the pieces
// concatenated are the stream. The zero value is ready to use.
type SnapJoiner struct {
	open map[int64]*PeerMessage // by receiver: a SNAP whose stream has not ended
}

// Add takes the Peer's next quorum message and returns the message to
// carry: m itself, or the SNAP with its whole stream when m ends it; nil
// while a stream is still being gathered. A close to a peer abandons its
// stream, as closing the connection would.
func (j *SnapJoiner) Add(m *PeerMessage) *PeerMessage {
	switch {
	case m.Kind == PeerSnapshotPart:
		s := j.open[m.To]
		if s == nil {
			return nil // its SNAP went before a close
		}
		s.Snapshot = append(s.Snapshot, m.Snapshot...)
		if !m.SnapshotEnd {
			return nil
		}
		delete(j.open, m.To)
		s.SnapshotEnd = true
		return s
	case m.Kind == PeerClose:
		delete(j.open, m.To)
	case m.Packet.Type == wire.PacketSnap && !m.SnapshotEnd:
		if j.open == nil {
			j.open = map[int64]*PeerMessage{}
		}
		s := *m
		s.Snapshot = append([]byte(nil), m.Snapshot...)
		j.open[m.To] = &s
		return nil
	}
	return m
}
