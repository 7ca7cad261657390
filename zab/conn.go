package zab

import (
	"slices"
	"strings"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/wire"
)

// connState is where a connection is in its life.
type connState uint8

const (
	// connAwaitingConnect: opened, no ConnectRequest yet.
	connAwaitingConnect connState = iota
	// connCreating: its new session's createSession txn is in flight;
	// requests wait (ZooKeeper stops reading the socket meanwhile).
	connCreating
	// connEstablished: bound to a live session, serving requests.
	connEstablished
)

// conn is one client connection.
type conn struct {
	id    ConnID
	addr  string
	auth  []wire.Id // ("ip", addr) first, then what addauth added, no repeats; append-only
	state connState
	// session is the session the connection serves (0 before connect).
	session int64
	// hasReadOnly: the client sent the readOnly byte, so the connect
	// response carries one too (ZooKeeper's isOldClient test).
	hasReadOnly bool
	held        []RequestReceived // requests that arrived while connCreating
}

// handleConnect answers a ConnectRequest as ZooKeeper's
// processConnectRequest does.
func (p *Peer) handleConnect(e ConnectReceived) {
	c := p.conns[e.Conn]
	if c == nil {
		return // never opened, or already closed: nobody to answer
	}
	if c.state != connAwaitingConnect {
		p.closeConn(c) // a second ConnectRequest on one connection
		return
	}
	req := &e.Req
	if req.LastZxidSeen > p.tree.LastZxid() {
		// The client has seen a txn this server has not: it must find a
		// more up-to-date server. ZooKeeper closes without a response.
		p.closeConn(c)
		return
	}
	timeout := p.sessions.Limits().Negotiate(req.TimeOut)
	c.hasReadOnly = req.HasReadOnly
	if req.SessionID == 0 {
		id := p.sessions.Create(timeout, p.now.Mono)
		p.bind(c, id)
		c.state = connCreating
		p.submitWrite(&pending{
			conn: c.id,
			kind: kindConnect,
			req: datatree.Request{
				Session: id,
				Op:      wire.OpCreateSession,
				Body:    &wire.CreateSessionTxn{TimeOut: timeout},
			},
			timeout: timeout,
		})
		return
	}
	// A reconnect. ZooKeeper closes any other connection of the session
	// before it even checks the password, so anyone who knows a session id
	// can knock its client off; zabd closes it only once the password is
	// right (docs/sessions.md).
	if !p.cfg.Passwords.Check(req.SessionID, req.Passwd) || !p.sessions.Revalidate(req.SessionID, timeout, p.now.Mono) {
		p.send(Message{Conn: c.id, Kind: Connect, Body: &wire.ConnectResponse{
			Passwd:      make([]byte, sessions.PasswordLen),
			HasReadOnly: c.hasReadOnly,
		}})
		p.closeConn(c)
		return
	}
	if old, ok := p.connOf[req.SessionID]; ok && old != c.id {
		p.closeConn(p.conns[old])
	}
	// The session is served through this member from now on.
	_ = p.sessions.SetOwner(req.SessionID, p.self) // cannot fail: just revalidated
	p.bind(c, req.SessionID)
	p.establish(c, timeout)
}

// establish sends the connect response of a valid session and serves any
// requests that waited for it.
func (p *Peer) establish(c *conn, timeout int32) {
	c.state = connEstablished
	p.send(Message{Conn: c.id, Kind: Connect, Body: &wire.ConnectResponse{
		TimeOut:     timeout,
		SessionID:   c.session,
		Passwd:      p.cfg.Passwords.For(c.session),
		HasReadOnly: c.hasReadOnly,
	}})
	held := c.held
	c.held = nil
	for _, e := range held {
		p.handleRequest(e)
	}
}

// openConn starts a connection. A shell must not reuse an id; if one does,
// the old connection is forgotten first, so that its watches and session
// binding do not pass to the new one.
func (p *Peer) openConn(id ConnID, addr string) *conn {
	p.dropConn(id)
	c := &conn{id: id, addr: addr, auth: []wire.Id{{Scheme: "ip", ID: addr}}}
	p.conns[id] = c
	return c
}

// bind makes c the connection of session id.
func (p *Peer) bind(c *conn, id int64) {
	c.session = id
	p.connOf[id] = c.id
}

// closeConn asks the shell to close c once its earlier messages are
// written, and forgets it.
func (p *Peer) closeConn(c *conn) {
	if c == nil {
		return
	}
	p.send(Message{Conn: c.id, Kind: Close})
	p.dropConn(c.id)
}

// dropConn forgets a connection: its watches go, its session stays, and
// replies still owed to it are dropped when they come due.
func (p *Peer) dropConn(id ConnID) {
	c := p.conns[id]
	if c == nil {
		return
	}
	p.tree.RemoveWatcher(datatree.WatcherID(id))
	delete(p.conns, id)
	if c.session != 0 && p.connOf[c.session] == id {
		delete(p.connOf, c.session)
	}
}

// handleAuth answers an auth packet at once, outside the session's request
// order, as ZooKeeper's processPacket does: the reply's zxid is 0, and a
// failed auth closes the connection.
func (p *Peer) handleAuth(c *conn, e RequestReceived) {
	code := wire.ErrAuthFailed
	if pkt, ok := e.Body.(*wire.AuthPacket); ok {
		var ids []wire.Id
		ids, code = datatree.Authenticate(p.cfg.Tree, pkt.Scheme, pkt.Auth, c.addr)
		if code == wire.ErrOK {
			for _, id := range ids {
				// A set, as in ZooKeeper: the same addauth twice adds
				// nothing (and a client repeating it grows nothing).
				if !slices.Contains(c.auth, id) {
					c.auth = append(c.auth, id)
				}
			}
			// Watch events are filtered by the READ permission of the
			// connection's identities at delivery time, as ZooKeeper's
			// connection checks them: watches set before this auth must
			// see the new identity too.
			p.tree.SetWatcherAuth(datatree.WatcherID(c.id), c.auth)
		}
	}
	p.send(Message{Conn: c.id, Header: wire.ReplyHeader{Xid: e.Xid, Err: code}})
	if code != wire.ErrOK {
		p.closeConn(c)
	}
}

// whoAmI lists the connection's identities as ZooKeeper's AuthUtil does:
// the scheme and the user name its provider derives ("" when none), in the
// order ZooKeeper's connection holds them (its hash set's, AuthOrder).
func whoAmI(auth []wire.Id) *wire.WhoAmIResponse {
	auth = datatree.AuthOrder(auth)
	infos := make([]wire.ClientInfo, len(auth))
	for i, id := range auth {
		user := ""
		switch id.Scheme {
		case "digest":
			user, _, _ = strings.Cut(id.ID, ":")
		case "ip":
			user = id.ID
		}
		infos[i] = wire.ClientInfo{AuthScheme: id.Scheme, User: user}
	}
	return &wire.WhoAmIResponse{ClientInfo: infos}
}
