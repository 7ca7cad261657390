package simclient

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/sim/vtime"
	"github.com/zabd/zabd/wire"
)

// stubEnv is a one-client world whose "server" answers every request with
// success and an empty body of the right type, one millisecond later. It
// knows nothing of znodes: these tests are about the client's protocol
// handling, not about ZooKeeper's semantics.
type stubEnv struct {
	q          *vtime.Queue
	c          *Client
	conn       ConnID
	nextConn   ConnID
	zxid       int64
	sessions   map[int64]bool // live sessions
	expired    map[int64]bool
	entries    []Entry
	violations []string
	notes      []Note
	sent       []wire.RequestHeader
	connects   []wire.ConnectRequest
	setWatches []*wire.SetWatchesRequest
	silent     bool // swallow requests: a hung server
}

func newStub() *stubEnv {
	return &stubEnv{q: vtime.NewQueue(vtime.NewClock(time.Unix(0, 0))), sessions: map[int64]bool{}, expired: map[int64]bool{}}
}

func (e *stubEnv) Now() time.Duration              { return e.q.Clock().Mono() }
func (e *stubEnv) After(d time.Duration, f func()) { e.q.After(d, f) }
func (e *stubEnv) Record(en Entry)                 { e.entries = append(e.entries, en) }
func (e *stubEnv) Violation(_ *Client, m string)   { e.violations = append(e.violations, m) }
func (e *stubEnv) Note(n Note)                     { e.notes = append(e.notes, n) }
func (e *stubEnv) Hangup(conn ConnID) {
	if conn == e.conn {
		e.conn = 0
	}
}

func (e *stubEnv) Dial(c *Client, req *wire.ConnectRequest) ConnID {
	e.nextConn++
	conn := e.nextConn
	e.conn = conn
	e.connects = append(e.connects, *req)
	e.q.After(time.Millisecond, func() {
		if conn != e.conn {
			return
		}
		if e.expired[req.SessionID] {
			c.Connected(conn, wire.ConnectResponse{})
			return
		}
		id := req.SessionID
		if id == 0 {
			id = int64(len(e.sessions) + 1)
			e.sessions[id] = true
		}
		c.Connected(conn, wire.ConnectResponse{TimeOut: req.TimeOut, SessionID: id, Passwd: []byte("pw")})
	})
	return conn
}

func (e *stubEnv) Send(conn ConnID, hdr wire.RequestHeader, body wire.Record) {
	e.sent = append(e.sent, hdr)
	if sw, ok := body.(*wire.SetWatchesRequest); ok {
		e.setWatches = append(e.setWatches, sw)
	}
	if e.silent {
		return
	}
	var out wire.Record
	rh := wire.ReplyHeader{Xid: hdr.Xid}
	switch hdr.Xid {
	case wire.XidPing, wire.XidSetWatches:
	default:
		e.zxid++
		rh.Zxid = e.zxid
		resp, err := wire.NewResponse(hdr.Type)
		if err != nil {
			panic(err)
		}
		if m, ok := resp.(*wire.MultiResponse); ok {
			for _, op := range body.(*wire.MultiRequest).Ops {
				b, _ := wire.NewMultiResultBody(op.Type)
				m.Results = append(m.Results, wire.MultiResult{Type: op.Type, Body: b})
			}
		}
		out = resp
	}
	e.q.After(time.Millisecond, func() {
		if conn == e.conn {
			e.c.Reply(conn, rh, out)
		}
	})
}

func (e *stubEnv) drop() {
	conn := e.conn
	e.conn = 0
	e.c.Lost(conn)
}

func run(e *stubEnv, ops int, seed uint64) {
	e.c = New(Config{ID: 1, SessionTimeout: 3 * time.Second, Ops: ops, MaxOutstanding: 3, MaxThink: 5 * time.Millisecond},
		e, rand.New(rand.NewPCG(seed, 0)))
	e.c.Start()
}

func opEntries(es []Entry) []Entry {
	var out []Entry
	for _, e := range es {
		if e.Kind == "op" {
			out = append(out, e)
		}
	}
	return out
}

func TestClientCompletesItsWorkAndCloses(t *testing.T) {
	e := newStub()
	run(e, 200, 1)
	e.q.RunUntil(time.Minute)
	require.Empty(t, e.violations)
	require.True(t, e.c.Done())
	ops := opEntries(e.entries)
	require.Len(t, ops, 201)
	require.Equal(t, "close", ops[200].Op.Name)
	require.Equal(t, wire.StateSyncConnected, e.entries[0].State)
	names := map[string]bool{}
	for i, en := range e.entries {
		require.Equal(t, i+1, en.Seq, "seq is the receive order")
		if en.Kind == "op" {
			require.LessOrEqual(t, en.Call, en.Return)
			require.Equal(t, wire.ErrOK, en.Result.Err)
			names[en.Op.Name] = true
		}
	}
	for _, k := range opKinds {
		require.True(t, names[k.name], "workload never issued %s", k.name)
	}
}

