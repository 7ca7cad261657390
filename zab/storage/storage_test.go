package storage

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/storage/vfs"
)

func openStore(t *testing.T, fsys vfs.FS, dir string, mod func(*Options)) *Store {
	t.Helper()
	opts := Options{FS: fsys, Dir: dir, Rand: rand.New(rand.NewSource(1)), SnapCount: 10, PreallocSize: 16 << 10}
	if mod != nil {
		mod(&opts)
	}
	s, err := Open(opts)
	require.NoError(t, err)
	return s
}

func TestAppendSyncRecoverOnOS(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, vfs.OS{}, dir, nil)
	tree := newTestTree()
	rec, err := s.Recover(tree.load)
	require.NoError(t, err)
	require.Equal(t, int64(0), rec.LastZxid)
	rng := rand.New(rand.NewSource(2))
	want := map[int64][]byte{}
	rolls := 0
	for z := int64(1); z <= 50; z++ {
		e := makeEntry(z, 100, rng)
		want[z] = e
		rolled, err := rec.Log.Append(e)
		require.NoError(t, err)
		if rolled {
			rolls++
		}
		if z%7 == 0 {
			d, err := rec.Log.Sync()
			require.NoError(t, err)
			require.Equal(t, z, d)
		}
	}
	require.NoError(t, rec.Log.Close())
	// SnapCount 10 rolls every 5..9 txns.
	require.GreaterOrEqual(t, rolls, 6)

	got, order, err := readAll(rec.Log, 1)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Len(t, order, 50)

	rec2, err := openStore(t, vfs.OS{}, dir, nil).Recover(newTestTree().load)
	require.NoError(t, err)
	require.Equal(t, int64(50), rec2.LastZxid)
	require.Empty(t, rec2.Warnings)
	got, _, err = readAll(rec2.Log, 23)
	require.NoError(t, err)
	require.Len(t, got, 28)
	require.Equal(t, want[23], got[23])

	// Preallocation: the newest file is padded with zeros in 16 KiB steps.
	logs, err := listLogs(vfs.OS{}, s.Dir())
	require.NoError(t, err)
	st, err := os.Stat(filepath.Join(s.Dir(), logs[len(logs)-1].name))
	require.NoError(t, err)
	require.Zero(t, st.Size()%(16<<10))
}

func TestTruncate(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(3)))
	s := openStore(t, fsys, "/d", nil)
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(4))
	for z := int64(1); z <= 40; z++ {
		_, err := rec.Log.Append(makeEntry(z, 50, rng))
		require.NoError(t, err)
	}
	_, err = rec.Log.Sync()
	require.NoError(t, err)
	require.NoError(t, rec.Log.Truncate(17))
	require.Equal(t, int64(17), rec.Log.LastZxid())
	_, order, err := readAll(rec.Log, 1)
	require.NoError(t, err)
	require.Equal(t, int64(17), order[len(order)-1])
	_, err = rec.Log.Append(makeEntry(17, 10, rng))
	require.Error(t, err, "zxids must grow")
	_, err = rec.Log.Append(makeEntry(0x100000001, 10, rng))
	require.NoError(t, err)
	d, err := rec.Log.Sync()
	require.NoError(t, err)
	require.Equal(t, int64(0x100000001), d)

	fsys.Crash()
	rec, err = openStore(t, fsys, "/d", nil).Recover(newTestTree().load)
	require.NoError(t, err)
	require.Equal(t, int64(0x100000001), rec.LastZxid)
	_, order, err = readAll(rec.Log, 1)
	require.NoError(t, err)
	require.Len(t, order, 18)
}

