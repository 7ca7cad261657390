package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

// setTwoSessionsWatches opens two sessions on addr and has them set the
// same watches on every server: data, exist, child, persistent and
// persistent-recursive ones. It returns the session ids, first one first.
func setTwoSessionsWatches(t *testing.T, ctx context.Context, addr string) [2]int64 {
	t.Helper()
	var c [2]*client.Conn
	for i := range c {
		c[i] = dial(t, ctx, addr)
		t.Cleanup(func() { c[i].CloseSession(context.Background()) })
	}
	for _, p := range []string{"/w", "/w/a", "/w/p"} {
		_, err := c[0].Create(ctx, p, nil, client.OpenACL, wire.ModePersistent)
		require.NoError(t, err)
	}
	_, _, err := c[0].GetData(ctx, "/w/a", true)
	require.NoError(t, err)
	_, err = c[0].Exists(ctx, "/w/missing", true)
	require.ErrorIs(t, err, wire.ErrNoNode)
	_, err = c[0].GetChildren(ctx, "/w", true) // the child table: not in wch*
	require.NoError(t, err)
	require.NoError(t, c[0].AddWatch(ctx, "/w/p", wire.AddWatchPersistent))
	_, _, err = c[1].GetData(ctx, "/w/a", true)
	require.NoError(t, err)
	require.NoError(t, c[1].AddWatch(ctx, "/w", wire.AddWatchPersistentRecursive))
	return [2]int64{c[0].SessionID(), c[1].SessionID()}
}

// canonicalWatchDump makes wchc or wchp comparable across servers: session
// ids become s1/s2, and since ZooKeeper prints its hash tables' order, the
// indented lines of each group and the groups themselves are sorted.
func canonicalWatchDump(t *testing.T, dump string, sessions [2]int64) string {
	t.Helper()
	names := strings.NewReplacer(fmt.Sprintf("0x%x", sessions[0]), "s1", fmt.Sprintf("0x%x", sessions[1]), "s2")
	require.True(t, strings.HasSuffix(dump, "\n\n") || dump == "\n", "ends with an empty line: %q", dump)
	var groups []string
	var group []string
	flush := func() {
		if group != nil {
			slices.Sort(group[1:])
			groups = append(groups, strings.Join(group, "\n"))
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(dump, "\n\n"), "\n") {
		line = names.Replace(line)
		if strings.HasPrefix(line, "\t") {
			require.NotNil(t, group, "indented line before a group header in %q", dump)
			group = append(group, line)
			continue
		}
		flush()
		group = []string{line}
	}
	flush()
	slices.Sort(groups)
	return strings.Join(groups, "\n") + "\n\n"
}

// TestWatchWordsMatchZooKeeper sets the same watches from two sessions on
// Debian's ZooKeeper 3.8 and on zabd and compares wchs exactly and wchc and
// wchp up to session ids and ZooKeeper's hash order.
func TestWatchWordsMatchZooKeeper(t *testing.T) {
	zk := zkprocess.ForTest(t, nil)
	ts := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zkSessions := setTwoSessionsWatches(t, ctx, zk.Addr)
	ourSessions := setTwoSessionsWatches(t, ctx, ts.addr)

	want := map[string]string{
		"wchs": "2 connections watching 4 paths\nTotal watches:5\n",
		"wchc": "s1\n\t/w/a\n\t/w/missing\n\t/w/p\ns2\n\t/w\n\t/w/a\n\n",
		"wchp": "/w\n\ts2\n/w/a\n\ts1\n\ts2\n/w/missing\n\ts1\n/w/p\n\ts1\n\n",
	}
	for w, expected := range want {
		t.Run(w, func(t *testing.T) {
			zkAnswer, ours := word(t, zk.Addr, w), word(t, ts.addr, w)
			if w == "wchs" {
				assert.Equal(t, expected, zkAnswer)
				assert.Equal(t, expected, ours)
				return
			}
			assert.Equal(t, expected, canonicalWatchDump(t, zkAnswer, zkSessions), "ZooKeeper: %q", zkAnswer)
			assert.Equal(t, expected, canonicalWatchDump(t, ours, ourSessions), "zabd: %q", ours)
		})
	}
	// zabd's order is sorted, so its answer is the canonical one verbatim
	// once the ids are named (s1 < s2: sessions are numbered upwards).
	require.Less(t, ourSessions[0], ourSessions[1])
	names := strings.NewReplacer(fmt.Sprintf("0x%x", ourSessions[0]), "s1", fmt.Sprintf("0x%x", ourSessions[1]), "s2")
	assert.Equal(t, want["wchc"], names.Replace(word(t, ts.addr, "wchc")))
	assert.Equal(t, want["wchp"], names.Replace(word(t, ts.addr, "wchp")))
}

func TestWatchWordsWithoutWatches(t *testing.T) {
	ts := startServer(t, nil)
	assert.Equal(t, "0 connections watching 0 paths\nTotal watches:0\n", word(t, ts.addr, "wchs"))
	assert.Equal(t, "\n", word(t, ts.addr, "wchc"))
	assert.Equal(t, "\n", word(t, ts.addr, "wchp"))
}

// TestWatchAdminCommands: the admin server's watch commands report the same
// watches, keyed as ZooKeeper's JSON keys them (session ids in decimal).
func TestWatchAdminCommands(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.AdminEnabled, cfg.AdminAddress, cfg.AdminPort = true, "127.0.0.1", 0
	ts := startServer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := setTwoSessionsWatches(t, ctx, ts.addr)
	get := func(name string) map[string]any {
		resp, err := http.Get("http://" + ts.AdminAddr().String() + "/commands/" + name)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(body, &out), "%s", body)
		return out
	}
	assert.Equal(t, map[string]any{"command": "watch_summary", "error": nil,
		"num_connections": 2.0, "num_paths": 4.0, "num_total_watches": 5.0}, get("watch_summary"))
	assert.Equal(t, map[string]any{"command": "watches", "error": nil, "session_id_to_watched_paths": map[string]any{
		fmt.Sprint(s[0]): []any{"/w/a", "/w/missing", "/w/p"},
		fmt.Sprint(s[1]): []any{"/w", "/w/a"},
	}}, get("wchc"))
	assert.Equal(t, map[string]any{"command": "watches_by_path", "error": nil, "path_to_session_ids": map[string]any{
		"/w": []any{float64(s[1])}, "/w/a": []any{float64(s[0]), float64(s[1])},
		"/w/missing": []any{float64(s[0])}, "/w/p": []any{float64(s[0])},
	}}, get("watches_by_path"))
}
