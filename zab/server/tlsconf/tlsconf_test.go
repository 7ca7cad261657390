package tlsconf

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server/config"
	"github.com/zabd/zabd/zab/server/tlsconf/tlstest"
)

// parseConfig parses a zoo.cfg for a secure port.
func parseConfig(t *testing.T, lines ...string) *config.Config {
	t.Helper()
	text := "dataDir=/d\nsecureClientPort=2281\nserverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n" +
		strings.Join(lines, "\n") + "\n"
	cfg, err := config.Parse(strings.NewReader(text), "zoo.cfg")
	require.NoError(t, err)
	return cfg
}

// handshake runs a TLS handshake between srv and a Go client offering
// clientCert (nil: none) and trusting ca; it returns the server side's
// state and the handshake's error.
func handshake(t *testing.T, srv *tls.Config, ca *tlstest.Cert, clientCert *tlstest.Cert) (tls.ConnectionState, error) {
	t.Helper()
	cc, sc := net.Pipe()
	defer cc.Close()
	defer sc.Close()
	clientCfg := &tls.Config{RootCAs: tlstest.Pool(ca), ServerName: "localhost"}
	if clientCert != nil {
		// Offered whatever CAs the server names (Go's client, like Java's,
		// would otherwise keep back a certificate the server cannot trust).
		cert := clientCert.TLS()
		clientCfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	client := tls.Client(cc, clientCfg)
	go func() {
		client.Handshake()
		client.Close()
	}()
	server := tls.Server(sc, srv)
	err := server.Handshake()
	return server.ConnectionState(), err
}

type pki struct {
	dir            string
	ca, srv, alice *tlstest.Cert
}

func newPKI(t *testing.T) *pki {
	ca := tlstest.NewCA(t, "test CA")
	return &pki{
		dir: t.TempDir(), ca: ca, srv: ca.Server(t, "zabd"),
		alice: ca.Client(t, pkix.Name{CommonName: "alice", Organization: []string{"Example"}, Country: []string{"NL"}}, tlstest.Options{}),
	}
}

func (p *pki) file(t *testing.T, name string, data []byte) string {
	return tlstest.WriteFile(t, filepath.Join(p.dir, name), data)
}

func TestPEMStores(t *testing.T) {
	p := newPKI(t)
	cfg := parseConfig(t,
		"ssl.keyStore.location="+p.file(t, "server.pem", p.srv.PEM(t)),
		"ssl.trustStore.location="+p.file(t, "ca.pem", tlstest.CertsPEM(p.ca)))
	srv, err := Server(cfg)
	require.NoError(t, err)
	assert.Equal(t, tls.RequireAndVerifyClientCert, srv.ClientAuth, "ZooKeeper's default is need")
	assert.Equal(t, uint16(tls.VersionTLS12), srv.MinVersion)
	assert.Equal(t, uint16(tls.VersionTLS12), srv.MaxVersion, "ZooKeeper enables TLSv1.2 alone by default")

	state, err := handshake(t, srv, p.ca, p.alice)
	require.NoError(t, err)
	id, ok := ClientIdentity(state)
	assert.True(t, ok)
	assert.Equal(t, "CN=alice,O=Example,C=NL", id)

	_, err = handshake(t, srv, p.ca, nil)
	assert.ErrorContains(t, err, "client didn't provide a certificate")
}

func TestPKCS12Stores(t *testing.T) {
	p := newPKI(t)
	cfg := parseConfig(t,
		"ssl.keyStore.location="+p.file(t, "server.p12", p.srv.PKCS12(t, "kpw")),
		"ssl.keyStore.password=kpw",
		"ssl.trustStore.location="+p.file(t, "trust.p12", tlstest.PKCS12TrustStore(t, "tpw", p.ca)),
		"ssl.trustStore.passwordPath="+p.file(t, "tpw", []byte("tpw\n")),
		"ssl.clientAuth=want")
	srv, err := Server(cfg)
	require.NoError(t, err)
	assert.Len(t, srv.Certificates[0].Certificate, 2, "the server presents its chain: leaf and CA")
	state, err := handshake(t, srv, p.ca, p.alice)
	require.NoError(t, err)
	id, ok := ClientIdentity(state)
	assert.True(t, ok)
	assert.Equal(t, "CN=alice,O=Example,C=NL", id)

	state, err = handshake(t, srv, p.ca, nil)
	require.NoError(t, err, "want: a client without a certificate is served")
	_, ok = ClientIdentity(state)
	assert.False(t, ok, "and has no x509 identity")
}

func TestClientAuthNoneAsksForNoCertificate(t *testing.T) {
	p := newPKI(t)
	cfg := parseConfig(t, "ssl.keyStore.location="+p.file(t, "server.pem", p.srv.PEM(t)), "ssl.clientAuth=NONE")
	srv, err := Server(cfg)
	require.NoError(t, err)
	state, err := handshake(t, srv, p.ca, p.alice)
	require.NoError(t, err)
	_, ok := ClientIdentity(state)
	assert.False(t, ok)
}

func TestUntrustedAndExpiredClientCertificates(t *testing.T) {
	p := newPKI(t)
	cfg := parseConfig(t,
		"ssl.keyStore.location="+p.file(t, "server.pem", p.srv.PEM(t)),
		"ssl.trustStore.location="+p.file(t, "ca.pem", tlstest.CertsPEM(p.ca)))
	srv, err := Server(cfg)
	require.NoError(t, err)
	stranger := tlstest.NewCA(t, "other CA").Client(t, pkix.Name{CommonName: "mallory"}, tlstest.Options{})
	_, err = handshake(t, srv, p.ca, stranger)
	assert.ErrorContains(t, err, "certificate signed by unknown authority")
	expired := p.ca.Client(t, pkix.Name{CommonName: "old"}, tlstest.Options{NotAfter: p.ca.Cert.NotBefore.Add(1)})
	_, err = handshake(t, srv, p.ca, expired)
	assert.ErrorContains(t, err, "expired")
}

func TestEncryptedPEMKeyFromOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("skipping: openssl is not installed")
	}
	p := newPKI(t)
	plain := p.file(t, "plain.pem", p.srv.PEM(t))
	for _, cipher := range []string{"aes-256-cbc", "aes-128-cbc", "des3"} {
		t.Run(cipher, func(t *testing.T) {
			enc := filepath.Join(p.dir, cipher+".key")
			out, err := exec.Command("openssl", "pkcs8", "-topk8", "-v2", cipher, "-in", plain, "-out", enc, "-passout", "pass:s3cret").CombinedOutput()
			require.NoError(t, err, "%s", out)
			key, err := os.ReadFile(enc)
			require.NoError(t, err)
			store := p.file(t, cipher+".pem", append(tlstest.CertsPEM(p.srv, p.ca), key...))

			srv, err := Server(parseConfig(t, "ssl.keyStore.location="+store, "ssl.keyStore.password=s3cret", "ssl.clientAuth=none"))
			require.NoError(t, err)
			assert.True(t, srv.Certificates[0].Leaf.Equal(p.srv.Cert))

			_, err = Server(parseConfig(t, "ssl.keyStore.location="+store, "ssl.keyStore.password=wrong", "ssl.clientAuth=none"))
			assert.ErrorContains(t, err, "zoo.cfg:4: ssl.keyStore.location: "+store+": wrong password")
			_, err = Server(parseConfig(t, "ssl.keyStore.location="+store, "ssl.clientAuth=none"))
			assert.ErrorContains(t, err, "encrypted but no password is set")
		})
	}
}

