package simclient

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/zabd/zabd/wire"
)

// ConnID names one connection between a client and a server; the simulator
// hands out a fresh one per dial, so callbacks about an old connection can be
// told apart.
type ConnID uint64

// Env is what a client needs from the simulator.
type Env interface {
	Now() time.Duration              // monotonic time
	After(d time.Duration, f func()) // run f later (on the simulator's queue)
	// Dial opens a connection for c and sends req first on it; the outcome
	// comes back through c.Connected or c.Lost.
	Dial(c *Client, req *wire.ConnectRequest) ConnID
	Send(conn ConnID, hdr wire.RequestHeader, body wire.Record)
	Hangup(conn ConnID)              // the client closes conn; no callbacks follow
	Record(e Entry)                  // append to the history
	Note(n Note)                     // what a recipe client believes (Config.Recipe)
	Violation(c *Client, msg string) // the server broke the protocol in a way the client can see
}

// Config sets up one client.
type Config struct {
	ID             int           // 1-based, the history's client number
	SessionTimeout time.Duration // requested
	Ops            int           // operations to complete before closing the session
	MaxOutstanding int           // pipelined requests at most (>= 1)
	MaxThink       time.Duration // pause between operations is uniform in [0, MaxThink]
	// Intrusion, if set, makes the client an intruder on another client's
	// session instead of a worker with its own (Ops is then ignored).
	Intrusion *Intrusion
	// Recipe, if set (RecipeLock, RecipeElection, RecipeQueue,
	// RecipeBarrier), has the client run that
	// recipe instead of the random workload, one operation at a time, with
	// the mistakes RecipeBugs put back.
	Recipe     string
	RecipeBugs RecipeBugs
	// Parties is how many clients run the barrier (RecipeBarrier).
	Parties int
}

// Intrusion is an adversarial client's plan: it connects once with
// another client's session id and a password that is wrong, empty or the
// session's own, issues no operation and never closes the session.
//
// With a wrong or empty password the server must answer as ZooKeeper's
// reopenSession does — a connect response with timeout 0, session id 0
// and an empty password — and then close the connection; anything else is
// a protocol violation, and the intruder finishes only once the server has
// closed. It records nothing in the history: it never held the session.
//
// With the session's own password (Steal) the session moves to the
// intruder, which records the SyncConnected it saw under its own client
// number and the session's id (the connect touched the session, and the
// history checkers must know), pings it for Hold, then hangs up without
// closing it. A session already gone (timeout 0) ends the intrusion.
type Intrusion struct {
	Session int64
	Passwd  []byte
	Steal   bool
	Hold    time.Duration
}

type connState int

const (
	disconnected connState = iota
	connecting
	connected
	finished
)

type pending struct {
	xid  int32
	op   Op
	call time.Duration
}

// Client is one simulated ZooKeeper client; see the package comment.
type Client struct {
	cfg  Config
	env  Env
	r    *rand.Rand
	work driver

	state    connState
	conn     ConnID
	session  int64
	passwd   []byte
	timeout  time.Duration // negotiated; the requested one until connected
	lastZxid int64

	pending  []pending
	nextXid  int32
	seq      int
	watches  watchSet
	issued   int  // operations handed to a connection
	closing  bool // closeSession sent
	refused  bool // an intruder whose connect was refused, waiting for the close
	thinking bool // a wake-up to issue the next op is scheduled

	pausedUntil time.Duration
	inbox       []func() // what arrived during a pause, in order
	lastSend    time.Duration
	lastRecv    time.Duration
}

