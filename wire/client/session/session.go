package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
)

// State is the session's state as the Java client names it (ZooKeeper.States),
// which zkCli shows in its prompt.
type State int

// States a Session goes through.
const (
	Connecting State = iota
	Connected
	Closed
)

func (s State) String() string {
	switch s {
	case Connecting:
		return "CONNECTING"
	case Connected:
		return "CONNECTED"
	default:
		return "CLOSED"
	}
}

// Event is a watch or state event as the Java client delivers it. Path is
// empty for state events (type None).
type Event struct {
	Type  wire.EventType
	State wire.KeeperState
	Path  string
}

// Options configure a Session.
type Options struct {
	// Servers are host:port addresses, tried in order starting with the
	// first; after a failure the next one is tried.
	Servers []string
	// Timeout is the session timeout asked for (the server clamps it);
	// 30 s, zkCli's default, when zero.
	Timeout  time.Duration
	ReadOnly bool
	// OnEvent receives every event in order, from one goroutine.
	OnEvent func(Event)
	// RetryPause is how long to wait after every server has failed once
	// before trying them again; 1 s when zero.
	RetryPause time.Duration
}

// Session is one ZooKeeper session over a list of servers. Its methods are
// safe for concurrent use.
type Session struct {
	opts Options

	mu    sync.Mutex
	state State
	cur   *connection   // nil while not connected
	up    chan struct{} // closed while connected or closed
	// roundFailed is closed (and replaced) each time every server has
	// failed once in a row: requests waiting for a connection then fail
	// with ConnectionLoss, as the Java client fails its queued requests
	// when a connection attempt fails.
	roundFailed chan struct{}
	id          int64
	passwd      []byte
	lastZxid    int64
	granted     time.Duration
	server      string // the server of the current or last connection
	lastErr     error  // why the last connection attempt failed
	auths       []wire.AuthPacket
	watches     watchTable
	closing     bool

	stop     chan struct{}
	loopDone chan struct{}
	events   eventQueue
}

// connection is one TCP connection of the session with the watch
// registrations of its requests in flight, by xid.
type connection struct {
	conn    *client.Conn
	pending map[int32]*registration
}

// registration is what a watching request does to the watch table when its
// reply arrives, applied on the reader goroutine in arrival order.
type registration struct {
	apply  func(rc wire.ErrCode) wire.ErrCode
	result wire.ErrCode // what apply returned: the request's outcome
}

// New starts a session: it connects in the background; requests wait for
// the connection.
func New(opts Options) (*Session, error) {
	if len(opts.Servers) == 0 {
		return nil, errors.New("session: no server given")
	}
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.RetryPause == 0 {
		opts.RetryPause = time.Second
	}
	s := &Session{opts: opts, up: make(chan struct{}), roundFailed: make(chan struct{}), watches: newWatchTable(),
		stop: make(chan struct{}), loopDone: make(chan struct{})}
	s.events.start(opts.OnEvent)
	go s.run()
	return s, nil
}

// State is the session's current state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// ID is the session id (0 before the first connection).
func (s *Session) ID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Server is the address of the current or last connection.
func (s *Session) Server() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.server
}

// WaitConnected waits until the session is connected. It fails with
// ConnectionLoss (wrapping the last connection error) once every server
// has failed to connect, or ctx ends first, and with SessionExpired when
// the session is closed.
func (s *Session) WaitConnected(ctx context.Context) error {
	_, err := s.connected(ctx)
	return err
}

// connected waits for a live connection.
func (s *Session) connected(ctx context.Context) (*connection, error) {
	for {
		s.mu.Lock()
		cur, up, failed, state := s.cur, s.up, s.roundFailed, s.state
		s.mu.Unlock()
		if state == Closed {
			return nil, wire.ErrSessionExpired
		}
		if cur != nil {
			return cur, nil
		}
		select {
		case <-up:
		case <-failed:
			return nil, s.lossError()
		case <-ctx.Done():
			return nil, s.lossError()
		}
	}
}

// lossError is ConnectionLoss with the last connection error, if any.
func (s *Session) lossError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastErr != nil {
		return fmt.Errorf("%w: %w", wire.ErrConnectionLoss, s.lastErr)
	}
	return wire.ErrConnectionLoss
}

