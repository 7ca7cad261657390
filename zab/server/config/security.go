package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// ClientAuth is ssl.clientAuth: whether the secure client port asks a TLS
// client for a certificate.
type ClientAuth string

// ZooKeeper's three settings (X509Util.ClientAuth); an absent key means need.
const (
	ClientAuthNone ClientAuth = "none"
	ClientAuthWant ClientAuth = "want"
	ClientAuthNeed ClientAuth = "need"
)

// DefaultTLSProtocol is ssl.protocol's default, ZooKeeper's
// X509Util.DEFAULT_PROTOCOL. Without ssl.enabledProtocols it is the only
// protocol the secure port speaks.
const DefaultTLSProtocol = "TLSv1.2"

// The authentication provider classes ZooKeeper ships that zabd implements:
// naming them in authProvider.<n> asks for nothing zabd lacks.
const (
	x509ProviderClass   = "org.apache.zookeeper.server.auth.X509AuthenticationProvider"
	digestProviderClass = "org.apache.zookeeper.server.auth.DigestAuthenticationProvider"
	ipProviderClass     = "org.apache.zookeeper.server.auth.IPAuthenticationProvider"
	nettyFactoryClass   = "org.apache.zookeeper.server.NettyServerCnxnFactory"
	nioFactoryClass     = "org.apache.zookeeper.server.NIOServerCnxnFactory"
)

// Store is a key store or trust store as the ssl.keyStore.* or
// ssl.trustStore.* keys give it. Type is as written ("" means: from the
// file name's extension, as ZooKeeper's KeyStoreFileType does).
type Store struct {
	Location     string
	Password     string
	PasswordPath string // ssl.*.passwordPath: a file holding the password, which wins over Password
	Type         string
}

// TLS is the secure client port's TLS, from ZooKeeper's ssl.* keys (the
// client side of ClientX509Util).
type TLS struct {
	KeyStore   Store
	TrustStore Store // Location "": the system's CA roots, as Java's default trust store
	ClientAuth ClientAuth
	// Protocol is ssl.protocol; EnabledProtocols is ssl.enabledProtocols
	// (nil: Protocol alone, as ZooKeeper enables only the SSLContext's).
	Protocol         string
	EnabledProtocols []string
	// CipherSuites is ssl.ciphersuites as written; nil means ZooKeeper's
	// default list.
	CipherSuites []string
	// PortUnification is client.portUnification: the plain client port also
	// accepts TLS, told apart by the first byte. For the quorum's TLS it is
	// portUnification: the quorum and election ports accept plaintext
	// members too, for a rolling switch to TLS.
	PortUnification bool
	// HostnameVerification is ssl.quorum.hostnameVerification (default
	// true): a member checks that the certificate of the member it dials
	// names the host it dialled, and that the certificate of a member that
	// dials it names the address it came from (ZooKeeper's ZKTrustManager).
	// The client port's ssl.hostnameVerification has no effect on a server.
	HostnameVerification bool
	// HandshakeDetectTimeout is ssl.quorum.handshakeDetectionTimeoutMillis
	// (default 5 s): with portUnification, how long a member waits for a
	// connection's first bytes to tell TLS from plaintext.
	HandshakeDetectTimeout time.Duration
	// ReloadCertFiles is sslQuorumReloadCertFiles: the quorum's key and
	// trust stores are loaded again when their files change, for the
	// connections opened after.
	ReloadCertFiles bool
}

