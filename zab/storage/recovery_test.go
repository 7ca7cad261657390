package storage

import (
	"errors"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// logWith writes txns 1..n (syncing after each) and returns the store.
func logWith(t *testing.T, fsys *vfs.Sim, n int64, snapAt int64) (*Store, *Log) {
	t.Helper()
	s := openStore(t, fsys, "/d", func(o *Options) { o.SnapCount = 1000 })
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(1))
	tree := newTestTree()
	logTxns(t, s, rec.Log, tree, n, 40, rng, func(z int64) bool { return z == snapAt })
	return s, rec.Log
}

func TestTornTailIsQuarantined(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
	s, log := logWith(t, fsys, 10, 5)
	end := log.curOff
	// A record that was being written when the power went: half of it.
	f, err := fsys.Open("/d/version-2/" + LogName(1))
	require.NoError(t, err)
	torn := appendRecord(nil, makeEntry(11, 40, rand.New(rand.NewSource(2))))
	_, err = f.WriteAt(torn[:len(torn)/2], end)
	require.NoError(t, err)

	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	require.Equal(t, int64(10), rec.LastZxid)
	require.Len(t, rec.Warnings, 1)
	require.Contains(t, rec.Warnings[0], LogName(1))
	q := quarantineName(LogName(1), end)
	require.Contains(t, rec.Warnings[0], q)
	kept, err := vfs.ReadFull(fsys, "/d/version-2/"+q)
	require.NoError(t, err)
	require.Equal(t, torn[:len(torn)/2], kept)

	again, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	require.Empty(t, again.Warnings)
	require.Equal(t, int64(10), again.LastZxid)
}

// A torn-looking tail (zeros running to a sector boundary inside txn 3)
// cannot be cut when the snapshot at 8 holds txns past it: they were
// durable before the snapshot was written.
func TestTornTailBeforeSnapshotRefuses(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
	s, _ := logWith(t, fsys, 10, 8)
	rec3 := int64(fileHeaderLen) + 2*int64(len(appendRecord(nil, makeEntry(1, 40, rand.New(rand.NewSource(1))))))
	f, err := fsys.Open("/d/version-2/" + LogName(1))
	require.NoError(t, err)
	size, err := f.Size()
	require.NoError(t, err)
	// Zero everything from inside txn 3 on, as a crash that lost the
	// sectors there would.
	_, err = f.WriteAt(make([]byte, size-rec3-20), rec3+20)
	require.NoError(t, err)
	require.NoError(t, f.Sync())

	_, err = s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	var c *CorruptError
	require.True(t, errors.As(err, &c))
	require.Equal(t, LogName(1), c.File)
	require.Equal(t, rec3, c.Offset)
	require.Contains(t, err.Error(), "before the snapshot")

	s.opts.AllowDataLoss = true
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	require.Equal(t, int64(8), rec.LastZxid, "the snapshot holds 8; the log after the damage is set aside")
	require.NotEmpty(t, rec.Warnings)
}

func TestCompressedSnapshotIsRefused(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
	s, _ := logWith(t, fsys, 3, 2)
	f, err := fsys.Create("/d/version-2/snapshot.3.gz")
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0x1f, 0x8b}, 0)
	require.NoError(t, err)
	_, err = s.Recover(newTestTree().load)
	require.ErrorContains(t, err, "snapshot.3.gz: compressed snapshots")
}

func TestInstallSnapshot(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
	s, log := logWith(t, fsys, 10, 0)
	// The leader's history: 1..6 as ours, then epoch 2. Ours diverged at 7.
	leader := newTestTree()
	rng := rand.New(rand.NewSource(1))
	for z := int64(1); z <= 6; z++ {
		leader.entries[z] = makeEntry(z, 40, rng)
	}
	snapZxid := int64(2<<32 | 3)
	leader.entries[snapZxid] = makeEntry(snapZxid, 40, rng)
	_, err := s.InstallSnapshot(log, leader.snapshot(snapZxid))
	require.NoError(t, err)
	require.Equal(t, snapZxid, log.LastZxid())
	_, err = log.Append(makeEntry(snapZxid, 40, rng))
	require.Error(t, err, "nothing at or below the snapshot")
	next := makeEntry(snapZxid+1, 40, rng)
	_, err = log.Append(next)
	require.NoError(t, err)
	_, err = log.Sync()
	require.NoError(t, err)

	fsys.Crash()
	tree := newTestTree()
	rec, err := s.Recover(tree.load)
	require.NoError(t, err)
	require.Equal(t, SnapshotName(snapZxid), rec.Snapshot.Name)
	require.Equal(t, leader.entries, tree.entries)
	got, order, err := readAll(rec.Log, snapZxid+1)
	require.NoError(t, err)
	require.Equal(t, []int64{snapZxid + 1}, order, "replay starts after the snapshot; our own 7..10 are not replayed")
	require.Equal(t, next, got[snapZxid+1])
}

