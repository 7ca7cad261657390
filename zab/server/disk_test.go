package server

import (
	"io"
	"log/slog"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/server/metrics"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// A snapshot is finished only once the log holds every txn in it durably:
// a learner applies what its leader committed before its own fsync, and a
// snapshot beyond the durable log would, after a crash, sit on a log that
// ends before it. When the log can no longer get there (its writer
// failed), the snapshot is abandoned instead of written.
func TestSnapshotWaitsForTheLogToHoldItsTxns(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
	store, err := storage.Open(storage.Options{FS: fsys, Dir: "/d", Rand: newMathRand(2)})
	require.NoError(t, err)
	rec, err := store.Recover(func(*wire.Decoder, int64) error { return nil })
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	disk := newDiskWriter(rec.Log, store, log, newMeasured(metrics.New()))
	stop := make(chan struct{})
	defer close(stop)
	snaps := newSnapshotWriter(store, disk, log, stop, 0, 3, metrics.New().Summary("snapshottime"))
	go snaps.run()
	defer close(snaps.in)

	snapshotAt := func(zxid int64) zab.SnapshotWritten {
		var e wire.Encoder
		tree := datatree.New(datatree.Config{})
		tree.StartSnapshot().Step(&e, 1<<20)
		snaps.in <- zab.SnapshotChunk{Zxid: zxid, First: true, Data: e.Bytes(), Last: true,
			Digest: zab.SnapshotDigest{Zxid: zxid, Version: datatree.DigestVersion, Digest: tree.Digest()}}
		return <-snaps.written
	}

	disk.publish(5) // as the log's writer does after an fsync
	require.NoError(t, snapshotAt(5).Err)

	go disk.publish(7) // the fsync lands while the snapshot waits, or before
	require.NoError(t, snapshotAt(7).Err)

	disk.failWith(storage.ErrFailed)
	written := snapshotAt(9)
	require.ErrorIs(t, written.Err, storage.ErrFailed, "a snapshot beyond the durable log is not written")
	names, err := fsys.List("/d/version-2")
	require.NoError(t, err)
	require.NotContains(t, names, storage.SnapshotName(9))
	require.Contains(t, names, storage.SnapshotName(7))
}