// securityKeys are the security keys zabd implements, beyond the ones
// QuorumPeerConfig parses (secureClientPort, secureClientPortAddress).
var securityKeys = map[string]func(c *Config, v string) error{
	"ssl.keyStore.location":       func(c *Config, v string) error { return setPath(&c.TLS.KeyStore.Location, v) },
	"ssl.keyStore.password":       func(c *Config, v string) error { c.TLS.KeyStore.Password = v; return nil },
	"ssl.keyStore.passwordPath":   func(c *Config, v string) error { return setPath(&c.TLS.KeyStore.PasswordPath, v) },
	"ssl.keyStore.type":           func(c *Config, v string) error { c.TLS.KeyStore.Type = v; return nil },
	"ssl.trustStore.location":     func(c *Config, v string) error { return setPath(&c.TLS.TrustStore.Location, v) },
	"ssl.trustStore.password":     func(c *Config, v string) error { c.TLS.TrustStore.Password = v; return nil },
	"ssl.trustStore.passwordPath": func(c *Config, v string) error { return setPath(&c.TLS.TrustStore.PasswordPath, v) },
	"ssl.trustStore.type":         func(c *Config, v string) error { c.TLS.TrustStore.Type = v; return nil },
	"ssl.clientAuth":              func(c *Config, v string) error { return setClientAuth(&c.TLS.ClientAuth, v) },
	"ssl.protocol":                func(c *Config, v string) error { return setProtocol(&c.TLS.Protocol, v) },
	"ssl.enabledProtocols":        func(c *Config, v string) error { return setList(&c.TLS.EnabledProtocols, v) },
	"ssl.ciphersuites":            func(c *Config, v string) error { return setList(&c.TLS.CipherSuites, v) },
	"ssl.authProvider": func(c *Config, v string) error {
		c.sslAuthScheme = v
		return nil
	},
	"client.portUnification":             func(c *Config, v string) error { return setBool(&c.TLS.PortUnification, v) },
	"ssl.quorum.keyStore.location":       func(c *Config, v string) error { return setPath(&c.QuorumTLS.KeyStore.Location, v) },
	"ssl.quorum.keyStore.password":       func(c *Config, v string) error { c.QuorumTLS.KeyStore.Password = v; return nil },
	"ssl.quorum.keyStore.passwordPath":   func(c *Config, v string) error { return setPath(&c.QuorumTLS.KeyStore.PasswordPath, v) },
	"ssl.quorum.keyStore.type":           func(c *Config, v string) error { c.QuorumTLS.KeyStore.Type = v; return nil },
	"ssl.quorum.trustStore.location":     func(c *Config, v string) error { return setPath(&c.QuorumTLS.TrustStore.Location, v) },
	"ssl.quorum.trustStore.password":     func(c *Config, v string) error { c.QuorumTLS.TrustStore.Password = v; return nil },
	"ssl.quorum.trustStore.passwordPath": func(c *Config, v string) error { return setPath(&c.QuorumTLS.TrustStore.PasswordPath, v) },
	"ssl.quorum.trustStore.type":         func(c *Config, v string) error { c.QuorumTLS.TrustStore.Type = v; return nil },
	"ssl.quorum.clientAuth":              func(c *Config, v string) error { return setClientAuth(&c.QuorumTLS.ClientAuth, v) },
	"ssl.quorum.protocol":                func(c *Config, v string) error { return setProtocol(&c.QuorumTLS.Protocol, v) },
	"ssl.quorum.enabledProtocols":        func(c *Config, v string) error { return setList(&c.QuorumTLS.EnabledProtocols, v) },
	"ssl.quorum.ciphersuites":            func(c *Config, v string) error { return setList(&c.QuorumTLS.CipherSuites, v) },
	"ssl.quorum.hostnameVerification":    func(c *Config, v string) error { return setBool(&c.QuorumTLS.HostnameVerification, v) },
	"portUnification":                    func(c *Config, v string) error { return setBool(&c.QuorumTLS.PortUnification, v) },
	"sslQuorum":                          func(c *Config, v string) error { return setBool(&c.SSLQuorum, v) },
	"enforce.auth.enabled":               func(c *Config, v string) error { return setBool(&c.enforceAuth, v) },
	"enforce.auth.schemes":               func(c *Config, v string) error { return setList(&c.enforceAuthSchemes, v) },
	"sslQuorumReloadCertFiles":           func(c *Config, v string) error { return setBool(&c.QuorumTLS.ReloadCertFiles, v) },
	"ssl.quorum.handshakeDetectionTimeoutMillis": func(c *Config, v string) error {
		return setMillis(&c.QuorumTLS.HandshakeDetectTimeout, v, 1)
	},
	"admin.forceHttps":      func(c *Config, v string) error { return setBool(&c.AdminForceHTTPS, v) },
	"admin.portUnification": func(c *Config, v string) error { return setBool(&c.AdminPortUnification, v) },
	"X509AuthenticationProvider.superUser": func(c *Config, v string) error {
		c.X509SuperUser = v
		return nil
	},
	// Switches whose value zabd honours when it asks for what zabd does
	// (off); on, they ask for something zabd lacks.
	"ssl.crl":                        offOnly("certificate revocation lists are not checked"),
	"ssl.ocsp":                       offOnly("OCSP is not checked"),
	"quorum.auth.enableSasl":         offOnly("zabd has no SASL authentication"),
	"quorum.auth.serverRequireSasl":  offOnly("zabd has no SASL authentication"),
	"quorum.auth.learnerRequireSasl": offOnly("zabd has no SASL authentication"),
	"sessionRequireClientSASLAuth":   offOnly("zabd has no SASL authentication"),
	"skipACL": func(c *Config, v string) error {
		// ZooKeeper skips ACL checks only for "yes".
		if v == "yes" {
			return errors.New("not supported: zabd always checks ACLs")
		}
		return nil
	},
	"DigestAuthenticationProvider.enabled": func(c *Config, v string) error {
		if strings.EqualFold(v, "false") {
			return errors.New("not supported: zabd always has the digest scheme")
		}
		return nil
	},
	"DigestAuthenticationProvider.digestAlg": func(c *Config, v string) error {
		if !strings.EqualFold(v, "SHA1") && !strings.EqualFold(v, "SHA-1") {
			return fmt.Errorf("not supported: zabd's digest scheme uses SHA1 only, not %q", v)
		}
		return nil
	},
	"serverCnxnFactory": func(c *Config, v string) error {
		switch v {
		case nettyFactoryClass, nioFactoryClass:
			c.serverCnxnFactory = v
			return nil
		}
		return fmt.Errorf("not supported: %q is neither of ZooKeeper's connection factories (zabd has its own network layer)", v)
	},
}