func TestJavaKeyStoresAreRefused(t *testing.T) {
	p := newPKI(t)
	jks := p.file(t, "server.jks", []byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2})
	_, err := Server(parseConfig(t, "ssl.keyStore.location="+jks))
	assert.ErrorContains(t, err, "zoo.cfg:4: ssl.keyStore.location: "+jks+" is a JKS key store, which is Java-only: not supported, convert to PKCS12")
	_, err = Server(parseConfig(t, "ssl.keyStore.location="+p.file(t, "s.pem", p.srv.PEM(t)), "ssl.trustStore.location="+jks, "ssl.trustStore.type=jks"))
	assert.ErrorContains(t, err, "zoo.cfg:6: ssl.trustStore.type: "+jks+" is a JKS key store")
	_, err = Server(parseConfig(t, "ssl.keyStore.location=/x/server.bcfks"))
	assert.ErrorContains(t, err, "zoo.cfg:4: ssl.keyStore.location: BCFKS key stores (Bouncy Castle FIPS) are Java-only: not supported, convert to PKCS12 or PEM")

	// Java reads a PKCS12 file through the JKS type; so does zabd.
	p12 := p.file(t, "really-pkcs12.jks", p.srv.PKCS12(t, "pw"))
	_, err = Server(parseConfig(t, "ssl.keyStore.location="+p12, "ssl.keyStore.password=pw", "ssl.clientAuth=none"))
	assert.NoError(t, err)
}

func TestRealJKSFromKeytool(t *testing.T) {
	if _, err := exec.LookPath("keytool"); err != nil {
		t.Skip("skipping: keytool (a JDK) is not installed")
	}
	dir := t.TempDir()
	jks := filepath.Join(dir, "server.keystore")
	out, err := exec.Command("keytool", "-genkeypair", "-alias", "zk", "-keyalg", "EC", "-dname", "CN=zk", "-storetype", "JKS",
		"-keystore", jks, "-storepass", "changeit", "-keypass", "changeit").CombinedOutput()
	require.NoError(t, err, "%s", out)
	_, err = Server(parseConfig(t, "ssl.keyStore.location="+jks, "ssl.keyStore.type=JKS", "ssl.keyStore.password=changeit"))
	assert.ErrorContains(t, err, "zoo.cfg:5: ssl.keyStore.type: "+jks+" is a JKS key store, which is Java-only: not supported, "+
		"convert to PKCS12 (keytool -importkeystore -srckeystore "+jks)
}