// New returns a client that starts when Start is called; r is its own
// random stream.
func New(cfg Config, env Env, r *rand.Rand) *Client {
	if cfg.MaxOutstanding < 1 || cfg.Recipe != "" {
		cfg.MaxOutstanding = 1 // a recipe's steps follow one another
	}
	c := &Client{cfg: cfg, env: env, r: r, timeout: cfg.SessionTimeout,
		watches: newWatchSet(), nextXid: 1}
	note := func(n Note) { // a recipe's belief, stamped with who, which session and when
		n.Client, n.Session, n.At = cfg.ID, c.session, int64(env.Now())
		env.Note(n)
	}
	switch cfg.Recipe {
	case "":
		c.work = newWorkload(cfg.ID, r)
	case RecipeQueue:
		c.work = &queue{client: cfg.ID}
	case RecipeBarrier:
		// A barrier client runs its rounds whatever its operation budget:
		// one that stopped early would hold the others at the barrier.
		c.cfg.Ops = math.MaxInt
		c.work = newBarrier(cfg.ID, cfg.Parties, note)
	default:
		c.work = newRecipe(cfg.Recipe, cfg.ID, cfg.RecipeBugs, note)
	}
	return c
}

// ID is the client's number.
func (c *Client) ID() int { return c.cfg.ID }

// Session is the current session id (0 before the first connect).
func (c *Client) Session() int64 { return c.session }

// ConnectedConn is the connection the client holds its session on, if it
// is connected.
func (c *Client) ConnectedConn() (ConnID, bool) { return c.conn, c.state == connected }

// Passwd is the current session's password (nil before the first connect).
func (c *Client) Passwd() []byte { return c.passwd }

// Done reports whether the client finished its work and closed its session.
func (c *Client) Done() bool { return c.state == finished }

// Progress says how far the client got, for a stuck run's report.
func (c *Client) Progress() string {
	return fmt.Sprintf("client %d: state=%s session=0x%x issued=%d/%d outstanding=%d paused-until=%v",
		c.cfg.ID, c.stateName(), c.session, c.issued, c.cfg.Ops, len(c.pending), c.pausedUntil)
}

func (c *Client) stateName() string {
	return [...]string{"disconnected", "connecting", "connected", "finished"}[c.state]
}

// Start connects for the first time and starts the client's own timer.
func (c *Client) Start() {
	c.dial()
	c.armTimer()
}

// Pause stops the client for d: it sends nothing and reads nothing until then.
func (c *Client) Pause(d time.Duration) {
	until := c.env.Now() + d
	if until <= c.pausedUntil {
		return
	}
	c.pausedUntil = until
	c.env.After(d, c.resume)
}

func (c *Client) paused() bool { return c.env.Now() < c.pausedUntil }

func (c *Client) resume() {
	if c.paused() {
		return // a longer pause was added meanwhile; its own resume will come
	}
	for len(c.inbox) > 0 && !c.paused() {
		f := c.inbox[0]
		c.inbox = c.inbox[1:]
		f()
	}
	if c.state == disconnected {
		c.dial()
		return
	}
	c.pump()
}

// deliver runs f now, or on resume if the client is paused.
func (c *Client) deliver(f func()) {
	if c.held() {
		c.inbox = append(c.inbox, f)
		return
	}
	f()
}

// held reports whether what arrives now must wait for the client to
// resume: it is paused, or earlier arrivals are still waiting.
func (c *Client) held() bool { return c.paused() || len(c.inbox) > 0 }

// Connected is the server's answer to the connect on conn.
func (c *Client) Connected(conn ConnID, resp wire.ConnectResponse) {
	c.deliver(func() {
		if conn != c.conn || c.state != connecting {
			return
		}
		c.lastRecv = c.env.Now()
		if c.cfg.Intrusion != nil {
			c.intruderConnected(conn, resp)
			return
		}
		if resp.TimeOut <= 0 {
			// The session is gone: say so, then start afresh with a new one.
			c.seq++
			c.env.Record(Entry{Kind: "event", Client: c.cfg.ID, Session: c.session, Seq: c.seq, Return: c.env.Now(),
				Type: wire.EventNone, State: wire.StateExpired, Conn: conn})
			c.work.notice(wire.EventNone, wire.StateExpired, "")
			c.env.Hangup(conn)
			c.session, c.passwd, c.lastZxid = 0, nil, 0
			c.watches = newWatchSet()
			c.state = disconnected
			c.redialLater()
			return
		}
		c.established(conn, resp)
		if code, req, any := c.watches.setWatches(c.lastZxid); any {
			c.send(wire.RequestHeader{Xid: wire.XidSetWatches, Type: code}, req)
		}
		c.pump()
	})
}

