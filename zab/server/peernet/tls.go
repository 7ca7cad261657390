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
// tlsconf.QuorumConfigs). With Dial (sslQuorum) every connection this member
// opens speaks TLS; it accepts TLS, and with PortUnification also members
// that speak plaintext (told apart by the first bytes), so that an
// ensemble can switch to TLS one restart at a time.
type TLS struct {
	// Configs gives the accepting and the dialling side's configuration
	// for a new connection, and the error of a reload of the certificates
	// that failed since it was last asked (logged).
	Configs         func() (serve, dial *tls.Config, reloadErr error)
	Dial            bool
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
	if t == nil || !t.Dial {
		return nc, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	_, dial := n.tlsConfigs()
	conf := dial.Clone()
	conf.ServerName = host
	// Go would check the host name against the certificate itself; it
	// is checked below, as ZooKeeper does, only with VerifyHost.
	conf.InsecureSkipVerify = true
	conf.VerifyConnection = func(cs tls.ConnectionState) error {
		return tlsconf.VerifyMember(cs, dial.RootCAs, host, t.VerifyHost, true)
	}
	tc := tls.Client(nc, conf)
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake with %s: %s: %w", addr, tlsconf.HandshakeFailure(err, tlsconf.MemberDialled), err)
	}
	return tc, nil
}

// tlsConfigs asks for the configurations of a new connection, logging a
// failed reload of the certificates.
func (n *Net) tlsConfigs() (serve, dial *tls.Config) {
	serve, dial, err := n.cfg.TLS.Configs()
	if err != nil {
		n.log.Error("quorum TLS: " + err.Error())
	}
	return serve, dial
}

// secureAccepted readies a connection another member opened: with TLS
// required, its handshake; with port unification, a handshake if its first
// bytes begin one, else plaintext. The dialling member's certificate is
// checked against the quorum trust store, and with VerifyHost against the
// address it came from. A connection refused is logged once, naming why.
func (n *Net) secureAccepted(nc net.Conn, port string) (net.Conn, bool) {
	t := n.cfg.TLS
	if t == nil {
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
	serve, _ := n.tlsConfigs()
	conf := serve.Clone()
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
