package sim

import (
	"fmt"
	"time"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// ExpiryCarriedOut: a session that a server told its client was expired
// (a connect answered with timeout 0, or a SessionExpired reply) is closed
// by a closeSession txn. The history checkers cannot hold an ensemble to
// this: ZooKeeper tells the client as soon as the expiry is decided, before
// the closeSession is durable, and a leader change may lose that txn and
// bring the session back until the next leader expires it again; nothing in
// a history proves the deciding leader kept its leadership. The simulator
// sees the servers, so it checks what must follow instead: within
// expiryBound of the later of the announcement and the current leader's
// establishment, the established leader (a standalone server: the server)
// must hold a closeSession txn for the session in its log — proposed, and
// committed if it keeps the lead — unless one was already committed. A
// leader that answers Expired and never proposes the close fails it, while
// the session's ephemerals live on: one that forgets expired sessions
// (zab.Bugs.ExpireWithoutTxn), or one that kept a closing mark across
// losing and regaining the lead (hunt seed 54063,
// zab.Bugs.ClosingSurvivesStepDown).
//
// An UnknownSession reply is not such an announcement: it says the leader
// tracks no such session, and every member's tracker follows the session
// txns it applies (createSession adds, closeSession removes, a SNAP or a
// restart loads the tree's), so the leader's tree holds no such session
// and there is nothing left for a closeSession to close. Nor does a client
// library take it for an expiry: it is an error of the one operation.
//
// A session announced expired is watched until a closeSession for it is
// delivered (then it is closed for good: a committed txn is never
// undone), or until a server establishes a connection on it again: only an
// intruder with the stolen password (the owner starts a new session once
// told), whose connect rightly revives a session whose close was lost; a
// later announcement watches it afresh.
type expiryWatch struct {
	session int64
	told    time.Duration // when a server first told a client (monotonic)
	by      int64         // the server that told
	client  int           // the client it told
	bound   time.Duration // expiryBound of the session's timeout
}

// announcedExpired records that server s told client that session was
// expired.
func (inv *invariants) announcedExpired(s *server, client int, session int64) {
	if session == 0 || inv.closedSessions[session] {
		return
	}
	for _, e := range inv.expiries {
		if e.session == session {
			return // the first announcement counts: the client stopped then
		}
	}
	inv.expiries = append(inv.expiries, expiryWatch{session: session, told: inv.w.clock.Mono(), by: s.sid, client: client,
		bound: inv.expiryBound(inv.timeouts[session])})
	inv.w.stats.ExpiriesTold++
	inv.w.tr.logf("server %d: told client %d that session %s expired before its closeSession committed: the close must follow (ExpiryCarriedOut)", s.sid, client, wire.SessionString(session))
}

// sessionServed records that a server established a connection on session
// with timeout: it lives again (see expiryWatch).
func (inv *invariants) sessionServed(session int64, timeout time.Duration) {
	inv.timeouts[session] = max(inv.timeouts[session], timeout)
	inv.unwatch(session)
}

// unwatch ends the watch on session.
func (inv *invariants) unwatch(session int64) {
	for i, e := range inv.expiries {
		if e.session == session {
			inv.expiries = append(inv.expiries[:i], inv.expiries[i+1:]...)
			return
		}
	}
}

// sessionClosed records that the closeSession txn zxid for session was
// delivered (applied for the first time anywhere).
func (inv *invariants) sessionClosed(session, zxid int64) {
	inv.closedSessions[session] = true
	if _, ok := inv.w.closedAt[session]; !ok {
		inv.w.closedAt[session] = inv.w.clock.Mono()
	}
	l := inv.decider()
	for _, e := range inv.expiries {
		// A close proposed in an epoch established after the telling: the
		// one told was lost with its leader (ensembles; a standalone
		// server's restart replays a close that survived in the same
		// epoch as one proposed again).
		if e.session == session && l != nil && inv.w.ensemble != nil && l.decidingSince > e.told && zxid>>32 == l.role.Epoch {
			inv.w.stats.ExpiriesDecidedAgain++
			inv.w.tr.logf("session %s is closed by server %d, leader since %s, after its close told at %s was lost with its leader", wire.SessionString(session), l.sid, fmtMono(l.decidingSince), fmtMono(e.told))
		}
	}
	inv.unwatch(session)
}

// expiriesSettled reports whether every session announced expired has been
// closed by a committed txn: a run does not stop before, so that a close
// that never comes meets its bound.
func (inv *invariants) expiriesSettled() bool { return len(inv.expiries) == 0 }

// expiryBound is how long after the later of the announcement and the
// leader's establishment the leader has to propose the closeSession:
//
//   - a full session timeout (the longest any server negotiated with a
//     client for the session, and at least what the clients ask for): a
//     leader gives every session that is not
//     closing a full timeout when it establishes its epoch
//     (sessions.Tracker.RestartExpiry in maybeEstablish), and so does a
//     standalone server at start (the restored table's sessions are Added
//     with a full timeout); a session whose close a leader change lost is
//     open again on the new leader;
//   - the touch lag (CheckerOptions' TouchLag: 13 ticks in an ensemble, 0
//     standalone): the client stopped using the session when told, but a
//     learner reports the touches of its last requests in a later PING
//     reply, which a slow link delays, and a touch pushes the expiry a
//     full timeout further;
//   - one tick: the expiry queue rounds every expiry up to the next tick
//     boundary (sessions.ExpiryQueue.roundUp);
//   - one tick of slack for the rest, each far below a tick (50–200 ms):
//     a request still on its way over the client's previous connection
//     (at most 2.1 ms, world.latency) touches the session after the
//     announcement, and the shell delivers the Tick the Peer asks for at
//     its wake-up time, a millisecond later at worst (armTick). The
//     closeSession is appended to the leader's own log as it is proposed,
//     so neither slow disks nor slow links delay it; a leader that cannot
//     append stops, and its successor starts the clock again.
func (inv *invariants) expiryBound(timeout time.Duration) time.Duration {
	timeout = max(timeout, ms(inv.w.sched.SessionTimeoutMs))
	return timeout + CheckerOptions(inv.w.sched).TouchLag + 2*ms(inv.w.sched.TickMs)
}

// decider is the server that decides expiry now: the established leader of
// the newest epoch, or the standalone server while it runs; nil if none.
func (inv *invariants) decider() *server {
	w := inv.w
	if w.ensemble == nil {
		if s := w.servers[0]; s.up {
			return s
		}
		return nil
	}
	if i := w.leader(); i >= 0 {
		return w.servers[i]
	}
	return nil
}

// checkExpiries checks ExpiryCarriedOut after a step.
func (inv *invariants) checkExpiries() {
	if len(inv.expiries) == 0 {
		return
	}
	l := inv.decider()
	if l == nil {
		return // nobody decides expiry now; the next leader restarts the clock
	}
	now := inv.w.clock.Mono()
	for _, e := range inv.expiries {
		if now < max(e.told, l.decidingSince)+e.bound {
			continue
		}
		if l.logsCloseOf(e.session) {
			continue // in the leader's history: committed once a quorum ACKs
		}
		state := "not in its session table"
		for _, t := range l.peer.SessionTable() {
			if t.ID == e.session {
				state = "still in its session table"
			}
		}
		who := "the standalone server"
		if inv.w.ensemble != nil {
			who = fmt.Sprintf("the leader of epoch %d", l.role.Epoch)
		}
		inv.w.violate("ExpiryCarriedOut", "server %d told client %d at %s that session %s expired, but %s later server %d, %s since %s, has proposed no closeSession for it and none was committed; the session is %s",
			e.by, e.client, fmtMono(e.told), wire.SessionString(e.session), e.bound, l.sid, who, fmtMono(l.decidingSince), state)
		return
	}
}

// expiryAnnounced looks at a message a server sends to a client connection
// for an expiry announcement or an established session.
func (s *server) expiryAnnounced(cn *conn, m *zab.Message) {
	inv := s.w.inv
	switch m.Kind {
	case zab.Reply:
		if m.Header.Err == wire.ErrSessionExpired {
			inv.announcedExpired(s, cn.client.ID(), cn.session)
		}
	case zab.Connect:
		resp := m.Body.(*wire.ConnectResponse) // send checked the type
		switch {
		case resp.TimeOut > 0:
			cn.session = resp.SessionID
			inv.sessionServed(resp.SessionID, ms(int64(resp.TimeOut)))
		case cn.intruded == nil || cn.intruded.fault.Passwd == faults.StolenPasswd:
			// The session's own password: a refusal says the session is
			// gone (a wrong password is refused the same way, and says
			// nothing of the session).
			inv.announcedExpired(s, cn.client.ID(), cn.session)
		}
	}
}

// logsCloseOf reports whether s's log holds a closeSession txn for
// session. It reads the whole log, but only for a session past its bound.
func (s *server) logsCloseOf(session int64) bool {
	for _, z := range s.logged {
		if t, ok := s.witnessed.get(z); ok && t.op == wire.OpCloseSession && t.session == session {
			return true
		}
	}
	return false
}