// securityNotes are security keys zabd accepts that have no effect on its
// client port; they draw a warning saying why.
var securityNotes = map[string]string{
	"ssl.hostnameVerification": "accepted; a server does not verify its clients' host names (ZooKeeper's ClientX509Util does not either)",
	"ssl.handshakeDetectionTimeoutMillis": "accepted; ZooKeeper uses it on quorum sockets only (as ssl.quorum.handshakeDetectionTimeoutMillis); " +
		"zabd bounds a client's TLS handshake by its connection handshake deadline",
	"client.secure": "accepted; a client-side setting (zkCli's -Dzookeeper.client.secure=true), no effect on the server",
	"netty.server.outstandingHandshake.limit": "accepted; zabd does not throttle TLS handshakes",
}

// setClientAuth reads ssl.clientAuth or ssl.quorum.clientAuth as ZooKeeper
// does (ClientAuth.valueOf of the upper-cased value; empty means need).
func setClientAuth(dst *ClientAuth, v string) error {
	switch a := ClientAuth(strings.ToLower(v)); a {
	case "":
		*dst = ClientAuthNeed
	case ClientAuthNone, ClientAuthWant, ClientAuthNeed:
		*dst = a
	default:
		return fmt.Errorf("%q is not none, want or need", v)
	}
	return nil
}

func setProtocol(dst *string, v string) error {
	if v == "" {
		return errors.New("empty protocol")
	}
	*dst = v
	return nil
}

// offOnly accepts a boolean that is false (or absent, which is false) and
// refuses true: turning it on asks for a feature zabd does not have.
func offOnly(why string) func(c *Config, v string) error {
	return func(c *Config, v string) error {
		if strings.EqualFold(strings.TrimSpace(v), "true") {
			return errors.New("not supported: " + why)
		}
		return nil
	}
}

// unsupportedSecurity says why a security key zabd does not implement stops
// start-up; "" when key is not such a key. It is asked about keys that no
// table above knows.
func unsupportedSecurity(key string) string {
	lower := strings.ToLower(key)
	switch {
	case strings.Contains(lower, "sasl"), strings.HasPrefix(lower, "kerberos."),
		strings.HasPrefix(lower, "quorum.auth."), key == "superUser", key == "server.principal",
		key == "server.realm", key == "ensembleAuthName", key == "jaasLoginRenew":
		return "zabd has no SASL or Kerberos authentication"
	case strings.HasPrefix(key, "ssl.quorum."):
		return "zabd does not implement this quorum TLS setting"
	case strings.HasPrefix(key, "ssl."), strings.HasPrefix(key, "javax.net.ssl."):
		return "zabd does not implement this TLS setting"
	case strings.HasPrefix(key, "enforce.auth."):
		return "zabd does not enforce authentication schemes"
	case strings.HasPrefix(key, "X509AuthenticationProvider."), strings.HasPrefix(key, "DigestAuthenticationProvider."):
		return "zabd does not implement this authentication provider setting"
	case strings.HasPrefix(key, "admin.") && (strings.Contains(lower, "ssl") || strings.Contains(lower, "https") ||
		strings.Contains(lower, "keystore") || strings.Contains(lower, "truststore") || strings.Contains(lower, "auth")):
		return "zabd's admin server has no TLS or authentication"
	}
	return ""
}

