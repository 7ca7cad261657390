package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/fourlw"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

type fourlwMetric = fourlw.Metric

func word(t *testing.T, addr, w string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := zkprocess.FourLetterWord(ctx, addr, w)
	require.NoError(t, err)
	return out
}

func TestFourLetterWords(t *testing.T) {
	ts := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.addr)
	defer c.CloseSession(ctx)
	_, err := c.Create(ctx, "/e", nil, client.OpenACL, wire.ModeEphemeral)
	require.NoError(t, err)
	_, _, err = c.GetData(ctx, "/e", true)
	require.NoError(t, err)

	assert.Equal(t, "imok", word(t, ts.addr, "ruok"))
	assert.Equal(t, "rw", word(t, ts.addr, "isro"))
	srvr := word(t, ts.addr, "srvr")
	assert.Contains(t, srvr, "Zookeeper version: 3.8.0")
	assert.Contains(t, srvr, "Mode: standalone\n")
	assert.Contains(t, srvr, "Node count: 6\n", "/ (twice, as ZooKeeper's node map holds it), /zookeeper, its config and quota, /e")
	stat := word(t, ts.addr, "stat")
	assert.Contains(t, stat, "Clients:\n /127.0.0.1:")
	mntr := word(t, ts.addr, "mntr")
	for _, line := range []string{"zk_server_state\tstandalone\n", "zk_znode_count\t6\n", "zk_ephemerals_count\t1\n", "zk_watch_count\t1\n", "zk_global_sessions\t1\n"} {
		assert.Contains(t, mntr, line)
	}
	cons := word(t, ts.addr, "cons")
	assert.Contains(t, cons, ",sid=0x"+strings.TrimPrefix(sessionHex(c.SessionID()), "0x")+",lop=GETD,")
	dump := word(t, ts.addr, "dump")
	assert.Contains(t, dump, "Sessions with Ephemerals (1):\n"+sessionHex(c.SessionID())+":\n\t/e\n")
	assert.Contains(t, word(t, ts.addr, "conf"), "tickTime=100\n")
	assert.Contains(t, word(t, ts.addr, "envi"), "Environment:\nzookeeper.version=")
	assert.Contains(t, word(t, ts.addr, "dirs"), "datadir_size: ")
	assert.Equal(t, "Server stats reset.\n", word(t, ts.addr, "srst"))
	assert.Equal(t, "Connection stats reset.\n", word(t, ts.addr, "crst"))
	stillServes(t, ts.addr)
}

func TestFourLetterWordRefusedOutsideWhitelist(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.FourLetterWordWhitelist = []string{"srvr"}
	ts := startServer(t, cfg)
	assert.Equal(t, "ruok is not executed because it is not in the whitelist.\n", word(t, ts.addr, "ruok"))
	assert.Contains(t, word(t, ts.addr, "srvr"), "Mode: standalone")
}

func TestAdminAndMetricsEndpoints(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.AdminEnabled, cfg.AdminAddress, cfg.AdminPort = true, "127.0.0.1", 0
	cfg.MetricsEnabled, cfg.MetricsHost, cfg.MetricsPort = true, "127.0.0.1", 0
	ts := startServer(t, cfg)
	stillServes(t, ts.addr)

	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	admin := "http://" + ts.AdminAddr().String()
	code, body := get(admin + "/commands/ruok")
	assert.Equal(t, http.StatusOK, code)
	var ruok map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &ruok))
	assert.Equal(t, map[string]any{"command": "ruok", "error": nil}, ruok)

	code, body = get(admin + "/commands/mntr")
	assert.Equal(t, http.StatusOK, code)
	var monitor map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &monitor))
	assert.Equal(t, "monitor", monitor["command"])
	assert.Equal(t, 5.0, monitor["znode_count"], "a fresh tree, as ZooKeeper counts it")
	assert.Equal(t, "standalone", monitor["server_state"])

	code, _ = get(admin + "/commands/nonsense")
	assert.Equal(t, http.StatusNotFound, code)

	code, body = get("http://" + ts.MetricsAddr().String() + "/metrics")
	assert.Equal(t, http.StatusOK, code)
	for _, line := range []string{"\nznode_count 5\n", "\noutstanding_requests 0\n", "\nnum_alive_connections ", "# TYPE watch_count gauge\n", "\navg_latency "} {
		assert.Contains(t, body, line)
	}
}