// connLost maps the client's errors for a connection that ended to
// ConnectionLoss, as the Java client reports them.
func connLost(err error) error {
	if errors.Is(err, client.ErrClosed) {
		return wire.ErrConnectionLoss
	}
	return err
}

// Run calls fn with a live connection, waiting for one until ctx ends. A
// request whose connection ends fails with ConnectionLoss.
func (s *Session) Run(ctx context.Context, fn func(c *client.Conn) error) error {
	cur, err := s.connected(ctx)
	if err != nil {
		return err
	}
	return connLost(fn(cur.conn))
}

// send sends a request whose reply changes the watch table and waits for
// it; the outcome is reg's result.
func (s *Session) send(ctx context.Context, op wire.OpCode, req, resp wire.Record, reg *registration) error {
	cur, err := s.connected(ctx)
	if err != nil {
		return err
	}
	// s.mu is held across Send so that the registration is in place before
	// the reader can see the reply.
	s.mu.Lock()
	call, err := cur.conn.Send(op, req)
	if err == nil {
		cur.pending[call.Xid] = reg
	}
	s.mu.Unlock()
	if err != nil {
		return connLost(err)
	}
	r, err := call.Wait(ctx)
	if err != nil {
		return connLost(err)
	}
	if reg.result != wire.ErrOK {
		return reg.result
	}
	if resp != nil {
		return r.Decode(resp)
	}
	return nil
}

// watchOn registers path in set when the reply's code is one of okCodes.
func (s *Session) watchOn(okCodes map[wire.ErrCode]map[string]bool, path string) *registration {
	return &registration{apply: func(rc wire.ErrCode) wire.ErrCode {
		if set, ok := okCodes[rc]; ok && set != nil {
			set[path] = true
		}
		return rc
	}}
}

// GetData reads a node; with watch it leaves a data watch.
func (s *Session) GetData(ctx context.Context, path string, watch bool) ([]byte, wire.Stat, error) {
	var resp wire.GetDataResponse
	err := s.send(ctx, wire.OpGetData, &wire.PathWatchRequest{Path: path, Watch: watch}, &resp,
		s.watchOn(map[wire.ErrCode]map[string]bool{wire.ErrOK: s.watchSet(watch, &s.watches.data)}, path))
	return resp.Data, resp.Stat, err
}

// Exists returns a node's stat; with watch it leaves a data watch, or an
// exist watch when the node is missing.
func (s *Session) Exists(ctx context.Context, path string, watch bool) (wire.Stat, error) {
	var resp wire.StatResponse
	err := s.send(ctx, wire.OpExists, &wire.PathWatchRequest{Path: path, Watch: watch}, &resp,
		s.watchOn(map[wire.ErrCode]map[string]bool{
			wire.ErrOK:     s.watchSet(watch, &s.watches.data),
			wire.ErrNoNode: s.watchSet(watch, &s.watches.exist),
		}, path))
	return resp.Stat, err
}

// Children lists a node's children with its stat (getChildren2); with watch
// it leaves a child watch.
func (s *Session) Children(ctx context.Context, path string, watch bool) ([]string, wire.Stat, error) {
	var resp wire.GetChildren2Response
	err := s.send(ctx, wire.OpGetChildren2, &wire.PathWatchRequest{Path: path, Watch: watch}, &resp,
		s.watchOn(map[wire.ErrCode]map[string]bool{wire.ErrOK: s.watchSet(watch, &s.watches.child)}, path))
	return resp.Children, resp.Stat, err
}

// AddWatch adds a persistent or persistent-recursive watch.
func (s *Session) AddWatch(ctx context.Context, path string, mode wire.AddWatchMode) error {
	set := &s.watches.persistent
	if mode == wire.AddWatchPersistentRecursive {
		set = &s.watches.recursive
	}
	return s.send(ctx, wire.OpAddWatch, &wire.AddWatchRequest{Path: path, Mode: mode}, nil,
		s.watchOn(map[wire.ErrCode]map[string]bool{wire.ErrOK: *set}, path))
}

// watchSet is set when watch is asked for, else nil (no registration).
func (s *Session) watchSet(watch bool, set *map[string]bool) map[string]bool {
	if !watch {
		return nil
	}
	return *set
}