// TestInstallSnapshotOnAFullDiskFailsTheLog: a SNAP's snapshot that cannot
// be written (a full disk) fails the install with ErrFailed and leaves the
// log unusable, as a failed log write does: the log was cut for the
// snapshot, and only a restart's recovery may go on from what is on disk
// (simulator seed 225355: the shell took it for an error it may retry).
func TestInstallSnapshotOnAFullDiskFailsTheLog(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
	s, log := logWith(t, fsys, 10, 0)
	leader := newTestTree()
	rng := rand.New(rand.NewSource(1))
	snapZxid := int64(2<<32 | 3)
	leader.entries[snapZxid] = makeEntry(snapZxid, 40, rng)
	fsys.SetConfig(vfs.SimConfig{WriteNoSpace: 1})
	_, err := s.InstallSnapshot(log, leader.snapshot(snapZxid))
	require.ErrorIs(t, err, ErrFailed)
	require.ErrorIs(t, err, vfs.ErrNoSpace)
	fsys.SetConfig(vfs.SimConfig{})
	_, err = log.Append(makeEntry(snapZxid+1, 40, rng))
	require.ErrorIs(t, err, ErrFailed, "the log stays failed")
}

// TestCorruptInstalledSnapshotUnderANewerCorruptOneRefuses: snapshot.4 is
// taken locally, then one installed at 3<<32|2 (SNAP; the log before it is
// removed), the log goes on with epoch 4 and another snapshot is taken at
// 4<<32|3. With both newer snapshots corrupt, recovery falls back to
// snapshot.4; the log, starting at epoch 4's first txn, reaches the newest
// corrupt one but not back to the installed one, whose txns 3<<32|1 and
// 3<<32|2 are in no log here. Recovery must refuse. Checked only against
// the newest corrupt snapshot, it started without them (TestCrashRecovery,
// seed 13872656585559453258, where reads that flipped bits made both look
// corrupt).
func TestCorruptInstalledSnapshotUnderANewerCorruptOneRefuses(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
	s, log := logWith(t, fsys, 10, 4)
	leader := newTestTree()
	rng := rand.New(rand.NewSource(7))
	installed := int64(3<<32 | 2)
	for _, z := range []int64{1, 2, 3, 4, 3<<32 | 1, installed} {
		leader.entries[z] = makeEntry(z, 40, rng)
	}
	installedName, err := s.InstallSnapshot(log, leader.snapshot(installed))
	require.NoError(t, err)
	for z := int64(4<<32 | 1); z <= 4<<32|3; z++ {
		leader.entries[z] = makeEntry(z, 40, rng)
		_, err = log.Append(leader.entries[z])
		require.NoError(t, err)
	}
	_, err = log.Sync()
	require.NoError(t, err)
	newestName, err := s.WriteSnapshot(leader.snapshot(4<<32 | 3))
	require.NoError(t, err)
	require.NoError(t, fsys.FlipBit("/d/version-2/"+installedName, 40, 0))
	require.NoError(t, fsys.FlipBit("/d/version-2/"+newestName, 40, 0))

	_, err = s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	var c *CorruptError
	require.True(t, errors.As(err, &c))
	require.Equal(t, installedName, c.File)
	require.Contains(t, err.Error(), "and every newer one are corrupt")
}

