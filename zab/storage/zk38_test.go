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
	"github.com/zabd/zabd/zab/storage/testdata/zktree"
	"github.com/zabd/zabd/zab/storage/vfs"
)

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
	var expected map[string]zktree.Node
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
	served, err := zktree.Read(tree, []wire.Id{{Scheme: "digest", ID: datatree.DigestID("u:p")}})
	require.NoError(t, err)
	require.Equal(t, expected, served, "the recovered tree is the one ZooKeeper served")
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
