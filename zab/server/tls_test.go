package server

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/config"
	"github.com/zabd/zabd/zab/server/tlsconf/tlstest"
)

// tlsFixture is a zabd with a plain and a secure client port, its CA and
// two client identities, and its log.
type tlsFixture struct {
	*testServer
	secureAddr string
	ca         *tlstest.Cert
	alice, bob *tlstest.Cert
	logs       *lockedBuffer
}

var (
	aliceDN = "CN=alice,OU=dev,O=Example,C=NL"
	bobDN   = "CN=bob,O=Example"
)

// startTLSServer serves TLS with a PKCS12 key store and a PEM trust store;
// mod adjusts the config.
func startTLSServer(t *testing.T, mod func(*config.Config)) *tlsFixture {
	t.Helper()
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "zabd test CA")
	f := &tlsFixture{
		ca:    ca,
		alice: ca.Client(t, pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"dev"}, Organization: []string{"Example"}, Country: []string{"NL"}}, tlstest.Options{}),
		bob:   ca.Client(t, pkix.Name{CommonName: "bob", Organization: []string{"Example"}}, tlstest.Options{}),
		logs:  &lockedBuffer{},
	}
	cfg := testConfig(filepath.Join(dir, "data"))
	cfg.SecureClientPort = 1 // bound below, through Options.SecureListener
	cfg.X509AuthEnabled = true
	cfg.TLS = config.TLS{
		KeyStore:   config.Store{Location: tlstest.WriteFile(t, filepath.Join(dir, "server.p12"), ca.Server(t, "zabd").PKCS12(t, "kpw")), Password: "kpw"},
		TrustStore: config.Store{Location: tlstest.WriteFile(t, filepath.Join(dir, "ca.pem"), tlstest.CertsPEM(ca))},
		ClientAuth: config.ClientAuthNeed,
		Protocol:   config.DefaultTLSProtocol,
	}
	if mod != nil {
		mod(cfg)
	}
	secure, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f.testServer = startServer(t, cfg, func(o *Options) {
		o.SecureListener = secure
		o.Log = slog.New(slog.NewTextHandler(io.MultiWriter(f.logs, logOutput()), nil))
	})
	f.secureAddr = secure.Addr().String()
	return f
}

// tlsClientConfig trusts the test CA and offers cert (none when nil)
// whatever CAs the server names.
func (f *tlsFixture) tlsClientConfig(cert *tlstest.Cert) *tls.Config {
	cfg := &tls.Config{RootCAs: tlstest.Pool(f.ca), ServerName: "localhost"}
	if cert != nil {
		c := cert.TLS()
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &c, nil }
	}
	return cfg
}

