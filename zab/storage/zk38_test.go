package storage

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// expectedNode is one node of testdata/zk38/expected.json, the tree
// ZooKeeper 3.8 served from the recorded data directory.
type expectedNode struct {
	Data        string `json:"data"`
	Czxid       int64  `json:"czxid"`
	Mzxid       int64  `json:"mzxid"`
	Pzxid       int64  `json:"pzxid"`
	Ctime       int64  `json:"ctime"`
	Mtime       int64  `json:"mtime"`
	Version     int32  `json:"version"`
	Cversion    int32  `json:"cversion"`
	Aversion    int32  `json:"aversion"`
	Ephemeral   int64  `json:"ephemeralOwner"`
	NumChildren int32  `json:"numChildren"`
}

// copyZK38 copies the recorded data directory to a temporary one, since
// recovery may write (it never should here).
func copyZK38(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("testdata", "zk38", VersionDir)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, VersionDir), 0o755))
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, VersionDir, e.Name()), b, 0o644))
	}
	return dir
}

// TestReadZooKeeper38DataDir recovers from a data directory that ZooKeeper
// 3.8 wrote (testdata/zk38, see its README): the newest snapshot loads,
// every logged txn after it decodes, and the snapshot's nodes that no later
// txn touched match what ZooKeeper served.
func TestReadZooKeeper38DataDir(t *testing.T) {
	dir := copyZK38(t)
	raw, err := os.ReadFile(filepath.Join("testdata", "zk38", "expected.json"))
	require.NoError(t, err)
	var expected map[string]expectedNode
	require.NoError(t, json.Unmarshal(raw, &expected))

	s, err := Open(Options{FS: vfs.OS{}, Dir: dir, Rand: rand.New(rand.NewSource(1))})
	require.NoError(t, err)
	tree := newTestTree()
	rec, err := s.Recover(tree.load)
	require.NoError(t, err)
	require.Empty(t, rec.Warnings)
	require.Equal(t, SnapshotName(0x30), rec.Snapshot.Name)
	require.NotNil(t, rec.Snapshot.Digest, "3.8 writes the digest section")

	it, err := rec.Log.Iterator(rec.Snapshot.Zxid + 1)
	require.NoError(t, err)
	touched := map[string]bool{}
	var last int64
	for it.Next() {
		e, err := wire.DecodeTxnEntry(it.Entry())
		require.NoError(t, err)
		require.Greater(t, e.Header.Zxid, last)
		last = e.Header.Zxid
		markTouched(touched, e.Body)
	}
	require.NoError(t, it.Err())
	require.NoError(t, it.Close())
	require.Equal(t, last, rec.LastZxid)

	compared := 0
	for path, want := range expected {
		key := path
		if path == "/" {
			key = ""
		}
		got, ok := tree.nodes[key]
		if touched[path] || (!ok && want.Czxid > rec.Snapshot.Zxid) {
			continue
		}
		require.True(t, ok, "snapshot lacks %s", path)
		require.Equal(t, want.Data, string(got.data), path)
		require.Equal(t, want.Czxid, got.stat.Czxid, path)
		require.Equal(t, want.Mzxid, got.stat.Mzxid, path)
		require.Equal(t, want.Version, got.stat.Version, path)
		require.Equal(t, want.Ctime, got.stat.Ctime, path)
		compared++
	}
	require.Greater(t, compared, 20)
}

// markTouched records the paths a txn changes (and their parents, whose
// child stats change), so the test compares only untouched snapshot nodes.
func markTouched(touched map[string]bool, body wire.Record) {
	mark := func(p string) {
		touched[p] = true
		if i := len(p) - 1; i > 0 {
			for i > 0 && p[i] != '/' {
				i--
			}
			parent := p[:i]
			if parent == "" {
				parent = "/"
			}
			touched[parent] = true
		}
	}
	switch b := body.(type) {
	case *wire.CreateTxn:
		mark(b.Path)
	case *wire.DeleteTxn:
		mark(b.Path)
	case *wire.SetDataTxn:
		mark(b.Path)
	case *wire.SetACLTxn:
		mark(b.Path)
	case *wire.CloseSessionTxn:
		for _, p := range b.Paths2Delete {
			mark(p)
		}
	case *wire.MultiTxn:
		for _, sub := range b.Txns {
			if r, err := wire.DecodeTxnBody(sub.Type, wire.NewDecoder(sub.Data)); err == nil {
				markTouched(touched, r)
			}
		}
	}
}
