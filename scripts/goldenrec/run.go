package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

// sessionTimeout is what every session asks for (the server clamps it to
// [4 s, 40 s] with tickTime 2000); scenarios are far shorter.
const sessionTimeout = 30000

// run records one scenario against one server. Its first transport error is
// sticky: later operations do nothing and the scenario's result is that error.
type run struct {
	srv   *server
	conns map[string]*conn
	// parked holds disconnected sessions' old connections (id, password,
	// last zxid) until they reconnect.
	parked map[string]*conn
	lines  []trace.Line
	note   string
	err    error
	// batches counts the pipelines sent, to number their lines.
	batches int
}

// Note attaches a human explanation to the next recorded line.
func (r *run) Note(s string) { r.note = s }

func (r *run) emit(l trace.Line) trace.Line {
	l.Note, r.note = r.note, ""
	r.lines = append(r.lines, l)
	return l
}

func (r *run) fail(err error) trace.Line {
	if r.err == nil {
		r.err = err
	}
	return trace.Line{}
}

// Connect opens session s.
func (r *run) Connect(s string) trace.Line { return r.ConnectTimeout(s, sessionTimeout) }

// ConnectTimeout opens session s asking for the given session timeout (ms).
func (r *run) ConnectTimeout(s string, timeOut int32) trace.Line {
	if r.err != nil {
		return trace.Line{}
	}
	if _, dup := r.conns[s]; dup {
		return r.fail(fmt.Errorf("session %s already connected", s))
	}
	c, resp, err := dial(r.srv.addr, wire.ConnectRequest{TimeOut: timeOut, Passwd: make([]byte, 16), HasReadOnly: true})
	if err != nil {
		return r.fail(fmt.Errorf("connect %s: %w", s, err))
	}
	r.conns[s] = c
	return r.emit(trace.Line{Session: s, Op: "connect", Req: &trace.Request{TimeOut: timeOut}, Err: wire.ErrOK.String(),
		Resp: &trace.Response{SessionID: resp.SessionID, TimeOut: resp.TimeOut}})
}

// Disconnect closes session s's TCP connection; the session lives on.
func (r *run) Disconnect(s string) trace.Line {
	if r.err != nil {
		return trace.Line{}
	}
	c, ok := r.conns[s]
	if !ok {
		return r.fail(fmt.Errorf("disconnect: session %s is not connected", s))
	}
	c.close()
	delete(r.conns, s)
	r.parked[s] = c
	return r.emit(trace.Line{Session: s, Op: "disconnect", Err: wire.ErrOK.String()})
}

// Reconnect resumes session s (disconnected before) on a new connection,
// reporting the last zxid it saw.
func (r *run) Reconnect(s string) trace.Line {
	if r.err != nil {
		return trace.Line{}
	}
	old, ok := r.parked[s]
	if !ok {
		return r.fail(fmt.Errorf("reconnect: session %s was not disconnected", s))
	}
	delete(r.parked, s)
	req := wire.ConnectRequest{TimeOut: sessionTimeout, SessionID: old.sessionID, Passwd: old.passwd,
		LastZxidSeen: old.lastZxid, HasReadOnly: true}
	c, resp, err := dial(r.srv.addr, req)
	if err != nil {
		return r.fail(fmt.Errorf("reconnect %s: %w", s, err))
	}
	r.conns[s] = c
	return r.emit(trace.Line{Session: s, Op: "reconnect", Req: &trace.Request{TimeOut: sessionTimeout, LastZxidSeen: old.lastZxid},
		Err: wire.ErrOK.String(), Resp: &trace.Response{SessionID: resp.SessionID, TimeOut: resp.TimeOut}})
}

// LastZxid is the highest zxid session s has seen in a reply.
func (r *run) LastZxid(s string) int64 {
	if c, ok := r.conns[s]; ok {
		return c.lastZxid
	}
	if c, ok := r.parked[s]; ok {
		return c.lastZxid
	}
	return 0
}

// Do sends one request of session s and records its reply; after a write it
// drains the other sessions.
func (r *run) Do(s string, op wire.OpCode, req trace.Request) trace.Line {
	if r.err != nil {
		return trace.Line{}
	}
	c, ok := r.conns[s]
	if !ok {
		return r.fail(fmt.Errorf("%s: session %s is not connected", op, s))
	}
	body, err := req.Body(op)
	if err != nil {
		return r.fail(err)
	}
	xid := int32(0)
	switch op {
	case wire.OpPing:
		xid = wire.XidPing
	case wire.OpSetWatches, wire.OpSetWatches2:
		xid = wire.XidSetWatches
	}
	xids, err := c.send(outgoing{xid: xid, op: op, body: body})
	if err != nil {
		return r.fail(fmt.Errorf("session %s: %w", s, err))
	}
	l := r.receive(s, c, xids[0], op, req, 0)
	// After a write, the other sessions are drained, so the notifications
	// it fired are attributed to the right position.
	if trace.IsWrite(op) {
		r.drain(s)
	}
	return l
}

