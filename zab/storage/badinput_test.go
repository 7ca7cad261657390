package storage

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// The bad inputs of issue 14, at the storage level: each refusal is one
// line naming the file, the offset, the txns at stake and both repairs.

// durableLog writes txns 1..n, each synced, rolling to a new file before
// each zxid in rollAt, and returns the store (whose refusals name zabd's
// flag) and the offset of each txn's record in its file.
func durableLog(t *testing.T, fsys *vfs.Sim, n int64, rollAt ...int64) (*Store, map[int64]int64) {
	t.Helper()
	s := openStore(t, fsys, "/d", func(o *Options) { o.SnapCount = 1 << 20; o.AllowDataLossName = "-allow-data-loss" })
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(1))
	offsets := map[int64]int64{}
	for z := int64(1); z <= n; z++ {
		for _, r := range rollAt {
			if r == z {
				rec.Log.Roll()
			}
		}
		e := makeEntry(z, 30, rng)
		rolled, err := rec.Log.Append(e)
		require.NoError(t, err)
		if rolled {
			offsets[z] = fileHeaderLen
		} else {
			offsets[z] = offsets[z-1] + int64(recordLen(makeEntry(z-1, 30, rand.New(rand.NewSource(1)))))
		}
		_, err = rec.Log.Sync()
		require.NoError(t, err)
	}
	return s, offsets
}

func requireOneLine(t *testing.T, err error, parts ...string) {
	t.Helper()
	msg := err.Error()
	require.NotContains(t, msg, "\n", "one line")
	for _, p := range parts {
		require.Contains(t, msg, p)
	}
}

func recoveredZxids(t *testing.T, s *Store) []int64 {
	t.Helper()
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	_, order, err := readAll(rec.Log, 1)
	require.NoError(t, err)
	return order
}

func TestFlipInTheMiddleOfTheNewestLogRefuses(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{SectorSize: 512}, rand.New(rand.NewSource(1)))
	s, offsets := durableLog(t, fsys, 300)
	path := "/d/version-2/" + LogName(1)
	at := offsets[150]
	require.NoError(t, fsys.FlipBit(path, at+40, 5))

	_, err := s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	var c *CorruptError
	require.True(t, errors.As(err, &c))
	require.Equal(t, CorruptError{File: LogName(1), Offset: at, Reason: c.Reason}, *c)
	requireOneLine(t, err, path, fmt.Sprintf("offset %d", at), "one flipped bit", "txns 0x96..0x12c",
		"another member or a backup", "-allow-data-loss", quarantineName(LogName(1), at))
	require.NotContains(t, err.Error(), "AllowDataLoss")

	// The operator restores the file: everything is there.
	require.NoError(t, fsys.FlipBit(path, at+40, 5))
	require.Len(t, recoveredZxids(t, s), 300)

	// Or cuts the log explicitly, and is told what went.
	require.NoError(t, fsys.FlipBit(path, at+40, 5))
	s.opts.AllowDataLoss = true
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	require.Equal(t, int64(149), rec.LastZxid)
	require.Contains(t, rec.Warnings[0], "-allow-data-loss given")
	require.Contains(t, rec.Warnings[0], "txns 0x96..0x12c")
	require.Contains(t, rec.Damaged, "txns 0x96..0x12c")
	require.NoError(t, rec.Log.Close())

	// The loss is remembered across crashes and starts, until forgotten.
	fsys.Crash()
	s.opts.AllowDataLoss = false
	rec, err = s.Recover(newTestTree().load)
	require.NoError(t, err, "the cut is permanent")
	require.Equal(t, int64(149), rec.LastZxid)
	require.Contains(t, rec.Damaged, "txns 0x96..0x12c", "a restart before the repair still knows the loss")
	require.NoError(t, rec.Log.Close())
	require.NoError(t, s.ClearDamage())
	fsys.Crash()
	rec, err = s.Recover(newTestTree().load)
	require.NoError(t, err)
	require.Empty(t, rec.Damaged)
}

