package sim

import (
	"fmt"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// Events from the network.

func (s *server) connect(cn *conn, req wire.ConnectRequest) {
	if !s.live(cn) {
		return
	}
	id := zab.ConnID(cn.id)
	s.conns[id] = cn
	cn.session = req.SessionID
	if cn.intruded != nil {
		s.intruderArrived(cn)
	}
	s.peer.Step(s.now(), zab.ConnOpened{Conn: id, Addr: "127.0.0.1"})
	s.step(zab.ConnectReceived{Conn: id, Req: req})
}

func (s *server) request(cn *conn, hdr wire.RequestHeader, body wire.Record) {
	if !s.live(cn) {
		return
	}
	s.step(zab.RequestReceived{Conn: zab.ConnID(cn.id), Xid: hdr.Xid, Op: hdr.Type, Body: body})
}

func (s *server) connClosed(cn *conn) {
	if s.up && cn.gen == s.gen {
		delete(s.conns, zab.ConnID(cn.id))
		s.step(zab.ConnClosed{Conn: zab.ConnID(cn.id)})
	}
}

// live reports whether a frame on cn reaches the running incarnation.
func (s *server) live(cn *conn) bool { return s.up && cn.gen == s.gen && cn.open }

// term names, for the history (linearizability.Entry.Term), the term in
// which s answers a connect on cn: a standalone server's incarnation, or
// the epoch of the leader an ensemble member leads or follows while it
// serves clients. A member leaves its epoch only by closing every client
// connection, so every reply on cn comes from that term. "" when s is not
// serving: its state is reported before the messages of the same step, so
// it may already have left the epoch the connect was answered in (and
// the connection is closed in the same step).
func (s *server) term(cn *conn) string {
	if s.w.ensemble == nil {
		return fmt.Sprintf("start %d", cn.gen+1)
	}
	if s.role.Phase != zab.PhaseBroadcast || s.role.Epoch == 0 {
		return ""
	}
	return fmt.Sprintf("epoch %d", s.role.Epoch)
}

// send carries one message to its connection. Every reply header's zxid
// must already be durable: the server answers nothing it could lose.
func (s *server) send(m *zab.Message) {
	w := s.w
	cn := s.conns[m.Conn]
	if cn == nil || !cn.open {
		return
	}
	if m.Kind == zab.Connect {
		if _, ok := m.Body.(*wire.ConnectResponse); !ok {
			w.fail(KindProtocol, "server %d: connect response body is %T", s.sid, m.Body)
			return
		}
	}
	s.expiryAnnounced(cn, m)
	switch m.Kind {
	case zab.Reply:
		w.inv.replied(s, cn, &m.Header)
		if w.tr.on() && m.Header.Xid != wire.XidPing {
			w.tr.logf("server %d -> client %d %s", s.sid, cn.client.ID(), describeMessage(&m.Header, m.Body))
		}
		w.sendFrame(frame{w: w, cn: cn, reply: m.Header, body: m.Body})
	case zab.Connect:
		r, id := *m.Body.(*wire.ConnectResponse), cn.id // checked above
		cn.answered, cn.term = true, s.term(cn)
		if w.tr.on() {
			w.tr.logf("server %d -> client %d connect %s", s.sid, cn.client.ID(), wire.Describe(&r))
		}
		if cn.intruded != nil {
			s.intruderAnswered(cn, &r)
		}
		w.deliverAt(&cn.toClient, func() { cn.client.Connected(id, r) })
	case zab.Close:
		w.closeConn(cn.id, "closed by the server")
	}
}
