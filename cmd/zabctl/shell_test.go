package main

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/wire/client/session"
)

func TestOneShotExitCodesAndMessages(t *testing.T) {
	z := startZabd(t, "", "")
	out, errOut, code := zabctl(t, "", "-server", z.addr, "create", "/a", "hello")
	assert.Equal(t, 0, code)
	assert.Equal(t, "", out, "a one-shot command prints no banner and no connection event")
	assert.Equal(t, "Created /a\n", errOut)

	out, _, code = zabctl(t, "", "-server", z.addr, "get", "/a")
	assert.Equal(t, 0, code)
	assert.Equal(t, "hello\n", out)

	_, errOut, code = zabctl(t, "", "-server", z.addr, "get", "/missing")
	assert.Equal(t, 1, code)
	assert.Equal(t, "Node does not exist: /missing\n", errOut)

	_, errOut, code = zabctl(t, "", "-server", z.addr, "get", "a//b")
	assert.Equal(t, 1, code)
	assert.Equal(t, "Path must start with / character\n", errOut)

	_, errOut, code = zabctl(t, "", "-server", z.addr, "get", "/a//b")
	assert.Equal(t, 1, code)
	assert.Equal(t, "Invalid path string \"/a//b\" caused by empty node name specified @3\n", errOut)

	_, errOut, code = zabctl(t, "", "-server", z.addr, "frobnicate", "/a")
	assert.Equal(t, 127, code)
	assert.Contains(t, errOut, "Command not found: Command not found frobnicate\n")

	_, _, code = zabctl(t, "", "-server", z.addr, "-bogus")
	assert.Equal(t, 2, code)
}

func TestOneShotOnADeadServerIsOneClearLine(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	l.Close()
	start := time.Now()
	out, errOut, code := zabctl(t, "", "-server", dead, "ls", "/")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
	assert.Contains(t, errOut, "zabctl: cannot connect to "+dead)
	assert.Contains(t, errOut, "connection refused")
	assert.Less(t, time.Since(start), 10*time.Second, "a refused connection fails at once")
}

func TestJSONForEveryRead(t *testing.T) {
	z := startZabd(t, "", "")
	_, _, code := zabctl(t, "", "-server", z.addr, "create", "/j", "data")
	require.Equal(t, 0, code)
	_, _, code = zabctl(t, "", "-server", z.addr, "create", "/j/k")
	require.Equal(t, 0, code)

	decode := func(args ...string) map[string]any {
		t.Helper()
		out, errOut, code := zabctl(t, "", append([]string{"-server", z.addr, "-o", "json"}, args...)...)
		require.Equal(t, 0, code, errOut)
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &obj), out)
		return obj
	}
	get := decode("get", "-s", "/j")
	assert.Equal(t, "data", get["data"])
	assert.EqualValues(t, 1, get["stat"].(map[string]any)["numChildren"])
	assert.Equal(t, []any{"k"}, decode("ls", "/j")["children"])
	assert.Equal(t, []any{"/j", "/j/k"}, decode("ls", "-R", "/j")["tree"])
	assert.EqualValues(t, 0, decode("stat", "/j/k")["stat"].(map[string]any)["dataLength"])
	assert.Equal(t, "cdrwa", decode("getAcl", "/j")["acl"].([]any)[0].(map[string]any)["perms"])
	assert.EqualValues(t, 1, decode("getAllChildrenNumber", "/j")["count"])
	assert.Equal(t, []any{}, decode("getEphemerals", "/j")["ephemerals"])
	assert.Equal(t, "ip", decode("whoami")["clientInfo"].([]any)[0].(map[string]any)["scheme"])
	assert.Contains(t, decode("config"), "config")
	assert.Contains(t, decode("version")["version"], "zabd")
}

// TestSessionSurvivesAServerRestart: the session resumes on the next
// server of its list (here the same server restarted on its port with its
// data), keeps its ephemeral node, and its watches are registered again
// (SetWatches): a change made while it was away fires at once.
func TestSessionSurvivesAServerRestart(t *testing.T) {
	dir := t.TempDir()
	z := startZabd(t, dir, "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	l.Close()

	var mu sync.Mutex
	var events []session.Event
	s, err := session.New(session.Options{Servers: []string{dead, z.addr}, Timeout: 20 * time.Second, RetryPause: 50 * time.Millisecond,
		OnEvent: func(ev session.Event) { mu.Lock(); events = append(events, ev); mu.Unlock() }})
	require.NoError(t, err)
	defer s.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.WaitConnected(ctx), "the dead first server is skipped")
	assert.Equal(t, z.addr, s.Server())
	id := s.ID()
	require.NoError(t, s.Run(ctx, func(c *client.Conn) error {
		if _, err := c.Create(ctx, "/eph", nil, client.OpenACL, wire.ModeEphemeral); err != nil {
			return err
		}
		_, err := c.Create(ctx, "/watched", []byte("v1"), client.OpenACL, wire.ModePersistent)
		return err
	}))
	_, _, err = s.GetData(ctx, "/watched", true)
	require.NoError(t, err)

	z.stop(t)
	// While the session is away, another client changes the watched node.
	z2 := startZabd(t, dir, z.addr)
	other, err := client.Dial(ctx, z2.addr, client.Session{Timeout: 10 * time.Second})
	require.NoError(t, err)
	_, err = other.SetData(ctx, "/watched", []byte("v2"), -1)
	require.NoError(t, err)
	other.CloseSession(ctx)

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range events {
			if ev.Type == wire.EventNodeDataChanged && ev.Path == "/watched" {
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond, "the re-registered watch fires for the change made while away")
	assert.Equal(t, id, s.ID(), "the same session resumed")
	_, err = s.Exists(ctx, "/eph", false)
	assert.NoError(t, err, "the session's ephemeral node survived")

	mu.Lock()
	var states []wire.KeeperState
	for _, ev := range events {
		if ev.Type == wire.EventNone {
			states = append(states, ev.State)
		}
	}
	mu.Unlock()
	assert.Equal(t, []wire.KeeperState{wire.StateSyncConnected, wire.StateDisconnected, wire.StateSyncConnected}, states)
}