// receive reads the reply to one request of session s and records it.
func (r *run) receive(s string, c *conn, xid int32, op wire.OpCode, req trace.Request, batch int) trace.Line {
	hdr, d, events, err := c.receive(xid, op)
	if err != nil {
		return r.fail(fmt.Errorf("session %s: %w", s, err))
	}
	l := trace.Line{Session: s, Op: op.String(), Req: &req, Zxid: hdr.Zxid, Err: hdr.Err.String(), Events: events, Batch: batch}
	if hdr.Err == wire.ErrOK {
		resp, err := decodeBody(d, op)
		if err != nil {
			return r.fail(fmt.Errorf("session %s: %w", s, err))
		}
		l.Resp = resp
	}
	if op == wire.OpCloseSession {
		c.close()
		delete(r.conns, s)
	}
	return r.emit(l)
}

// Pipeline sends session s's requests in one write, before any reply, so
// that ZooKeeper prepares later ones while earlier ones are still pending,
// then records the replies (lines sharing a batch number).
func (r *run) Pipeline(s string, reqs ...trace.SubOp) []trace.Line {
	if r.err != nil {
		return nil
	}
	c, ok := r.conns[s]
	if !ok {
		r.fail(fmt.Errorf("pipeline: session %s is not connected", s))
		return nil
	}
	out := make([]outgoing, len(reqs))
	ops := make([]wire.OpCode, len(reqs))
	for i := range reqs {
		op, ok := trace.OpCode(reqs[i].Op)
		if !ok {
			r.fail(fmt.Errorf("pipeline: unknown op %q", reqs[i].Op))
			return nil
		}
		body, err := reqs[i].Req.Body(op)
		if err != nil {
			r.fail(err)
			return nil
		}
		out[i], ops[i] = outgoing{op: op, body: body}, op
	}
	xids, err := c.send(out...)
	if err != nil {
		r.fail(fmt.Errorf("session %s: %w", s, err))
		return nil
	}
	r.batches++
	lines := make([]trace.Line, len(reqs))
	for i := range reqs {
		lines[i] = r.receive(s, c, xids[i], ops[i], reqs[i].Req, r.batches)
	}
	r.drain(s)
	return lines
}

// AddAuth sends an auth packet (xid -4). ZooKeeper closes the connection
// after AuthFailed, so a failed addAuth also forgets the session.
func (r *run) AddAuth(s, scheme, auth string) trace.Line {
	if r.err != nil {
		return trace.Line{}
	}
	c, ok := r.conns[s]
	if !ok {
		return r.fail(fmt.Errorf("addAuth: session %s is not connected", s))
	}
	body := &wire.AuthPacket{Scheme: scheme, Auth: []byte(auth)}
	hdr, _, events, err := c.call(wire.XidAuth, wire.OpAuth, body)
	if err != nil {
		return r.fail(fmt.Errorf("session %s addAuth: %w", s, err))
	}
	if hdr.Err != wire.ErrOK {
		c.close()
		delete(r.conns, s)
	}
	return r.emit(trace.Line{Session: s, Op: "addAuth", Req: &trace.Request{Scheme: scheme, Auth: auth},
		Zxid: hdr.Zxid, Err: hdr.Err.String(), Events: events})
}

// drain pings every session but except, in name order, and records a ping
// line for each that had notifications queued.
func (r *run) drain(except string) {
	names := make([]string, 0, len(r.conns))
	for n := range r.conns {
		if n != except {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		r.ping(n, false)
	}
}

// ping sends a ping on session s and records it if notifications arrived
// before its reply (or always, when keep is set). It reports whether any did.
func (r *run) ping(s string, keep bool) bool {
	if r.err != nil {
		return false
	}
	hdr, _, events, err := r.conns[s].call(wire.XidPing, wire.OpPing, nil)
	if err != nil {
		r.fail(fmt.Errorf("session %s ping: %w", s, err))
		return false
	}
	if len(events) > 0 || keep {
		r.emit(trace.Line{Session: s, Op: "ping", Zxid: hdr.Zxid, Err: hdr.Err.String(), Events: events})
	}
	return len(events) > 0
}

// WaitEvents pings session s until notifications arrive (recorded as a
// ping line), or fails the run after limit.
func (r *run) WaitEvents(s string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for r.err == nil && time.Now().Before(deadline) {
		if r.ping(s, false) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r.err == nil {
		r.err = fmt.Errorf("session %s got no notification within %s", s, limit)
	}
}

// DrainAll pings every session; scenarios end with it so no notification is
// left unrecorded.
func (r *run) DrainAll() { r.drain("") }

// closeConns drops the TCP connections without closing the sessions.
func (r *run) closeConns() {
	for _, c := range r.conns {
		c.close()
	}
}

// encodeLines renders the trace as JSON Lines.
func encodeLines(lines []trace.Line) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return nil, fmt.Errorf("encode line %d: %w", i+1, err)
		}
	}
	return buf.Bytes(), nil
}
