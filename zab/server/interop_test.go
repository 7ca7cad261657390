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
)

// TestServesZooKeepersDataDir: zabd started on the data directory Debian's
// ZooKeeper 3.8 wrote (snapshot and log, ZooKeeper killed without warning)
// serves the same nodes with the same stats, and carries on with the next
// zxid.
func TestServesZooKeepersDataDir(t *testing.T) {
	zk := zkprocess.ForTest(t, map[string]string{"tickTime": "2000", "snapCount": "50"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, zk.Addr, client.Session{Timeout: 10 * time.Second})
	require.NoError(t, err)
	_, err = c.Create(ctx, "/zk", []byte("root"), client.OpenACL, wire.ModePersistent)
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
	z, err := client.Dial(ctx, ts.addr, client.Session{Timeout: 10 * time.Second})
	require.NoError(t, err)
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
