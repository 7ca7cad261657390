package record

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/wire"
)

// Recorder writes the entries of all its clients to one history.
type Recorder struct {
	start time.Time

	mu      sync.Mutex
	w       *linearizability.Writer
	err     error
	clients int
}

// New records to w; call Close at the end to flush it.
func New(w io.Writer) *Recorder {
	return &Recorder{start: time.Now(), w: linearizability.NewWriter(w)}
}

// now is the monotonic clock of the history, in ns.
func (r *Recorder) now() int64 { return int64(time.Since(r.start)) }

func (r *Recorder) write(e *linearizability.Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.w.Write(e); err != nil && r.err == nil {
		r.err = err
	}
}

func (r *Recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// Close flushes the history and reports the first error met while recording.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = err
	}
	return r.err
}

// Client is one recorded ZooKeeper client. Its methods mirror go-zookeeper's
// and return its results; each call appends one entry to the history.
type Client struct {
	r    *Recorder
	id   int
	conn *zk.Conn
	tap  *tap

	op sync.Mutex // one operation at a time

	mu      sync.Mutex // guards what follows and the tap's fields
	seq     int64
	session int64
}

// Connect opens a recorded client of servers with the given session timeout
// and waits until it has a session.
func (r *Recorder) Connect(servers []string, sessionTimeout time.Duration) (*Client, error) {
	r.mu.Lock()
	r.clients++
	c := &Client{r: r, id: r.clients}
	r.mu.Unlock()
	c.tap = &tap{c: c}
	conn, events, err := zk.Connect(servers, sessionTimeout, zk.WithDialer(c.tap.dial), zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		return nil, fmt.Errorf("record: connect client %d: %w", c.id, err)
	}
	c.conn = conn
	connected := make(chan struct{})
	go func() {
		once := sync.Once{}
		for ev := range events {
			if ev.State == zk.StateHasSession {
				once.Do(func() { close(connected) })
			}
		}
	}()
	select {
	case <-connected:
		return c, nil
	case <-time.After(sessionTimeout + 10*time.Second):
		conn.Close()
		return nil, fmt.Errorf("record: client %d got no session from %v", c.id, servers)
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// ID is the client number in the history.
func (c *Client) ID() int { return c.id }

// SessionID is the client's current session.
func (c *Client) SessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// Freeze cuts the client off: nothing it sends reaches the server and it
// cannot reconnect, so its session expires after its timeout.
func (c *Client) Freeze() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tap.frozen = true
}

// Thaw lets the client talk again; if its session expired meanwhile it sees
// Expired and go-zookeeper opens a new session.
func (c *Client) Thaw() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tap.frozen = false
}

// nextSeq numbers the client's next reply or event; c.mu is held.
func (c *Client) nextSeq() int64 {
	c.seq++
	return c.seq
}

// connected records the session the client got from server (its address,
// which the history names so that the checkers know whether it came from
// one server: linearizability.History.SingleServer).
func (c *Client) connected(session int64, timeoutMs int32, server string) {
	c.mu.Lock()
	c.session = session
	e := linearizability.Entry{Kind: linearizability.KindEvent, Client: c.id, Session: linearizability.Hex64(session),
		Seq: c.nextSeq(), At: c.r.now(), Type: wire.StateSyncConnected.String(), Timeout: timeoutMs, Server: server}
	c.mu.Unlock()
	c.r.write(&e)
}

// expired records that server refused the client's session as expired.
// The history names that server too: a history whose SyncConnected events
// all name one member but whose Expired came from another is from an
// ensemble (linearizability.History.SingleServer).
func (c *Client) expired(session int64, server string) {
	c.mu.Lock()
	e := linearizability.Entry{Kind: linearizability.KindEvent, Client: c.id, Session: linearizability.Hex64(session),
		Seq: c.nextSeq(), At: c.r.now(), Type: wire.StateExpired.String(), Server: server}
	c.mu.Unlock()
	c.r.write(&e)
}

func (c *Client) event(typ, path string, timeoutMs int32) {
	c.mu.Lock()
	s := c.session
	c.mu.Unlock()
	c.eventFor(s, typ, path, timeoutMs)
}

func (c *Client) eventFor(session int64, typ, path string, timeoutMs int32) {
	c.mu.Lock()
	e := linearizability.Entry{Kind: linearizability.KindEvent, Client: c.id, Session: linearizability.Hex64(session),
		Seq: c.nextSeq(), At: c.r.now(), Type: typ, Path: path, Timeout: timeoutMs}
	c.mu.Unlock()
	c.r.write(&e)
}