// dialTLS opens a session over TLS on the secure port as cert.
func (f *tlsFixture) dialTLS(t *testing.T, ctx context.Context, cert *tlstest.Cert) *client.Conn {
	t.Helper()
	nc, err := (&tls.Dialer{Config: f.tlsClientConfig(cert)}).DialContext(ctx, "tcp", f.secureAddr)
	require.NoError(t, err)
	c, err := client.Handshake(ctx, nc, client.Session{Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// dialZKTLS connects go-zookeeper over TLS as cert.
func (f *tlsFixture) dialZKTLS(t *testing.T, cert *tlstest.Cert) *zk.Conn {
	t.Helper()
	cfg := f.tlsClientConfig(cert)
	dialer := func(network, address string, timeout time.Duration) (net.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, address, cfg)
	}
	c, events, err := zk.Connect([]string{f.secureAddr}, 10*time.Second, zk.WithDialer(dialer), zk.WithLogger(log.New(io.Discard, "", 0)))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	waitState(t, events, zk.StateHasSession)
	return c
}

// TestGoZookeeperOverTLSWithX509ACLs: go-zookeeper over TLS is served, and
// the client certificate's subject is the connection's x509 id for ACLs,
// "auth" expansion and whoAmI, as ZooKeeper's X509AuthenticationProvider
// makes it.
func TestGoZookeeperOverTLSWithX509ACLs(t *testing.T) {
	f := startTLSServer(t, nil)
	alice := f.dialZKTLS(t, f.alice)
	aliceOnly := []zk.ACL{{Perms: zk.PermAll, Scheme: "x509", ID: aliceDN}}
	_, err := alice.Create("/secret", []byte("s3cret"), 0, aliceOnly)
	require.NoError(t, err)
	data, _, err := alice.Get("/secret")
	require.NoError(t, err)
	assert.Equal(t, []byte("s3cret"), data)

	_, err = alice.Create("/mine", nil, 0, zk.AuthACL(zk.PermAll))
	require.NoError(t, err, "auth ACLs expand to the x509 id")
	acl, _, err := alice.GetACL("/mine")
	require.NoError(t, err)
	assert.Equal(t, aliceOnly, acl)

	bob := f.dialZKTLS(t, f.bob)
	_, _, err = bob.Get("/secret")
	assert.True(t, errors.Is(err, zk.ErrNoAuth), "bob's certificate is not alice's: %v", err)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	plain := dial(t, ctx, f.addr)
	defer plain.Close()
	_, _, err = plain.GetData(ctx, "/secret", false)
	assert.ErrorIs(t, err, wire.ErrNoAuth, "the plain port has no certificate")
	err = plain.AddAuth(ctx, "x509", nil)
	assert.ErrorIs(t, err, wire.ErrAuthFailed, "x509 addauth without a certificate fails, as ZooKeeper's")

	overTLS := f.dialTLS(t, ctx, f.alice)
	who, err := overTLS.WhoAmI(ctx)
	require.NoError(t, err)
	assert.Contains(t, who, wire.ClientInfo{AuthScheme: "x509", User: aliceDN})
	assert.Contains(t, who, wire.ClientInfo{AuthScheme: "ip", User: "127.0.0.1"})
	require.NoError(t, overTLS.AddAuth(ctx, "x509", nil), "x509 addauth with a certificate succeeds")
	assert.Contains(t, f.logs.String(), `tls=true x509="`+aliceDN+`"`, "the connection's log line names its identity")
}

// TestX509SuperUser: X509AuthenticationProvider.superUser's certificate
// passes every ACL.
func TestX509SuperUser(t *testing.T) {
	f := startTLSServer(t, func(c *config.Config) { c.X509SuperUser = bobDN })
	alice := f.dialZKTLS(t, f.alice)
	_, err := alice.Create("/alice", nil, 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "x509", ID: aliceDN}})
	require.NoError(t, err)
	bob := f.dialZKTLS(t, f.bob)
	require.NoError(t, bob.Delete("/alice", -1), "the super user deletes what only alice may")
}

// TestClientAuthWantServesClientsWithoutCertificates: with want, a client
// without a certificate is served, without an x509 id.
func TestClientAuthWantServesClientsWithoutCertificates(t *testing.T) {
	f := startTLSServer(t, func(c *config.Config) { c.TLS.ClientAuth = config.ClientAuthWant })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	anon := f.dialTLS(t, ctx, nil)
	who, err := anon.WhoAmI(ctx)
	require.NoError(t, err)
	assert.Equal(t, []wire.ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}}, who)
	alice := f.dialTLS(t, ctx, f.alice)
	who, err = alice.WhoAmI(ctx)
	require.NoError(t, err)
	assert.Contains(t, who, wire.ClientInfo{AuthScheme: "x509", User: aliceDN})
}

// TestPortUnificationServesBothOnThePlainPort: with
// client.portUnification the plain port serves TLS clients too.
func TestPortUnificationServesBothOnThePlainPort(t *testing.T) {
	f := startTLSServer(t, func(c *config.Config) { c.TLS.PortUnification = true })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := (&tls.Dialer{Config: f.tlsClientConfig(f.alice)}).DialContext(ctx, "tcp", f.addr)
	require.NoError(t, err)
	c, err := client.Handshake(ctx, nc, client.Session{Timeout: 10 * time.Second})
	require.NoError(t, err)
	defer c.Close()
	who, err := c.WhoAmI(ctx)
	require.NoError(t, err)
	assert.Contains(t, who, wire.ClientInfo{AuthScheme: "x509", User: aliceDN})
	stillServes(t, f.addr)
}

