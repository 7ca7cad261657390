package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/invariant"
	"github.com/zabd/zabd/zab/tlatrace"
)

// KindInvariant prefixes the failures of the ensemble invariants; the
// invariant's name follows (package zab/invariant's, Zab.tla's where it has
// one), so the shrinker keeps to the same invariant. A txn or reply not
// durable on a quorum (invariant.QuorumDurability) fails as KindDurability,
// the simulator's kind for lost acknowledged data.
const KindInvariant = "invariant: "

// KindConformance prefixes the failures of trace conformance (package
// zab/tlatrace): a step no action of the spec allows; the action's name
// follows, so the shrinker keeps to the same action.
const KindConformance = "conformance: "

// invariants feeds what the servers do to the invariant checker of package
// zab/invariant after every step of every server, and holds what the
// simulator checks beyond it: ExpiryCarriedOut (expiry.go).
type invariants struct {
	w *world
	c *invariant.Checker
	// established is the epochs a leader reached broadcast in (for
	// Stats.Epochs).
	established map[int64]bool
	// maxReplied is the highest zxid a reply to a client carried.
	maxReplied int64
	// expiries are the sessions told expired whose close is not yet
	// committed, in the order they were told; closedSessions, the
	// sessions a closeSession txn was delivered for.
	expiries       []expiryWatch
	closedSessions map[int64]bool
	// timeouts is the longest timeout negotiated for each session.
	timeouts map[int64]time.Duration
	// conf checks every step of an ensemble's members against the spec's
	// actions (nil for a standalone server); steps holds, by server index,
	// the step being taken: its event (received, peerGone) until the
	// Ready that follows it (conform).
	conf  *tlatrace.Checker
	steps []tlatrace.Step
}

func newInvariants(w *world) *invariants {
	inv := &invariants{w: w, established: map[int64]bool{}, closedSessions: map[int64]bool{},
		timeouts: map[int64]time.Duration{}}
	cfg := invariant.Config{FirstDelivered: inv.firstDelivered}
	for i := range w.sched.Servers {
		cfg.Members = append(cfg.Members, int64(i+1))
	}
	if w.ensemble != nil {
		cfg.Quorum = w.quorum
	}
	inv.c = invariant.New(cfg, inv)
	if w.ensemble != nil && w.sched.LoopDelayUs == 0 {
		// Trace conformance judges one event's effects at a time: a Ready
		// that carries several events' (Schedule.LoopDelayUs) is no step
		// of the spec, so such runs do without it.
		inv.conf = tlatrace.New(tlatrace.Config{Voters: w.ensemble.Voters, Observers: w.ensemble.Observers, Quorum: w.quorum, Note: inv.allowance})
		inv.steps = make([]tlatrace.Step, w.sched.Servers)
		for i := range inv.steps {
			inv.steps[i].Reset(int64(i + 1))
		}
	}
	return inv
}

// Observe shows the checker server id: its Peer's state, and its disk as
// the simulator tracks it (the epoch files, the zxids the log holds, the
// durable point, the newest snapshot).
func (inv *invariants) Observe(id int64, m *invariant.Member) {
	s := inv.w.servers[id-1]
	if s.up {
		m.Up = true
		m.State = s.peer.State()
		m.Accepted, m.Current = s.peer.Epochs()
		m.Applied, m.Digest = s.peer.LastZxid(), s.peer.Digest()
		m.FuzzyUntil = s.fuzzyUntil
		m.EpochsPending = s.m.EpochsPending()
	}
	m.DiskAccepted, m.DiskCurrent = s.diskAccepted, s.diskCurrent
	m.Log, m.Durable, m.Snapshot = s.logged, s.durable, s.snapBase
	m.Damaged = s.damaged
	m.Installing = len(s.installs) > 0
}

// violated records a violation the checker found; it reports whether
// there was none.
func (inv *invariants) violated(v *invariant.Violation) bool {
	if v == nil {
		return false
	}
	kind := KindInvariant + v.Invariant
	if v.Invariant == invariant.QuorumDurability {
		kind = KindDurability
	}
	inv.w.fail(kind, "%s", v.Detail)
	return true
}

// started: s recovered from its disk and is about to run.
func (inv *invariants) started(s *server) {
	if inv.violated(inv.c.Started(s.sid)) || inv.conf == nil {
		return
	}
	inv.steps[s.id].Reset(s.sid)
	inv.conformed(inv.conf.Started(s.sid, tlatrace.Disk{Accepted: s.diskAccepted, Current: s.diskCurrent,
		Snapshot: s.snapBase, Log: s.logged, Applied: s.peer.LastZxid()}))
}

