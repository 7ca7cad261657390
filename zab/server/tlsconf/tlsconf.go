package tlsconf

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zabd/zabd/zab/server/config"
)

// protocolVersions maps Java's protocol names to Go's versions.
var protocolVersions = map[string]uint16{
	"TLSv1":   tls.VersionTLS10,
	"TLSv1.1": tls.VersionTLS11,
	"TLSv1.2": tls.VersionTLS12,
	"TLSv1.3": tls.VersionTLS13,
}

// defaultCipherSuites is ZooKeeper 3.8's list on Java 9 and later
// (X509Util: the GCM suites, then the CBC ones); the two CBC-SHA384 suites
// Go does not implement are left out.
var defaultCipherSuites = []string{
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
}

// settings are one TLS configuration's zoo.cfg keys: the client port's
// (ssl.*, ClientX509Util) or the quorum's (ssl.quorum.*, QuorumX509Util).
type settings struct {
	cfg    *config.Config
	t      *config.TLS
	prefix string // "ssl." or "ssl.quorum."
}

func (st settings) fail(key string, err error) error { return st.cfg.ErrorAt(st.prefix+key, err) }

// serverConfig builds a server side from st: its stores, protocols and
// cipher suites; every error names the key it comes from.
func (st settings) serverConfig() (*tls.Config, error) {
	cert, err := loadKeyStore(store{cfg: st.cfg, prefix: st.prefix + "keyStore", Store: st.t.KeyStore})
	if err != nil {
		return nil, err
	}
	roots, err := loadTrustStore(store{cfg: st.cfg, prefix: st.prefix + "trustStore", Store: st.t.TrustStore})
	if err != nil {
		return nil, err
	}
	minVersion, maxVersion, err := st.versions()
	if err != nil {
		return nil, err
	}
	suites, err := st.cipherSuites()
	if err != nil {
		return nil, err
	}
	if maxVersion < tls.VersionTLS13 && len(suites) == 0 {
		return nil, st.fail("ciphersuites", errors.New("names no suite for TLS 1.2 or earlier, and TLS 1.3 is not enabled"))
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   clientAuth(st.t.ClientAuth),
		ClientCAs:    roots,
		MinVersion:   minVersion,
		MaxVersion:   maxVersion,
		CipherSuites: suites,
	}, nil
}

// Server is the TLS configuration of the secure client port (and of a plain
// port with client.portUnification) from cfg's ssl.* keys. It reads the key
// and trust stores; every error names the key it comes from.
func Server(cfg *config.Config) (*tls.Config, error) {
	return settings{cfg: cfg, t: &cfg.TLS, prefix: "ssl."}.serverConfig()
}

// Quorum is the TLS between ensemble members (sslQuorum, portUnification)
// from cfg's ssl.quorum.* keys, as ZooKeeper 3.8's QuorumX509Util reads
// them: each member presents the quorum key store's certificate whether it
// dials or is dialled, and checks the other's against the quorum trust
// store. The server side asks for a certificate as ssl.quorum.clientAuth
// says (need by default); the dialling side always presents one and checks
// the dialled member's. With ssl.quorum.hostnameVerification (the default),
// a certificate must name the host dialled, or the address a connection
// came from (VerifyPeer).
func Quorum(cfg *config.Config) (server, client *tls.Config, err error) {
	server, err = settings{cfg: cfg, t: &cfg.QuorumTLS, prefix: "ssl.quorum."}.serverConfig()
	if err != nil {
		return nil, nil, err
	}
	client = server.Clone()
	client.ClientAuth, client.ClientCAs, client.RootCAs = tls.NoClientCert, nil, server.ClientCAs
	// Present the certificate whatever CAs the dialled member names, as
	// Java does: Go would send none when its issuer is not among them, and
	// the refusal would say "no certificate" where "not signed by a CA in
	// the trust store" is the truth.
	cert := server.Certificates[0]
	client.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	return server, client, nil
}

