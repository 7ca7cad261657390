package sim

import (
	"fmt"
	"slices"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/sim/simclient"
	"github.com/zabd/zabd/wire"
)

// Adversarial clients (faults.Intrude): another client's live session id
// presented with a wrong, an empty or the session's own password, on the
// server the owner is connected to, where ZooKeeper's processConnectRequest
// would close the owner's connection before checking the password.
//
// What must hold, besides what the intruder itself checks of the answer
// (simclient.Intrusion):
//   - a wrong or empty password leaves every connection the owner had open
//     on that server open (zabd checks the password first, on purpose;
//     docs/sessions.md), and so its session, its watches and its later
//     operations — the history checkers judge those;
//   - the stolen password moves the session: by the time the intruder is
//     answered, the server has closed the owner's connection, as ZooKeeper
//     closes it. The intruder's SyncConnected is in the history under its
//     own client number and the session's id, so the checkers see that the
//     session was touched and served elsewhere.
type intrusion struct {
	fault   faults.Fault
	owner   *simclient.Client
	session int64
	// ownerConn is the owner's established connection on the intruder's
	// server when its connect arrived there (0: none).
	ownerConn simclient.ConnID
}

// wrongPasswd is a password that is certainly not p: every bit flipped (16
// bytes, as a real one).
func wrongPasswd(p []byte) []byte {
	out := make([]byte, 16)
	for i := range out {
		if i < len(p) {
			out[i] = ^p[i]
		} else {
			out[i] = 0xff
		}
	}
	return out
}

// intrude starts an intruder on f.Client's session; it connects to the
// server the owner is connected to (or would dial next).
func (w *world) intrude(f faults.Fault) {
	owner := w.clients[f.Client-1]
	if owner.Done() || owner.Session() == 0 {
		w.tr.logf("intrude left out: client %d holds no live session", f.Client)
		return
	}
	in := &simclient.Intrusion{Session: owner.Session(), Steal: f.Passwd == faults.StolenPasswd, Hold: ms(f.ForMs)}
	switch f.Passwd {
	case faults.WrongPasswd:
		in.Passwd = wrongPasswd(owner.Passwd())
	case faults.StolenPasswd:
		in.Passwd = slices.Clone(owner.Passwd())
	}
	id := len(w.clients) + 1
	c := simclient.New(simclient.Config{ID: id, SessionTimeout: ms(w.sched.SessionTimeoutMs), Intrusion: in},
		w, w.streams.Stream(fmt.Sprintf("client/%d", id)))
	w.intruders[c] = &intrusion{fault: f, owner: owner, session: in.Session}
	if ids := w.openConnsOf(owner); len(ids) > 0 {
		w.dialNext[id] = w.conns[ids[len(ids)-1]].server.id
	} else {
		w.dialNext[id] = w.dialNext[owner.ID()]
	}
	w.clients = append(w.clients, c)
	w.tr.logf("client %d intrudes on client %d's session %s with the %s password", id, f.Client, wire.SessionString(in.Session), f.Passwd)
	c.Start()
}

// intruderArrived notes, as an intruder's connect reaches s, the owner's
// established connection there, if it has one: the session is bound to it
// on s (an owner still connecting is not, and zabd leaves such a
// connection to time out in the client, as the intruder took its place).
func (s *server) intruderArrived(cn *conn) {
	in := cn.intruded
	in.ownerConn = 0
	if id, ok := in.owner.ConnectedConn(); ok {
		if oc := s.w.conns[id]; oc != nil && oc.open && oc.server == s && oc.gen == s.gen {
			in.ownerConn = id
		}
	}
}

// intruderAnswered checks the owner's connections on s as s answers an
// intruder's connect: left open after a refusal, closed when the session
// moved to the intruder.
func (s *server) intruderAnswered(cn *conn, resp *wire.ConnectResponse) {
	in := cn.intruded
	moved := resp.TimeOut > 0
	if id := in.ownerConn; id != 0 {
		open := s.w.conns[id] != nil && s.w.conns[id].open
		switch {
		case !moved && !open && s.w.closing[in.session]:
			// The session was closing (expired, say) as the intruder came:
			// its close closed the owner's connection and refuses the
			// intruder (hunt seed 5895).
		case !moved && !open:
			s.w.fail(KindProtocol, "server %d closed client %d's connection %d when client %d presented its session %s with the %s password",
				s.sid, in.owner.ID(), id, cn.client.ID(), wire.SessionString(in.session), in.fault.Passwd)
		case moved && open:
			s.w.fail(KindProtocol, "server %d moved client %d's session %s to client %d but left the owner's connection %d open",
				s.sid, in.owner.ID(), wire.SessionString(in.session), cn.client.ID(), id)
		}
	}
	if moved {
		s.w.tr.logf("server %d: session %s moved from client %d to intruder client %d", s.sid, wire.SessionString(resp.SessionID), in.owner.ID(), cn.client.ID())
	}
}