func TestFlipInAnOlderLogRefuses(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{SectorSize: 512}, rand.New(rand.NewSource(1)))
	s, offsets := durableLog(t, fsys, 40, 21)
	require.NoError(t, fsys.FlipBit("/d/version-2/"+LogName(1), offsets[20]+3, 0))
	_, err := s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	requireOneLine(t, err, "/d/version-2/"+LogName(1), fmt.Sprintf("offset %d", offsets[20]), "has successors",
		"txns 0x14..0x28", "-allow-data-loss", "move the later log files aside")
}

func TestFlipInTheLastRecordRefuses(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{SectorSize: 512}, rand.New(rand.NewSource(1)))
	s, offsets := durableLog(t, fsys, 10)
	require.NoError(t, fsys.FlipBit("/d/version-2/"+LogName(1), offsets[10]+30, 2))
	_, err := s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	requireOneLine(t, err, fmt.Sprintf("offset %d", offsets[10]), "one flipped bit", "txn 0xa was written in full")
}

func TestTruncatedLogRefuses(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{SectorSize: 512}, rand.New(rand.NewSource(1)))
	s, offsets := durableLog(t, fsys, 30)
	f, err := fsys.Open("/d/version-2/" + LogName(1))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(offsets[20]+25)) // inside txn 20's record
	require.NoError(t, f.Sync())
	_, err = s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	requireOneLine(t, err, fmt.Sprintf("offset %d", offsets[20]), "cut short", "txns from 0x14 on", "-allow-data-loss")
}

func TestMissingLogFileRefuses(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{SectorSize: 512}, rand.New(rand.NewSource(1)))
	s, _ := durableLog(t, fsys, 30, 11, 21)
	require.NoError(t, fsys.Remove("/d/version-2/"+LogName(11)))
	_, err := s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	requireOneLine(t, err, LogName(21), "a log file is missing", "txns 0xb..0x14 are missing")
}

// A crash that lost a sector of the last batch while keeping a later one
// leaves valid records after the damage; they were never durable, and
// recovery cuts them off with a warning that says so.
func TestTornBatchWithRecordsAfterTheHoleIsCut(t *testing.T) {
	sc := buildScene(t, sceneSpec{sector: 512, prealloc: 4096, batches: [][]int{{100, 100}, {150, 150, 150, 150, 150, 150, 150}}, inFlight: true, roll: -1, seed: 1})
	win := sc.window()
	require.Greater(t, len(win), 2)
	fsys := sc.fs.Clone(sceneRand)
	fsys.CrashWith(CrashFateAll(func(_ string, off int64, n int) int {
		if off == win[0].off {
			return 0
		}
		return n
	}))
	s, err := Open(sceneOptions(fsys, sc.prealloc))
	require.NoError(t, err)
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	require.Equal(t, sc.durable, rec.LastZxid)
	require.Len(t, rec.Warnings, 1)
	require.Contains(t, rec.Warnings[0], "never reported durable")
	require.True(t, strings.Contains(rec.Warnings[0], "they hold txns"), rec.Warnings[0])
}

func TestCorruptSnapshotWithoutTheLogRefuses(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(5)))
	s := openStore(t, fsys, "/d", func(o *Options) { o.AllowDataLossName = "-allow-data-loss" })
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	logTxns(t, s, rec.Log, newTestTree(), 30, 20, rand.New(rand.NewSource(6)), func(z int64) bool { return z == 10 || z == 25 })
	// Retention keeps the newest snapshot and the log from it on: the older
	// snapshot cannot be brought up to it.
	require.NoError(t, s.Purge(1))
	names, err := fsys.List(s.Dir())
	require.NoError(t, err)
	require.Contains(t, names, SnapshotName(25))
	require.NoError(t, fsys.FlipBit(s.Dir()+"/"+SnapshotName(25), 60, 1))

	_, err = s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	requireOneLine(t, err, "/d/version-2/"+SnapshotName(25), "the newest snapshot is corrupt", "-allow-data-loss")
}

