package server

import (
	"bufio"
	"crypto/tls"

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
		if !tlsconf.StartsHandshake(head) {
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
		c.nc = tlsconf.PeekedConn{Conn: c.nc, In: in}
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
		s.log.Warn("closing connection: "+tlsconf.HandshakeFailure(err, tlsconf.ClientSide), append(c.logAttrs(), "err", err)...)
		return nil, false
	}
	c.nc, c.secure = tc, true
	c.certSubject, c.hasCert = tlsconf.ClientIdentity(tc.ConnectionState())
	return bufio.NewReaderSize(tc, readBufferSize), true
}
