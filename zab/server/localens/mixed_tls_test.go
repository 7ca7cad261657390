package localens_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server/tlsconf/tlstest"
)

// TestMixedQuorumTLS: zabd and ZooKeeper 3.8 members with sslQuorum (each
// member's certificate from one CA, PKCS12 key store, PEM trust store,
// host names verified) elect, serve, and lose their leader twice under
// recorded load, each kind leading in turn.
func TestMixedQuorumTLS(t *testing.T) {
	skipUnderRace(t)
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "mixed quorum CA")
	extra := map[string]string{
		"sslQuorum":                      "true",
		"ssl.quorum.keyStore.location":   tlstest.WriteFile(t, filepath.Join(dir, "member.p12"), ca.Member(t, "member", tlstest.Options{}).PKCS12(t, "mpw")),
		"ssl.quorum.keyStore.password":   "mpw",
		"ssl.quorum.keyStore.type":       "PKCS12",
		"ssl.quorum.trustStore.location": tlstest.WriteFile(t, filepath.Join(dir, "ca.pem"), tlstest.CertsPEM(ca)),
		"ssl.quorum.trustStore.type":     "PEM",
	}
	m := startMixed(t, "dZd", 0, extra)
	for _, k := range []byte{zookeeperKind, zabdKind} {
		leader := m.leadBy(k)
		require.Equal(t, k, m.kind(leader))
		writeAndReadEverywhere(t, m.Ensemble, "/under-"+kindName(k))
	}
	m.killLeadersUnderLoad(50)
	for _, mem := range m.Members {
		log := mem.LogTail(100000)
		t.Logf("server %d (%s): %d lines", mem.ID, kindName(m.kind(mem.ID)), strings.Count(log, "\n"))
		if m.kind(mem.ID) == zabdKind {
			require.Contains(t, log, "members speak TLS", "server %d", mem.ID)
		} else {
			require.Contains(t, log, "Using TLS encrypted quorum communication", "server %d", mem.ID)
			require.Contains(t, log, "SSL handshake complete with /127.0.0.1", "server %d", mem.ID)
		}
	}
	require.NotEmpty(t, m.Modes(context.Background()))
}
