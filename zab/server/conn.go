package server

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// readBufferSize is each connection's input buffer.
const readBufferSize = 64 << 10

// conn is one client connection: its socket, its outbound queue, and
// counters for the four-letter words.
type conn struct {
	id     zab.ConnID
	nc     net.Conn // the *tls.Conn once a TLS handshake is done
	ip     string
	remote string
	srv    *Server
	// secure: the connection speaks TLS (set before it is opened); hasCert
	// and certSubject are the verified client certificate's x509 identity.
	secure      bool
	hasCert     bool
	certSubject string

	mu      sync.Mutex
	queue   [][]byte // frames waiting for the writer, in order
	queued  int      // bytes in queue
	closing bool     // a Close was queued or the queue overflowed: accept nothing more
	wake    chan struct{}

	// Counters, read by the four-letter words.
	received atomic.Int64
	sent     atomic.Int64
	opened   time.Time

	// Owned by the event loop.
	session     int64
	timeout     time.Duration
	lastCxid    int32
	lastZxid    int64
	lastResp    time.Time
	lastOp      wire.OpCode
	inflight    map[int32]inflightRequest // by xid, for latency
	latency     latencyStats
	lastLatency int64
	hasLastOp   bool
}

// inflightRequest is a request waiting for its reply.
type inflightRequest struct {
	at time.Time // when it arrived
	op wire.OpCode
}

func newConn(srv *Server, id zab.ConnID, nc net.Conn, secure bool) *conn {
	remote := nc.RemoteAddr().String()
	ip := remote
	if host, _, err := net.SplitHostPort(remote); err == nil {
		ip = host
	}
	return &conn{
		id: id, nc: nc, ip: ip, remote: remote, srv: srv, secure: secure,
		wake: make(chan struct{}, 1), opened: time.Now(), inflight: map[int32]inflightRequest{},
	}
}

// enqueue adds a frame for the writer. It never blocks: a connection whose
// queue exceeds the server's limit is closed instead (a slow or stalled
// reader must not hold unbounded memory), and frames for a connection that is
// closing are dropped.
func (c *conn) enqueue(frame []byte) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	if c.queued+len(frame) > c.srv.maxQueuedBytes {
		c.closing = true
		c.queue, c.queued = nil, 0
		c.mu.Unlock()
		c.srv.slowReaders.Add(1)
		c.srv.log.Warn("closing connection: client does not read its replies",
			"conn", c.id, "remote", c.remote, "session", sessionHex(c.session), "limit_bytes", c.srv.maxQueuedBytes)
		c.nc.Close()
		return
	}
	c.queue = append(c.queue, frame)
	c.queued += len(frame)
	c.mu.Unlock()
	c.signal()
}

// closeAfterQueued makes the writer close the connection once everything
// queued before is written.
func (c *conn) closeAfterQueued() {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.signal()
}

func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// queuedBytes reports the bytes waiting to be written.
func (c *conn) queuedBytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queued
}

// writeLoop writes queued frames, all that are waiting in one write, until
// the connection closes. done is closed by the reader when it exits.
func (c *conn) writeLoop(done <-chan struct{}) {
	var bufs net.Buffers
	for {
		select {
		case <-c.wake:
		case <-done:
			return
		}
		c.mu.Lock()
		frames, closing := c.queue, c.closing
		c.queue, c.queued = nil, 0
		c.mu.Unlock()
		if len(frames) > 0 {
			bufs = append(bufs[:0], frames...)
			if _, err := bufs.WriteTo(c.nc); err != nil {
				c.nc.Close()
				return
			}
			c.sent.Add(int64(len(frames)))
		}
		if closing {
			c.mu.Lock()
			empty := len(c.queue) == 0
			c.mu.Unlock()
			if empty {
				c.nc.Close()
				return
			}
		}
	}
}

// readLoop reads the connection until it ends, turning frames into events
// for the event loop. It is the only goroutine that reports the connection
// closed, exactly once, and it always closes the socket on its way out.
func (c *conn) readLoop() {
	s := c.srv
	// A connection that sends nothing must not hold a descriptor forever:
	// its TLS handshake and first frame have a deadline, later frames none
	// (sessions expire).
	c.nc.SetDeadline(time.Now().Add(s.handshakeTimeout))
	in, ok := c.openTransport()
	if !ok {
		c.nc.Close()
		return
	}
	fr := wire.NewFrameReader(in, wire.DefaultMaxBuffer)
	frame, word, err := fr.ReadFirstFrame()
	c.nc.SetDeadline(time.Time{})
	if word != "" {
		s.measured.bytesReceived.Add(int64(len(word)))
		s.answerFourLetterWord(c, word)
		c.nc.Close()
		return
	}
	s.deliver(c, zab.ConnOpened{Conn: c.id, Addr: c.ip, HasCert: c.hasCert, CertSubject: c.certSubject})
	defer func() {
		c.nc.Close()
		s.deliver(c, zab.ConnClosed{Conn: c.id})
	}()
	if err != nil {
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			s.measured.sessionlessExpired.Add(1)
		}
		c.logReadEnd(err)
		return
	}
	s.measured.bytesReceived.Add(int64(4 + len(frame)))
	var req wire.ConnectRequest
	if err := wire.Unmarshal(frame, &req); err != nil {
		s.log.Info("closing connection: malformed connect request", "conn", c.id, "remote", c.remote, "err", err)
		return
	}
	c.received.Add(1)
	s.deliver(c, zab.ConnectReceived{Conn: c.id, Req: req})
	for {
		frame, err := fr.ReadFrame()
		if err != nil {
			c.logReadEnd(err)
			return
		}
		c.received.Add(1)
		s.measured.bytesReceived.Add(int64(4 + len(frame)))
		ev, ok := zab.DecodeRequest(c.id, frame)
		if !ok {
			s.log.Info("closing connection: request shorter than its header", "conn", c.id, "remote", c.remote, "bytes", len(frame))
			return
		}
		s.deliver(c, ev)
	}
}

// logReadEnd logs why a connection's input ended: a clean hang-up quietly, a
// bad frame as a warning.
func (c *conn) logReadEnd(err error) {
	var fe *wire.FrameError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	case errors.As(err, &fe) && !errors.Is(err, wire.ErrFrameTruncated):
		c.srv.log.Warn("closing connection: bad frame", "conn", c.id, "remote", c.remote, "session", sessionHex(c.session), "err", err)
	default:
		c.srv.log.Debug("connection input ended", "conn", c.id, "remote", c.remote, "err", err)
	}
}

func (c *conn) logAttrs() []any {
	attrs := []any{slog.Int64("conn", int64(c.id)), slog.String("remote", c.remote)}
	if c.secure {
		attrs = append(attrs, slog.Bool("tls", true))
	}
	if c.hasCert {
		attrs = append(attrs, slog.String("x509", c.certSubject))
	}
	return attrs
}
