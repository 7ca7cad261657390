package server

import (
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server/config"
	"github.com/zabd/zabd/zab/server/tlsconf/tlstest"
)

// quorumTLS gives a member config the quorum TLS of ca: its own member
// certificate (PEM key store) and ca as the trust store; tls turns
// sslQuorum on, unify portUnification.
func quorumTLS(t *testing.T, ca *tlstest.Cert, tls, unify bool) func(*config.Config) {
	dir := t.TempDir()
	n := 0
	return func(cfg *config.Config) {
		n++
		name := "member" + strconv.Itoa(n)
		cfg.SSLQuorum = tls
		cfg.QuorumTLS.PortUnification = unify
		cfg.QuorumTLS.KeyStore = config.Store{Location: tlstest.WriteFile(t, filepath.Join(dir, name+".p12"), ca.Member(t, name, tlstest.Options{}).PKCS12(t, "mpw")), Password: "mpw"}
		cfg.QuorumTLS.TrustStore = config.Store{Location: tlstest.WriteFile(t, filepath.Join(dir, "ca.pem"), tlstest.CertsPEM(ca))}
	}
}

func TestQuorumTLSEnsembleSurvivesItsLeader(t *testing.T) {
	ca := tlstest.NewCA(t, "zabd quorum CA")
	e := startEnsemble(t, 3, 0, quorumTLS(t, ca, true, false))
	writesSurviveALeaderKill(t, e, 5)
}

// TestQuorumTLSRollingSwitch: a member still plaintext (sslQuorum=false)
// and two that dial with TLS, all three with portUnification, make one
// ensemble: the step in the middle of a rolling switch to TLS.
func TestQuorumTLSRollingSwitch(t *testing.T) {
	ca := tlstest.NewCA(t, "zabd quorum CA")
	withTLS := quorumTLS(t, ca, true, true)
	e := startEnsemble(t, 3, 0, func(cfg *config.Config) {
		withTLS(cfg)
		cfg.SSLQuorum = cfg.MyID != 1
	})
	writesSurviveALeaderKill(t, e, 5)
}

// TestQuorumTLSRefusesOutsiders: a member whose certificate another CA
// signed, and a member that speaks plaintext to a TLS-only ensemble, are
// refused by the others with one log line each naming why, and the two
// members they cannot join still serve.
func TestQuorumTLSRefusesOutsiders(t *testing.T) {
	ca := tlstest.NewCA(t, "zabd quorum CA")
	for name, tc := range map[string]struct {
		third func(t *testing.T, cfg *config.Config)
		want  string
	}{
		"another CA": {func(t *testing.T, cfg *config.Config) {
			other := tlstest.NewCA(t, "another CA")
			cfg.QuorumTLS.KeyStore.Location = tlstest.WriteFile(t, filepath.Join(t.TempDir(), "stranger.p12"), other.Member(t, "stranger", tlstest.Options{}).PKCS12(t, "mpw"))
		}, "refusing a connection: the dialling member's certificate is not signed by a CA in ssl.quorum.trustStore"},
		"expired": {func(t *testing.T, cfg *config.Config) {
			expired := tlstest.Options{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)}
			cfg.QuorumTLS.KeyStore.Location = tlstest.WriteFile(t, filepath.Join(t.TempDir(), "expired.p12"), ca.Member(t, "expired", expired).PKCS12(t, "mpw"))
		}, "refusing a connection: the dialling member's certificate has expired or is not yet valid"},
		"another host": {func(t *testing.T, cfg *config.Config) {
			elsewhere := tlstest.Options{DNSNames: []string{"zk3.elsewhere.example"}}
			cfg.QuorumTLS.KeyStore.Location = tlstest.WriteFile(t, filepath.Join(t.TempDir(), "elsewhere.p12"), ca.Member(t, "elsewhere", elsewhere).PKCS12(t, "mpw"))
		}, "refusing a connection: the dialling member's certificate does not name its host (127.0.0.1; ssl.quorum.hostnameVerification)"},
		"plaintext": {func(t *testing.T, cfg *config.Config) { cfg.SSLQuorum = false },
			"refusing a connection: not a TLS handshake on a TLS-only peer port (portUnification=false) (a member without sslQuorum?)"},
	} {
		t.Run(name, func(t *testing.T) {
			withTLS := quorumTLS(t, ca, true, false)
			e := startEnsemble(t, 3, 0, func(cfg *config.Config) {
				withTLS(cfg)
				if cfg.MyID == 3 {
					tc.third(t, cfg)
				}
			})
			// Member 1 logs what it refuses: restart it with its log captured.
			logs := &lockedBuffer{}
			e.stop(1)
			e.start(e.members[0], [3]net.Listener{}, func(o *Options) {
				o.Log = slog.New(slog.NewTextHandler(io.MultiWriter(logs, logOutput()), nil))
			})
			eventually(t, "members 1 and 2 serve, and 1 refused member 3", func() bool {
				modes := e.mode(1) + "," + e.mode(2)
				return (modes == "leader,follower" || modes == "follower,leader") && strings.Contains(logs.String(), tc.want)
			})
			require.Equal(t, "", e.mode(3), "member 3 serves nothing")
		})
	}
}
