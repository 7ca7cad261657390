package zabtest

import (
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// Client is one simulated client connection: it numbers its requests as
// ZooKeeper's clients do (xids from 1) and sends them through the Harness.
type Client struct {
	h       *Harness
	Conn    zab.ConnID
	Session int64
	Passwd  []byte
	Timeout int32
	xid     int32
}

// Open opens a new connection from 127.0.0.1 without connecting.
func (h *Harness) Open() *Client {
	h.nextConn++
	c := &Client{h: h, Conn: h.nextConn}
	h.Step(zab.ConnOpened{Conn: c.Conn, Addr: "127.0.0.1"})
	return c
}

// Connect sends the ConnectRequest for a new session (Session 0) or for
// the client's session (a reconnect), with the client's password and the
// given last seen zxid.
func (c *Client) Connect(timeoutMs int32, lastZxid int64) {
	c.h.Step(zab.ConnectReceived{Conn: c.Conn, Req: wire.ConnectRequest{
		LastZxidSeen: lastZxid,
		TimeOut:      timeoutMs,
		SessionID:    c.Session,
		Passwd:       c.Passwd,
		HasReadOnly:  true,
	}})
}

// Session opens a connection and establishes a new session. It Takes the
// effects (the connect response and anything emitted before it), so call
// Expect or Take first for what a test still wants to see; durability must
// not be held.
func (h *Harness) Session(timeoutMs int32) *Client {
	h.t.Helper()
	c := h.Open()
	c.Connect(timeoutMs, 0)
	for i := len(h.Effects) - 1; i >= h.unread; i-- {
		m := &h.Effects[i]
		if m.Conn == c.Conn && m.Kind == zab.Connect {
			r := m.Body.(*wire.ConnectResponse)
			c.Session, c.Passwd, c.Timeout = r.SessionID, r.Passwd, r.TimeOut
			h.Take()
			return c
		}
	}
	h.t.Fatalf("zabtest: no connect response for c%d (durability held?)", c.Conn)
	return nil
}

// Reopen makes a new connection for the same session (the old one is
// left to the caller), as a client does after a disconnect.
func (c *Client) Reopen() *Client {
	n := c.h.Open()
	n.Session, n.Passwd, n.Timeout, n.xid = c.Session, c.Passwd, c.Timeout, c.xid
	return n
}

// Send sends a request with the next xid and returns that xid.
func (c *Client) Send(op wire.OpCode, body wire.Record) int32 {
	c.xid++
	c.SendXid(c.xid, op, body)
	return c.xid
}

// SendXid sends a request with a chosen xid (pings, auth, setWatches).
func (c *Client) SendXid(xid int32, op wire.OpCode, body wire.Record) {
	c.h.Step(zab.RequestReceived{Conn: c.Conn, Xid: xid, Op: op, Body: body})
}

// Hangup reports the connection closed by the client.
func (c *Client) Hangup() { c.h.Step(zab.ConnClosed{Conn: c.Conn}) }

// Create creates path with data in mode (open ACL).
func (c *Client) Create(path, data string, mode wire.CreateMode) int32 {
	return c.Send(wire.OpCreate, &wire.CreateRequest{Path: path, Data: []byte(data), ACL: wire.OpenACLUnsafe, Flags: mode})
}

// CreateTTL creates a TTL node.
func (c *Client) CreateTTL(path, data string, ttlMs int64) int32 {
	return c.Send(wire.OpCreateTTL, &wire.CreateRequest{Path: path, Data: []byte(data), ACL: wire.OpenACLUnsafe, Flags: wire.ModePersistentWithTTL, TTL: ttlMs, HasTTL: true})
}

// SetData sets path's data if version matches (-1: any).
func (c *Client) SetData(path, data string, version int32) int32 {
	return c.Send(wire.OpSetData, &wire.SetDataRequest{Path: path, Data: []byte(data), Version: version})
}

// Delete deletes path if version matches (-1: any).
func (c *Client) Delete(path string, version int32) int32 {
	return c.Send(wire.OpDelete, &wire.PathVersionRequest{Path: path, Version: version})
}

// GetData reads path, leaving a data watch if watch.
func (c *Client) GetData(path string, watch bool) int32 {
	return c.Send(wire.OpGetData, &wire.PathWatchRequest{Path: path, Watch: watch})
}

// Exists stats path, leaving a watch if watch.
func (c *Client) Exists(path string, watch bool) int32 {
	return c.Send(wire.OpExists, &wire.PathWatchRequest{Path: path, Watch: watch})
}

// GetChildren lists path's children, leaving a child watch if watch.
func (c *Client) GetChildren(path string, watch bool) int32 {
	return c.Send(wire.OpGetChildren, &wire.PathWatchRequest{Path: path, Watch: watch})
}

// Sync sends a sync for path.
func (c *Client) Sync(path string) int32 {
	return c.Send(wire.OpSync, &wire.PathRequest{Path: path})
}

// Ping sends a ping (xid -2).
func (c *Client) Ping() { c.SendXid(wire.XidPing, wire.OpPing, &wire.Empty{}) }

// Close closes the session.
func (c *Client) Close() int32 { return c.Send(wire.OpCloseSession, &wire.Empty{}) }

// AddAuth sends an auth packet (xid -4).
func (c *Client) AddAuth(scheme, auth string) {
	c.SendXid(wire.XidAuth, wire.OpAuth, &wire.AuthPacket{Scheme: scheme, Auth: []byte(auth)})
}

// SetWatches re-registers watches after a reconnect (xid -8).
func (c *Client) SetWatches(relZxid int64, data, exist, child []string) {
	c.SendXid(wire.XidSetWatches, wire.OpSetWatches, &wire.SetWatchesRequest{RelativeZxid: relZxid, DataWatches: data, ExistWatches: exist, ChildWatches: child})
}
