package client

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
)

// fakeServer answers the connect on one end of a pipe and hands the test
// the server side's frames.
type fakeServer struct {
	nc net.Conn
	fr *wire.FrameReader
}

func newFake(t *testing.T) (*Conn, *fakeServer) {
	t.Helper()
	clientEnd, serverEnd := net.Pipe()
	fs := &fakeServer{nc: serverEnd, fr: wire.NewFrameReader(serverEnd, 0)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		frame, err := fs.fr.ReadFrame()
		if err != nil {
			return
		}
		var req wire.ConnectRequest
		if wire.Unmarshal(frame, &req) != nil {
			return
		}
		fs.nc.Write(wire.AppendFrame(nil, &wire.ConnectResponse{TimeOut: 5000, SessionID: 42, Passwd: make([]byte, 16), HasReadOnly: true}))
	}()
	c, err := Handshake(ctx, clientEnd, Session{})
	require.NoError(t, err)
	<-done
	t.Cleanup(func() { c.Close(); serverEnd.Close() })
	return c, fs
}

// request reads the next request header from the client.
func (fs *fakeServer) request(t *testing.T) wire.RequestHeader {
	t.Helper()
	frame, err := fs.fr.ReadFrame()
	require.NoError(t, err)
	var h wire.RequestHeader
	require.NoError(t, wire.Unmarshal(frame[:8], &h))
	return h
}

func (fs *fakeServer) send(t *testing.T, recs ...wire.Record) {
	t.Helper()
	_, err := fs.nc.Write(wire.AppendFrame(nil, recs...))
	require.NoError(t, err)
}

func TestRepliesMatchXidsAndEventsKeepArrivalOrder(t *testing.T) {
	c, fs := newFake(t)
	assert.Equal(t, int64(42), c.SessionID())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	calls := make([]*Call, 3)
	sent := make(chan struct{})
	go func() { // a pipe's writes wait for the reader
		defer close(sent)
		for i := range calls {
			calls[i], _ = c.Send(wire.OpExists, &wire.PathWatchRequest{Path: "/x"})
		}
	}()
	var xids []int32
	for range calls {
		xids = append(xids, fs.request(t).Xid)
	}
	<-sent
	assert.Equal(t, []int32{1, 2, 3}, xids, "xids count up from 1")
	fs.send(t, &wire.ReplyHeader{Xid: 1, Zxid: 5, Err: wire.ErrNoNode})
	fs.send(t, &wire.ReplyHeader{Xid: -1, Zxid: -1}, &wire.WatcherEvent{Type: wire.EventNodeCreated, State: wire.StateSyncConnected, Path: "/x"})
	fs.send(t, &wire.ReplyHeader{Xid: 2, Zxid: 6}, &wire.StatResponse{})

	r1, err := calls[0].Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, wire.ErrNoNode, r1.Header.Err)
	r2, err := calls[1].Wait(ctx)
	require.NoError(t, err)
	ev, err := c.NextEvent(ctx)
	require.NoError(t, err)
	assert.Equal(t, "/x", ev.Path)
	assert.Less(t, r1.Seq, ev.Seq)
	assert.Less(t, ev.Seq, r2.Seq, "the event arrived between the two replies")
	assert.Equal(t, int64(6), c.Session().LastZxid)

	// The connection ends with call 3 unanswered: it fails, and so do later calls.
	fs.nc.Close()
	_, err = calls[2].Wait(ctx)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = c.Send(wire.OpSync, &wire.PathRequest{Path: "/"})
	assert.ErrorIs(t, err, ErrClosed)
}

func TestReplyToUnknownXidEndsTheConnection(t *testing.T) {
	c, fs := newFake(t)
	fs.send(t, &wire.ReplyHeader{Xid: 99})
	select {
	case <-c.Done():
		assert.ErrorContains(t, c.Err(), "xid 99")
	case <-time.After(5 * time.Second):
		t.Fatal("the connection did not end")
	}
}

func TestRefusedSessionIsExpired(t *testing.T) {
	clientEnd, serverEnd := net.Pipe()
	defer serverEnd.Close()
	go func() {
		fr := wire.NewFrameReader(serverEnd, 0)
		if _, err := fr.ReadFrame(); err == nil {
			serverEnd.Write(wire.AppendFrame(nil, &wire.ConnectResponse{Passwd: make([]byte, 16)}))
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Handshake(ctx, clientEnd, Session{ID: 7, Passwd: make([]byte, 16)})
	assert.ErrorIs(t, err, wire.ErrSessionExpired)
}

func TestObserverSeesRepliesAndEventsInArrivalOrderBeforeCallsComplete(t *testing.T) {
	c, fs := newFake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	var seen []string
	var done []bool // whether the reply's call had completed when observed
	var call *Call
	c.Observe(func(r *Reply, ev *Event) {
		if ev != nil {
			seen = append(seen, "event "+ev.Path)
			return
		}
		seen = append(seen, fmt.Sprintf("reply %d", r.Header.Xid))
		select {
		case <-call.Done:
			done = append(done, true)
		default:
			done = append(done, false)
		}
	})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		call, _ = c.Send(wire.OpGetData, &wire.PathWatchRequest{Path: "/x", Watch: true})
	}()
	fs.request(t)
	<-sent
	fs.send(t, &wire.ReplyHeader{Xid: -1, Zxid: -1}, &wire.WatcherEvent{Type: wire.EventNodeDeleted, State: wire.StateSyncConnected, Path: "/y"})
	fs.send(t, &wire.ReplyHeader{Xid: 1, Zxid: 3}, &wire.GetDataResponse{})
	fs.send(t, &wire.ReplyHeader{Xid: -1, Zxid: -1}, &wire.WatcherEvent{Type: wire.EventNodeDataChanged, State: wire.StateSyncConnected, Path: "/x"})
	_, err := call.Wait(ctx)
	require.NoError(t, err)
	// A pipe's write returns once the client has read the bytes; the
	// reader dispatches what it has read before it sees the close.
	fs.nc.Close()
	<-c.Done()
	assert.Equal(t, []string{"event /y", "reply 1", "event /x"}, seen)
	assert.Equal(t, []bool{false}, done, "the observer runs before the call completes")
	assert.Empty(t, c.PendingEvents(), "observed events are not queued for NextEvent")
}
