package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"

	"github.com/zabd/zabd/zab/server/tlsconf"
)

// adminTLSListener serves the admin server over TLS: every connection with
// admin.forceHttps, or with admin.portUnification those whose first bytes
// begin a TLS handshake (the rest stay plain HTTP, as ZooKeeper's Jetty
// UnifiedConnectionFactory tells them apart).
type adminTLSListener struct {
	net.Listener
	conf  *tls.Config
	unify bool
}

func (l adminTLSListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if !l.unify {
		return tls.Server(c, l.conf), nil
	}
	return &unifiedConn{Conn: c, conf: l.conf}, nil
}

// unifiedConn decides on its first read or write, in the goroutine that
// serves it (so that a slow client holds up no Accept), whether it speaks
// TLS: then it is a TLS server connection over the bytes peeked, otherwise
// those bytes and the rest are plain.
type unifiedConn struct {
	net.Conn
	conf *tls.Config
	once sync.Once
	// active is the connection decided on; mu guards it for Close, which
	// the HTTP server may call from another goroutine while decide waits
	// for the first bytes.
	mu     sync.Mutex
	active net.Conn
}

func (c *unifiedConn) decide() {
	in := bufio.NewReader(c.Conn)
	head, _ := in.Peek(2) // an error (a hang-up) shows again on the next read
	var active net.Conn = tlsconf.PeekedConn{Conn: c.Conn, In: in}
	if tlsconf.StartsHandshake(head) {
		active = tls.Server(active, c.conf)
	}
	c.mu.Lock()
	c.active = active
	c.mu.Unlock()
}

func (c *unifiedConn) Read(p []byte) (int, error) {
	c.once.Do(c.decide)
	return c.active.Read(p)
}

func (c *unifiedConn) Write(p []byte) (int, error) {
	c.once.Do(c.decide)
	return c.active.Write(p)
}

// Close closes the TLS connection (its close_notify first) once decided,
// else the socket, which ends a decide waiting for the first bytes.
func (c *unifiedConn) Close() error {
	c.mu.Lock()
	tc, ok := c.active.(*tls.Conn)
	c.mu.Unlock()
	if ok {
		return tc.Close()
	}
	return c.Conn.Close()
}

// secure reports whether the connection turned out to speak TLS.
func (c *unifiedConn) secure() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.active.(*tls.Conn)
	return ok
}

// connKey carries a request's connection in its context (http.Server's
// ConnContext), for strictTransportSecurity.
type connKey struct{}

func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// strictTransportSecurity adds the Strict-Transport-Security header that
// ZooKeeper's admin server sends on requests that came over HTTPS (Jetty's
// SecureRequestCustomizer with a day's max-age, subdomains included).
func strictTransportSecurity(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, unified := r.Context().Value(connKey{}).(*unifiedConn)
		if r.TLS != nil || unified && u.secure() {
			w.Header().Set("Strict-Transport-Security", "max-age=86400; includeSubDomains")
		}
		h.ServeHTTP(w, r)
	})
}