func TestStoreErrorsNameTheKey(t *testing.T) {
	p := newPKI(t)
	srvPEM := "ssl.keyStore.location=" + p.file(t, "s.pem", p.srv.PEM(t))
	p12 := p.file(t, "s.p12", p.srv.PKCS12(t, "right"))
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"missing file", []string{"ssl.keyStore.location=" + filepath.Join(p.dir, "nope.pem")}, "zoo.cfg:4: ssl.keyStore.location: open "},
		{"no extension", []string{"ssl.keyStore.location=/etc/zk/server.key"}, "zoo.cfg:4: ssl.keyStore.location: cannot tell the store type from the file name /etc/zk/server.key"},
		{"bad type", []string{srvPEM, "ssl.keyStore.type=DER"}, `zoo.cfg:5: ssl.keyStore.type: "DER" is not a store type`},
		{"wrong PKCS12 password", []string{"ssl.keyStore.location=" + p12, "ssl.keyStore.password=wrong"}, "zoo.cfg:4: ssl.keyStore.location: " + p12 + ": pkcs12: decryption password incorrect"},
		{"password file missing", []string{srvPEM, "ssl.keyStore.passwordPath=/nonexistent/pw"}, "zoo.cfg:5: ssl.keyStore.passwordPath: open /nonexistent/pw"},
		{"password for a plain key", []string{srvPEM, "ssl.keyStore.password=x"}, "a password is set but its private key (PRIVATE KEY) is not encrypted"},
		{"certificates only", []string{"ssl.keyStore.location=" + p.file(t, "certs.pem", tlstest.CertsPEM(p.srv))}, "holds no PRIVATE KEY block"},
		{"key of another certificate", []string{"ssl.keyStore.location=" + p.file(t, "mixed.pem",
			append(tlstest.CertsPEM(p.alice), p.srv.PEM(t)[len(tlstest.CertsPEM(p.srv, p.ca)):]...))}, "none of its 1 certificates belongs to its private key"},
		{"empty trust store", []string{srvPEM, "ssl.trustStore.location=" + p.file(t, "empty.pem", nil)}, "zoo.cfg:5: ssl.trustStore.location: " + filepath.Join(p.dir, "empty.pem") + ": holds no certificate"},
		{"key store as trust store", []string{srvPEM, "ssl.trustStore.location=" + p12, "ssl.trustStore.password=right"}, "a PKCS12 trust store must hold only trusted certificate entries"},
		{"protocol", []string{srvPEM, "ssl.protocol=TLS"}, `zoo.cfg:5: ssl.protocol: "TLS" is not a protocol zabd serves`},
		{"protocol gap", []string{srvPEM, "ssl.enabledProtocols=TLSv1.1,TLSv1.3"}, "zoo.cfg:5: ssl.enabledProtocols: TLSv1.1,TLSv1.3 leaves a gap"},
		{"unknown suite", []string{srvPEM, "ssl.ciphersuites=TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"}, "zoo.cfg:5: ssl.ciphersuites: TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384 is not a cipher suite Go's TLS implements"},
		{"only TLS 1.3 suites", []string{srvPEM, "ssl.ciphersuites=TLS_AES_128_GCM_SHA256"}, "zoo.cfg:5: ssl.ciphersuites: names no suite for TLS 1.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Server(parseConfig(t, tc.lines...))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var cfgErr *config.Error
			assert.ErrorAs(t, err, &cfgErr)
		})
	}
}

func TestProtocolsAndSuites(t *testing.T) {
	p := newPKI(t)
	srvPEM := "ssl.keyStore.location=" + p.file(t, "s.pem", p.srv.PEM(t))
	srv, err := Server(parseConfig(t, srvPEM, "ssl.enabledProtocols=TLSv1.3,TLSv1.2",
		"ssl.ciphersuites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_AES_256_GCM_SHA384"))
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS12), srv.MinVersion)
	assert.Equal(t, uint16(tls.VersionTLS13), srv.MaxVersion)
	assert.Equal(t, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}, srv.CipherSuites)

	srv, err = Server(parseConfig(t, srvPEM, "ssl.protocol=TLSv1.3", "ssl.clientAuth=none"))
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS13), srv.MinVersion)
	c, s := net.Pipe()
	defer c.Close()
	go func() {
		cl := tls.Client(c, &tls.Config{RootCAs: tlstest.Pool(p.ca), ServerName: "localhost", MaxVersion: tls.VersionTLS12})
		cl.Handshake()
		cl.Close()
	}()
	assert.ErrorContains(t, tls.Server(s, srv).Handshake(), "unsupported versions", "a TLS 1.2 client is refused when only TLSv1.3 is enabled")
}