// setWatchesDone records the reply to go-zookeeper's re-registration of its
// watches after a reconnect: CheckWatches needs to know when it happened.
func (c *Client) setWatchesDone(h wire.ReplyHeader) {
	c.mu.Lock()
	ret, zxid := c.r.now(), linearizability.Hex64(h.Zxid)
	e := linearizability.Entry{Kind: linearizability.KindOp, Client: c.id, Session: linearizability.Hex64(c.session),
		Seq: c.nextSeq(), Call: c.tap.setWatchesCall, Return: &ret, Op: linearizability.OpSetWatches,
		Err: h.Err.String(), Zxid: &zxid}
	c.mu.Unlock()
	c.r.write(&e)
}

// do runs one operation: it tells the tap which opcode to expect, calls
// run, and completes the entry from the reply the tap saw (or records the
// outcome as unknown when there was none).
func (c *Client) do(op wire.OpCode, e *linearizability.Entry, run func()) *reply {
	c.op.Lock()
	defer c.op.Unlock()
	c.mu.Lock()
	c.tap.expectOp, c.tap.expectXid, c.tap.got = op, 0, nil
	e.Kind, e.Client, e.Session, e.Call = linearizability.KindOp, c.id, linearizability.Hex64(c.session), c.r.now()
	c.mu.Unlock()
	run()
	c.mu.Lock()
	got := c.tap.got
	c.tap.expectOp, c.tap.expectXid, c.tap.got = 0, 0, nil
	if got == nil {
		ret := c.r.now()
		e.Return, e.Err, e.Seq = &ret, linearizability.ErrConnectionLoss, c.nextSeq()
	} else {
		zxid := linearizability.Hex64(got.zxid)
		e.Return, e.Err, e.Seq, e.Zxid = &got.at, got.err.String(), got.seq, &zxid
	}
	c.mu.Unlock()
	return got
}

func str(b []byte) *string { s := string(b); return &s }

// Create creates path with data in mode (open ACL).
func (c *Client) Create(path string, data []byte, mode wire.CreateMode) (string, error) {
	e := linearizability.Entry{Op: linearizability.OpCreate, Path: path, Data: str(data), Mode: mode.String()}
	var name string
	var err error
	got := c.do(wire.OpCreate, &e, func() { name, err = c.conn.Create(path, data, int32(mode), zk.WorldACL(zk.PermAll)) })
	if got != nil && got.body != nil {
		e.Created = got.body.(*wire.PathResponse).Path
	}
	c.r.write(&e)
	return name, err
}

// Delete deletes path if its version matches (-1: any).
func (c *Client) Delete(path string, version int32) error {
	e := linearizability.Entry{Op: linearizability.OpDelete, Path: path, Version: &version}
	var err error
	c.do(wire.OpDelete, &e, func() { err = c.conn.Delete(path, version) })
	c.r.write(&e)
	return err
}

// Set replaces path's data if its version matches (-1: any).
func (c *Client) Set(path string, data []byte, version int32) (*zk.Stat, error) {
	e := linearizability.Entry{Op: linearizability.OpSetData, Path: path, Data: str(data), Version: &version}
	var st *zk.Stat
	var err error
	got := c.do(wire.OpSetData, &e, func() { st, err = c.conn.Set(path, data, version) })
	if got != nil && got.body != nil {
		e.Stat = linearizability.StatFromWire(&got.body.(*wire.StatResponse).Stat)
	}
	c.r.write(&e)
	return st, err
}

// Get reads path, leaving a data watch if watch is set.
func (c *Client) Get(path string, watch bool) ([]byte, error) {
	e := linearizability.Entry{Op: linearizability.OpGetData, Path: path, Watch: watch}
	var data []byte
	var err error
	got := c.do(wire.OpGetData, &e, func() {
		if watch {
			data, _, _, err = c.conn.GetW(path)
		} else {
			data, _, err = c.conn.Get(path)
		}
	})
	if got != nil && got.body != nil {
		b := got.body.(*wire.GetDataResponse)
		e.Data, e.Stat = str(b.Data), linearizability.StatFromWire(&b.Stat)
	}
	c.r.write(&e)
	return data, err
}

