package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server"
	"github.com/zabd/zabd/zab/server/config"
)

// zabd is a standalone zabd running in-process on a loopback port.
type zabd struct {
	*server.Server
	addr string
	dir  string
	errc chan error
}

// startZabd starts a zabd with its data in dir (a fresh temp dir when
// empty) on addr ("127.0.0.1:0" for a free port) and stops it when the test
// ends.
func startZabd(t *testing.T, dir, addr string) *zabd {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	cfg := config.Default()
	cfg.File = "(test)"
	cfg.DataDir, cfg.DataLogDir = dir, dir
	cfg.TickTime = 100 * time.Millisecond
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 200*time.Millisecond, 60*time.Second
	cfg.FourLetterWordWhitelist = []string{"*"}
	cfg.AdminEnabled = false
	cfg.ExtendedTypesEnabled = true
	cfg.MaxClientCnxns = 0
	var l net.Listener
	// A restarted server takes its old port back; the kernel may hold it
	// for a moment.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		if l, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			require.NoError(t, err)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv, err := server.New(server.Options{Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Listener: l, Seed: 1})
	if err != nil {
		l.Close()
		require.NoError(t, err)
	}
	z := &zabd{Server: srv, addr: l.Addr().String(), dir: dir, errc: make(chan error, 1)}
	go func() { z.errc <- srv.Serve(context.Background()) }()
	t.Cleanup(func() { z.stop(t) })
	return z
}

// stop stops the server and waits for it (idempotent).
func (z *zabd) stop(t *testing.T) {
	z.Stop()
	select {
	case err, ok := <-z.errc:
		if ok {
			require.NoError(t, err)
			close(z.errc)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("zabd did not stop within 30s")
	}
}

// zabctl runs zabctl in-process with stdin and returns its output and
// exit code.
func zabctl(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}
