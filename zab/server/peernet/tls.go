package peernet

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/zabd/zabd/zab/server/tlsconf"
)

// TLS is the members' TLS (zoo.cfg sslQuorum, portUnification, ssl.quorum.*:
// tlsconf.Quorum). Dial is set with sslQuorum: every connection this member
// opens speaks TLS. Serve is set when this member accepts TLS: with
// sslQuorum, or with portUnification, which also accepts members that
// speak plaintext (told apart by the first bytes), so that an ensemble can
// switch to TLS one restart at a time.
type TLS struct {
	Dial, Serve     *tls.Config
	PortUnification bool
	// VerifyHost is ssl.quorum.hostnameVerification: a certificate must
	// name the host dialled, or the address a connection came from.
	VerifyHost bool
	// DetectTimeout bounds the wait for a connection's first bytes under
	// port unification (ssl.quorum.handshakeDetectionTimeoutMillis).
	DetectTimeout time.Duration
}

// secureDialled runs the TLS handshake on a connection this member dialled
// to addr (nothing without TLS.Dial), and checks the dialled member's
// certificate: its chain against the quorum trust store, and with
// VerifyHost that it names addr's host.
func (n *Net) secureDialled(nc net.Conn, addr string) (net.Conn, error) {
	t := n.cfg.TLS
	if t == nil || t.Dial == nil {
		return nc, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	conf := t.Dial.Clone()
	conf.ServerName = host
	// Go would check the host name against the certificate itself; it
	// is checked below, as ZooKeeper does, only with VerifyHost.
	conf.InsecureSkipVerify = true
	conf.VerifyConnection = func(cs tls.ConnectionState) error {
		return tlsconf.VerifyMember(cs, t.Dial.RootCAs, host, t.VerifyHost, true)
	}
	tc := tls.Client(nc, conf)
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake with %s: %s: %w", addr, tlsconf.HandshakeFailure(err, tlsconf.MemberDialled), err)
	}
	return tc, nil
}

// secureAccepted readies a connection another member opened: with TLS
// required, its handshake; with port unification, a handshake if its first
// bytes begin one, else plaintext. The dialling member's certificate is
// checked against the quorum trust store, and with VerifyHost against the
// address it came from. A connection refused is logged once, naming why.
func (n *Net) secureAccepted(nc net.Conn, port string) (net.Conn, bool) {
	t := n.cfg.TLS
	if t == nil || t.Serve == nil {
		return nc, true
	}
	remote := nc.RemoteAddr().String()
	if t.PortUnification {
		in := bufio.NewReader(nc)
		nc.SetReadDeadline(time.Now().Add(t.DetectTimeout))
		head, err := in.Peek(2)
		nc.SetReadDeadline(time.Time{})
		if err != nil {
			n.log.Warn(port+": refusing a connection: nothing arrived to tell TLS from plaintext", "remote", remote, "err", err)
			return nil, false
		}
		nc = tlsconf.PeekedConn{Conn: nc, In: in}
		if !tlsconf.StartsHandshake(head) {
			return nc, true
		}
	}
	host, _, _ := net.SplitHostPort(remote)
	conf := t.Serve.Clone()
	conf.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return nil // ssl.quorum.clientAuth none or want: nothing to check
		}
		return tlsconf.VerifyMember(cs, nil, host, t.VerifyHost, false)
	}
	tc := tls.Server(nc, conf)
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		if !errors.Is(err, context.Canceled) {
			n.log.Warn(port+": refusing a connection: "+tlsconf.HandshakeFailure(err, tlsconf.MemberDialling), "remote", remote, "err", err)
		}
		return nil, false
	}
	return tc, true
}
