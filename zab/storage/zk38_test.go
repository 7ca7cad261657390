package storage

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// expectedNode is one node of an expected.json: the tree a ZooKeeper server
// served, as kazoo read it.
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
	DataLength  int32  `json:"dataLength"`
}

// copyZK38 copies the recorded data directory to a temporary one, since
// recovery may write, and puts back zero padding after each log file (cut
// off for the check-in) as ZooKeeper's preallocation leaves it.
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
		if _, ok := parseZxidName(e.Name(), logPrefix); ok {
			b = append(b, make([]byte, 1<<20-len(b))...)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, VersionDir, e.Name()), b, 0o644))
	}
	return dir
}

// TestReadZooKeeper38DataDir starts from a data directory ZooKeeper 3.8
// wrote (testdata/zk38, see its README): recovery loads the newest snapshot
// into a datatree and replays the log after it, and the tree is then the
// one ZooKeeper served, every path, data and stat, with the digests
// ZooKeeper logged.
func TestReadZooKeeper38DataDir(t *testing.T) {
	dir := copyZK38(t)
	raw, err := os.ReadFile(filepath.Join("testdata", "zk38", "expected.json"))
	require.NoError(t, err)
	var expected map[string]expectedNode
	require.NoError(t, json.Unmarshal(raw, &expected))

	s, err := Open(Options{FS: vfs.OS{}, Dir: dir, Rand: rand.New(rand.NewSource(1))})
	require.NoError(t, err)
	var tree *datatree.Tree
	rec, err := s.Recover(func(d *wire.Decoder, zxid int64) (err error) {
		tree, err = datatree.Load(datatree.Config{}, d, zxid)
		return err
	})
	require.NoError(t, err)
	require.Empty(t, rec.Warnings)
	require.Equal(t, SnapshotName(0x30), rec.Snapshot.Name)
	require.NotNil(t, rec.Snapshot.Digest, "3.8 writes the digest section")

	replay(t, tree, rec)
	requireTree(t, tree, expected, []wire.Id{{Scheme: "digest", ID: datatree.DigestID("u:p")}})
}

// replay applies the log after the snapshot, checking each txn's logged
// digest against the tree's.
func replay(t *testing.T, tree *datatree.Tree, rec *Recovery) {
	t.Helper()
	it, err := rec.Log.Iterator(rec.Snapshot.Zxid + 1)
	require.NoError(t, err)
	defer it.Close()
	for it.Next() {
		txn, err := zab.DecodeTxnEntry(it.Entry())
		require.NoError(t, err)
		tree.Apply(&txn, nil)
		if txn.Digest.Version != 0 {
			require.Equal(t, txn.Digest.TreeDigest, tree.Digest(), "digest after zxid %#x", txn.Header.Zxid)
		}
	}
	require.NoError(t, it.Err())
	require.Equal(t, rec.LastZxid, tree.LastZxid())
}

// requireTree checks that tree holds exactly the expected nodes.
func requireTree(t *testing.T, tree *datatree.Tree, expected map[string]expectedNode, auth []wire.Id) {
	t.Helper()
	seen := 0
	var walk func(path string)
	walk = func(path string) {
		want, ok := expected[path]
		require.True(t, ok, "the tree has %s, the server did not", path)
		seen++
		data, st, code := tree.GetData(path, auth, false, 0)
		require.Equal(t, wire.ErrOK, code, path)
		require.Equal(t, want.Data, string(data), path)
		require.Equal(t, want, expectedNode{
			Data: want.Data, Czxid: st.Czxid, Mzxid: st.Mzxid, Pzxid: st.Pzxid, Ctime: st.Ctime, Mtime: st.Mtime,
			Version: st.Version, Cversion: st.Cversion, Aversion: st.Aversion, Ephemeral: st.EphemeralOwner,
			NumChildren: st.NumChildren, DataLength: st.DataLength,
		}, path)
		children, _, code := tree.GetChildren(path, auth, false, 0)
		require.Equal(t, wire.ErrOK, code, path)
		for _, c := range children {
			if path == "/" {
				walk("/" + c)
			} else {
				walk(path + "/" + c)
			}
		}
	}
	walk("/")
	require.Equal(t, len(expected), seen, "nodes the server had and the tree lacks")
}
