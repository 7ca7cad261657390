package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/zabd/zabd/wire"
)

// errFrozen refuses dials of a frozen client.
var errFrozen = errors.New("record: client frozen")

// reply is what the tap saw of the answer to the op in flight.
type reply struct {
	zxid int64
	err  wire.ErrCode
	at   int64
	seq  int64
	body wire.Record // nil when the reply carries none or err is not ok
}

// tap sits between go-zookeeper and its TCP connection. It is shared by the
// successive connections of one Client and guarded by the Client's lock.
type tap struct {
	c *Client

	// Under c.mu:
	frozen       bool
	expectOp     wire.OpCode // the op in flight, 0 when none
	expectXid    int32       // its xid once written
	got          *reply
	askedSession int64 // session id of the last ConnectRequest
	// setWatchesCall is when go-zookeeper sent its re-registration after
	// reconnecting (it does so alongside queued requests, not first), and
	// setWatchesXid its xid: go-zookeeper numbers it like any request,
	// where ZooKeeper's Java client uses the reserved xid -8.
	setWatchesCall int64
	setWatchesXid  int32
}

// dial is go-zookeeper's Dialer: it connects and wraps the connection.
func (t *tap) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	t.c.mu.Lock()
	frozen := t.frozen
	t.c.mu.Unlock()
	if frozen {
		return nil, errFrozen
	}
	nc, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &tapConn{Conn: nc, t: t}, nil
}

// tapConn decodes the frames going both ways.
type tapConn struct {
	net.Conn
	t          *tap
	in, out    []byte // partial frames
	sawConnect bool   // the first frame each way is the connect handshake
	gotConnect bool
	closedOnce sync.Once
}

// Write forwards a frame unless the client is frozen, in which case it is
// swallowed: the server hears nothing, as from a client that stopped.
func (tc *tapConn) Write(b []byte) (int, error) {
	tc.out = append(tc.out, b...)
	for {
		frame, ok := nextFrame(&tc.out)
		if !ok {
			break
		}
		tc.t.onRequest(frame, !tc.sawConnect)
		tc.sawConnect = true
	}
	tc.t.c.mu.Lock()
	frozen := tc.t.frozen
	tc.t.c.mu.Unlock()
	if frozen {
		return len(b), nil
	}
	return tc.Conn.Write(b)
}

func (tc *tapConn) Read(b []byte) (int, error) {
	n, err := tc.Conn.Read(b)
	tc.in = append(tc.in, b[:n]...)
	for {
		frame, ok := nextFrame(&tc.in)
		if !ok {
			break
		}
		tc.t.onReply(frame, !tc.gotConnect, tc.RemoteAddr().String())
		tc.gotConnect = true
	}
	if err != nil {
		tc.closedOnce.Do(func() { tc.t.c.event(wire.StateDisconnected.String(), "", 0) })
	}
	return n, err
}

func (tc *tapConn) Close() error {
	tc.closedOnce.Do(func() { tc.t.c.event(wire.StateDisconnected.String(), "", 0) })
	return tc.Conn.Close()
}

// nextFrame cuts one length-prefixed frame off buf.
func nextFrame(buf *[]byte) ([]byte, bool) {
	if len(*buf) < 4 {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(*buf))
	if len(*buf) < 4+n {
		return nil, false
	}
	frame := (*buf)[4 : 4+n]
	*buf = (*buf)[4+n:]
	return frame, true
}

func (t *tap) onRequest(frame []byte, first bool) {
	d := wire.NewDecoder(frame)
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if first {
		var req wire.ConnectRequest
		req.Decode(d)
		t.askedSession = req.SessionID
		return
	}
	var h wire.RequestHeader
	h.Decode(d)
	switch {
	case d.Err() != nil:
	case h.Xid == wire.XidSetWatches || h.Type == wire.OpSetWatches || h.Type == wire.OpSetWatches2:
		t.setWatchesCall, t.setWatchesXid = t.c.r.now(), h.Xid
	case t.expectOp != 0 && t.expectXid == 0 && h.Type == t.expectOp:
		t.expectXid = h.Xid
	}
}

// onReply records one frame from server (its address); the first on a
// connection is the connect response.
func (t *tap) onReply(frame []byte, first bool, server string) {
	d := wire.NewDecoder(frame)
	if first {
		var resp wire.ConnectResponse
		resp.Decode(d)
		t.c.mu.Lock()
		asked := t.askedSession
		t.c.mu.Unlock()
		if resp.TimeOut <= 0 {
			t.c.expired(asked, server)
			return
		}
		t.c.connected(resp.SessionID, resp.TimeOut, server)
		return
	}
	var h wire.ReplyHeader
	h.Decode(d)
	if d.Err() != nil {
		return
	}
	if h.Xid == wire.XidNotification {
		var ev wire.WatcherEvent
		ev.Decode(d)
		if d.Err() == nil {
			t.c.event(ev.Type.String(), ev.Path, 0)
		}
		return
	}
	t.c.mu.Lock()
	reregistered := h.Xid == wire.XidSetWatches || (t.setWatchesXid != 0 && h.Xid == t.setWatchesXid)
	if reregistered {
		t.setWatchesXid = 0
	}
	t.c.mu.Unlock()
	if reregistered {
		t.c.setWatchesDone(h)
		return
	}
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.expectXid == 0 || h.Xid != t.expectXid {
		return // ping, auth
	}
	r := &reply{zxid: h.Zxid, err: h.Err, at: t.c.r.now(), seq: t.c.nextSeq()}
	if h.Err == wire.ErrOK || t.expectOp == wire.OpMulti {
		r.body = replyBody(t.expectOp)
		if r.body != nil {
			r.body.Decode(d)
			if err := d.Err(); err != nil {
				r.body = nil
				t.c.r.fail(fmt.Errorf("record: decode %s reply: %w", t.expectOp, err))
			}
		}
	}
	t.got = r
}

// replyBody is the record a successful reply to op carries.
func replyBody(op wire.OpCode) wire.Record {
	switch op {
	case wire.OpCreate, wire.OpSync:
		return &wire.PathResponse{}
	case wire.OpCreate2:
		return &wire.Create2Response{}
	case wire.OpExists, wire.OpSetData:
		return &wire.StatResponse{}
	case wire.OpGetData:
		return &wire.GetDataResponse{}
	case wire.OpGetChildren2:
		return &wire.GetChildren2Response{}
	case wire.OpGetChildren:
		return &wire.StringsResponse{}
	case wire.OpMulti:
		return &wire.MultiResponse{}
	}
	return nil
}
