package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/zabd/zabd/wire"
)

// ErrClosed is returned for calls on a connection that has ended; Err tells
// why it ended.
var ErrClosed = errors.New("client: connection closed")

// Session identifies a session to create (ID 0) or resume.
type Session struct {
	ID       int64
	Passwd   []byte
	LastZxid int64
	// Timeout is the session timeout asked for; the server clamps it.
	Timeout  time.Duration
	ReadOnly bool
}

// Reply is one server reply. Body is the bytes after the reply header, to be
// decoded with Decode; Seq is the reply's position among everything the
// connection received (replies and events), starting at 1.
type Reply struct {
	Header wire.ReplyHeader
	Body   []byte
	Seq    uint64
}

// Decode decodes the body into rec. A reply whose header carries an error
// code has no body: Decode then returns that code.
func (r *Reply) Decode(rec wire.Record) error {
	if r.Header.Err != wire.ErrOK {
		return r.Header.Err
	}
	if err := wire.Unmarshal(r.Body, rec); err != nil {
		return fmt.Errorf("decode reply to xid %d: %w", r.Header.Xid, err)
	}
	return nil
}

// Event is a watch notification with its arrival sequence number.
type Event struct {
	wire.WatcherEvent
	Zxid int64
	Seq  uint64
}

// Call is a request in flight. Done is closed once Reply or Err is set.
type Call struct {
	Op    wire.OpCode
	Xid   int32
	Reply Reply
	Err   error
	Done  chan struct{}
}

// Wait blocks until the call completes or ctx ends.
func (c *Call) Wait(ctx context.Context) (*Reply, error) {
	select {
	case <-c.Done:
		if c.Err != nil {
			return nil, c.Err
		}
		return &c.Reply, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s xid %d: %w", c.Op, c.Xid, ctx.Err())
	}
}

// Conn is a connected session. Its methods are safe for concurrent use;
// requests are written in the order their Send calls are made.
type Conn struct {
	nc      net.Conn
	session wire.ConnectResponse

	writeMu sync.Mutex
	enc     wire.Encoder
	nextXid int32

	mu       sync.Mutex
	pending  map[int32][]*Call // FIFO per xid: pings, auths and setWatches share fixed xids
	events   []Event
	wake     chan struct{} // closed and replaced when an event arrives or the conn ends
	seq      uint64
	lastZxid int64
	err      error
	done     chan struct{}
	observer Observer
}

// Observer sees every reply and watch event in the order they arrived, on
// the reader goroutine, before the reply's call completes: ev is nil for a
// reply, r is nil for an event. It lets a session layer keep client-side
// watch state exactly as ZooKeeper's Java client does (a watch registered
// by a reply is in place before any later event is matched against it).
// It must not call the Conn's methods that wait for replies.
type Observer func(r *Reply, ev *Event)

// Dial connects to addr and creates or resumes a session. A server that
// refuses the session (expired, wrong password) answers with timeout 0:
// Dial returns wire.ErrSessionExpired then.
func Dial(ctx context.Context, addr string, s Session) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	c, err := Handshake(ctx, nc, s)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// Handshake runs the connect exchange on an open connection and starts the
// reader.
func Handshake(ctx context.Context, nc net.Conn, s Session) (*Conn, error) {
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
		defer nc.SetDeadline(time.Time{})
	}
	if s.Timeout == 0 {
		s.Timeout = 10 * time.Second
	}
	passwd := s.Passwd
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	req := wire.ConnectRequest{
		LastZxidSeen: s.LastZxid, TimeOut: int32(s.Timeout / time.Millisecond),
		SessionID: s.ID, Passwd: passwd, ReadOnly: s.ReadOnly, HasReadOnly: true,
	}
	if _, err := nc.Write(wire.AppendFrame(nil, &req)); err != nil {
		return nil, fmt.Errorf("send connect: %w", err)
	}
	// Buffered: one read call for many pipelined replies. The connect
	// response is the first thing the server sends, so nothing is lost.
	fr := wire.NewFrameReader(bufio.NewReaderSize(nc, 64<<10), 0)
	frame, err := fr.ReadFrame()
	if err != nil {
		return nil, fmt.Errorf("read connect response: %w", err)
	}
	c := &Conn{nc: nc, pending: map[int32][]*Call{}, wake: make(chan struct{}), done: make(chan struct{}), nextXid: 1, lastZxid: s.LastZxid}
	if err := wire.Unmarshal(frame, &c.session); err != nil {
		return nil, fmt.Errorf("decode connect response: %w", err)
	}
	if c.session.TimeOut <= 0 {
		return nil, wire.ErrSessionExpired
	}
	go c.readLoop(fr)
	return c, nil
}

// SessionID, Passwd and Timeout describe the session the server granted.
func (c *Conn) SessionID() int64       { return c.session.SessionID }
func (c *Conn) Passwd() []byte         { return c.session.Passwd }
func (c *Conn) Timeout() time.Duration { return time.Duration(c.session.TimeOut) * time.Millisecond }
func (c *Conn) LocalAddr() net.Addr    { return c.nc.LocalAddr() }
func (c *Conn) Done() <-chan struct{}  { return c.done }

// Session returns what Dial needs to resume this session elsewhere.
func (c *Conn) Session() Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Session{ID: c.session.SessionID, Passwd: c.session.Passwd, LastZxid: c.lastZxid, Timeout: c.Timeout()}
}