func TestDropEndsOutstandingInConnectionLossAndResumesSession(t *testing.T) {
	e := newStub()
	run(e, 50, 2)
	e.q.RunUntil(40 * time.Millisecond)
	e.silent = true // requests now go unanswered, so some are outstanding at the drop
	e.q.RunUntil(60 * time.Millisecond)
	require.NotEmpty(t, e.c.pending)
	outstanding := len(e.c.pending)
	session, last := e.c.Session(), e.c.lastZxid
	require.NotZero(t, last)
	// Give the client a watch to carry over.
	e.c.watches.data["/a"] = true
	e.silent = false
	e.drop()
	var lost int
	for _, en := range e.entries {
		if en.Kind == "op" && en.Result.Err == wire.ErrConnectionLoss {
			require.True(t, en.Result.Unknown)
			lost++
		}
	}
	require.Equal(t, outstanding, lost)
	require.Equal(t, wire.StateDisconnected, e.entries[len(e.entries)-1].State)
	e.q.RunUntil(time.Minute)
	require.True(t, e.c.Done())
	require.Len(t, e.connects, 2)
	require.Equal(t, session, e.connects[1].SessionID)
	require.Equal(t, []byte("pw"), e.connects[1].Passwd)
	require.Equal(t, last, e.connects[1].LastZxidSeen)
	require.NotEmpty(t, e.setWatches)
	require.Contains(t, e.setWatches[0].DataWatches, "/a")
	require.Equal(t, last, e.setWatches[0].RelativeZxid)
	require.Equal(t, session, e.c.Session())
}

func TestExpiredSessionIsReportedAndReplaced(t *testing.T) {
	e := newStub()
	run(e, 30, 3)
	e.q.RunUntil(20 * time.Millisecond)
	old := e.c.Session()
	e.expired[old] = true
	e.drop()
	e.q.RunUntil(time.Minute)
	require.True(t, e.c.Done())
	require.NotEqual(t, old, e.c.Session())
	var sawExpired bool
	for _, en := range e.entries {
		if en.Kind == "event" && en.State == wire.StateExpired {
			sawExpired = true
			require.Equal(t, old, en.Session)
		}
		if sawExpired && en.Kind == "op" {
			require.NotEqual(t, old, en.Session, "no op under the expired session after Expired")
		}
	}
	require.True(t, sawExpired)
}

func TestPausedClientSendsNothingAndReadsLater(t *testing.T) {
	e := newStub()
	run(e, 100, 4)
	e.q.RunUntil(30 * time.Millisecond)
	sentBefore, recorded := len(e.sent), len(e.entries)
	e.c.Pause(10 * time.Second)
	e.q.RunUntil(5 * time.Second)
	// Replies to what was in flight arrived but wait unread; nothing was sent.
	require.Equal(t, sentBefore, len(e.sent))
	require.Equal(t, recorded, len(e.entries))
	e.q.RunUntil(time.Minute)
	require.True(t, e.c.Done())
	require.Empty(t, e.violations)
}

func TestSilentServerIsDroppedAfterTwoThirdsOfTheTimeout(t *testing.T) {
	e := newStub()
	e.silent = true
	run(e, 10, 5)
	e.q.RunUntil(1500 * time.Millisecond)
	require.Len(t, e.connects, 1)
	e.q.RunUntil(3100 * time.Millisecond) // the watchdog looks every timeout/3: at 3s it is past 2s
	require.Len(t, e.connects, 2, "the client gave up on the silent connection and redialled")
	var pings int
	for _, h := range e.sent {
		if h.Xid == wire.XidPing {
			pings++
		}
	}
	require.NotZero(t, pings)
}

func TestOutOfOrderReplyIsAViolation(t *testing.T) {
	e := newStub()
	run(e, 5, 6)
	e.q.RunUntil(10 * time.Millisecond)
	e.c.Reply(e.conn, wire.ReplyHeader{Xid: 999, Zxid: 1}, nil)
	e.c.Reply(e.conn, wire.ReplyHeader{Xid: wire.XidNotification, Zxid: -1}, &wire.StatResponse{})
	require.Len(t, e.violations, 2)
	require.Contains(t, e.violations[0], "xid 999")
	require.Contains(t, e.violations[1], "notification with a *wire.StatResponse body")
}

func TestSameSeedSameHistory(t *testing.T) {
	hist := func() string {
		e := newStub()
		run(e, 100, 7)
		e.q.RunUntil(time.Minute)
		return fmt.Sprintf("%+v", e.entries)
	}
	require.Equal(t, hist(), hist())
}

// A client that is paused while it waits to redial, then paused again
// before the first pause ends, still reconnects when it resumes.
func TestOverlappingPausesWhileDisconnectedStillRedial(t *testing.T) {
	e := newStub()
	run(e, 20, 8)
	e.q.RunUntil(20 * time.Millisecond)
	e.drop()
	e.c.Pause(time.Second)
	e.q.RunUntil(500 * time.Millisecond)
	e.c.Pause(2 * time.Second) // until 2.5s
	e.q.RunUntil(2400 * time.Millisecond)
	require.Len(t, e.connects, 1, "no dial while paused")
	e.q.RunUntil(time.Minute)
	require.Len(t, e.connects, 2)
	require.True(t, e.c.Done())
}