// Admin is the TLS configuration of the admin server's HTTPS
// (admin.forceHttps, admin.portUnification): the certificate of the quorum
// key store (ssl.quorum.keyStore.*), as ZooKeeper 3.8's JettyAdminServer
// takes it; no client certificate is asked for (Jetty's server default),
// and TLS 1.2 or later (what Java 17 enables). The quorum trust store,
// which ZooKeeper loads but its admin server never consults, is read so
// that a broken one fails here as it fails ZooKeeper's start.
func Admin(cfg *config.Config) (*tls.Config, error) {
	cert, err := loadKeyStore(store{cfg: cfg, prefix: "ssl.quorum.keyStore", Store: cfg.QuorumTLS.KeyStore})
	if err != nil {
		return nil, err
	}
	if _, err := loadTrustStore(store{cfg: cfg, prefix: "ssl.quorum.trustStore", Store: cfg.QuorumTLS.TrustStore}); err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// clientAuth maps ssl.clientAuth to Go's policy: a certificate a client
// offers is always verified, as Java's trust manager does.
func clientAuth(a config.ClientAuth) tls.ClientAuthType {
	switch a {
	case config.ClientAuthNone:
		return tls.NoClientCert
	case config.ClientAuthWant:
		return tls.VerifyClientCertIfGiven
	}
	return tls.RequireAndVerifyClientCert
}

// versions is the range of enabled protocols: enabledProtocols, else
// protocol alone (ZooKeeper enables only its SSLContext's protocol). Go
// enables a range, so the set must have no gaps.
func (st settings) versions() (uint16, uint16, error) {
	key, names := "enabledProtocols", st.t.EnabledProtocols
	if names == nil {
		key, names = "protocol", []string{st.t.Protocol}
	}
	var vs []uint16
	for _, name := range names {
		v, ok := protocolVersions[name]
		if !ok {
			return 0, 0, st.fail(key, fmt.Errorf("%q is not a protocol zabd serves (TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3)", name))
		}
		vs = append(vs, v)
	}
	slices.Sort(vs)
	vs = slices.Compact(vs)
	if int(vs[len(vs)-1]-vs[0]) != len(vs)-1 {
		return 0, 0, st.fail(key, fmt.Errorf("%s leaves a gap between protocol versions, which Go's TLS cannot enable", strings.Join(names, ",")))
	}
	return vs[0], vs[len(vs)-1], nil
}

// cipherSuites maps ciphersuites (IANA names, as Java names them) to Go's
// ids for TLS 1.2 and earlier; TLS 1.3 suites are accepted and left to Go,
// which always enables its three.
func (st settings) cipherSuites() ([]uint16, error) {
	known := map[string]*tls.CipherSuite{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		known[s.Name] = s
	}
	names, given := st.t.CipherSuites, true
	if names == nil {
		names, given = defaultCipherSuites, false
	}
	var ids []uint16
	for _, name := range names {
		s, ok := known[name]
		switch {
		case !ok && given:
			return nil, st.fail("ciphersuites", fmt.Errorf("%s is not a cipher suite Go's TLS implements", name))
		case !ok:
		case slices.Equal(s.SupportedVersions, []uint16{tls.VersionTLS13}):
		default:
			ids = append(ids, s.ID)
		}
	}
	return ids, nil
}

// ClientIdentity is the x509 id of a TLS connection: the subject of the
// client certificate the handshake verified, as SubjectDN prints it (which
// may be empty); false when the client sent none (ssl.clientAuth none or
// want).
func ClientIdentity(state tls.ConnectionState) (string, bool) {
	if len(state.VerifiedChains) == 0 || len(state.PeerCertificates) == 0 {
		return "", false
	}
	dn, err := SubjectDN(state.PeerCertificates[0].RawSubject)
	return dn, err == nil // crypto/x509 has parsed this subject already
}

// QuorumConfigs holds the quorum's TLS (Quorum) for the peer transport and,
// with sslQuorumReloadCertFiles, loads it again when a key or trust store
// file has changed since: looked at, at most once a second, when a
// connection needs a configuration, so that new connections take new
// certificates and open ones keep theirs, as ZooKeeper's X509Util resets
// its SSL context on a file watcher's event. A store that no longer loads
// keeps the configuration in use, and Current reports the error once per
// change of the files.
type QuorumConfigs struct {
	cfg    *config.Config
	reload bool
	now    func() time.Time // the clock of the once-a-second look

	mu          sync.Mutex
	serve, dial *tls.Config
	stamps      []fileStamp
	checked     time.Time
}

// fileStamp is what tells a store file changed: its size and modification
// time (zero when it cannot be read).
type fileStamp struct {
	size  int64
	mtime time.Time
}

// NewQuorumConfigs loads the quorum's TLS from cfg; every error names the
// key it comes from.
func NewQuorumConfigs(cfg *config.Config) (*QuorumConfigs, error) {
	serve, dial, err := Quorum(cfg)
	if err != nil {
		return nil, err
	}
	q := &QuorumConfigs{cfg: cfg, reload: cfg.QuorumTLS.ReloadCertFiles, now: time.Now, serve: serve, dial: dial}
	q.checked = q.now()
	q.stamps = q.stampFiles()
	return q, nil
}

// Current returns the configurations to use for a new connection, and the
// error of a reload that failed since the last call (nil otherwise).
func (q *QuorumConfigs) Current() (serve, dial *tls.Config, reloadErr error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if now := q.now(); q.reload && now.Sub(q.checked) >= time.Second {
		q.checked = now
		if stamps := q.stampFiles(); !slices.Equal(stamps, q.stamps) {
			q.stamps = stamps
			serve, dial, err := Quorum(q.cfg)
			if err != nil {
				return q.serve, q.dial, fmt.Errorf("reloading the quorum's certificates: %w (the ones loaded before stay in use)", err)
			}
			q.serve, q.dial = serve, dial
		}
	}
	return q.serve, q.dial, nil
}

func (q *QuorumConfigs) stampFiles() []fileStamp {
	var out []fileStamp
	for _, path := range []string{q.cfg.QuorumTLS.KeyStore.Location, q.cfg.QuorumTLS.TrustStore.Location,
		q.cfg.QuorumTLS.KeyStore.PasswordPath, q.cfg.QuorumTLS.TrustStore.PasswordPath} {
		var st fileStamp
		if path != "" {
			if fi, err := os.Stat(path); err == nil {
				st = fileStamp{size: fi.Size(), mtime: fi.ModTime()}
			}
		}
		out = append(out, st)
	}
	return out
}