// TestOnlySnapshotCorruptAfterAPurgeRefuses: txns 1..5 (a standalone
// server's epoch 0) in one log file, epoch 1's in the next, epoch 2's in a
// third, and snapshots. With every snapshot corrupt there is none to fall
// back to, and the log must reach back to zxid 1. A purge removed the files
// the kept snapshots cover, and the log then starts at an epoch's first
// txn — epoch 2's, or epoch 1's after a standalone epoch 0 — which recovery
// took for the history's start and started without the purged txns
// (TestCrashRecovery, seeds 11086125612379629633 and 6152548339431165575).
// It must refuse. Without a purge the log holds everything from zxid 1,
// and recovery starts from it, warning of the skipped snapshot.
func TestOnlySnapshotCorruptAfterAPurgeRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		snaps  []int64
		retain int // Purge(retain); 0: no purge
	}{
		{"no purge", []int64{2<<32 | 5}, 0},
		{"the log from epoch 2", []int64{2<<32 | 5}, 1},
		{"the log from epoch 1", []int64{1<<32 | 5, 2<<32 | 5}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
			s := openStore(t, fsys, "/d", func(o *Options) { o.SnapCount = 1000 })
			rng := rand.New(rand.NewSource(2))
			tree := newTestTree()
			var names []string
			for _, epoch := range []int64{0, 1, 2} {
				rec, err := s.Recover(newTestTree().load) // a restart: the epoch starts a file
				require.NoError(t, err)
				for z := epoch<<32 | 1; z <= epoch<<32|5; z++ {
					tree.entries[z] = makeEntry(z, 40, rng)
					_, err := rec.Log.Append(tree.entries[z])
					require.NoError(t, err)
				}
				_, err = rec.Log.Sync()
				require.NoError(t, err)
				if slices.Contains(c.snaps, epoch<<32|5) {
					name, err := s.WriteSnapshot(tree.snapshot(epoch<<32 | 5))
					require.NoError(t, err)
					names = append(names, name)
				}
			}
			if c.retain > 0 {
				require.NoError(t, s.Purge(c.retain))
				_, err := fsys.Open("/d/version-2/" + LogName(1))
				require.Error(t, err, "the purge removed epoch 0's log file")
			}
			for _, name := range names {
				require.NoError(t, fsys.FlipBit("/d/version-2/"+name, 40, 0))
			}

			rec, err := s.Recover(newTestTree().load)
			if c.retain > 0 {
				require.ErrorIs(t, err, ErrDataLoss)
				var ce *CorruptError
				require.True(t, errors.As(err, &ce))
				require.Equal(t, names[0], ce.File, "the oldest corrupt snapshot")
				return
			}
			require.NoError(t, err)
			require.Equal(t, int64(2<<32|5), rec.LastZxid)
			_, order, err := readAll(rec.Log, 1)
			require.NoError(t, err)
			require.Len(t, order, 15)
		})
	}
}

// A corrupt installed snapshot cannot be replaced by an older one: its txns
// are in no log here.
func TestCorruptInstalledSnapshotRefuses(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
	s, log := logWith(t, fsys, 10, 4)
	leader := newTestTree()
	rng := rand.New(rand.NewSource(7))
	snapZxid := int64(3<<32 | 2)
	for _, z := range []int64{1, 2, 3<<32 | 1, snapZxid} {
		leader.entries[z] = makeEntry(z, 40, rng)
	}
	name, err := s.InstallSnapshot(log, leader.snapshot(snapZxid))
	require.NoError(t, err)
	_, err = log.Append(makeEntry(snapZxid+1, 40, rng))
	require.NoError(t, err)
	_, err = log.Sync()
	require.NoError(t, err)
	require.NoError(t, fsys.FlipBit("/d/version-2/"+name, 40, 0))

	_, err = s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	var c *CorruptError
	require.True(t, errors.As(err, &c))
	require.Equal(t, name, c.File)
}

// TestRecordlessLogFileIsRemoved: a crash left log.200000001 with its
// header and no record (its first batch lost), so the log ends at
// 0x100000005, and this server goes on in epoch 1 (a standalone server
// keeps its log's epoch; a learner may be sent older txns). Recovery
// removes the recordless file: kept, it sorted after log.100000006, and
// when a crash then left log.100000006 empty, that damage was in a file
// with a successor and recovery refused (TestCrashRecovery, seed
// 2344199025721758338).
func TestRecordlessLogFileIsRemoved(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
	s, log := logWith(t, fsys, 0, -1)
	rng := rand.New(rand.NewSource(2))
	for z := int64(1<<32 | 1); z <= 1<<32|5; z++ {
		_, err := log.Append(makeEntry(z, 40, rng))
		require.NoError(t, err)
	}
	_, err := log.Sync()
	require.NoError(t, err)
	dir := "/d/version-2/"
	f, err := fsys.Create(dir + LogName(2<<32|1))
	require.NoError(t, err)
	_, err = f.WriteAt(append(appendFileHeader(nil, wire.TxnLogMagic, 0), make([]byte, 4096)...), 0)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, fsys.SyncDir(dir))

	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	require.Equal(t, int64(1<<32|5), rec.LastZxid)
	require.Len(t, rec.Warnings, 1)
	require.Contains(t, rec.Warnings[0], "removed txn log "+LogName(2<<32|1))
	_, err = fsys.Open(dir + LogName(2<<32|1))
	require.Error(t, err)

	// Epoch 1 goes on in a new file, which a crash leaves empty.
	_, err = rec.Log.Append(makeEntry(1<<32|6, 40, rng))
	require.NoError(t, err)
	_, err = rec.Log.Sync()
	require.NoError(t, err)
	g, err := fsys.Open(dir + LogName(1<<32|6))
	require.NoError(t, err)
	require.NoError(t, g.Truncate(0))
	require.NoError(t, g.Sync())

	rec, err = s.Recover(newTestTree().load)
	require.NoError(t, err)
	require.Equal(t, int64(1<<32|5), rec.LastZxid)
}