// shape masks a four-letter word's answer down to its structure: each
// line's text before the first ':', '=' or tab, digits masked, and lines
// that name this run's addresses, paths or hosts dropped by the caller.
func shape(answer string) []string {
	answer = hexNumber.ReplaceAllString(answer, "0x#")
	mask := strings.NewReplacer("0", "#", "1", "#", "2", "#", "3", "#", "4", "#", "5", "#", "6", "#", "7", "#", "8", "#", "9", "#")
	var out []string
	for _, line := range strings.Split(answer, "\n") {
		if i := strings.IndexAny(line, ":=\t"); i >= 0 {
			line = line[:i]
		}
		line = mask.Replace(line)
		// Connection lines repeat once per connection; how many there are
		// depends on when each server notices the previous word's
		// connection gone.
		if strings.HasPrefix(line, " /") && len(out) > 0 && out[len(out)-1] == line {
			continue
		}
		out = append(out, line)
	}
	return out
}

// upTo returns lines up to and including the first equal to last.
func upTo(lines []string, last string) []string {
	for i, l := range lines {
		if l == last {
			return lines[:i+1]
		}
	}
	return lines
}

// withoutExpirySets drops dump's expiry-set entries from a shape: each set's
// "N expire at <time>" line and its members, which shape leaves empty (a tab,
// then the session id).
func withoutExpirySets(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l == "" || strings.Contains(l, " expire at ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

var hexNumber = regexp.MustCompile(`0x[0-9a-f]+`)

// TestFourLetterWordsMatchZooKeeper asks Debian's ZooKeeper 3.8 and zabd,
// each with one session holding an ephemeral and a data watch, the same
// words and compares the answers' structure; mntr's keys must be
// ZooKeeper's, apart from zabd's own zabd_* ones.
func TestFourLetterWordsMatchZooKeeper(t *testing.T) {
	zk := zkprocess.ForTest(t, map[string]string{"tickTime": "2000"})
	ts := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, addr := range []string{zk.Addr, ts.addr} {
		c := dial(t, ctx, addr)
		defer c.CloseSession(ctx)
		_, err := c.Create(ctx, "/e", nil, client.OpenACL, wire.ModeEphemeral)
		require.NoError(t, err)
		_, _, err = c.GetData(ctx, "/e", true)
		require.NoError(t, err)
	}
	for _, w := range []string{"ruok", "isro", "srvr", "stat", "cons", "conf", "dirs", "crst", "srst", "dump"} {
		t.Run(w, func(t *testing.T) {
			zkShape, ours := shape(word(t, zk.Addr, w)), shape(word(t, ts.addr, w))
			if w == "dump" {
				// How sessions and connections fall into expiry sets, and
				// how many sets there are, depends on when each was last
				// heard from (ZooKeeper also keeps emptied sets until its
				// expirer polls them): compare up to the connection sets'
				// header, leaving out the session sets' entries.
				zkShape = withoutExpirySets(upTo(zkShape, "Connections Sets (#)/(#)"))
				ours = withoutExpirySets(upTo(ours, "Connections Sets (#)/(#)"))
			}
			assert.Equal(t, zkShape, ours)
		})
	}
	t.Run("mntr", func(t *testing.T) {
		zkKeys := map[string]bool{}
		for _, line := range strings.Split(word(t, zk.Addr, "mntr"), "\n") {
			key, _, _ := strings.Cut(line, "\t")
			zkKeys[key] = true
		}
		for _, line := range strings.Split(strings.TrimSpace(word(t, ts.addr, "mntr")), "\n") {
			key, value, ok := strings.Cut(line, "\t")
			require.True(t, ok, "mntr line %q has no tab", line)
			require.NotEmpty(t, value)
			if !strings.HasPrefix(key, "zk_zabd_") {
				assert.True(t, zkKeys[key], "mntr key %s is not ZooKeeper's", key)
			}
		}
	})
}
