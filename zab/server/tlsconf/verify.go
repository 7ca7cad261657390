package tlsconf

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
)

// Side names the other end of a TLS handshake for the one log line a
// failed handshake gets.
type Side struct {
	Peer   string // who it is: "TLS client", "the dialling member"
	Cert   string // its certificate: "TLS client certificate"
	Plain  string // what a plaintext one would be: "a plaintext client?"
	Port   string // where: "the secure client port"
	Prefix string // the keys that configure it: "ssl." or "ssl.quorum."
	Use    string // what its certificate is checked for: "client authentication"
}

// ClientSide is a client of the secure client port; MemberDialling and
// MemberDialled are the other member of a quorum or election connection.
var (
	ClientSide = Side{Peer: "TLS client", Cert: "TLS client certificate", Plain: "a plaintext client?",
		Port: "the secure client port", Prefix: "ssl.", Use: "client authentication"}
	MemberDialling = Side{Peer: "the dialling member", Cert: "the dialling member's certificate", Plain: "a member without sslQuorum?",
		Port: "a TLS-only peer port (portUnification=false)", Prefix: "ssl.quorum.", Use: "client authentication"}
	MemberDialled = Side{Peer: "the member dialled", Cert: "the dialled member's certificate", Plain: "a member that serves no TLS?",
		Port: "its peer port", Prefix: "ssl.quorum.", Use: "server authentication"}
)

// HandshakeFailure names the cause of a failed TLS handshake with side.
func HandshakeFailure(err error, side Side) string {
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
		return fmt.Sprintf("not a TLS handshake on %s (%s)", side.Port, side.Plain)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return side.Cert + " has expired or is not yet valid"
	case errors.As(err, &invalid):
		return side.Cert + " is not valid for " + side.Use
	case errors.As(err, &unknownCA):
		return side.Cert + " is not signed by a CA in " + side.Prefix + "trustStore"
	case errors.As(err, &hostErr):
		return fmt.Sprintf("%s does not name its host (%s; %shostnameVerification)", side.Cert, hostErr.Host, side.Prefix)
	case errors.As(err, &verifyFail):
		return side.Cert + " did not verify"
	case strings.Contains(err.Error(), "didn't provide a certificate"):
		return side.Peer + " sent no certificate (" + side.Prefix + "clientAuth=need)"
	case errors.As(err, &alert), strings.Contains(err.Error(), "remote error: tls:"):
		return side.Peer + " refused the handshake (does it trust this server's certificate, and share a protocol and cipher suite?)"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "TLS handshake not completed in time"
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return side.Peer + " hung up during the handshake"
	}
	return "TLS handshake failed"
}

// VerifyMember checks the certificate another member presented: its chain
// against roots (for a member this one dialled, whose handshake skipped Go's
// own check; nil roots: the system's), and with verifyHost that it names
// host — the host dialled, or the address a connection came from, or a
// name that address resolves back to (ZooKeeper's ZKTrustManager).
func VerifyMember(cs tls.ConnectionState, roots *x509.CertPool, host string, verifyHost, dialled bool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("no certificate")
	}
	leaf := cs.PeerCertificates[0]
	if dialled {
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			return err
		}
	}
	if !verifyHost {
		return nil
	}
	err := leaf.VerifyHostname(host)
	if err == nil || net.ParseIP(host) == nil {
		return err
	}
	names, _ := net.LookupAddr(host) // an address that names no host keeps the first error
	for _, name := range names {
		if leaf.VerifyHostname(strings.TrimSuffix(name, ".")) == nil {
			return nil
		}
	}
	return err
}

// StartsHandshake reports whether head, a connection's first bytes, begins
// a TLS record holding a handshake (content type 22, major version 3): how
// a port that serves both tells TLS from plaintext. No ZooKeeper frame or
// Zab packet starts so: as a length it would be over 369 MB.
func StartsHandshake(head []byte) bool {
	return len(head) >= 2 && head[0] == 0x16 && head[1] == 0x03
}

// PeekedConn is a connection whose first bytes were read into In to tell
// TLS from plaintext; reads take them first.
type PeekedConn struct {
	net.Conn
	In *bufio.Reader
}

func (p PeekedConn) Read(b []byte) (int, error) { return p.In.Read(b) }