func TestSnapshotRoundTripAndFallback(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(5)))
	s := openStore(t, fsys, "/d", nil)
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(6))
	tree := newTestTree()
	logTxns(t, s, rec.Log, tree, 30, 20, rng, func(z int64) bool { return z == 10 || z == 20 })
	loaded := newTestTree()
	rec, err = s.Recover(loaded.load)
	require.NoError(t, err)
	require.Equal(t, SnapshotName(20), rec.Snapshot.Name)
	require.Equal(t, &ZxidDigest{Zxid: 20, Version: 2, Digest: 140}, rec.Snapshot.Digest)
	require.Equal(t, []Session{{0x100, 30000}, {0x200, 4000}}, rec.Snapshot.Sessions)
	require.Len(t, loaded.entries, 20)

	// A corrupt newest snapshot is skipped for the previous one.
	require.NoError(t, fsys.FlipBit(s.Dir()+"/"+SnapshotName(20), 100, 3))
	loaded = newTestTree()
	rec, err = s.Recover(loaded.load)
	require.NoError(t, err)
	require.Equal(t, SnapshotName(10), rec.Snapshot.Name)
	require.Len(t, loaded.entries, 10)
	require.Len(t, rec.Warnings, 1)
	require.Contains(t, rec.Warnings[0], SnapshotName(20))
	require.Equal(t, int64(30), rec.LastZxid)

	// Retention: keep the newest snapshot and the logs it needs.
	require.NoError(t, s.Purge(1))
	names, err := fsys.List(s.Dir())
	require.NoError(t, err)
	require.NotContains(t, names, SnapshotName(10))
	require.Contains(t, names, SnapshotName(20))
	logs, err := listLogs(fsys, s.Dir())
	require.NoError(t, err)
	require.LessOrEqual(t, logs[0].zxid, int64(20))
	_, order, err := readAll(rec.Log, 21)
	require.NoError(t, err)
	require.Len(t, order, 10)
}

func TestEpochs(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(7)))
	s := openStore(t, fsys, "/d", nil)
	_, ok, err := s.AcceptedEpoch()
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, s.SetAcceptedEpoch(5))
	require.NoError(t, s.SetCurrentEpoch(4))
	fsys.Crash()
	e, ok, err := s.AcceptedEpoch()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(5), e)
	e, _, err = s.CurrentEpoch()
	require.NoError(t, err)
	require.Equal(t, int64(4), e)
	data, err := vfs.ReadFull(fsys, "/d/version-2/acceptedEpoch")
	require.NoError(t, err)
	require.Equal(t, "5", string(data))

	fsys.SetConfig(vfs.SimConfig{SyncFail: 1})
	require.ErrorIs(t, s.SetCurrentEpoch(6), ErrFailed)
}

func TestFsyncFailureIsFinal(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(8)))
	s := openStore(t, fsys, "/d", nil)
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(9))
	_, err = rec.Log.Append(makeEntry(1, 10, rng))
	require.NoError(t, err)
	fsys.SetConfig(vfs.SimConfig{SyncFail: 1})
	_, err = rec.Log.Sync()
	require.ErrorIs(t, err, ErrFailed)
	fsys.SetConfig(vfs.SimConfig{})
	_, err = rec.Log.Sync()
	require.ErrorIs(t, err, ErrFailed, "no retry after a failed fsync")
	_, err = rec.Log.Append(makeEntry(2, 10, rng))
	require.ErrorIs(t, err, ErrFailed)
}

func TestNoSnapshotRefusal(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(10)))
	s := openStore(t, fsys, "/d", nil)
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(11))
	for z := int64(5); z <= 9; z++ {
		_, err := rec.Log.Append(makeEntry(z, 10, rng))
		require.NoError(t, err)
	}
	_, err = rec.Log.Sync()
	require.NoError(t, err)
	_, err = s.Recover(newTestTree().load)
	require.ErrorIs(t, err, ErrDataLoss)
	var c *CorruptError
	require.True(t, errors.As(err, &c))
	require.Equal(t, LogName(5), c.File)

	s = openStore(t, fsys, "/d", func(o *Options) { o.AllowDataLoss = true })
	rec, err = s.Recover(newTestTree().load)
	require.NoError(t, err)
	require.Equal(t, int64(9), rec.LastZxid)
	require.NotEmpty(t, rec.Warnings)
}

func TestIteratorReturnsOnlyDurableTxns(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(13)))
	rec, err := openStore(t, fsys, "/d", nil).Recover(newTestTree().load)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(14))
	for z := int64(1); z <= 3; z++ {
		_, err := rec.Log.Append(makeEntry(z, 10, rng))
		require.NoError(t, err)
		if z == 2 {
			_, err = rec.Log.Sync()
			require.NoError(t, err)
		}
	}
	require.NoError(t, rec.Log.write()) // on disk, as a large batch would be, but not synced
	_, order, err := readAll(rec.Log, 1)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, order)
}

// syncFailFS fails the fail-th fsync (of a file or a directory) and every
// later one, as a disk whose fsync errors does; the process stops there.
type syncFailFS struct {
	*vfs.Sim
	syncs, fail int
}

