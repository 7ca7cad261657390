package zab

import (
	"maps"
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
	// connRevalidating: a reconnect through a learner waits for the
	// leader's answer to REVALIDATE; requests wait.
	connRevalidating
	// connEstablished: bound to a live session, serving requests.
	connEstablished
)

// conn is one client connection.
type conn struct {
	id     ConnID
	client datatree.Client
	// auth is ("ip", addr) first, then the client certificate's ids, then
	// what addauth added, no repeats; append-only.
	auth  []wire.Id
	state connState
	// session is the session the connection serves (0 before connect).
	session int64
	// hasReadOnly: the client sent the readOnly byte, so the connect
	// response carries one too (ZooKeeper's isOldClient test).
	hasReadOnly bool
	held        []RequestReceived // requests that arrived while connCreating or connRevalidating
	timeout     int32             // the negotiated session timeout, once established
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
	if !p.serving() {
		// A member in election or synchronization serves nothing; the
		// client tries another (ZooKeeper: "ZooKeeperServer not running").
		p.closeConn(c)
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
		pd := &pending{
			conn: c.id,
			kind: kindConnect,
			req: datatree.Request{
				Session: id,
				Op:      wire.OpCreateSession,
				Body:    &wire.CreateSessionTxn{TimeOut: timeout},
			},
			timeout: timeout,
		}
		if p.learn != nil {
			// The learner minted the id (its server id in the top byte);
			// the leader proposes the session, ZooKeeper's way: a
			// createSession request whose body is the timeout.
			p.learnerTouch(id, timeout)
			p.forwardWrite(pd, wire.Marshal(&wire.CreateSessionTxn{TimeOut: timeout}))
			return
		}
		p.submitWrite(pd)
		return
	}
	if p.learn != nil {
		p.revalidateThroughLeader(c, req.SessionID, req.Passwd, timeout)
		return
	}
	// A reconnect. ZooKeeper closes any other connection of the session
	// before it even checks the password, so anyone who knows a session id
	// can knock its client off; zabd closes it only once the password is
	// right (docs/sessions.md).
	if !p.cfg.Passwords.Check(req.SessionID, req.Passwd) || !p.sessions.Revalidate(req.SessionID, timeout, p.now.Mono) {
		p.refuseSession(c)
		return
	}
	// The session is served through this member from now on.
	_ = p.sessions.SetOwner(req.SessionID, p.self) // cannot fail: just revalidated
	p.takeOver(c, req.SessionID, timeout)
}

// takeOver binds a reconnecting session to c, closing its other
// connection here, and establishes it.
func (p *Peer) takeOver(c *conn, session int64, timeout int32) {
	if old, ok := p.connOf[session]; ok && old != c.id {
		p.closeConn(p.conns[old])
	}
	p.bind(c, session)
	p.establish(c, timeout)
}

// refuseSession answers a reconnect whose session is invalid or expired:
// timeout 0, then close, as ZooKeeper does.
func (p *Peer) refuseSession(c *conn) {
	p.send(Message{Conn: c.id, Kind: Connect, Body: &wire.ConnectResponse{
		Passwd:      make([]byte, sessions.PasswordLen),
		HasReadOnly: c.hasReadOnly,
	}})
	p.closeConn(c)
}

// revalidateThroughLeader: a client reconnects through a learner with an
// existing session. The password is checked here; whether the session
// still lives only the leader knows (it alone expires sessions), so the
// learner asks it with REVALIDATE and holds the connection meanwhile.
func (p *Peer) revalidateThroughLeader(c *conn, session int64, passwd []byte, timeout int32) {
	if !p.cfg.Passwords.Check(session, passwd) {
		p.refuseSession(c)
		return
	}
	c.state, c.session, c.timeout = connRevalidating, session, timeout
	p.learn.revalidating[session] = c.id
	rv := wire.RevalidateRequest{SessionID: session, Timeout: timeout}
	p.sendPeer(p.learn.leader, wire.QuorumPacket{Type: wire.PacketRevalidate, Zxid: -1, Data: wire.Marshal(&rv)}, nil)
}

// learnerRevalidated takes the leader's answer to REVALIDATE.
func (p *Peer) learnerRevalidated(qp *wire.QuorumPacket) {
	var rv wire.RevalidateReply
	if err := wire.Unmarshal(qp.Data, &rv); err != nil {
		p.leaveEpoch(qp, "its data does not decode")
		return
	}
	id, ok := p.learn.revalidating[rv.SessionID]
	delete(p.learn.revalidating, rv.SessionID)
	c := p.conns[id]
	if !ok || c == nil || c.state != connRevalidating {
		return // the client left meanwhile
	}
	if !rv.Valid {
		p.refuseSession(c)
		return
	}
	p.sessions.Revalidate(rv.SessionID, c.timeout, p.now.Mono)
	p.learnerTouch(rv.SessionID, c.timeout)
	p.takeOver(c, rv.SessionID, c.timeout)
}

// sortedConnIDs returns the connection ids in ascending order, so that
// closing them all yields one order of messages.
func sortedConnIDs(conns map[ConnID]*conn) []ConnID {
	return slices.Sorted(maps.Keys(conns))
}

// establish sends the connect response of a valid session and serves any
// requests that waited for it.
func (p *Peer) establish(c *conn, timeout int32) {
	c.state, c.timeout = connEstablished, timeout
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
// binding do not pass to the new one. A TLS client's verified certificate
// authenticates it at once, as ZooKeeper's handshake does.
func (p *Peer) openConn(id ConnID, client datatree.Client) *conn {
	p.dropConn(id)
	c := &conn{id: id, client: client, auth: []wire.Id{{Scheme: "ip", ID: client.Addr}}}
	if client.HasCert {
		c.auth = append(c.auth, datatree.CertificateIdentities(p.cfg.Tree, client.CertSubject)...)
	}
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
		ids, code = datatree.Authenticate(p.cfg.Tree, pkt.Scheme, pkt.Auth, c.client)
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
		case "ip", "x509":
			user = id.ID
		}
		infos[i] = wire.ClientInfo{AuthScheme: id.Scheme, User: user}
	}
	return &wire.WhoAmIResponse{ClientInfo: infos}
}
