package tlsconf

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server/config"
	"github.com/zabd/zabd/zab/server/tlsconf/tlstest"
)

// TestQuorumCertificatesReload: with sslQuorumReloadCertFiles, a key store
// rewritten on disk is the certificate of the connections after the next
// look (at most once a second); one that no longer loads leaves the one in
// use, with an error reported once; without the key, nothing reloads.
func TestQuorumCertificatesReload(t *testing.T) {
	for _, reload := range []bool{true, false} {
		dir := t.TempDir()
		ca := tlstest.NewCA(t, "reload CA")
		keyStore := filepath.Join(dir, "member.p12")
		cfg := config.Default()
		cfg.QuorumTLS.KeyStore = config.Store{Location: tlstest.WriteFile(t, keyStore, ca.Member(t, "first", tlstest.Options{}).PKCS12(t, "pw")), Password: "pw"}
		cfg.QuorumTLS.TrustStore = config.Store{Location: tlstest.WriteFile(t, filepath.Join(dir, "ca.pem"), tlstest.CertsPEM(ca))}
		cfg.QuorumTLS.ReloadCertFiles = reload
		q, err := NewQuorumConfigs(cfg)
		require.NoError(t, err)
		clock := time.Now()
		q.now = func() time.Time { return clock }
		subject := func() string {
			t.Helper()
			serve, dial, err := q.Current()
			require.NoError(t, err)
			require.Equal(t, serve.Certificates[0].Leaf.Subject.CommonName, dial.Certificates[0].Leaf.Subject.CommonName)
			return serve.Certificates[0].Leaf.Subject.CommonName
		}
		require.Equal(t, "first", subject())

		tlstest.WriteFile(t, keyStore, ca.Member(t, "second, a longer name", tlstest.Options{}).PKCS12(t, "pw"))
		require.Equal(t, "first", subject(), "not looked at within a second")
		clock = clock.Add(time.Second)
		want := "second, a longer name"
		if !reload {
			want = "first"
		}
		require.Equal(t, want, subject(), "reload %v", reload)
		if !reload {
			continue
		}
		tlstest.WriteFile(t, keyStore, []byte("not a key store at all"))
		clock = clock.Add(time.Second)
		serve, _, err := q.Current()
		require.ErrorContains(t, err, "ssl.quorum.keyStore.location")
		require.Equal(t, want, serve.Certificates[0].Leaf.Subject.CommonName, "the certificate in use stays")
		clock = clock.Add(time.Second)
		require.Equal(t, want, subject(), "reported once")
	}
}