// RemoveWatches removes the session's watches of type t on path, on the
// server and here, delivering a WatchRemoved event per kind removed. With
// local, the watches are removed here even when the server cannot be
// reached. A path with no such watch here fails with NoWatcher.
func (s *Session) RemoveWatches(ctx context.Context, path string, t wire.WatcherType, local bool) error {
	reg := &registration{}
	reg.apply = func(rc wire.ErrCode) wire.ErrCode {
		// ZKWatchManager.removeWatcher, called with the server's answer.
		if !s.watches.has(t, path) {
			return wire.ErrNoWatcher
		}
		if !local && rc != wire.ErrOK {
			return rc
		}
		evs := s.watches.remove(t, path)
		if len(evs) == 0 {
			return wire.ErrNoWatcher
		}
		for _, et := range evs {
			s.events.push(Event{Type: et, State: wire.StateSyncConnected, Path: path})
		}
		return wire.ErrOK
	}
	err := s.send(ctx, wire.OpRemoveWatches, &wire.PathTypeRequest{Path: path, Type: t}, nil, reg)
	if local && errors.Is(err, wire.ErrConnectionLoss) {
		// The request never got an answer: the Java client then unregisters
		// with ConnectionLoss, which a local removal ignores.
		s.mu.Lock()
		defer s.mu.Unlock()
		if rc := reg.apply(wire.ErrConnectionLoss); rc != wire.ErrOK {
			return rc
		}
		return nil
	}
	return err
}

// AddAuth adds an identity to the session; it is sent again on every later
// connection.
func (s *Session) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	s.mu.Lock()
	s.auths = append(s.auths, wire.AuthPacket{Scheme: scheme, Auth: auth})
	s.mu.Unlock()
	return s.Run(ctx, func(c *client.Conn) error { return c.AddAuth(ctx, scheme, auth) })
}

// Close ends the session (closeSession) if it is connected, stops
// reconnecting, and delivers a Closed event after every earlier one.
func (s *Session) Close(ctx context.Context) error {
	return s.shutdown(ctx, true)
}

// Detach stops using the session without closing it on the server: it
// lives until it expires (what a one-shot zkCli does).
func (s *Session) Detach() {
	s.shutdown(context.Background(), false)
}

func (s *Session) shutdown(ctx context.Context, closeSession bool) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	cur, wasClosed := s.cur, s.state == Closed
	s.mu.Unlock()
	var err error
	if cur != nil && closeSession {
		err = connLost(cur.conn.CloseSession(ctx))
	}
	close(s.stop)
	<-s.loopDone
	s.mu.Lock()
	s.setState(Closed)
	s.mu.Unlock()
	if !wasClosed {
		s.events.push(Event{Type: wire.EventNone, State: wire.StateClosed})
	}
	s.events.close()
	return err
}

// setState changes the state and wakes waiters; s.mu is held.
func (s *Session) setState(st State) {
	s.state = st
	if st == Connecting {
		select {
		case <-s.up:
			s.up = make(chan struct{})
		default:
		}
		return
	}
	select {
	case <-s.up:
	default:
		close(s.up)
	}
}

// run connects, keeps the connection alive with pings, and moves to the
// next server when it fails, until the session is closed or expires.
func (s *Session) run() {
	defer close(s.loopDone)
	n := len(s.opts.Servers)
	failures := 0 // connection attempts failed in a row
	for attempt := 0; ; attempt++ {
		if failures > 0 && failures%n == 0 && !s.pause(s.opts.RetryPause) {
			return
		}
		addr := s.opts.Servers[attempt%n]
		cur, err := s.dial(addr)
		if errors.Is(err, wire.ErrSessionExpired) {
			s.mu.Lock()
			s.setState(Closed)
			s.mu.Unlock()
			s.events.push(Event{Type: wire.EventNone, State: wire.StateExpired})
			return
		}
		if err != nil {
			failures++
			s.mu.Lock()
			s.lastErr = err
			if failures%n == 0 {
				close(s.roundFailed)
				s.roundFailed = make(chan struct{})
			}
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			default:
			}
			continue
		}
		failures = 0
		s.keepAlive(cur)
		s.mu.Lock()
		s.cur = nil
		s.lastZxid = max(s.lastZxid, cur.conn.Session().LastZxid)
		s.lastErr = cur.conn.Err()
		closing := s.closing
		if !closing {
			s.setState(Connecting)
		}
		s.mu.Unlock()
		if closing {
			return
		}
		s.events.push(Event{Type: wire.EventNone, State: wire.StateDisconnected})
		// The next attempt goes to the next server, as the Java client's
		// host provider does after a connection is lost.
	}
}