// Exists tells whether path exists, leaving a watch if watch is set.
func (c *Client) Exists(path string, watch bool) (bool, error) {
	e := linearizability.Entry{Op: linearizability.OpExists, Path: path, Watch: watch}
	var ok bool
	var err error
	got := c.do(wire.OpExists, &e, func() {
		if watch {
			ok, _, _, err = c.conn.ExistsW(path)
		} else {
			ok, _, err = c.conn.Exists(path)
		}
	})
	if got != nil && got.body != nil {
		e.Stat = linearizability.StatFromWire(&got.body.(*wire.StatResponse).Stat)
	}
	c.r.write(&e)
	return ok, err
}

// Children lists path's children, leaving a child watch if watch is set.
func (c *Client) Children(path string, watch bool) ([]string, error) {
	e := linearizability.Entry{Op: linearizability.OpGetChildren, Path: path, Watch: watch}
	var kids []string
	var err error
	got := c.do(wire.OpGetChildren2, &e, func() {
		if watch {
			kids, _, _, err = c.conn.ChildrenW(path)
		} else {
			kids, _, err = c.conn.Children(path)
		}
	})
	if got != nil && got.body != nil {
		b := got.body.(*wire.GetChildren2Response)
		e.Children, e.Stat = b.Children, linearizability.StatFromWire(&b.Stat)
		if e.Children == nil {
			e.Children = []string{}
		}
	}
	c.r.write(&e)
	return kids, err
}

// Sync waits until the server has every write committed before it.
func (c *Client) Sync(path string) error {
	e := linearizability.Entry{Op: linearizability.OpSync, Path: path}
	var err error
	c.do(wire.OpSync, &e, func() { _, err = c.conn.Sync(path) })
	c.r.write(&e)
	return err
}

// Multi runs ops (go-zookeeper's *zk.CreateRequest, *zk.DeleteRequest,
// *zk.SetDataRequest, *zk.CheckVersionRequest) all or nothing.
func (c *Client) Multi(ops ...any) ([]zk.MultiResponse, error) {
	e := linearizability.Entry{Op: linearizability.OpMulti}
	for _, op := range ops {
		sub, err := subOp(op)
		if err != nil {
			return nil, err
		}
		e.Ops = append(e.Ops, sub)
	}
	var res []zk.MultiResponse
	var err error
	got := c.do(wire.OpMulti, &e, func() { res, err = c.conn.Multi(ops...) })
	if got != nil && got.body != nil {
		e.Results = multiResults(got.body.(*wire.MultiResponse))
	}
	c.r.write(&e)
	return res, err
}

func subOp(op any) (linearizability.SubOp, error) {
	switch o := op.(type) {
	case *zk.CreateRequest:
		return linearizability.SubOp{Op: linearizability.OpCreate, Path: o.Path, Data: str(o.Data), Mode: wire.CreateMode(o.Flags).String()}, nil
	case *zk.DeleteRequest:
		v := o.Version
		return linearizability.SubOp{Op: linearizability.OpDelete, Path: o.Path, Version: &v}, nil
	case *zk.SetDataRequest:
		v := o.Version
		return linearizability.SubOp{Op: linearizability.OpSetData, Path: o.Path, Data: str(o.Data), Version: &v}, nil
	case *zk.CheckVersionRequest:
		v := o.Version
		return linearizability.SubOp{Op: linearizability.OpCheck, Path: o.Path, Version: &v}, nil
	}
	return linearizability.SubOp{}, fmt.Errorf("record: %T cannot be part of a multi", op)
}

func multiResults(m *wire.MultiResponse) []linearizability.SubResult {
	out := make([]linearizability.SubResult, len(m.Results))
	for i, r := range m.Results {
		res := linearizability.SubResult{Err: linearizability.ErrOK}
		switch b := r.Body.(type) {
		case *wire.ErrorResponse:
			res.Err = b.Err.String()
		case *wire.PathResponse:
			res.Created = b.Path
		case *wire.Create2Response:
			res.Created, res.Stat = b.Path, linearizability.StatFromWire(&b.Stat)
		case *wire.StatResponse:
			res.Stat = linearizability.StatFromWire(&b.Stat)
		}
		out[i] = res
	}
	return out
}

// Close closes the session (recorded as the close operation).
func (c *Client) Close() {
	e := linearizability.Entry{Op: linearizability.OpClose}
	c.do(wire.OpCloseSession, &e, func() { c.conn.Close() })
	c.r.write(&e)
}
