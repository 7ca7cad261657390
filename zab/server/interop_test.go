package server

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/zkprocess"
	"github.com/zabd/zabd/zab/storage"
)

// TestServesZooKeepersDataDir: zabd started on the data directory Debian's
// ZooKeeper 3.8 wrote (snapshot and log, ZooKeeper killed without warning)
// serves the same nodes with the same stats, and carries on with the next
// zxid.
func TestServesZooKeepersDataDir(t *testing.T) {
	zk := zkprocess.ForTest(t, map[string]string{"tickTime": "2000", "snapCount": "50"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dial(t, ctx, zk.Addr)
	_, err := c.Create(ctx, "/zk", []byte("root"), client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	for i := range 120 { // past snapCount: ZooKeeper writes snapshots too
		_, err = c.Create(ctx, fmt.Sprintf("/zk/n%03d", i), []byte(fmt.Sprint(i)), client.OpenACL, wire.ModePersistentSequential)
		require.NoError(t, err)
	}
	_, err = c.SetData(ctx, "/zk", []byte("changed"), 0)
	require.NoError(t, err)
	want := map[string]wire.Stat{}
	wantData := map[string]string{}
	kids, err := c.GetChildren(ctx, "/zk", false)
	require.NoError(t, err)
	for _, p := range append([]string{"/zk"}, prefixed("/zk/", kids)...) {
		data, st, err := c.GetData(ctx, p, false)
		require.NoError(t, err)
		want[p], wantData[p] = st, string(data)
	}
	last := want["/zk"].Mzxid
	c.Close()
	zk.Stop()

	cfg := testConfig(filepath.Join(zk.Dir, "data"))
	ts := startServer(t, cfg)
	z := dial(t, ctx, ts.addr)
	defer z.CloseSession(ctx)
	for p, st := range want {
		data, got, err := z.GetData(ctx, p, false)
		require.NoError(t, err, p)
		assert.Equal(t, wantData[p], string(data), p)
		assert.Equal(t, st, got, p)
	}
	st, err := z.SetData(ctx, "/zk", nil, -1)
	require.NoError(t, err)
	assert.Greater(t, st.Mzxid, last, "zabd continues after ZooKeeper's last zxid")
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// TestSeparateDataLogDir: with dataLogDir apart from dataDir, zabd writes
// its log files to the one and its snapshots to the other, as ZooKeeper
// does; it recovers from the pair, and Debian's ZooKeeper 3.8 started on
// the same pair serves the same nodes with the same stats.
func TestSeparateDataLogDir(t *testing.T) {
	base := t.TempDir()
	cfg := testConfig(filepath.Join(base, "data"))
	cfg.DataLogDir = filepath.Join(base, "datalog")
	cfg.SnapCount = 10
	ts := startServer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.addr)
	_, err := c.Create(ctx, "/z", []byte("root"), client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	for i := range 40 {
		_, err = c.Create(ctx, fmt.Sprintf("/z/n%03d", i), []byte(fmt.Sprint(i)), client.OpenACL, wire.ModePersistentSequential)
		require.NoError(t, err)
	}
	_, err = c.SetData(ctx, "/z", []byte("changed"), 0)
	require.NoError(t, err)
	wantData, want := readSubtree(t, ctx, c, "/z")
	require.NoError(t, c.CloseSession(ctx))
	ts.stop(t)

	names := func(dir, pattern string) []string {
		m, err := filepath.Glob(filepath.Join(dir, storage.VersionDir, pattern))
		require.NoError(t, err)
		return m
	}
	assert.NotEmpty(t, names(cfg.DataLogDir, "log.*"))
	assert.Empty(t, names(cfg.DataLogDir, "snapshot.*"))
	assert.NotEmpty(t, names(cfg.DataDir, "snapshot.*"), "snapCount 10: snapshots were taken")
	assert.Empty(t, names(cfg.DataDir, "log.*"))

	// One server at a time on the directories: each appends to them.
	check := func(who, addr string) {
		z, err := client.Dial(ctx, addr, client.Session{Timeout: 10 * time.Second})
		require.NoError(t, err, who)
		gotData, got := readSubtree(t, ctx, z, "/z")
		assert.Equal(t, wantData, gotData, who)
		assert.Equal(t, want, got, who)
		require.NoError(t, z.CloseSession(ctx), who)
		// ZooKeeper 3.8's quirk, which zabd copies: dirs calls the log
		// directory's size (64 MiB of preallocated log) datadir_size, and
		// the snapshot directory's logdir_size.
		var dataSize, logSize int64
		_, err = fmt.Sscanf(word(t, addr, "dirs"), "datadir_size: %d\nlogdir_size: %d\n", &dataSize, &logSize)
		require.NoError(t, err, who)
		assert.GreaterOrEqual(t, dataSize, int64(64<<20), who)
		assert.Less(t, logSize, int64(64<<20), who)
	}
	ts = startServer(t, cfg)
	check("zabd restarted", ts.addr)
	conf := word(t, ts.addr, "conf")
	assert.Contains(t, conf, "\ndataDir="+filepath.Join(cfg.DataDir, storage.VersionDir)+"\n")
	assert.Contains(t, conf, "\ndataLogDir="+filepath.Join(cfg.DataLogDir, storage.VersionDir)+"\n")
	ts.stop(t)
	zk := zkprocess.ForTest(t, map[string]string{"dataDir": cfg.DataDir, "dataLogDir": cfg.DataLogDir})
	check("ZooKeeper", zk.Addr)
}

// readSubtree returns the data and stats of root and its children.
func readSubtree(t *testing.T, ctx context.Context, c *client.Conn, root string) (map[string]string, map[string]wire.Stat) {
	t.Helper()
	kids, err := c.GetChildren(ctx, root, false)
	require.NoError(t, err)
	data, stats := map[string]string{}, map[string]wire.Stat{}
	for _, p := range append([]string{root}, prefixed(root+"/", kids)...) {
		d, st, err := c.GetData(ctx, p, false)
		require.NoError(t, err, p)
		data[p], stats[p] = string(d), st
	}
	return data, stats
}
