package tlsconf

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"

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

// Server is the TLS configuration of the secure client port (and of a plain
// port with client.portUnification) from cfg's ssl.* keys. It reads the key
// and trust stores; every error names the key it comes from.
func Server(cfg *config.Config) (*tls.Config, error) {
	cert, err := loadKeyStore(store{cfg: cfg, prefix: "ssl.keyStore", Store: cfg.TLS.KeyStore})
	if err != nil {
		return nil, err
	}
	roots, err := loadTrustStore(store{cfg: cfg, prefix: "ssl.trustStore", Store: cfg.TLS.TrustStore})
	if err != nil {
		return nil, err
	}
	minVersion, maxVersion, err := versions(cfg)
	if err != nil {
		return nil, err
	}
	suites, err := cipherSuites(cfg)
	if err != nil {
		return nil, err
	}
	if maxVersion < tls.VersionTLS13 && len(suites) == 0 {
		return nil, cfg.ErrorAt("ssl.ciphersuites", errors.New("names no suite for TLS 1.2 or earlier, and TLS 1.3 is not enabled"))
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   clientAuth(cfg.TLS.ClientAuth),
		ClientCAs:    roots,
		MinVersion:   minVersion,
		MaxVersion:   maxVersion,
		CipherSuites: suites,
	}, nil
}

// Admin is the TLS configuration of the admin server's HTTPS
// (admin.forceHttps, admin.portUnification): the certificate of the quorum
// key store (ssl.quorum.keyStore.*), as ZooKeeper 3.8's JettyAdminServer
// takes it; no client certificate is asked for (Jetty's server default),
// and TLS 1.2 or later (what Java 17 enables). The quorum trust store,
// which ZooKeeper loads but its admin server never consults, is read so
// that a broken one fails here as it fails ZooKeeper's start.
func Admin(cfg *config.Config) (*tls.Config, error) {
	cert, err := loadKeyStore(store{cfg: cfg, prefix: "ssl.quorum.keyStore", Store: cfg.QuorumKeyStore})
	if err != nil {
		return nil, err
	}
	if _, err := loadTrustStore(store{cfg: cfg, prefix: "ssl.quorum.trustStore", Store: cfg.QuorumTrustStore}); err != nil {
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

// versions is the range of enabled protocols: ssl.enabledProtocols, else
// ssl.protocol alone (ZooKeeper enables only its SSLContext's protocol).
// Go enables a range, so the set must have no gaps.
func versions(cfg *config.Config) (uint16, uint16, error) {
	key, names := "ssl.enabledProtocols", cfg.TLS.EnabledProtocols
	if names == nil {
		key, names = "ssl.protocol", []string{cfg.TLS.Protocol}
	}
	var vs []uint16
	for _, name := range names {
		v, ok := protocolVersions[name]
		if !ok {
			return 0, 0, cfg.ErrorAt(key, fmt.Errorf("%q is not a protocol zabd serves (TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3)", name))
		}
		vs = append(vs, v)
	}
	slices.Sort(vs)
	vs = slices.Compact(vs)
	if int(vs[len(vs)-1]-vs[0]) != len(vs)-1 {
		return 0, 0, cfg.ErrorAt(key, fmt.Errorf("%s leaves a gap between protocol versions, which Go's TLS cannot enable", strings.Join(names, ",")))
	}
	return vs[0], vs[len(vs)-1], nil
}

// cipherSuites maps ssl.ciphersuites (IANA names, as Java names them) to
// Go's ids for TLS 1.2 and earlier; TLS 1.3 suites are accepted and left to
// Go, which always enables its three.
func cipherSuites(cfg *config.Config) ([]uint16, error) {
	known := map[string]*tls.CipherSuite{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		known[s.Name] = s
	}
	names, given := cfg.TLS.CipherSuites, true
	if names == nil {
		names, given = defaultCipherSuites, false
	}
	var ids []uint16
	for _, name := range names {
		s, ok := known[name]
		switch {
		case !ok && given:
			return nil, cfg.ErrorAt("ssl.ciphersuites", fmt.Errorf("%s is not a cipher suite Go's TLS implements", name))
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
