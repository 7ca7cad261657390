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
	m := startMixed(t, "dZd", 0, quorumTLSKeys(t))
	quorumTLSUnderLoad(t, m, "Using TLS encrypted quorum communication", "SSL handshake complete with /127.0.0.1")
}

// TestMixedQuorumTLSRollingSwitch: the middle step of a rolling switch to
// quorum TLS across kinds — every member with portUnification, the
// ZooKeeper member still plaintext (sslQuorum=false), the zabd members
// dialling with TLS — is one ensemble that survives its leaders' kills.
func TestMixedQuorumTLSRollingSwitch(t *testing.T) {
	skipUnderRace(t)
	extra := quorumTLSKeys(t)
	extra["portUnification"] = "true"
	m := startMixedEditing(t, "dZd", 0, extra, func(id int64, cfg string) string {
		if id == 2 {
			return strings.Replace(cfg, "sslQuorum=true", "sslQuorum=false", 1)
		}
		return cfg
	})
	quorumTLSUnderLoad(t, m, "Using insecure (non-TLS) quorum communication", "Port unification enabled",
		"Creating TLS-enabled quorum server socket")
}

// quorumTLSKeys are the zoo.cfg keys of quorum TLS for every member: one
// member certificate from a fresh CA (PKCS12), the CA as a PEM trust store.
func quorumTLSKeys(t *testing.T) map[string]string {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "mixed quorum CA")
	return map[string]string{
		"sslQuorum":                      "true",
		"ssl.quorum.keyStore.location":   tlstest.WriteFile(t, filepath.Join(dir, "member.p12"), ca.Member(t, "member", tlstest.Options{}).PKCS12(t, "mpw")),
		"ssl.quorum.keyStore.password":   "mpw",
		"ssl.quorum.keyStore.type":       "PKCS12",
		"ssl.quorum.trustStore.location": tlstest.WriteFile(t, filepath.Join(dir, "ca.pem"), tlstest.CertsPEM(ca)),
		"ssl.quorum.trustStore.type":     "PEM",
	}
}

// quorumTLSUnderLoad has each kind lead in turn, then kills the leader
// twice under recorded load, and checks that the zabd members logged TLS
// and the ZooKeeper member logged what zkLog names.
func quorumTLSUnderLoad(t *testing.T, m *mixedEnsemble, zkLog ...string) {
	t.Helper()
	for _, k := range []byte{zookeeperKind, zabdKind} {
		leader := m.leadBy(k)
		require.Equal(t, k, m.kind(leader))
		writeAndReadEverywhere(t, m.Ensemble, "/under-"+kindName(k))
	}
	m.killLeadersUnderLoad(50)
	for _, mem := range m.Members {
		log := mem.LogTail(100000)
		t.Logf("server %d (%s): %d lines", mem.ID, kindName(m.kind(mem.ID)), strings.Count(log, "\n"))
		want := zkLog
		if m.kind(mem.ID) == zabdKind {
			want = []string{"members speak TLS"}
		}
		for _, line := range want {
			require.True(t, strings.Contains(log, line), "server %d (%s) did not log %q", mem.ID, kindName(m.kind(mem.ID)), line)
		}
	}
	require.NotEmpty(t, m.Modes(context.Background()))
}
