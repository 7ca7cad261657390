package main

import (
	"fmt"
	"net"
	"time"

	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

// replyTimeout bounds every wait for a reply, so a request the server never
// answers fails the recording instead of hanging it.
const replyTimeout = 10 * time.Second

// conn is a minimal ZooKeeper client over one TCP connection: it sends one
// request at a time and reads frames until that request's reply, keeping the
// notifications that arrive before it. Writing raw frames (instead of a
// client library) lets the recorder send exactly the bytes it chooses
// (invalid paths, every opcode of 3.8) and see each notification's position
// relative to the replies.
type conn struct {
	nc        net.Conn
	frames    *wire.FrameReader
	sessionID int64
	passwd    []byte
	// lastZxid is the highest zxid seen in a reply, what a reconnect reports.
	lastZxid int64
	nextXid  int32
	// events are the notifications read since the last reply.
	events []trace.Event
}

// dial opens a session (req's session id 0) or resumes one.
func dial(addr string, req wire.ConnectRequest) (*conn, wire.ConnectResponse, error) {
	var resp wire.ConnectResponse
	nc, err := net.DialTimeout("tcp", addr, replyTimeout)
	if err != nil {
		return nil, resp, fmt.Errorf("dial %s: %w", addr, err)
	}
	c := &conn{nc: nc, frames: wire.NewFrameReader(nc, 0), nextXid: 1, lastZxid: req.LastZxidSeen}
	if err := c.writeFrame(&req); err != nil {
		nc.Close()
		return nil, resp, err
	}
	frame, err := c.readFrame()
	if err == nil {
		err = wire.Unmarshal(frame, &resp)
	}
	if err != nil {
		nc.Close()
		return nil, resp, fmt.Errorf("connect response: %w", err)
	}
	c.sessionID, c.passwd = resp.SessionID, resp.Passwd
	return c, resp, nil
}

func (c *conn) close() error { return c.nc.Close() }

func (c *conn) writeFrame(rec wire.Record) error {
	if err := c.nc.SetWriteDeadline(time.Now().Add(replyTimeout)); err != nil {
		return fmt.Errorf("set write deadline: %w", err)
	}
	if _, err := c.nc.Write(wire.AppendFrame(nil, rec)); err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	return nil
}

func (c *conn) readFrame() ([]byte, error) {
	if err := c.nc.SetReadDeadline(time.Now().Add(replyTimeout)); err != nil {
		return nil, fmt.Errorf("set read deadline: %w", err)
	}
	return c.frames.ReadFrame()
}

// outgoing is one request to send.
type outgoing struct {
	xid  int32 // 0: the connection's next xid
	op   wire.OpCode
	body wire.Record
}

// send writes the requests in one write, so that the server reads them
// together, and returns their xids.
func (c *conn) send(reqs ...outgoing) ([]int32, error) {
	var buf []byte
	xids := make([]int32, len(reqs))
	for i, r := range reqs {
		xid := r.xid
		if xid == 0 {
			xid = c.nextXid
			c.nextXid++
		}
		xids[i] = xid
		recs := []wire.Record{&wire.RequestHeader{Xid: xid, Type: r.op}}
		if r.body != nil {
			recs = append(recs, r.body)
		}
		buf = wire.AppendFrame(buf, recs...)
	}
	if err := c.nc.SetWriteDeadline(time.Now().Add(replyTimeout)); err != nil {
		return nil, fmt.Errorf("set write deadline: %w", err)
	}
	if _, err := c.nc.Write(buf); err != nil {
		return nil, fmt.Errorf("write frames: %w", err)
	}
	return xids, nil
}

// receive reads frames until the reply with xid and returns its header, a
// decoder positioned at its body (valid until the next read), and the
// notifications that arrived before it.
func (c *conn) receive(xid int32, op wire.OpCode) (wire.ReplyHeader, *wire.Decoder, []trace.Event, error) {
	var hdr wire.ReplyHeader
	for {
		frame, err := c.readFrame()
		if err != nil {
			return hdr, nil, nil, fmt.Errorf("%s reply: %w", op, err)
		}
		d := wire.NewDecoder(frame)
		hdr.Decode(d)
		if d.Err() != nil {
			return hdr, nil, nil, fmt.Errorf("%s reply header: %w", op, d.Err())
		}
		if hdr.Xid == wire.XidNotification {
			var ev wire.WatcherEvent
			ev.Decode(d)
			if d.Err() != nil {
				return hdr, nil, nil, fmt.Errorf("notification: %w", d.Err())
			}
			c.events = append(c.events, trace.Event{Type: ev.Type.String(), State: ev.State.String(), Path: ev.Path})
			continue
		}
		if hdr.Xid != xid {
			return hdr, nil, nil, fmt.Errorf("%s: reply xid %d, want %d", op, hdr.Xid, xid)
		}
		if hdr.Zxid > c.lastZxid {
			c.lastZxid = hdr.Zxid
		}
		events := c.events
		c.events = nil
		return hdr, d, events, nil
	}
}

// call sends one request (xid chosen by the caller for the special xids,
// else the next one) and receives its reply.
func (c *conn) call(xid int32, op wire.OpCode, body wire.Record) (wire.ReplyHeader, *wire.Decoder, []trace.Event, error) {
	xids, err := c.send(outgoing{xid: xid, op: op, body: body})
	if err != nil {
		return wire.ReplyHeader{}, nil, nil, err
	}
	return c.receive(xids[0], op)
}
