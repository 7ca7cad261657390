package peerlink

import "time"

const (
	minElectionBackoff = 20 * time.Millisecond
	maxElectionBackoff = time.Second
	// CallBackWait is how long a smaller id, having dialled a larger one
	// to be called back, waits before it dials again if no call came.
	CallBackWait = 250 * time.Millisecond
)

// Step is what an election link's sender does next.
type Step uint8

const (
	// Idle: nothing to send, or nothing until the connection comes.
	Idle Step = iota
	// Dial: there is something to send (or the peer asked to be called
	// back) and no connection: dial the peer's election port.
	Dial
	// Write: write the notification Next returned on the connection.
	Write
)

// Election is one member's election link with one peer. C identifies a
// connection (zabd: a net.Conn; the simulator: its connection record), F
// is a notification as the transport carries it.
//
// Invariants: at most one connection is the link's at a time; a
// notification handed to Send is written on a connection, or replaced by a
// newer one before it was, or still pending.
type Election[C comparable, F any] struct {
	self, peer int64

	pending    F
	hasPending bool
	// last is the last notification taken for writing: sent again on a
	// new connection, in case the old one lost it.
	last    F
	hasLast bool

	conn    C
	hasConn bool
	// callBack: the peer, a smaller id, dialled us; it waits for our
	// connection even if we have nothing to send.
	callBack bool
	// heardOn is the connection a notification last arrived on: a link
	// known to have worked.
	heardOn  C
	hasHeard bool

	backoff time.Duration
}

// NewElection returns member self's link with member peer.
func NewElection[C comparable, F any](self, peer int64) *Election[C, F] {
	return &Election[C, F]{self: self, peer: peer, backoff: minElectionBackoff}
}

// DialSurvives reports whether a connection this member dials is kept:
// only the larger id's is (ZooKeeper's QuorumCnxManager). A smaller id
// sends its handshake and closes, and the larger one dials back.
func (e *Election[C, F]) DialSurvives() bool { return e.self > e.peer }

// Send puts f in the send slot, replacing a notification not yet taken.
func (e *Election[C, F]) Send(f F) { e.pending, e.hasPending = f, true }

// Next says what the sender does now; with Write, f is the notification
// to write, recorded as the last one sent.
func (e *Election[C, F]) Next() (step Step, f F, conn C) {
	switch {
	case !e.hasPending && !e.callBack:
		return Idle, f, conn
	case !e.hasConn:
		return Dial, f, conn
	case !e.hasPending:
		return Idle, f, conn
	}
	f = e.pending
	var zero F
	e.pending, e.hasPending = zero, false
	e.last, e.hasLast = f, true
	return Write, f, e.conn
}

// Unsent puts back f, whose write failed, unless a newer one waits.
func (e *Election[C, F]) Unsent(f F) {
	if !e.hasPending {
		e.pending, e.hasPending = f, true
	}
}

// DialFailed records a dial that failed (refused, timed out, or its
// handshake failed) and returns how long to wait before the next: 20 ms,
// doubling up to a second.
func (e *Election[C, F]) DialFailed() time.Duration {
	wait := e.backoff
	e.backoff = min(2*e.backoff, maxElectionBackoff)
	return wait
}

// Installed makes c the link's connection: one this member dialled that
// survives, or one the larger peer dialled. The last notification goes
// again on it unless a newer one waits. It returns the connection c
// replaces, if any, for the transport to close.
func (e *Election[C, F]) Installed(c C) (old C, replaced bool) {
	old, replaced = e.conn, e.hasConn
	e.conn, e.hasConn, e.callBack = c, true, false
	e.backoff = minElectionBackoff
	if !e.hasPending && e.hasLast {
		e.pending, e.hasPending = e.last, true
	}
	return old, replaced
}

// CallBackAsked records that the peer, a smaller id, dialled us: it holds
// no connection with us, so ours, if any, is stale, and we dial it. It
// returns that stale connection for the transport to close.
func (e *Election[C, F]) CallBackAsked() (old C, had bool) {
	old, had = e.conn, e.hasConn
	var zero C
	e.conn, e.hasConn, e.callBack = zero, false, true
	return old, had
}

// Heard records a notification that arrived on c.
func (e *Election[C, F]) Heard(c C) { e.heardOn, e.hasHeard = c, true }

// Dropped records that c ended; peerClosed: the peer closed it or its host
// reset it (not a timeout, not a protocol error). It reports whether c was
// the link's connection. When a connection that carried the peer's
// notifications ends because the peer closed it (its process may have
// died), the last notification is sent again at once: the dial that takes
// it tells whether the peer's process is gone. A link that never carried
// one, or that ended otherwise, redials only when there is something new
// to send, so a peer that keeps refusing us cannot make us redial in a
// loop.
func (e *Election[C, F]) Dropped(c C, peerClosed bool) (current bool) {
	var zero C
	current = e.hasConn && e.conn == c
	heard := e.hasHeard && e.heardOn == c
	if current {
		e.conn, e.hasConn = zero, false
		if heard && peerClosed && !e.hasPending && e.hasLast {
			e.pending, e.hasPending = e.last, true
		}
	}
	if heard {
		e.heardOn, e.hasHeard = zero, false
	}
	return current
}

// Conn returns the link's connection, if any.
func (e *Election[C, F]) Conn() (c C, ok bool) { return e.conn, e.hasConn }
