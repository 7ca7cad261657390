package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/config"
)

// testServer is a zabd running in-process on a free loopback port.
type testServer struct {
	*Server
	addr string
	dir  string
	errc chan error
}

// testConfig is a configuration for tests: data in a temp dir, a short
// tick, every four-letter word allowed, admin and metrics off.
func testConfig(dir string) *config.Config {
	cfg := config.Default()
	cfg.File = "(test)"
	cfg.DataDir, cfg.DataLogDir = dir, dir
	cfg.TickTime = 100 * time.Millisecond
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 200*time.Millisecond, 30*time.Second
	cfg.FourLetterWordWhitelist = []string{"*"}
	cfg.AdminEnabled = false
	cfg.ExtendedTypesEnabled = true
	cfg.ContainerCheckInterval = 100 * time.Millisecond
	cfg.MaxClientCnxns = 0
	return cfg
}

// testLogger logs to stderr when -v is given (or ZABD_TEST_LOG is set),
// else discards.
func testLogger() *slog.Logger {
	if w := logOutput(); w != io.Discard {
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// logOutput is where test logs go: stderr when -v is given (or
// ZABD_TEST_LOG is set), else nowhere.
func logOutput() io.Writer {
	if testing.Verbose() || os.Getenv("ZABD_TEST_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}

// startServer starts a server with cfg (testConfig of a fresh dir when nil)
// and stops it when the test ends.
func startServer(t *testing.T, cfg *config.Config, mod ...func(*Options)) *testServer {
	t.Helper()
	return startServerTB(t, cfg, mod...)
}

// startServerTB is startServer for tests and benchmarks.
func startServerTB(t testing.TB, cfg *config.Config, mod ...func(*Options)) *testServer {
	t.Helper()
	if cfg == nil {
		cfg = testConfig(t.TempDir())
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	opts := Options{Config: cfg, Log: testLogger(), Listener: l, Seed: 1}
	for _, m := range mod {
		m(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		l.Close()
		require.NoError(t, err)
	}
	ts := &testServer{Server: srv, addr: l.Addr().String(), dir: cfg.DataDir, errc: make(chan error, 1)}
	go func() { ts.errc <- srv.Serve(context.Background()) }()
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// stop stops the server and waits for Serve to return (idempotent).
func (ts *testServer) stop(t testing.TB) {
	ts.Stop()
	select {
	case err, ok := <-ts.errc:
		if ok {
			require.NoError(t, err)
			close(ts.errc)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop within 30s")
	}
}

// dial opens a session on addr with a 10 s session timeout; the caller
// closes it.
func dial(t testing.TB, ctx context.Context, addr string) *client.Conn {
	t.Helper()
	c, err := client.Dial(ctx, addr, client.Session{Timeout: 10 * time.Second})
	require.NoError(t, err)
	return c
}
