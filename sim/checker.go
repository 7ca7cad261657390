package sim

import (
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/invariant"
)

// KindInvariant prefixes the failures of the ensemble invariants; the
// invariant's name follows (package zab/invariant's, Zab.tla's where it has
// one), so the shrinker keeps to the same invariant. A txn or reply not
// durable on a quorum (invariant.QuorumDurability) fails as KindDurability,
// the simulator's kind for lost acknowledged data.
const KindInvariant = "invariant: "

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
func (inv *invariants) started(s *server) { inv.violated(inv.c.Started(s.sid)) }

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