// appended checks an append to s's log; it reports whether it may go on.
func (inv *invariants) appended(s *server, zxid int64, entry []byte) bool {
	if inv.w.ensemble == nil {
		return true // a standalone server's appends are not checked
	}
	return !inv.violated(inv.c.Appended(s.sid, zxid, invariant.EntryHash(entry)))
}

// proposed: s, leading, proposes the txn whose log entry is entry.
func (inv *invariants) proposed(s *server, zxid int64, entry []byte) bool {
	if inv.w.ensemble == nil {
		return true
	}
	return !inv.violated(inv.c.Proposed(s.sid, zxid, invariant.EntryHash(entry)))
}

// installed: a SNAP replaced s's tree at zxid in the Ready being carried
// out.
func (inv *invariants) installed(s *server, zxid int64) { inv.c.Installed(s.sid, zxid) }

// stepped: s carried out a Ready's truncation, epochs and appends.
func (inv *invariants) stepped(s *server) { inv.violated(inv.c.Stepped(s.sid)) }

// received: packet qp from server index from is about to reach s: the
// event of s's next step.
func (inv *invariants) received(s *server, from int, qp *wire.QuorumPacket) {
	if inv.w.ensemble != nil {
		inv.c.Received(s.sid, int64(from+1), qp)
	}
	if inv.conf == nil {
		return
	}
	st := &inv.steps[s.id]
	st.Received, st.From = true, int64(from+1)
	st.Packet = tlatrace.Packet{Type: qp.Type, Zxid: qp.Zxid, Epoch: ackEpochOf(qp)}
}

// peerGone: s is about to learn that its quorum connection with server
// index from is gone: the event of its next step.
func (inv *invariants) peerGone(s *server, from int) {
	if inv.conf != nil {
		st := &inv.steps[s.id]
		st.Gone, st.From = true, int64(from+1)
	}
}

// conform checks s's step: the event it took, and the Ready rd the Peer
// asked for after it, with its tree and role now. It runs as the member
// takes the Ready, before any of its disk operations or sends: those
// follow as they happen (epochsWritten, sent).
func (inv *invariants) conform(s *server, rd *zab.Ready) {
	if inv.conf == nil {
		return
	}
	st := &inv.steps[s.id]
	if rd.Installed != nil {
		st.Installed, st.InstalledAt = true, *rd.Installed
	}
	if rd.Truncate != nil {
		st.Truncated, st.TruncatedAt = true, *rd.Truncate
	}
	if rd.Epochs != nil {
		st.Epochs, st.Accepted, st.Current = true, rd.Epochs.Accepted, rd.Epochs.Current
	}
	for i := range rd.Appends {
		st.Appends = append(st.Appends, rd.Appends[i].Header.Zxid)
	}
	for i := range rd.PeerMessages {
		if m := &rd.PeerMessages[i]; m.Kind != zab.PeerSnapshotPart {
			st.Sends = append(st.Sends, tlatrace.Send{To: m.To, Close: m.Kind == zab.PeerClose,
				Packet: tlatrace.Packet{Type: m.Packet.Type, Zxid: m.Packet.Zxid, Epoch: ackEpochOf(&m.Packet)}})
		}
	}
	st.Durable, st.Snapshot = s.durable, s.snapBase
	st.Applied, st.State = s.peer.LastZxid(), s.peer.State()
	inv.conformed(inv.conf.Step(st))
	st.Reset(s.sid)
}

// epochsWritten: a disk job of s wrote its epoch files.
func (inv *invariants) epochsWritten(s *server) {
	if inv.conf != nil {
		inv.conformed(inv.conf.EpochsWritten(s.sid, inv.durability(s)))
	}
}

// sent: s's quorum message m leaves (a SNAP with its whole stream); it
// reports whether the run may go on.
func (inv *invariants) sent(s *server, m *zab.PeerMessage) bool {
	if inv.w.ensemble != nil && inv.violated(inv.c.Sent(s.sid, m)) {
		return false
	}
	if inv.conf != nil && m.Kind == zab.PeerSend {
		send := tlatrace.Send{To: m.To, Packet: tlatrace.Packet{Type: m.Packet.Type, Zxid: m.Packet.Zxid}}
		inv.conformed(inv.conf.Left(s.sid, send, inv.durability(s)))
	}
	return true
}

