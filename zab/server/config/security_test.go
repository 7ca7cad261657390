package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecureClientPortKeys(t *testing.T) {
	cfg, err := parse(t, `dataDir=/d
clientPort=2181
secureClientPort=2281
secureClientPortAddress=127.0.0.1
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
ssl.keyStore.location=/etc/zk/server.p12
ssl.keyStore.password=kpw
ssl.keyStore.type=PKCS12
ssl.trustStore.location=/etc/zk/ca.pem
ssl.trustStore.passwordPath=/etc/zk/tpw
ssl.trustStore.type=pem
ssl.clientAuth=Want
ssl.enabledProtocols=TLSv1.2, TLSv1.3
ssl.ciphersuites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
X509AuthenticationProvider.superUser=CN=admin
authProvider.1=org.apache.zookeeper.server.auth.DigestAuthenticationProvider
ssl.crl=false
sslQuorum=false
quorum.auth.enableSasl=false
`)
	require.NoError(t, err)
	assert.Empty(t, cfg.Warnings)
	assert.Equal(t, "0.0.0.0:2181", cfg.ClientAddr())
	assert.Equal(t, "127.0.0.1:2281", cfg.SecureClientAddr())
	assert.Equal(t, TLS{
		KeyStore:         Store{Location: "/etc/zk/server.p12", Password: "kpw", Type: "PKCS12"},
		TrustStore:       Store{Location: "/etc/zk/ca.pem", PasswordPath: "/etc/zk/tpw", Type: "pem"},
		ClientAuth:       ClientAuthWant,
		Protocol:         "TLSv1.2",
		EnabledProtocols: []string{"TLSv1.2", "TLSv1.3"},
		CipherSuites:     []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
	}, cfg.TLS)
	assert.True(t, cfg.X509AuthEnabled, "a secure port registers the x509 scheme, as ZooKeeper's configureSSLAuth")
	assert.Equal(t, "CN=admin", cfg.X509SuperUser)
	assert.Equal(t, 6, cfg.Lines["ssl.keyStore.location"])
}

func TestTLSDefaults(t *testing.T) {
	cfg, err := parse(t, "dataDir=/d\nsecureClientPort=2281\nssl.keyStore.location=/k.pem\nssl.trustStore.location=/t.pem\n"+
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n")
	require.NoError(t, err)
	assert.Equal(t, ClientAuthNeed, cfg.TLS.ClientAuth, "ZooKeeper's default is need")
	assert.Equal(t, "TLSv1.2", cfg.TLS.Protocol)
	assert.Empty(t, cfg.TLS.EnabledProtocols)
	assert.Equal(t, "", cfg.ClientAddr(), "only the secure port")
	assert.Empty(t, cfg.Warnings)
}

func TestX509SchemeWithoutSecurePort(t *testing.T) {
	cfg, err := parse(t, "dataDir=/d\nclientPort=2181\n")
	require.NoError(t, err)
	assert.False(t, cfg.X509AuthEnabled, "ZooKeeper registers x509 only for a secure port or when asked")
	cfg, err = parse(t, "dataDir=/d\nclientPort=2181\nauthProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n")
	require.NoError(t, err)
	assert.True(t, cfg.X509AuthEnabled)
}

func TestSecurityWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, text, key, contains string
	}{
		{"key store without a secure port", "dataDir=/d\nclientPort=1\nssl.keyStore.location=/k.pem\n", "ssl.keyStore.location", "no effect"},
		{"secure port without netty", "dataDir=/d\nsecureClientPort=2\nssl.keyStore.location=/k.pem\nssl.trustStore.location=/t.pem\n",
			"secureClientPort", "NettyServerCnxnFactory"},
		{"no trust store", "dataDir=/d\nsecureClientPort=2\nssl.keyStore.location=/k.pem\n" +
			"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n", "ssl.trustStore.location", "system's CA roots"},
		{"client.secure", "dataDir=/d\nclient.secure=true\n", "client.secure", "client-side"},
		{"hostname verification", "dataDir=/d\nssl.hostnameVerification=false\n", "ssl.hostnameVerification", "host names"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse(t, tc.text)
			require.NoError(t, err)
			require.Len(t, cfg.Warnings, 1, "%v", cfg.Warnings)
			assert.Equal(t, tc.key, cfg.Warnings[0].Key)
			assert.Contains(t, cfg.Warnings[0].Message, tc.contains)
		})
	}
}