// Err returns why the connection ended, or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Send writes one request and returns its Call without waiting for the
// reply. rec may be nil for header-only requests (ping, closeSession,
// whoAmI). Normal requests get increasing xids; ping, auth and setWatches
// use their fixed xids.
func (c *Conn) Send(op wire.OpCode, rec wire.Record) (*Call, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	xid := fixedXid(op)
	if xid == 0 {
		xid = c.nextXid
		c.nextXid++
	}
	call := &Call{Op: op, Xid: xid, Done: make(chan struct{})}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.pending[xid] = append(c.pending[xid], call)
	c.mu.Unlock()

	c.enc.Reset()
	start := c.enc.BeginFrame()
	hdr := wire.RequestHeader{Xid: xid, Type: op}
	hdr.Encode(&c.enc)
	if rec != nil {
		rec.Encode(&c.enc)
	}
	c.enc.EndFrame(start)
	if _, err := c.nc.Write(c.enc.Bytes()); err != nil {
		c.fail(fmt.Errorf("write %s: %w", op, err))
		return nil, c.Err()
	}
	return call, nil
}

// Do sends a request and waits for its reply.
func (c *Conn) Do(ctx context.Context, op wire.OpCode, rec wire.Record) (*Reply, error) {
	call, err := c.Send(op, rec)
	if err != nil {
		return nil, err
	}
	return call.Wait(ctx)
}

// WriteRaw writes bytes as they are, for tests of malformed input.
func (c *Conn) WriteRaw(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.nc.Write(b)
	return err
}

func fixedXid(op wire.OpCode) int32 {
	switch op {
	case wire.OpPing:
		return wire.XidPing
	case wire.OpAuth:
		return wire.XidAuth
	case wire.OpSetWatches, wire.OpSetWatches2:
		return wire.XidSetWatches
	}
	return 0
}

// NextEvent returns the oldest watch event not yet taken, waiting for one
// until ctx ends.
func (c *Conn) NextEvent(ctx context.Context) (Event, error) {
	for {
		c.mu.Lock()
		if len(c.events) > 0 {
			ev := c.events[0]
			c.events = c.events[1:]
			c.mu.Unlock()
			return ev, nil
		}
		wake, err := c.wake, c.err
		c.mu.Unlock()
		if err != nil {
			return Event{}, err
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return Event{}, fmt.Errorf("waiting for a watch event: %w", ctx.Err())
		}
	}
}

// Observe hands every later reply and event to fn (see Observer); events
// then go to fn only, not to NextEvent. Set it before sending requests.
func (c *Conn) Observe(fn Observer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.observer = fn
}

// PendingEvents returns and removes every event received so far.
func (c *Conn) PendingEvents() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	evs := c.events
	c.events = nil
	return evs
}

// Close closes the TCP connection without closing the session.
func (c *Conn) Close() error {
	err := c.nc.Close()
	c.fail(ErrClosed)
	<-c.done
	return err
}

func (c *Conn) readLoop(fr *wire.FrameReader) {
	defer close(c.done)
	for {
		frame, err := fr.ReadFrame()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			c.fail(fmt.Errorf("%w: %w", ErrClosed, err))
			return
		}
		if err := c.dispatch(frame); err != nil {
			c.fail(err)
			c.nc.Close()
			return
		}
	}
}

func (c *Conn) dispatch(frame []byte) error {
	d := wire.NewDecoder(frame)
	var hdr wire.ReplyHeader
	hdr.Decode(d)
	if d.Err() != nil {
		return fmt.Errorf("decode reply header: %w", d.Err())
	}
	var ev *Event
	if hdr.Xid == wire.XidNotification {
		ev = &Event{Zxid: hdr.Zxid}
		ev.WatcherEvent.Decode(d)
		if d.Err() != nil {
			return fmt.Errorf("decode watch event: %w", d.Err())
		}
	}
	c.mu.Lock()
	c.seq++
	if hdr.Zxid > c.lastZxid {
		c.lastZxid = hdr.Zxid
	}
	observer := c.observer
	if ev != nil {
		ev.Seq = c.seq
		if observer == nil {
			c.events = append(c.events, *ev)
			close(c.wake)
			c.wake = make(chan struct{})
		}
		c.mu.Unlock()
		if observer != nil {
			observer(nil, ev)
		}
		return nil
	}
	queue := c.pending[hdr.Xid]
	if len(queue) == 0 {
		c.mu.Unlock()
		return fmt.Errorf("reply to xid %d that has no request in flight", hdr.Xid)
	}
	call := queue[0]
	if len(queue) == 1 {
		delete(c.pending, hdr.Xid)
	} else {
		c.pending[hdr.Xid] = queue[1:]
	}
	call.Reply = Reply{Header: hdr, Body: append([]byte(nil), d.Rest()...), Seq: c.seq}
	c.mu.Unlock()
	// The observer runs outside c.mu (it may take its own locks while
	// another goroutine holds them across Send) and before Done closes, so
	// the caller sees its effect.
	// The call left c.pending above, so fail will not complete it: its
	// reply is complete and stands even if the connection fails now.
	if observer != nil {
		observer(&call.Reply, nil)
	}
	close(call.Done)
	return nil
}

// fail ends the connection: every call in flight and every later one fails
// with err; the first error wins.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	for _, q := range c.pending {
		for _, call := range q {
			call.Err = err
			close(call.Done)
		}
	}
	c.pending = nil
	close(c.wake)
	c.nc.Close()
}
