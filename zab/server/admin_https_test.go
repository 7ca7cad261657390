package server

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server/config"
	"github.com/zabd/zabd/zab/server/tlsconf/tlstest"
)

// startAdminHTTPS serves the admin server with the quorum key store's
// certificate, HTTPS only or beside HTTP (unify); it returns the server,
// the admin address and a client that trusts the test CA.
func startAdminHTTPS(t *testing.T, unify bool) (*testServer, string, *http.Client) {
	t.Helper()
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "zabd admin CA")
	cfg := testConfig(filepath.Join(dir, "data"))
	cfg.AdminEnabled, cfg.AdminAddress, cfg.AdminPort = true, "127.0.0.1", 0
	cfg.AdminForceHTTPS, cfg.AdminPortUnification = !unify, unify
	cfg.QuorumTLS.KeyStore = config.Store{Location: tlstest.WriteFile(t, filepath.Join(dir, "quorum.p12"), ca.Server(t, "zabd").PKCS12(t, "qpw")), Password: "qpw"}
	ts := startServer(t, cfg)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: tlstest.Pool(ca), ServerName: "localhost"},
	}}
	t.Cleanup(client.CloseIdleConnections)
	return ts, ts.AdminAddr().String(), client
}

// getRuok asks the admin server's ruok command over url and returns the
// response, failing the test on a transport error.
func getRuok(t *testing.T, client *http.Client, url string) *http.Response {
	t.Helper()
	resp, err := client.Get(url + "/commands/ruok")
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "ruok", body["command"])
	return resp
}

func TestAdminServerForcesHTTPS(t *testing.T) {
	_, addr, client := startAdminHTTPS(t, false)
	resp := getRuok(t, client, "https://"+addr)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "max-age=86400; includeSubDomains", resp.Header.Get("Strict-Transport-Security"))
	require.NotNil(t, resp.TLS)

	// Plain HTTP gets no answer: the server takes its request for a bad
	// TLS record.
	plain := &http.Client{Timeout: 10 * time.Second}
	resp, err := plain.Get("http://" + addr + "/commands/ruok")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NotContains(t, string(body), `"command"`, "a plain request was answered")
	}
}

func TestAdminServerUnifiesHTTPAndHTTPS(t *testing.T) {
	_, addr, client := startAdminHTTPS(t, true)
	resp := getRuok(t, client, "https://"+addr)
	require.Equal(t, "max-age=86400; includeSubDomains", resp.Header.Get("Strict-Transport-Security"))
	resp = getRuok(t, &http.Client{Timeout: 10 * time.Second}, "http://"+addr)
	require.Empty(t, resp.Header.Get("Strict-Transport-Security"), "no HSTS over plain HTTP")
}

func TestAdminHTTPSWithABadKeyStoreStopsStartUp(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(filepath.Join(dir, "data"))
	cfg.AdminEnabled, cfg.AdminAddress, cfg.AdminPort = true, "127.0.0.1", 0
	cfg.AdminForceHTTPS = true
	cfg.QuorumTLS.KeyStore = config.Store{Location: tlstest.WriteFile(t, filepath.Join(dir, "quorum.pem"), []byte("not a key store"))}
	_, err := New(Options{Config: cfg, Log: testLogger()})
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "admin server HTTPS") && strings.Contains(err.Error(), "ssl.quorum.keyStore.location"), err.Error())
}