// TestCorruptSnapshotFallsBackToAnOlderOneAcrossAnEpochStart: ZooKeeper's
// data directory as a member leaves it — snapshot.0 from before any txn,
// the log from epoch 1's first txn — with the newest snapshot cut short (a
// ZooKeeper stopped while writing it: it writes in place). The log holds
// everything from snapshot.0 on, so recovery starts from it with a
// warning, as ZooKeeper does; found by the rolling-migration test. The
// same older snapshot with a log that starts only after the corrupt one
// (a snapshot installed by SNAP removed the log before it) still refuses.
func TestCorruptSnapshotFallsBackToAnOlderOneAcrossAnEpochStart(t *testing.T) {
	for _, c := range []struct {
		name      string
		firstZxid int64
		refuses   bool
	}{
		{"the log starts at the epoch's first txn", 1<<32 | 1, false},
		{"the log starts after the corrupt snapshot", 2<<32 | 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(7)))
			s := openStore(t, fsys, "/d", nil)
			rec, err := s.Recover(newTestTree().load)
			require.NoError(t, err)
			tree := newTestTree()
			_, err = s.WriteSnapshot(tree.snapshot(0))
			require.NoError(t, err)
			rng := rand.New(rand.NewSource(8))
			const corruptAt = 1<<32 | 20
			for z := c.firstZxid; z < c.firstZxid+30; z++ {
				e := makeEntry(z, 20, rng)
				_, err := rec.Log.Append(e)
				require.NoError(t, err)
				_, err = rec.Log.Sync()
				require.NoError(t, err)
				tree.entries[z] = e
			}
			_, err = s.WriteSnapshot(tree.snapshot(corruptAt))
			require.NoError(t, err)
			require.NoError(t, fsys.FlipBit(s.Dir()+"/"+SnapshotName(corruptAt), 60, 1))

			rec, err = s.Recover(newTestTree().load)
			if c.refuses {
				require.ErrorIs(t, err, ErrDataLoss)
				return
			}
			require.NoError(t, err)
			require.Equal(t, SnapshotName(0), rec.Snapshot.Name)
			require.Equal(t, c.firstZxid+29, rec.LastZxid)
			require.Len(t, rec.Warnings, 1)
			require.Contains(t, rec.Warnings[0], SnapshotName(corruptAt))
		})
	}
}

// TestFlipInTheOnlyRecordBeforeANewEpochRefuses: a log file whose one
// record is damaged, followed by a file that starts a new epoch. That the
// next file starts an epoch says nothing of how many txns the damaged one
// held (its epoch may have gone on), so the damage is not a harmless tail:
// cutting it silently lost every txn of the older epoch. Found by the
// ensemble simulator's long hunt (seed 4248).
func TestFlipInTheOnlyRecordBeforeANewEpochRefuses(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{SectorSize: 512}, rand.New(rand.NewSource(1)))
	s := openStore(t, fsys, "/d", func(o *Options) { o.SnapCount = 1 << 20 })
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(1))
	for _, z := range []int64{1<<32 | 1, 2<<32 | 1, 2<<32 | 2} {
		if z == 2<<32|1 {
			rec.Log.Roll()
		}
		_, err := rec.Log.Append(makeEntry(z, 30, rng))
		require.NoError(t, err)
		_, err = rec.Log.Sync()
		require.NoError(t, err)
	}
	require.NoError(t, fsys.FlipBit("/d/version-2/"+LogName(1<<32|1), fileHeaderLen+20, 1))
	_, err = s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
}

// snapshotAt writes a snapshot at zxid of the tree durableLog's txns 1..zxid
// make.
func snapshotAt(t *testing.T, s *Store, zxid int64) {
	t.Helper()
	tree := newTestTree()
	rng := rand.New(rand.NewSource(1))
	for z := int64(1); z <= zxid; z++ {
		tree.entries[z] = makeEntry(z, 30, rng)
	}
	_, err := s.WriteSnapshot(tree.snapshot(zxid))
	require.NoError(t, err)
}