// pause waits d unless the session is closed first.
func (s *Session) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.stop:
		return false
	}
}

// dial connects to addr, resumes or creates the session, and primes the
// connection: watches, then identities, before any request.
func (s *Session) dial(addr string) (*connection, error) {
	s.mu.Lock()
	cs := client.Session{ID: s.id, Passwd: s.passwd, LastZxid: s.lastZxid, Timeout: s.opts.Timeout, ReadOnly: s.opts.ReadOnly}
	s.mu.Unlock()
	// As in the Java client, one attempt may take the session timeout
	// divided among the servers.
	ctx, cancel := context.WithTimeout(context.Background(), max(s.opts.Timeout/time.Duration(len(s.opts.Servers)), time.Second))
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	c, err := client.Dial(ctx, addr, cs)
	if err != nil {
		return nil, err
	}
	cur := &connection{conn: c, pending: map[int32]*registration{}}
	c.Observe(func(r *client.Reply, ev *client.Event) { s.observe(cur, r, ev) })

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		c.Close()
		return nil, errors.New("session closed")
	}
	s.id, s.passwd, s.granted, s.server = c.SessionID(), c.Passwd(), c.Timeout(), addr
	if !s.watches.empty() {
		req := s.watches.setWatches(s.lastZxid)
		op := wire.OpSetWatches
		if req.Persistent {
			op = wire.OpSetWatches2
		}
		c.Send(op, &req) // a failure shows as the connection ending
	}
	for i := range s.auths {
		c.Send(wire.OpAuth, &s.auths[i])
	}
	s.cur = cur
	s.lastErr = nil
	s.setState(Connected)
	s.events.push(Event{Type: wire.EventNone, State: wire.StateSyncConnected})
	return cur, nil
}

// keepAlive pings a third of the granted timeout apart and returns when the
// connection ends, a ping goes unanswered for two thirds of it, or the
// session is closed.
func (s *Session) keepAlive(cur *connection) {
	s.mu.Lock()
	timeout := s.granted
	s.mu.Unlock()
	tick := time.NewTicker(timeout / 3)
	defer tick.Stop()
	for {
		select {
		case <-cur.conn.Done():
			return
		case <-s.stop:
			cur.conn.Close()
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), timeout*2/3)
			err := cur.conn.Ping(ctx)
			cancel()
			if err != nil {
				cur.conn.Close()
				return
			}
		}
	}
}

// observe runs on cur's reader goroutine for every reply and event, in
// arrival order.
func (s *Session) observe(cur *connection, r *client.Reply, ev *client.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev != nil {
		if s.watches.fire(ev.Type, ev.Path) {
			s.events.push(Event{Type: ev.Type, State: ev.State, Path: ev.Path})
		}
		return
	}
	reg := cur.pending[r.Header.Xid]
	if reg == nil {
		return
	}
	delete(cur.pending, r.Header.Xid)
	reg.result = reg.apply(r.Header.Err)
}

// eventQueue hands events to a callback in order from one goroutine, never
// blocking the pusher (the reader goroutine must not wait on the printer).
type eventQueue struct {
	mu     sync.Mutex
	items  []Event
	wake   chan struct{}
	closed bool
	done   chan struct{}
}

func (q *eventQueue) start(fn func(Event)) {
	q.wake, q.done = make(chan struct{}, 1), make(chan struct{})
	go func() {
		defer close(q.done)
		for {
			q.mu.Lock()
			items, closed := q.items, q.closed
			q.items = nil
			q.mu.Unlock()
			for _, ev := range items {
				if fn != nil {
					fn(ev)
				}
			}
			if closed && len(items) == 0 {
				return
			}
			if len(items) == 0 {
				<-q.wake
			}
		}
	}()
}

func (q *eventQueue) push(ev Event) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, ev)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close delivers what is queued and waits for the callback to finish.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	<-q.done
}
