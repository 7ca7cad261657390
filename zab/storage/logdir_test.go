package storage

import (
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/storage/vfs"
)

// filesWithPrefix lists the names in dir that start with prefix.
func filesWithPrefix(t *testing.T, fsys vfs.FS, dir, prefix string) []string {
	t.Helper()
	names, err := fsys.List(dir)
	require.NoError(t, err)
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// TestSeparateLogDir: with a log directory apart from the data directory
// (ZooKeeper's dataLogDir), log files go only to the one and snapshots and
// epochs only to the other; recovery, purge and InstallSnapshot work
// across both.
func TestSeparateLogDir(t *testing.T) {
	base := t.TempDir()
	dataDir, logDir := filepath.Join(base, "data"), filepath.Join(base, "datalog")
	withLogDir := func(o *Options) { o.LogDir = logDir }
	fsys := vfs.OS{}
	s := openStore(t, fsys, dataDir, withLogDir)
	require.Equal(t, filepath.Join(dataDir, VersionDir), s.Dir())
	require.Equal(t, filepath.Join(logDir, VersionDir), s.LogDir())
	tree := newTestTree()
	rec, err := s.Recover(tree.load)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(3))
	logTxns(t, s, rec.Log, tree, 30, 50, rng, func(z int64) bool { return z%10 == 0 && z < 30 })
	require.NoError(t, s.SetAcceptedEpoch(1))
	require.NoError(t, rec.Log.Close())

	logs := filesWithPrefix(t, fsys, s.LogDir(), logPrefix)
	require.Greater(t, len(logs), 2, "SnapCount 10 rolls the log every 5..9 txns")
	require.Empty(t, filesWithPrefix(t, fsys, s.LogDir(), snapshotPrefix))
	require.ElementsMatch(t, []string{SnapshotName(10), SnapshotName(20)}, filesWithPrefix(t, fsys, s.Dir(), snapshotPrefix))
	require.Empty(t, filesWithPrefix(t, fsys, s.Dir(), logPrefix))
	require.Equal(t, []string{acceptedEpochFile}, filesWithPrefix(t, fsys, s.Dir(), acceptedEpochFile))

	// Recovery: the snapshot from the data directory, the log from the other.
	s = openStore(t, fsys, dataDir, withLogDir)
	loaded := newTestTree()
	rec, err = s.Recover(loaded.load)
	require.NoError(t, err)
	require.Empty(t, rec.Warnings)
	require.Equal(t, SnapshotName(20), rec.Snapshot.Name)
	require.Equal(t, int64(30), rec.LastZxid)
	got, order, err := readAll(rec.Log, 21)
	require.NoError(t, err)
	require.Len(t, order, 10)
	for z, e := range got {
		require.Equal(t, tree.entries[z], e)
	}

	// Purge: the older snapshot goes from the data directory, the log files
	// before the one holding zxid 21 from the log directory.
	require.NoError(t, s.Purge(1))
	require.Equal(t, []string{SnapshotName(20)}, filesWithPrefix(t, fsys, s.Dir(), snapshotPrefix))
	kept, err := listLogs(fsys, s.LogDir())
	require.NoError(t, err)
	require.Less(t, len(kept), len(logs), "old log files purged")
	require.LessOrEqual(t, kept[0].zxid, int64(21))
	require.Greater(t, len(kept), 1)
	require.Greater(t, kept[1].zxid, int64(21), "only the files recovery from snapshot 20 needs are kept")
	rec, err = openStore(t, fsys, dataDir, withLogDir).Recover(newTestTree().load)
	require.NoError(t, err)
	require.Equal(t, int64(30), rec.LastZxid)

	// InstallSnapshot: the snapshot lands in the data directory, every log
	// file in the log directory goes.
	leader := tree.clone()
	leader.entries[2<<32|1] = makeEntry(2<<32|1, 50, rng)
	name, err := s.InstallSnapshot(rec.Log, leader.snapshot(2<<32|1))
	require.NoError(t, err)
	require.Contains(t, filesWithPrefix(t, fsys, s.Dir(), snapshotPrefix), name)
	require.Empty(t, filesWithPrefix(t, fsys, s.LogDir(), logPrefix))
	loaded = newTestTree()
	rec, err = openStore(t, fsys, dataDir, withLogDir).Recover(loaded.load)
	require.NoError(t, err)
	require.Equal(t, leader.entries, loaded.entries)
}

// TestSwappedDirsRefused: like ZooKeeper, a log directory holding snapshots
// or a data directory holding log files is refused (dataDir and dataLogDir
// swapped, or a log directory added to a server that kept both together).
func TestSwappedDirsRefused(t *testing.T) {
	base := t.TempDir()
	dataDir, logDir := filepath.Join(base, "data"), filepath.Join(base, "datalog")
	s := openStore(t, vfs.OS{}, dataDir, nil) // one directory, as before
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	_, err = rec.Log.Append(makeEntry(1, 10, rand.New(rand.NewSource(1))))
	require.NoError(t, err)
	_, err = rec.Log.Sync()
	require.NoError(t, err)
	_, err = s.WriteSnapshot(newTestTree().snapshot(1))
	require.NoError(t, err)
	require.NoError(t, rec.Log.Close())

	opts := Options{FS: vfs.OS{}, Dir: dataDir, LogDir: logDir, Rand: rand.New(rand.NewSource(1))}
	_, err = Open(opts)
	require.ErrorContains(t, err, "holds txn log "+LogName(1))
	opts.Dir, opts.LogDir = logDir, dataDir
	_, err = Open(opts)
	require.ErrorContains(t, err, "holds snapshot "+SnapshotName(1))
}