// TestFlipInALogFileTheSnapshotCoversThenACutBeforeIt: log.1 holds txns
// 1..20, log.15 21..34, log.23 35..40; snapshot.1e covers log.1, so recovery
// reads log.1 no more, and a flipped bit there goes unnoticed. Then log.15's
// header is damaged: an AllowDataLoss recovery moves log.15 and log.23
// aside, which leaves log.1 as the file replay reads from 0x1f on (the last
// one starting at or before it). Recovery had checked only log.15 and
// log.23, and replay failed on log.1's flipped record: the start that
// AllowDataLoss was to make possible failed after recovery had accepted the
// directory (ensemble simulator, hunt seed 112486). Recovery must check the
// file its cut leaves in front, and refuse or cut it naming file and offset.
func TestFlipInALogFileTheSnapshotCoversThenACutBeforeIt(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{SectorSize: 512}, rand.New(rand.NewSource(1)))
	s, offsets := durableLog(t, fsys, 40, 21, 35)
	snapshotAt(t, s, 30)
	old := "/d/version-2/" + LogName(1)
	require.NoError(t, fsys.FlipBit(old, offsets[5]+6, 0))
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err, "snapshot.1e covers log.1: recovery does not read it")
	require.Empty(t, rec.Warnings)
	require.NoError(t, rec.Log.Close())

	require.NoError(t, fsys.FlipBit("/d/version-2/"+LogName(21), 2, 4))
	_, err = s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	requireOneLine(t, err, LogName(21), "offset 0", "has successors", "txns 0x15..0x28")

	s.opts.AllowDataLoss = true
	tree := newTestTree()
	rec, err = s.Recover(tree.load)
	require.NoError(t, err)
	require.Equal(t, SnapshotName(30), rec.Snapshot.Name)
	require.Equal(t, int64(30), rec.LastZxid)
	require.Contains(t, strings.Join(rec.Warnings, "\n"), fmt.Sprintf("%s/%s at offset %d", "/d/version-2", LogName(1), offsets[5]),
		"the cut left log.1 in front: recovery checks it and names its damage")
	require.Contains(t, rec.Damaged, LogName(1))
	_, order, err := readAll(rec.Log, rec.Snapshot.Zxid+1)
	require.NoError(t, err, "replay reads only what recovery checked")
	require.Empty(t, order)
	require.NoError(t, rec.Log.Close())

	// What recovery left recovers again, without AllowDataLoss and with
	// nothing new to cut.
	s.opts.AllowDataLoss = false
	rec, err = s.Recover(newTestTree().load)
	require.NoError(t, err)
	require.Empty(t, rec.Warnings)
	require.Equal(t, int64(30), rec.LastZxid)
	_, _, err = readAll(rec.Log, rec.Snapshot.Zxid+1)
	require.NoError(t, err)
}

// TestFlipInALogFileTheSnapshotCoversThenAnEmptyNewerFile: the same
// exposure without AllowDataLoss. log.1f, the file after snapshot.1e, holds
// only its header (a crash right after the roll); recovery removes it as
// holding no txn, which leaves log.1 in front of replay. log.1's flipped bit
// must be refused at recovery, naming file and offset, not found by replay.
func TestFlipInALogFileTheSnapshotCoversThenAnEmptyNewerFile(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{SectorSize: 512}, rand.New(rand.NewSource(1)))
	s, offsets := durableLog(t, fsys, 30)
	snapshotAt(t, s, 30)
	old := "/d/version-2/" + LogName(1)
	require.NoError(t, fsys.FlipBit(old, offsets[5]+6, 0))
	f, err := fsys.Create("/d/version-2/" + LogName(31))
	require.NoError(t, err)
	_, err = f.WriteAt(appendFileHeader(nil, wire.TxnLogMagic, 0), 0)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	require.NoError(t, fsys.SyncDir("/d/version-2"))

	_, err = s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	requireOneLine(t, err, old, fmt.Sprintf("offset %d", offsets[5]), "one flipped bit")
}