// established takes a valid session from a connect response.
func (c *Client) established(conn ConnID, resp wire.ConnectResponse) {
	c.session, c.passwd = resp.SessionID, resp.Passwd
	c.timeout = time.Duration(resp.TimeOut) * time.Millisecond
	c.state = connected
	c.seq++
	c.env.Record(Entry{Kind: "event", Client: c.cfg.ID, Session: c.session, Seq: c.seq, Return: c.env.Now(),
		Type: wire.EventNone, State: wire.StateSyncConnected, Timeout: resp.TimeOut, Conn: conn})
}

// intruderConnected judges the answer to an intruder's connect.
func (c *Client) intruderConnected(conn ConnID, resp wire.ConnectResponse) {
	in := c.cfg.Intrusion
	switch {
	case !in.Steal:
		if resp.TimeOut != 0 || resp.SessionID != 0 || !allZero(resp.Passwd) {
			c.env.Violation(c, fmt.Sprintf("a connect to session 0x%x with a wrong password was answered timeout=%d session=0x%x, not as ZooKeeper refuses it (timeout 0, session 0, empty password, then close)",
				in.Session, resp.TimeOut, resp.SessionID))
			return
		}
		c.refused = true // finished once the server closes the connection
	case resp.TimeOut <= 0:
		c.env.Hangup(conn) // the session is gone: nothing to steal
		c.conn, c.state = 0, finished
	case resp.SessionID != in.Session:
		c.env.Violation(c, fmt.Sprintf("a connect to session 0x%x with its password was answered with session 0x%x", in.Session, resp.SessionID))
	default:
		c.established(conn, resp)
		c.env.After(in.Hold, func() {
			if c.state == connected && c.conn == conn {
				c.env.Hangup(conn)
				c.conn, c.state = 0, finished
			}
		})
	}
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// Lost says conn was closed by the server or the network (or never opened).
func (c *Client) Lost(conn ConnID) {
	c.deliver(func() {
		if conn != c.conn {
			return
		}
		c.loseConnection()
	})
}

// loseConnection ends every outstanding request in ConnectionLoss and plans
// a reconnect with the same session.
func (c *Client) loseConnection() {
	was := c.state
	c.conn = 0
	now := c.env.Now()
	for _, p := range c.pending {
		c.complete(p, Result{Err: wire.ErrConnectionLoss, Unknown: true}, now)
	}
	c.pending = nil
	if was == finished {
		return
	}
	if was == connected {
		c.event(wire.EventNone, wire.StateDisconnected, "")
	}
	c.state = disconnected
	if c.cfg.Intrusion != nil {
		c.state = finished // an intruder tries once
		return
	}
	if c.closing {
		// The close's outcome is unknown; the client is done either way and the
		// server will expire the session if the close never arrived.
		c.state = finished
		return
	}
	c.redialLater()
}

// Reply is a frame the server sent on conn after the connect response: a
// reply, a notification (xid -1, body *wire.WatcherEvent), a ping reply or a
// setWatches reply. body is the decoded record (nil when the reply has none);
// it must be of the type ZooKeeper's protocol gives that op's reply.
func (c *Client) Reply(conn ConnID, hdr wire.ReplyHeader, body wire.Record) {
	if c.held() {
		c.inbox = append(c.inbox, func() { c.reply(conn, hdr, body) })
		return
	}
	c.reply(conn, hdr, body) // no closure for the common case: a reply read at once
}

func (c *Client) reply(conn ConnID, hdr wire.ReplyHeader, body wire.Record) {
	if conn != c.conn || c.state != connected {
		return
	}
	c.lastRecv = c.env.Now()
	switch hdr.Xid {
	case wire.XidNotification:
		ev, ok := body.(*wire.WatcherEvent)
		if !ok {
			c.env.Violation(c, fmt.Sprintf("notification with a %T body", body))
			return
		}
		c.watches.fired(*ev)
		c.event(ev.Type, ev.State, ev.Path)
		c.pump() // a recipe may have waited for it
		return
	case wire.XidPing, wire.XidSetWatches:
		return
	}
	c.noteZxid(hdr.Zxid)
	if len(c.pending) == 0 || c.pending[0].xid != hdr.Xid {
		c.env.Violation(c, fmt.Sprintf("reply xid %d does not answer the oldest outstanding request (%s)", hdr.Xid, c.outstanding()))
		return
	}
	p := c.pending[0]
	c.pending = c.pending[1:]
	res := Result{Err: hdr.Err, Zxid: hdr.Zxid}
	if hdr.Err == wire.ErrOK && p.op.Code != wire.OpCloseSession {
		if err := checkBodyType(p.op.Code, body); err != nil {
			c.env.Violation(c, fmt.Sprintf("reply to %s (xid %d): %v", p.op.Name, hdr.Xid, err))
			return
		}
		fill(&res, p.op, body)
	}
	c.complete(p, res, c.env.Now())
	if p.op.Code == wire.OpCloseSession {
		c.env.Hangup(c.conn)
		c.conn = 0
		c.state = finished
		return
	}
	c.pump()
}

// checkBodyType demands the body type ZooKeeper's protocol gives a
// successful reply to op (the type wire.NewResponse returns); no body is
// accepted where that type carries nothing.
func checkBodyType(op wire.OpCode, body wire.Record) error {
	want, err := wire.NewResponse(op)
	if err != nil {
		return err
	}
	if _, empty := want.(*wire.Empty); empty && body == nil {
		return nil
	}
	if reflect.TypeOf(want) != reflect.TypeOf(body) {
		return fmt.Errorf("body is %T, want %T", body, want)
	}
	return nil
}

func (c *Client) outstanding() string {
	if len(c.pending) == 0 {
		return "none outstanding"
	}
	return fmt.Sprintf("oldest xid %d", c.pending[0].xid)
}

func (c *Client) noteZxid(z int64) {
	if z > c.lastZxid {
		c.lastZxid = z
	}
}

// fill copies a decoded reply into res.
func fill(res *Result, op Op, rec wire.Record) {
	switch r := rec.(type) {
	case *wire.PathResponse:
		if op.Name == "create" {
			res.Created = r.Path
		}
	case *wire.Create2Response:
		res.Created, res.Stat, res.HasStat = r.Path, r.Stat, true
	case *wire.StatResponse:
		res.Stat, res.HasStat = r.Stat, true
	case *wire.GetDataResponse:
		res.Data, res.Stat, res.HasStat = string(r.Data), r.Stat, true
	case *wire.StringsResponse:
		res.Children = r.Strings
	case *wire.GetChildren2Response:
		res.Children, res.Stat, res.HasStat = r.Children, r.Stat, true
	case *wire.GetACLResponse:
		res.Stat, res.HasStat = r.Stat, true
	case *wire.MultiResponse:
		res.Sub = make([]Result, len(r.Results))
		for i, mr := range r.Results {
			sub := &res.Sub[i]
			if er, ok := mr.Body.(*wire.ErrorResponse); ok {
				sub.Err = er.Err
			} else if i < len(op.Sub) && mr.Body != nil {
				fill(sub, op.Sub[i], mr.Body)
			}
			// A multi fails as a whole with its first real error; the ops after
			// it report RuntimeInconsistency. A multiRead fails op by op.
			if op.Code == wire.OpMulti && res.Err == wire.ErrOK && sub.Err != wire.ErrOK && sub.Err != wire.ErrRuntimeInconsistency {
				res.Err = sub.Err
			}
		}
	}
}

// complete records an operation's end and lets the workload learn from it.
func (c *Client) complete(p pending, res Result, now time.Duration) {
	if !res.Unknown {
		switch p.op.Code {
		case wire.OpRemoveWatches:
			if res.Err == wire.ErrOK {
				for _, ev := range c.watches.removed(p.op) {
					c.event(ev, wire.StateSyncConnected, p.op.Path)
				}
			}
		default:
			c.watches.registered(p.op, res.Err)
		}
	}
	c.work.learn(p.op, res)
	c.seq++
	c.env.Record(Entry{Kind: "op", Client: c.cfg.ID, Session: c.session, Seq: c.seq, Call: p.call, Return: now, Op: p.op, Xid: p.xid, Result: res})
}

func (c *Client) event(t wire.EventType, s wire.KeeperState, path string) {
	c.seq++
	c.env.Record(Entry{Kind: "event", Client: c.cfg.ID, Session: c.session, Seq: c.seq, Return: c.env.Now(), Type: t, State: s, Path: path})
	c.work.notice(t, s, path)
}

func (c *Client) dial() {
	c.state = connecting
	now := c.env.Now()
	c.lastSend, c.lastRecv = now, now
	session, passwd := c.session, c.passwd
	if in := c.cfg.Intrusion; in != nil {
		session, passwd = in.Session, in.Passwd
	}
	c.conn = c.env.Dial(c, &wire.ConnectRequest{
		LastZxidSeen: c.lastZxid, TimeOut: int32(c.cfg.SessionTimeout / time.Millisecond),
		SessionID: session, Passwd: passwd, HasReadOnly: true,
	})
}

// redialLater reconnects after a short random back-off, as ZooKeeper's client
// does between servers; a paused client redials when it resumes.
func (c *Client) redialLater() {
	c.env.After(time.Duration(1+c.r.IntN(100))*time.Millisecond, func() {
		if c.state == disconnected && !c.paused() {
			c.dial()
		}
	})
}

func (c *Client) send(hdr wire.RequestHeader, body wire.Record) {
	c.lastSend = c.env.Now()
	c.env.Send(c.conn, hdr, body)
}

// pump issues operations while the window allows, and the close at the end.
func (c *Client) pump() {
	if c.state != connected || c.paused() || c.closing || c.thinking || c.cfg.Intrusion != nil {
		return
	}
	if c.issued == c.cfg.Ops || c.work.finished() {
		if len(c.pending) == 0 {
			c.closing = true
			c.work.stop()
			c.issue(Op{Name: "close", Code: wire.OpCloseSession})
		}
		return
	}
	if len(c.pending) >= c.cfg.MaxOutstanding {
		return
	}
	c.thinking = true
	var think time.Duration
	if c.work.pauses() {
		think = time.Duration(c.r.Int64N(int64(c.cfg.MaxThink) + 1))
	}
	c.env.After(think, func() {
		c.thinking = false
		if c.state == connected && !c.paused() && c.issued < c.cfg.Ops && len(c.pending) < c.cfg.MaxOutstanding {
			op, ok := c.work.next()
			if !ok {
				return // the driver waits for a watch event, which pumps again
			}
			c.issued++
			c.issue(op)
		}
		c.pump()
	})
}

func (c *Client) issue(op Op) {
	xid := c.nextXid
	c.nextXid++
	c.pending = append(c.pending, pending{xid: xid, op: op, call: c.env.Now()})
	c.send(wire.RequestHeader{Xid: xid, Type: op.Code}, op.request())
}

// armTimer runs the client's heartbeat: a ping after a third of the session
// timeout without sending, and a drop after two thirds without hearing
// anything (ZooKeeper's client read timeout).
func (c *Client) armTimer() {
	c.env.After(c.timeout/3, func() {
		if c.state == finished {
			return
		}
		c.armTimer()
		if c.paused() {
			return
		}
		now := c.env.Now()
		if c.refused && now-c.lastRecv >= c.timeout*2/3 {
			c.env.Violation(c, fmt.Sprintf("the server refused a wrong password for session 0x%x but did not close the connection within %v", c.cfg.Intrusion.Session, now-c.lastRecv))
			return
		}
		if (c.state == connected || c.state == connecting) && now-c.lastRecv >= c.timeout*2/3 {
			c.env.Hangup(c.conn)
			c.loseConnection()
			return
		}
		if c.state == connected && now-c.lastSend >= c.timeout/3 {
			c.send(wire.RequestHeader{Xid: wire.XidPing, Type: wire.OpPing}, &wire.Empty{})
		}
	})
}