// TestUnsupportedSecurityKeysStopStartUp: every security key zabd does not
// implement stops start-up with "<key>: not supported", naming the line.
func TestUnsupportedSecurityKeysStopStartUp(t *testing.T) {
	for _, line := range []string{
		"authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
		"authProvider.sasl=com.example.MyProvider",
		"quorum.auth.enableSasl=true",
		"quorum.auth.learnerRequireSasl=true",
		"quorum.auth.kerberos.servicePrincipal=zookeeper/_HOST",
		"quorum.auth.learner.saslLoginContext=QuorumLearner",
		"sasl.serverconfig=Server",
		"allowSaslFailedClients=true",
		"sessionRequireClientSASLAuth=true",
		"kerberos.removeHostFromPrincipal=true",
		"superUser=admin",
		"ssl.quorum.context.supplier.class=com.example.Supplier",
		"ssl.crl=true",
		"ssl.ocsp=true",
		"ssl.context.supplier.class=com.example.Supplier",
		"ssl.sslProvider=OPENSSL",
		"ssl.authProvider=myscheme",
		"skipACL=yes",
		"DigestAuthenticationProvider.enabled=false",
		"DigestAuthenticationProvider.digestAlg=SHA3-256",
		"serverCnxnFactory=com.example.Factory",
	} {
		t.Run(line, func(t *testing.T) {
			key, _, _ := strings.Cut(line, "=")
			_, err := parse(t, "dataDir=/d\nclientPort=1\n"+line+"\n")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "zoo.cfg:3: "+key+": not supported")
			var cfgErr *Error
			assert.ErrorAs(t, err, &cfgErr)
		})
	}
}

func TestAdminHTTPSTakesTheQuorumKeyStore(t *testing.T) {
	cfg, err := parse(t, "dataDir=/d\nclientPort=1\nadmin.forceHttps=true\nssl.quorum.keyStore.location=/q.pem\nssl.quorum.keyStore.password=pw\n")
	require.NoError(t, err)
	assert.True(t, cfg.AdminForceHTTPS)
	assert.Equal(t, Store{Location: "/q.pem", Password: "pw"}, cfg.QuorumTLS.KeyStore)
	assert.Empty(t, cfg.Warnings)

	for _, key := range []string{"admin.forceHttps", "admin.portUnification"} {
		_, err = parse(t, "dataDir=/d\nclientPort=1\n"+key+"=true\n")
		require.ErrorContains(t, err, "zoo.cfg:3: "+key+": HTTPS on the admin server needs a key and certificate: ssl.quorum.keyStore.location is not set")
	}
	// Without the admin server, or without HTTPS on it, the quorum stores do nothing: a warning each.
	cfg, err = parse(t, "dataDir=/d\nclientPort=1\nadmin.enableServer=false\nadmin.forceHttps=true\nssl.quorum.keyStore.location=/q.pem\nssl.quorum.trustStore.location=/t.pem\n")
	require.NoError(t, err)
	require.Len(t, cfg.Warnings, 2)
	assert.Equal(t, "ssl.quorum.keyStore.location", cfg.Warnings[0].Key)
	assert.Equal(t, "ssl.quorum.trustStore.location", cfg.Warnings[1].Key)
	assert.Contains(t, cfg.Warnings[0].Message, "has no effect: neither sslQuorum")
}

