package record

import (
	"bytes"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/wire"
)

// readAll reads n bytes through the tap in 3-byte pieces, so that frames
// arrive split across reads.
func readAll(t *testing.T, r io.Reader, n int) {
	t.Helper()
	buf := make([]byte, 3)
	for got := 0; got < n; {
		k, err := r.Read(buf[:min(3, n-got)])
		require.NoError(t, err)
		got += k
	}
}

// The tap gives a reply its header's zxid and error, decodes its body, and
// numbers replies and events in arrival order, without a real server.
func TestTapDecodesRepliesAndEventsInArrivalOrder(t *testing.T) {
	var out bytes.Buffer
	rec := New(&out)
	c := &Client{r: rec, id: 1}
	c.tap = &tap{c: c}
	clientEnd, serverEnd := net.Pipe()
	defer serverEnd.Close()
	tc := &tapConn{Conn: clientEnd, t: c.tap}

	connect := wire.AppendFrame(nil, &wire.ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16)})
	connected := wire.AppendFrame(nil, &wire.ConnectResponse{TimeOut: 4000, SessionID: 0x42, Passwd: make([]byte, 16)})
	request := wire.AppendFrame(nil, &wire.RequestHeader{Xid: 1, Type: wire.OpGetData}, &wire.PathWatchRequest{Path: "/a", Watch: true})
	event := wire.AppendFrame(nil, &wire.ReplyHeader{Xid: wire.XidNotification, Zxid: -1}, &wire.WatcherEvent{Type: wire.EventNodeDataChanged, State: wire.StateSyncConnected, Path: "/b"})
	reply := wire.AppendFrame(nil, &wire.ReplyHeader{Xid: 1, Zxid: 0x100000007}, &wire.GetDataResponse{Data: []byte("v"), Stat: wire.Stat{Mzxid: 0x100000005, Version: 2, DataLength: 1}})
	go func() {
		io.ReadFull(serverEnd, make([]byte, len(connect)))
		serverEnd.Write(connected)
		io.ReadFull(serverEnd, make([]byte, len(request)))
		serverEnd.Write(append(event, reply...))
	}()

	_, err := tc.Write(connect)
	require.NoError(t, err)
	readAll(t, tc, len(connected))
	assert.Equal(t, int64(0x42), c.SessionID())

	c.tap.expectOp = wire.OpGetData
	_, err = tc.Write(request)
	require.NoError(t, err)
	readAll(t, tc, len(event)+len(reply))

	got := c.tap.got
	require.NotNil(t, got, "the reply to xid 1 was not matched")
	assert.Equal(t, int64(0x100000007), got.zxid)
	assert.Equal(t, wire.ErrOK, got.err)
	assert.Equal(t, int64(3), got.seq, "SyncConnected is 1, the event 2, the reply 3")
	body := got.body.(*wire.GetDataResponse)
	assert.Equal(t, "v", string(body.Data))
	assert.Equal(t, int32(2), body.Stat.Version)

	require.NoError(t, rec.Close())
	h, err := linearizability.ReadHistory(&out, "tap")
	require.NoError(t, err)
	require.Len(t, h, 2)
	assert.Equal(t, linearizability.StateSyncConnected, h[0].Type)
	assert.Equal(t, int32(4000), h[0].Timeout)
	assert.Equal(t, clientEnd.RemoteAddr().String(), h[0].Server, "SyncConnected names the server's address")
	assert.Equal(t, "NodeDataChanged", h[1].Type)
	assert.Equal(t, "/b", h[1].Path)
	assert.Equal(t, int64(2), h[1].Seq)
}

// A frozen tap swallows what the client sends and refuses to dial.
func TestFrozenTapSwallowsWritesAndRefusesDials(t *testing.T) {
	c := &Client{r: New(io.Discard), id: 1}
	c.tap = &tap{c: c}
	clientEnd, serverEnd := net.Pipe()
	defer serverEnd.Close()
	tc := &tapConn{Conn: clientEnd, t: c.tap}
	c.Freeze()
	n, err := tc.Write([]byte{0, 0, 0, 0}) // net.Pipe would block if it reached the server
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	_, err = c.tap.dial("tcp", "127.0.0.1:1", 0)
	assert.ErrorIs(t, err, errFrozen)
}

// go-zookeeper's re-registration after a reconnect is recorded as a
// setWatches operation with its reply's zxid.
// Java's client sends it with the reserved xid -8, go-zookeeper (v1.0.4's
// sendSetWatches, through Conn.request) with the next ordinary xid.
func TestTapRecordsSetWatches(t *testing.T) {
	for _, xid := range []int32{wire.XidSetWatches, 17} {
		var out bytes.Buffer
		rec := New(&out)
		c := &Client{r: rec, id: 1, session: 0x42}
		c.tap = &tap{c: c}
		c.tap.onRequest(wire.AppendFrame(nil, &wire.RequestHeader{Xid: xid, Type: wire.OpSetWatches})[4:], false)
		c.tap.onReply(wire.AppendFrame(nil, &wire.ReplyHeader{Xid: xid, Zxid: 0x9})[4:], false, "127.0.0.1:2181")
		if xid != wire.XidSetWatches {
			// an ordinary xid names one request: a later reply with it is not this one's
			c.tap.onReply(wire.AppendFrame(nil, &wire.ReplyHeader{Xid: xid, Zxid: 0xa})[4:], false, "127.0.0.1:2181")
		}
		require.NoError(t, rec.Close())
		h, err := linearizability.ReadHistory(&out, "setWatches")
		require.NoError(t, err)
		require.Len(t, h, 1, "xid %d", xid)
		assert.Equal(t, linearizability.OpSetWatches, h[0].Op)
		assert.Equal(t, linearizability.Hex64(0x9), *h[0].Zxid)
		assert.Equal(t, linearizability.Hex64(0x42), h[0].Session)
	}
}

// A connect refused with timeout 0 is recorded as Expired for the session
// the client asked for, naming the server that refused it.
func TestTapRecordsTheServerOfExpired(t *testing.T) {
	var out bytes.Buffer
	rec := New(&out)
	c := &Client{r: rec, id: 1, session: 0x42}
	c.tap = &tap{c: c}
	c.tap.onRequest(wire.AppendFrame(nil, &wire.ConnectRequest{TimeOut: 4000, SessionID: 0x42, Passwd: make([]byte, 16)})[4:], true)
	c.tap.onReply(wire.AppendFrame(nil, &wire.ConnectResponse{Passwd: make([]byte, 16)})[4:], true, "127.0.0.1:2182")
	require.NoError(t, rec.Close())
	h, err := linearizability.ReadHistory(&out, "expired")
	require.NoError(t, err)
	require.Len(t, h, 1)
	assert.Equal(t, linearizability.StateExpired, h[0].Type)
	assert.Equal(t, linearizability.Hex64(0x42), h[0].Session)
	assert.Equal(t, "127.0.0.1:2182", h[0].Server)
}
