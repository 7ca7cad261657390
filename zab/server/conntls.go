package server

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/zabd/zabd/zab/server/tlsconf"
)

// openTransport readies a new connection's input: on the secure port (or on
// a plain port with client.portUnification, when the client's first bytes
// begin a TLS handshake) it runs the TLS handshake and takes the client
// certificate's identity. A connection that cannot be served — a TLS client
// on a plain port, a failed handshake — is logged once, with the cause, and
// refused (false). Input is buffered, so that pipelined requests cost one
// read call for many frames rather than two per frame.
func (c *conn) openTransport() (*bufio.Reader, bool) {
	s := c.srv
	in := bufio.NewReaderSize(c.nc, readBufferSize)
	if !c.secure {
		// Peek blocks until three bytes arrive or the deadline passes; every
		// real first frame (a length, a four-letter word) is longer.
		head, _ := in.Peek(3)
		if !startsTLSHandshake(head) {
			s.measured.countPlainConnection(c.nc.RemoteAddr())
			return in, true
		}
		if !s.cfg.TLS.PortUnification {
			hint := "no secureClientPort is configured"
			if a := s.SecureAddr(); a != nil {
				hint = "TLS clients connect to the secure client port " + a.String()
			}
			s.log.Warn("closing connection: TLS handshake on the plain client port ("+hint+")", c.logAttrs()...)
			return nil, false
		}
		// Port unification: the bytes peeked belong to the handshake.
		c.nc = bufferedConn{Conn: c.nc, in: in}
	}
	tc := tls.Server(c.nc, s.tls)
	s.measured.handshaking.Add(1)
	err := tc.Handshake()
	s.measured.handshaking.Add(-1)
	if err != nil {
		// ZooKeeper counts a failed handshake as a failed authentication
		// too (NettyServerCnxnFactory.CertificateVerifier).
		s.measured.failedHandshakes.Add(1)
		s.measured.authFailed.Add(1)
		s.log.Warn("closing connection: "+handshakeFailure(err), append(c.logAttrs(), "err", err)...)
		return nil, false
	}
	c.nc, c.secure = tc, true
	c.certSubject, c.hasCert = tlsconf.ClientIdentity(tc.ConnectionState())
	return bufio.NewReaderSize(tc, readBufferSize), true
}

// startsTLSHandshake reports whether head begins a TLS record holding a
// handshake (content type 22, major version 3). No ZooKeeper frame starts
// so: as a length it would be over 369 MB, beyond jute.maxbuffer.
func startsTLSHandshake(head []byte) bool {
	return len(head) >= 2 && head[0] == 0x16 && head[1] == 0x03
}

// handshakeFailure names the cause of a failed server-side TLS handshake
// for the one log line it gets.
func handshakeFailure(err error) string {
	var (
		recordErr  tls.RecordHeaderError
		invalid    x509.CertificateInvalidError
		unknownCA  x509.UnknownAuthorityError
		alert      tls.AlertError
		netErr     net.Error
		hostErr    x509.HostnameError
		verifyFail *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &recordErr):
		return "not a TLS handshake on the secure client port (a plaintext client?)"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "TLS client certificate has expired or is not yet valid"
	case errors.As(err, &invalid):
		return "TLS client certificate is not valid for client authentication"
	case errors.As(err, &unknownCA):
		return "TLS client certificate is not signed by a CA in ssl.trustStore"
	case errors.As(err, &hostErr), errors.As(err, &verifyFail):
		return "TLS client certificate did not verify"
	case strings.Contains(err.Error(), "didn't provide a certificate"):
		return "TLS client sent no certificate (ssl.clientAuth=need)"
	case errors.As(err, &alert):
		return "the TLS client refused the handshake (does it trust zabd's certificate, and share a protocol and cipher suite?)"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "TLS handshake not completed in time"
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return "TLS client hung up during the handshake"
	}
	return "TLS handshake failed"
}

// bufferedConn is a connection whose first bytes were already read into in.
type bufferedConn struct {
	net.Conn
	in *bufio.Reader
}

func (b bufferedConn) Read(p []byte) (int, error) { return b.in.Read(p) }