func TestQuorumTLSSettings(t *testing.T) {
	const ensemble = "dataDir=/d\nclientPort=1\ninitLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889\n"
	cfg, err := parse(t, ensemble+"sslQuorum=true\nssl.quorum.keyStore.location=/q.pem\nssl.quorum.trustStore.location=/ca.pem\n")
	require.NoError(t, err)
	assert.True(t, cfg.SSLQuorum)
	assert.Equal(t, TLS{KeyStore: Store{Location: "/q.pem"}, TrustStore: Store{Location: "/ca.pem"}, ClientAuth: ClientAuthNeed,
		Protocol: DefaultTLSProtocol, HostnameVerification: true, HandshakeDetectTimeout: 5 * time.Second}, cfg.QuorumTLS, "ZooKeeper's defaults")
	assert.Empty(t, cfg.Warnings)

	cfg, err = parse(t, ensemble+"portUnification=true\nssl.quorum.keyStore.location=/q.pem\nssl.quorum.hostnameVerification=false\n"+
		"ssl.quorum.clientAuth=want\nssl.quorum.handshakeDetectionTimeoutMillis=250\n")
	require.NoError(t, err)
	assert.False(t, cfg.SSLQuorum)
	assert.True(t, cfg.QuorumTLS.PortUnification)
	assert.False(t, cfg.QuorumTLS.HostnameVerification)
	assert.Equal(t, ClientAuthWant, cfg.QuorumTLS.ClientAuth)
	assert.Equal(t, 250*time.Millisecond, cfg.QuorumTLS.HandshakeDetectTimeout)
	require.Len(t, cfg.Warnings, 1, "no trust store: the system's roots")
	assert.Contains(t, cfg.Warnings[0].Message, "system's CA roots")

	for text, want := range map[string]string{
		ensemble + "sslQuorum=true\n":                               "zoo.cfg:7: sslQuorum: TLS between the members needs a key and certificate",
		ensemble + "portUnification=true\n":                         "zoo.cfg:7: portUnification: TLS between the members needs a key and certificate",
		ensemble + "sslQuorum=maybe\n":                              "zoo.cfg:7: sslQuorum:",
		ensemble + "ssl.quorum.clientAuth=sometimes\n":              "zoo.cfg:7: ssl.quorum.clientAuth:",
		ensemble + "ssl.quorum.handshakeDetectionTimeoutMillis=0\n": "zoo.cfg:7: ssl.quorum.handshakeDetectionTimeoutMillis:",
	} {
		_, err := parse(t, text)
		require.ErrorContains(t, err, want, text)
	}
}

func TestBadTLSSettings(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"client auth", "dataDir=/d\nssl.clientAuth=maybe\n", `zoo.cfg:2: ssl.clientAuth: "maybe" is not none, want or need`},
		{"secure address without port", "dataDir=/d\nsecureClientPortAddress=127.0.0.1\n", "zoo.cfg:2: secureClientPortAddress: is set but secureClientPort is not"},
		{"secure port without key store", "dataDir=/d\nsecureClientPort=2281\n", "zoo.cfg:2: secureClientPort: TLS on the client port needs a key and certificate"},
		{"port unification without key store", "dataDir=/d\nclientPort=1\nclient.portUnification=true\nssl.clientAuth=none\n", "zoo.cfg:3: client.portUnification: TLS on the client port needs"},
		{"port unification without x509", "dataDir=/d\nclientPort=1\nclient.portUnification=true\nssl.keyStore.location=/k.pem\n", "zoo.cfg:3: client.portUnification: with ssl.clientAuth want or need"},
		{"empty protocol entry", "dataDir=/d\nssl.enabledProtocols=TLSv1.2,,TLSv1.3\n", "zoo.cfg:2: ssl.enabledProtocols"},
		{"secure port range", "dataDir=/d\nsecureClientPort=65536\n", "zoo.cfg:2: secureClientPort: 65536 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestEnforceAuthSettings(t *testing.T) {
	cfg, err := parse(t, "dataDir=/d\nclientPort=1\nenforce.auth.enabled=true\nenforce.auth.schemes=digest, ip\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"digest", "ip"}, cfg.EnforceAuthSchemes)

	cfg, err = parse(t, "dataDir=/d\nclientPort=1\nenforce.auth.schemes=digest\n")
	require.NoError(t, err)
	assert.Nil(t, cfg.EnforceAuthSchemes)
	require.Len(t, cfg.Warnings, 1)
	assert.Contains(t, cfg.Warnings[0].Message, "enforce.auth.enabled is not true")

	for text, want := range map[string]string{
		"enforce.auth.enabled=true\n":                                "zoo.cfg:3: enforce.auth.enabled: is true, so enforce.auth.schemes must be set",
		"enforce.auth.enabled=true\nenforce.auth.schemes=sasl\n":     "zoo.cfg:4: enforce.auth.schemes: not supported: zabd has no SASL",
		"enforce.auth.enabled=true\nenforce.auth.schemes=x509\n":     "zoo.cfg:4: enforce.auth.schemes: authentication scheme x509 is not available",
		"enforce.auth.enabled=true\nenforce.auth.schemes=kerberos\n": "zoo.cfg:4: enforce.auth.schemes: authentication scheme kerberos is not available",
	} {
		_, err := parse(t, "dataDir=/d\nclientPort=1\n"+text)
		require.ErrorContains(t, err, want, text)
	}
	cfg, err = parse(t, "dataDir=/d\nclientPort=1\nauthProvider.1=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n"+
		"enforce.auth.enabled=true\nenforce.auth.schemes=x509\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"x509"}, cfg.EnforceAuthSchemes, "x509 once its provider is registered")
}