// setAuthProvider handles authProvider.<name>=<class>: ZooKeeper loads the
// class as an authentication provider for the scheme it names. The built-in
// providers zabd implements are accepted; any other class (SASL's, a custom
// one) stops start-up.
func (c *Config) setAuthProvider(p property) error {
	switch p.Value {
	case x509ProviderClass:
		c.x509Provider = true
		return nil
	case digestProviderClass, ipProviderClass:
		return nil
	}
	return fmt.Errorf("not supported: zabd implements the digest, ip and x509 schemes only, not the provider %s", p.Value)
}

// finishEnforceAuth checks enforce.auth.*, as ZooKeeper's
// AuthenticationHelper does at start: the schemes must be given, and each
// must be one the server authenticates with.
func (c *Config) finishEnforceAuth() error {
	if !c.enforceAuth {
		if _, set := c.Lines["enforce.auth.schemes"]; set {
			c.warnAt("enforce.auth.schemes", "has no effect: enforce.auth.enabled is not true")
		}
		return nil
	}
	if len(c.enforceAuthSchemes) == 0 {
		return c.ErrorAt("enforce.auth.enabled", errors.New("is true, so enforce.auth.schemes must be set"))
	}
	for _, scheme := range c.enforceAuthSchemes {
		switch {
		case scheme == "digest", scheme == "ip", scheme == "x509" && c.X509AuthEnabled:
		case scheme == "sasl":
			return c.ErrorAt("enforce.auth.schemes", errors.New("not supported: zabd has no SASL authentication"))
		case scheme == "x509":
			return c.ErrorAt("enforce.auth.schemes", errors.New("authentication scheme x509 is not available: "+
				"it needs secureClientPort or authProvider.x509="+x509ProviderClass))
		default:
			return c.ErrorAt("enforce.auth.schemes", fmt.Errorf("authentication scheme %s is not available (zabd has digest, ip and x509)", scheme))
		}
	}
	c.EnforceAuthSchemes = c.enforceAuthSchemes
	return nil
}

// finishQuorumTLS checks the quorum's TLS and the admin server's HTTPS,
// which share the quorum key store (ZooKeeper 3.8's QuorumX509Util; its
// admin server then fails to start: "Failed to load authentication
// certificates for admin server").
func (c *Config) finishQuorumTLS() error {
	q := &c.QuorumTLS
	https := c.AdminEnabled && (c.AdminForceHTTPS || c.AdminPortUnification)
	quorum := c.Distributed() && (c.SSLQuorum || q.PortUnification)
	if (https || quorum) && q.KeyStore.Location == "" {
		key, what := "admin.forceHttps", "HTTPS on the admin server"
		switch {
		case quorum && c.SSLQuorum:
			key, what = "sslQuorum", "TLS between the members"
		case quorum:
			key, what = "portUnification", "TLS between the members"
		case !c.AdminForceHTTPS:
			key = "admin.portUnification"
		}
		return c.ErrorAt(key, fmt.Errorf("%s needs a key and certificate: ssl.quorum.keyStore.location is not set", what))
	}
	if quorum && q.TrustStore.Location == "" {
		c.warnAt("sslQuorum", "ssl.quorum.trustStore.location is not set: the members' certificates are checked against the system's CA roots "+
			"(ZooKeeper uses Java's default trust store)")
	}
	if !c.Distributed() && c.SSLQuorum {
		c.warnAt("sslQuorum", "has no effect on a standalone server")
	}
	if !c.Distributed() && q.PortUnification {
		c.warnAt("portUnification", "has no effect on a standalone server")
	}
	if !https && !quorum {
		for _, key := range quorumTLSKeys {
			if _, set := c.Lines[key]; set {
				c.warnAt(key, "has no effect: neither sslQuorum, portUnification (in an ensemble) nor HTTPS on the admin server (admin.forceHttps, admin.portUnification) is on")
			}
		}
	}
	return nil
}

// quorumTLSKeys are the keys that matter only with TLS between the
// members or on the admin server, in a fixed order for the warnings.
var quorumTLSKeys = []string{
	"ssl.quorum.keyStore.location", "ssl.quorum.keyStore.password", "ssl.quorum.keyStore.passwordPath", "ssl.quorum.keyStore.type",
	"ssl.quorum.trustStore.location", "ssl.quorum.trustStore.password", "ssl.quorum.trustStore.passwordPath", "ssl.quorum.trustStore.type",
	"ssl.quorum.clientAuth", "ssl.quorum.protocol", "ssl.quorum.enabledProtocols", "ssl.quorum.ciphersuites", "ssl.quorum.hostnameVerification",
	"ssl.quorum.handshakeDetectionTimeoutMillis", "sslQuorumReloadCertFiles",
}