func (f *syncFailFS) sync() error {
	f.syncs++
	if f.syncs >= f.fail {
		return vfs.ErrSimFault
	}
	return nil
}

func (f *syncFailFS) SyncDir(dir string) error {
	if err := f.sync(); err != nil {
		return err
	}
	return f.Sim.SyncDir(dir)
}

func (f *syncFailFS) Create(name string) (vfs.File, error) {
	file, err := f.Sim.Create(name)
	return &syncFailFile{file, f}, err
}

func (f *syncFailFS) Open(name string) (vfs.File, error) {
	file, err := f.Sim.Open(name)
	return &syncFailFile{file, f}, err
}

type syncFailFile struct {
	vfs.File
	fs *syncFailFS
}

func (f *syncFailFile) Sync() error {
	if err := f.fs.sync(); err != nil {
		return err
	}
	return f.File.Sync()
}

// TestTruncateCrashLeavesAPrefix: a Truncate that stops at any of its
// fsyncs, then a crash that keeps any prefix of the unsynced directory
// operations, keeps or loses the unsynced size change, and keeps, loses or
// tears (at any of a few bytes) every unsynced sector, leaves a log that
// recovery starts from — a prefix of the history written, at least up to
// the truncation point. Cutting the file in place failed this: a sector
// torn between the cut's zeros and the old bytes was refused
// (TestCrashRecovery, seed 2441058543187775725).
func TestTruncateCrashLeavesAPrefix(t *testing.T) {
	const sector, last, cut = 512, 40, 17
	for _, snapCount := range []int{10, 1000} { // several log files, or one
		mod := func(o *Options) { o.SnapCount = snapCount }
		base := vfs.NewSim(vfs.SimConfig{SectorSize: sector}, rand.New(rand.NewSource(3)))
		rec, err := openStore(t, base, "/d", mod).Recover(newTestTree().load)
		require.NoError(t, err)
		rng := rand.New(rand.NewSource(4))
		written := map[int64][]byte{}
		for z := int64(1); z <= last; z++ {
			written[z] = makeEntry(z, 20+rng.Intn(200), rng)
			_, err := rec.Log.Append(written[z])
			require.NoError(t, err)
		}
		_, err = rec.Log.Sync()
		require.NoError(t, err)
		syncsWhole := -1
		for fail := 1; syncsWhole < 0 || fail <= syncsWhole; fail++ {
			disk := base.Clone(rand.New(rand.NewSource(5)))
			fsys := &syncFailFS{Sim: disk, fail: 1 << 30}
			rec, err := openStore(t, fsys, "/d", mod).Recover(newTestTree().load)
			require.NoError(t, err)
			fsys.syncs = 0
			if syncsWhole >= 0 {
				fsys.fail = fail
			}
			terr := rec.Log.Truncate(cut)
			if syncsWhole < 0 {
				require.NoError(t, terr)
				syncsWhole, fail = fsys.syncs, 0
				continue
			}
			require.Error(t, terr, "fsync %d of %d fails", fail, syncsWhole)
			pending := -1 // the unsynced directory operations, as the first crash counts them
			for keep := 0; pending < 0 || keep <= pending; keep++ {
				for _, size := range []bool{false, true} {
					for _, tear := range []int{0, 1, 7, sector / 2, sector - 1, sector} {
						crashed := disk.Clone(rand.New(rand.NewSource(6)))
						crashed.CrashWith(vfs.CrashFate{
							DirOps: func(n int) int { pending = n; return min(keep, n) },
							Size:   func(string) bool { return size },
							Sector: func(_ string, _ int64, n int) int { return min(tear, n) },
						})
						crashed.SetConfig(vfs.SimConfig{SectorSize: sector})
						what := fmt.Sprintf("snapCount %d, fsync %d of %d failed, %d dir ops kept, size kept %v, sectors torn at %d",
							snapCount, fail, syncsWhole, keep, size, tear)
						rec, err := openStore(t, crashed, "/d", mod).Recover(newTestTree().load)
						require.NoError(t, err, what)
						got, order, err := readAll(rec.Log, 1)
						require.NoError(t, err, what)
						require.GreaterOrEqual(t, len(order), cut, what)
						for i, z := range order {
							require.Equal(t, int64(i+1), z, what)
							require.Equal(t, written[z], got[z], what)
						}
					}
				}
			}
		}
	}
}