// crashed: s's process died.
func (inv *invariants) crashed(s *server) {
	if inv.conf != nil {
		inv.conf.Crashed(s.sid)
		inv.steps[s.id].Reset(s.sid)
	}
}

// durability is what s's disk holds durably now.
func (inv *invariants) durability(s *server) tlatrace.Durability {
	d := tlatrace.Durability{Accepted: s.diskAccepted, Current: s.diskCurrent, Snapshot: s.snapBase}
	if s.m != nil {
		d.Log = s.m.Log.DurableZxid()
	}
	return d
}

// ackEpochOf is an ACKEPOCH's currentEpoch (-1: the epoch was accepted
// before); 0 for other packets.
func ackEpochOf(qp *wire.QuorumPacket) int64 {
	if qp.Type != wire.PacketAckEpoch {
		return 0 // before ack is declared: it escapes, and most packets are not ACKEPOCH
	}
	var ack wire.AckEpoch
	if wire.Unmarshal(qp.Data, &ack) != nil {
		return 0
	}
	return int64(ack.CurrentEpoch)
}

// FormatAllowances lists the allowances taken, with their counts, in
// tlatrace's order ("" for none).
func FormatAllowances(c tlatrace.Counts) string {
	var parts []string
	for _, a := range tlatrace.Allowances() {
		if c[a] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", a, c[a]))
		}
	}
	return strings.Join(parts, ", ")
}

// conformed records a step the spec does not allow.
func (inv *invariants) conformed(v *tlatrace.Violation) {
	if v != nil {
		inv.w.fail(KindConformance+v.Action, "%s", v.Detail)
	}
}

// allowance traces a step the conformance checker accepted by name only.
func (inv *invariants) allowance(a tlatrace.Allowance, member, zxid int64) {
	if inv.w.tr.on() {
		inv.w.tr.logf("server %d: conformance allowance %s (0x%x)", member, a, zxid)
	}
}

// answering checks a Ready that holds replies to clients, before it is
// carried out.
func (inv *invariants) answering(s *server, rd *zab.Ready) {
	for i := range rd.Messages {
		if rd.Messages[i].Kind == zab.Reply {
			inv.violated(inv.c.Answering(s.sid))
			return
		}
	}
}

// noticed fails the run on a notice of a peer's packet that breaks the
// protocol (zab.Notice.PeerFault): the simulated members are all correct
// and the network keeps TCP's promises, so one is a defect of the sender,
// or of the receiver's judgement.
func (inv *invariants) noticed(s *server, n *zab.Notice) {
	if n.PeerFault {
		inv.w.fail(KindProtocol, "server %d: %s", s.sid, n.Text)
	}
}

// replied checks the zxid of a reply before it leaves s for cn.
func (inv *invariants) replied(s *server, cn *conn, h *wire.ReplyHeader) {
	inv.maxReplied = max(inv.maxReplied, h.Zxid)
	if v := inv.c.Replied(s.sid, h.Zxid); v != nil {
		inv.w.fail(KindDurability, "client %d xid %d: %s", cn.client.ID(), h.Xid, v.Detail)
	}
}

// firstDelivered adds a txn delivered for the first time to the witness,
// and ends the expiry watch of a session it closes.
func (inv *invariants) firstDelivered(member, zxid int64) {
	s := inv.w.servers[member-1]
	inv.w.delivered(s, zxid)
	if t, ok := s.witnessed.get(zxid); ok && t.op == wire.OpCloseSession {
		inv.sessionClosed(t.session, zxid)
	}
}

// roleChanged counts the epochs a leader established.
func (inv *invariants) roleChanged(s *server) {
	st := s.role
	if inv.w.ensemble != nil && st.Role == zab.RoleLeading && st.Phase == zab.PhaseBroadcast && !inv.established[st.Epoch] {
		inv.established[st.Epoch] = true
		inv.w.stats.Epochs++
	}
}

// committedEnd is the highest zxid known committed: delivered somewhere,
// or carried by a reply.
func (inv *invariants) committedEnd() int64 { return max(inv.maxReplied, inv.c.LastDelivered()) }

// violate records a broken invariant the simulator checks itself.
func (w *world) violate(name, format string, args ...any) {
	w.fail(KindInvariant+name, format, args...)
}