// finishSecurity checks what spans the security keys, as ZooKeeper's
// QuorumPeerConfig.configureSSLAuth and its TLS set-up would, but before
// anything is bound.
func (c *Config) finishSecurity() error {
	if err := c.finishQuorumTLS(); err != nil {
		return err
	}
	if c.SecureClientPort == 0 && c.SecureClientPortAddress != "" {
		return c.ErrorAt("secureClientPortAddress", errors.New("is set but secureClientPort is not"))
	}
	if c.TLS.Protocol == "" {
		c.TLS.Protocol = DefaultTLSProtocol
	}
	if c.TLS.ClientAuth == "" {
		c.TLS.ClientAuth = ClientAuthNeed
	}
	serving := c.SecureClientPort != 0 || c.TLS.PortUnification
	// ZooKeeper registers the x509 provider itself once a secure port is
	// configured (configureSSLAuth); ssl.authProvider names the scheme the
	// handshake authenticates with, whose provider must then be configured.
	if c.sslAuthScheme != "" && c.sslAuthScheme != "x509" {
		return c.ErrorAt("ssl.authProvider", fmt.Errorf("not supported: scheme %q: zabd authenticates TLS clients with the x509 scheme only", c.sslAuthScheme))
	}
	if c.SecureClientPort != 0 {
		c.x509Provider = true
	}
	c.X509AuthEnabled = c.x509Provider
	if err := c.finishEnforceAuth(); err != nil {
		return err
	}
	if c.TLS.PortUnification && !c.X509AuthEnabled && c.TLS.ClientAuth != ClientAuthNone {
		return c.ErrorAt("client.portUnification", errors.New("with ssl.clientAuth want or need, TLS clients that present a "+
			"certificate need the x509 provider, which ZooKeeper registers only with secureClientPort or "+
			"authProvider.x509="+x509ProviderClass+" (it closes their connections otherwise)"))
	}
	if serving && c.TLS.KeyStore.Location == "" {
		key := "secureClientPort"
		if c.SecureClientPort == 0 {
			key = "client.portUnification"
		}
		return c.ErrorAt(key, errors.New("TLS on the client port needs a key and certificate: ssl.keyStore.location is not set"))
	}
	if !serving {
		for _, key := range tlsOnlyKeys {
			if _, set := c.Lines[key]; set {
				c.warnAt(key, "has no effect: no secureClientPort (or client.portUnification=true) serves TLS")
			}
		}
		return nil
	}
	if c.serverCnxnFactory != nettyFactoryClass {
		c.warnAt("secureClientPort", "ZooKeeper serves TLS only with serverCnxnFactory="+nettyFactoryClass+
			" (it refuses to start without it); zabd serves TLS regardless")
	}
	if c.TLS.TrustStore.Location == "" && c.TLS.ClientAuth != ClientAuthNone {
		c.warnAt("ssl.trustStore.location", "not set: client certificates are checked against the system's CA roots "+
			"(ZooKeeper uses Java's default trust store)")
	}
	return nil
}

// tlsOnlyKeys are the keys that matter only when the client port serves
// TLS.
var tlsOnlyKeys = []string{
	"ssl.keyStore.location", "ssl.keyStore.password", "ssl.keyStore.passwordPath", "ssl.keyStore.type",
	"ssl.trustStore.location", "ssl.trustStore.password", "ssl.trustStore.passwordPath", "ssl.trustStore.type",
	"ssl.clientAuth", "ssl.protocol", "ssl.enabledProtocols", "ssl.ciphersuites",
}

// SecureClientAddr is the address to listen on for TLS clients; "" when
// secureClientPort is not set.
func (c *Config) SecureClientAddr() string {
	if c.SecureClientPort == 0 {
		return ""
	}
	host := c.SecureClientPortAddress
	if host == "" {
		host = "0.0.0.0"
	}
	return net.JoinHostPort(host, strconv.Itoa(c.SecureClientPort))
}

// setList splits a comma list as ZooKeeper's String.split(",") does, each
// entry trimmed; empty entries are refused.
func setList(dst *[]string, v string) error {
	var out []string
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return fmt.Errorf("%q has an empty entry", v)
		}
		out = append(out, s)
	}
	*dst = out
	return nil
}
