package server

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
)

// stillServes checks that a fresh session can write and read.
func stillServes(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dial(t, ctx, addr)
	defer c.CloseSession(ctx)
	_, err := c.Sync(ctx, "/")
	require.NoError(t, err)
}

// readsToEOF reports whether the server closes nc (reading and discarding
// whatever it sent first) within 10s.
func readsToEOF(t *testing.T, nc net.Conn) bool {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, nc)
	return err == nil // io.Copy returns nil at EOF
}

func TestGarbageFirstFrameClosesOnlyThatConnection(t *testing.T) {
	ts := startServer(t, nil)
	nc, err := net.Dial("tcp", ts.addr)
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte{0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'})
	require.NoError(t, err)
	assert.True(t, readsToEOF(t, nc))
	stillServes(t, ts.addr)
}

func TestOversizedFrameClosesConnectionSessionSurvives(t *testing.T) {
	ts := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.addr)
	_, err := c.Create(ctx, "/big", nil, client.OpenACL, wire.ModeEphemeral)
	require.NoError(t, err)

	// A frame of exactly the limit is served: header 8 bytes, path, data.
	path := "/big"
	fixed := 8 + 4 + len(path) + 4 + 4 // header, path, data length, version
	_, err = c.SetData(ctx, path, make([]byte, wire.DefaultMaxBuffer-fixed), -1)
	require.NoError(t, err, "a request frame of exactly 0xfffff bytes is served")

	// One byte more closes the connection without a reply. The server
	// closes after reading the length alone, so the client may still be
	// writing the body: the close then shows in Send (the write is reset)
	// rather than in Wait. Either way no reply comes and the connection ends.
	call, err := c.Send(wire.OpSetData, &wire.SetDataRequest{Path: path, Data: make([]byte, wire.DefaultMaxBuffer-fixed+1), Version: -1})
	if err == nil {
		_, err = call.Wait(ctx)
		require.ErrorIs(t, err, client.ErrClosed)
	}
	require.Error(t, c.Err(), "the connection has ended")

	resumed, err := client.Dial(ctx, ts.addr, c.Session())
	require.NoError(t, err, "the session survives the closed connection")
	defer resumed.CloseSession(ctx)
	eph, err := resumed.GetEphemerals(ctx, "/")
	require.NoError(t, err)
	assert.Equal(t, []string{"/big"}, eph)
}

func TestHalfSentRequestAndHangUp(t *testing.T) {
	ts := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.addr)
	var frame [4]byte
	binary.BigEndian.PutUint32(frame[:], 100)
	require.NoError(t, c.WriteRaw(append(frame[:], 1, 2, 3)))
	// The server waits for the rest; others are served meanwhile.
	stillServes(t, ts.addr)
	require.NoError(t, c.Close())
	stillServes(t, ts.addr)
}

func TestUnknownOpcodeAndTruncatedBody(t *testing.T) {
	ts := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.addr)
	defer c.Close()

	// A body cut short: MarshallingError, connection kept.
	r, err := c.Do(ctx, wire.OpGetData, rawBody{0, 0})
	require.NoError(t, err)
	assert.Equal(t, wire.ErrMarshallingError, r.Header.Err)
	_, err = c.Sync(ctx, "/")
	require.NoError(t, err, "the connection is still usable")

	// An unknown opcode: Unimplemented with zxid -1, then the server closes.
	r, err = c.Do(ctx, wire.OpCode(77), nil)
	require.NoError(t, err)
	assert.Equal(t, wire.ErrUnimplemented, r.Header.Err)
	assert.Equal(t, int64(-1), r.Header.Zxid)
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the connection was not closed after Unimplemented")
	}
	stillServes(t, ts.addr)
}

// rawBody is a request body of raw bytes.
type rawBody []byte

func (b rawBody) Encode(e *wire.Encoder) { e.WriteRaw(b) }
func (b rawBody) Decode(*wire.Decoder)   {}

func TestMaxClientCnxnsPerIP(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.MaxClientCnxns = 3
	ts := startServer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var open []*client.Conn
	for range 3 {
		c := dial(t, ctx, ts.addr)
		open = append(open, c)
	}
	nc, err := net.Dial("tcp", ts.addr)
	require.NoError(t, err)
	defer nc.Close()
	assert.True(t, readsToEOF(t, nc), "the fourth connection from one IP is closed at once")

	open[0].Close()
	eventually(t, "a slot frees up", func() bool {
		c, err := client.Dial(ctx, ts.addr, client.Session{Timeout: 10 * time.Second})
		if err != nil {
			return false
		}
		open = append(open, c)
		return true
	})
	for _, c := range open[1:] {
		c.Close()
	}
	st, ok := ts.status()
	require.True(t, ok)
	assert.GreaterOrEqual(t, metricNamed(st.Metrics(), "connection_rejected").Value, 1.0)
}

// TestSlowReaderIsDisconnected: a client that pipelines reads of a large
// node and never reads the replies is disconnected once its backlog passes
// the limit; the server's memory for it stays bounded and others are served.
func TestSlowReaderIsDisconnected(t *testing.T) {
	ts := startServer(t, nil, func(o *Options) { o.MaxQueuedBytes = 256 << 10 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.addr)
	defer c.Close()
	_, err := c.Create(ctx, "/large", make([]byte, 512<<10), client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)

	// Ask for far more than socket buffers hold, reading nothing.
	stalled, err := net.Dial("tcp", ts.addr)
	require.NoError(t, err)
	defer stalled.Close()
	req := wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}
	_, err = stalled.Write(wire.AppendFrame(nil, &req))
	require.NoError(t, err)
	get := wire.PathWatchRequest{Path: "/large"}
	for i := range 200 {
		hdr := wire.RequestHeader{Xid: int32(i + 1), Type: wire.OpGetData}
		if _, err := stalled.Write(wire.AppendFrame(nil, &hdr, &get)); err != nil {
			break // the server already hung up
		}
	}
	eventually(t, "the stalled client is disconnected", func() bool {
		st, ok := ts.status()
		return ok && metricNamed(st.Metrics(), "zabd_slow_reader_disconnects").Value >= 1
	})
	stillServes(t, ts.addr)
}

func metricNamed(ms []fourlwMetric, name string) fourlwMetric {
	for _, m := range ms {
		if m.Name == name {
			return m
		}
	}
	return fourlwMetric{Name: name + " (missing)"}
}

// TestHandshakeDeadline: a connection that never sends its first frame is
// closed after the handshake timeout; one that did is not, however long it
// then stays quiet.
func TestHandshakeDeadline(t *testing.T) {
	const handshake = 100 * time.Millisecond
	ts := startServer(t, nil, func(o *Options) { o.HandshakeTimeout = handshake })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.addr)
	defer c.CloseSession(ctx)

	silent, err := net.Dial("tcp", ts.addr)
	require.NoError(t, err)
	defer silent.Close()
	assert.True(t, readsToEOF(t, silent), "a silent connection is closed")
	st, ok := ts.status()
	require.True(t, ok)
	assert.Equal(t, 1.0, metricNamed(st.Metrics(), "sessionless_connections_expired").Value)

	time.Sleep(3 * handshake) // let the session's connection outlive the handshake deadline
	require.NoError(t, c.Ping(ctx), "an established connection has no read deadline")
}