// TestFourLetterWordsOverTLS: the secure port answers four-letter words
// inside TLS, as ZooKeeper's Netty port does; conf names both ports.
func TestFourLetterWordsOverTLS(t *testing.T) {
	f := startTLSServer(t, nil)
	nc, err := tls.Dial("tcp", f.secureAddr, f.tlsClientConfig(f.alice))
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte("conf"))
	require.NoError(t, err)
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	out, err := io.ReadAll(nc)
	require.NoError(t, err)
	_, securePort, _ := net.SplitHostPort(f.secureAddr)
	assert.Contains(t, string(out), "\nsecureClientPort="+securePort+"\n")
}

// TestBadTLSClientsAreRefusedAndLogged: a TLS client on the plain port, a
// plaintext client on the TLS port, an expired, an untrusted and a missing
// client certificate (clientAuth=need): each connection is refused with one
// log line naming the cause, and the server goes on serving both ports.
func TestBadTLSClientsAreRefusedAndLogged(t *testing.T) {
	f := startTLSServer(t, nil)
	expired := f.ca.Client(t, pkix.Name{CommonName: "old"}, tlstest.Options{
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	stranger := tlstest.NewCA(t, "another CA").Client(t, pkix.Name{CommonName: "mallory"}, tlstest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	tlsClient := func(addr string, cert *tlstest.Cert) func() error {
		return func() error {
			nc, err := (&tls.Dialer{Config: f.tlsClientConfig(cert)}).DialContext(ctx, "tcp", addr)
			if err != nil {
				return err
			}
			defer nc.Close()
			_, err = client.Handshake(ctx, nc, client.Session{Timeout: 10 * time.Second})
			return err
		}
	}
	for _, tc := range []struct {
		name, logLine string
		connect       func() error
	}{
		{"TLS client on the plain port", "closing connection: TLS handshake on the plain client port (TLS clients connect to the secure client port " + f.secureAddr + ")",
			tlsClient(f.addr, f.alice)},
		{"plaintext client on the TLS port", "closing connection: not a TLS handshake on the secure client port (a plaintext client?)",
			func() error {
				_, err := client.Dial(ctx, f.secureAddr, client.Session{Timeout: 10 * time.Second})
				return err
			}},
		{"expired certificate", "closing connection: TLS client certificate has expired or is not yet valid", tlsClient(f.secureAddr, expired)},
		{"untrusted certificate", "closing connection: TLS client certificate is not signed by a CA in ssl.trustStore", tlsClient(f.secureAddr, stranger)},
		{"no certificate", "closing connection: TLS client sent no certificate (ssl.clientAuth=need)", tlsClient(f.secureAddr, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := strings.Count(f.logs.String(), tc.logLine)
			assert.Error(t, tc.connect(), "the connection is refused")
			eventually(t, "the refusal is logged", func() bool { return strings.Count(f.logs.String(), tc.logLine) == before+1 })
			stillServes(t, f.addr)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c := f.dialTLS(t, ctx, f.alice)
			_, err := c.Sync(ctx, "/")
			require.NoError(t, err, "the secure port still serves")
		})
	}
	st, ok := f.status()
	require.True(t, ok)
	lines := st.Metrics()
	assert.Equal(t, 4.0, metricNamed(lines, "unsuccessful_handshake").Value, "the four failed handshakes (a TLS client on the plain port has none)")
	assert.Equal(t, 4.0, metricNamed(lines, "auth_failed_count").Value, "ZooKeeper counts a failed handshake as a failed authentication")
	assert.Equal(t, 0.0, metricNamed(lines, "outstanding_tls_handshake").Value)
}
