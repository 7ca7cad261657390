package zab_test

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// rawConnect sends one ConnectRequest on a fresh TCP connection to addr and
// returns the frame that comes back (nil if none) and whether the server
// closed the connection after it.
func rawConnect(t *testing.T, addr string, req wire.ConnectRequest) (frame []byte, closed bool) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = nc.Write(wire.AppendFrame(nil, &req))
	require.NoError(t, err)
	fr := wire.NewFrameReader(nc, 0)
	f, err := fr.ReadFrame()
	if err != nil {
		require.True(t, errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err), "read: %v", err)
		return nil, true
	}
	frame = append([]byte(nil), f...)
	_, err = fr.ReadFrame()
	return frame, err != nil && !isTimeout(err)
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// peerConnect sends the same ConnectRequest to a Peer on a new connection
// and returns the connect response's frame (nil if none) and whether the
// Peer closed the connection.
func peerConnect(h interface {
	Step(zab.Event)
}, effects func() []zab.Message, conn zab.ConnID, req wire.ConnectRequest) (frame []byte, closed bool) {
	h.Step(zab.ConnOpened{Conn: conn, Addr: "127.0.0.1"})
	h.Step(zab.ConnectReceived{Conn: conn, Req: req})
	for _, m := range effects() {
		if m.Conn != conn {
			continue
		}
		switch m.Kind {
		case zab.Connect:
			frame = m.AppendFrame(nil)[4:]
		case zab.Close:
			closed = true
		}
	}
	return frame, closed
}

// TestRefusedConnectsMatchZooKeeper: a reconnect with a wrong password, a
// reconnect to a session that no longer exists, and a client that has seen
// a zxid the server has not, each sent to Debian's ZooKeeper 3.8 and to a
// Peer: the same bytes come back (or none), and both close the connection.
func TestRefusedConnectsMatchZooKeeper(t *testing.T) {
	zk := startZooKeeper(t)
	live, gone := zk.session(), zk.session()
	goneID := gone.SessionID()
	_, err := gone.Do(zk.ctx, wire.OpCloseSession, &wire.Empty{})
	require.NoError(t, err)

	h := newHarness(t)
	peerLive := h.Session(10000)
	peerGone := h.Session(10000)
	peerGone.Close()
	h.Take()
	effects := func() []zab.Message {
		h.Take()
		return h.Effects[len(h.Effects)-2:]
	}

	cases := []struct {
		name     string
		answered bool // a connect response (timeout 0) comes before the close
		zk, peer wire.ConnectRequest
	}{
		{"wrong password", true,
			wire.ConnectRequest{TimeOut: 10000, SessionID: live.SessionID(), Passwd: make([]byte, 16), HasReadOnly: true},
			wire.ConnectRequest{TimeOut: 10000, SessionID: peerLive.Session, Passwd: make([]byte, 16), HasReadOnly: true}},
		{"closed session", true,
			wire.ConnectRequest{TimeOut: 10000, SessionID: goneID, Passwd: sessions.Passwords{}.For(goneID), HasReadOnly: true},
			wire.ConnectRequest{TimeOut: 10000, SessionID: peerGone.Session, Passwd: sessions.Passwords{}.For(peerGone.Session), HasReadOnly: true}},
		{"client ahead", false,
			wire.ConnectRequest{TimeOut: 10000, LastZxidSeen: 1 << 40, Passwd: make([]byte, 16), HasReadOnly: true},
			wire.ConnectRequest{TimeOut: 10000, LastZxidSeen: 1 << 40, Passwd: make([]byte, 16), HasReadOnly: true}},
	}
	for i, c := range cases {
		wantFrame, wantClosed := rawConnect(t, zk.addr, c.zk)
		gotFrame, gotClosed := peerConnect(h, effects, zab.ConnID(100+i), c.peer)
		require.Equal(t, wantFrame, gotFrame, "%s: connect response", c.name)
		require.Equal(t, wantClosed, gotClosed, "%s: closed", c.name)
		require.True(t, gotClosed, "%s: closed", c.name)
		require.Equal(t, c.answered, gotFrame != nil, "%s: answered", c.name)
	}
}
