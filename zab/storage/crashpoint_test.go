package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/zab/storage/vfs"
)

// These tests walk every way a crash can leave the log while records are
// being appended (the in-flight window of docs/storage.md: every sector
// kept, lost or torn at every byte), and every bit a disk can flip in a
// durable log, and check recovery against the claims of docs/storage.md.

const sceneDir = "/d"

// testT is what these helpers need of *testing.T and *rapid.T.
type testT interface {
	require.TestingT
	Helper()
	Fatalf(format string, args ...any)
}

// sceneRand is the random source of the scenes' stores and disk copies:
// only faults and roll points draw from it, and the scenes have neither.
var sceneRand = rand.New(rand.NewSource(1))

func sceneOptions(fsys vfs.FS, prealloc int64) Options {
	return Options{FS: fsys, Dir: sceneDir, Rand: sceneRand, SnapCount: 1 << 20, PreallocSize: prealloc}
}

// scene is a log on the simulated disk just before a crash: batches of
// records fsynced, then maybe one more batch written but not fsynced.
type scene struct {
	fs       *vfs.Sim
	prealloc int64
	written  []int64           // every zxid appended, in order
	entries  map[int64][]byte  // their entries
	durable  int64             // the highest zxid an fsync covered
	files    map[string][]byte // each log file (path) as written, before any crash
}

// sceneSpec says what to write: batches of record data sizes, each batch
// fsynced except, if inFlight, the last; roll starts a new file before the
// batch of that index (-1: never).
type sceneSpec struct {
	sector   int
	prealloc int64
	batches  [][]int
	inFlight bool
	roll     int
	seed     int64
}

func buildScene(t testT, spec sceneSpec) *scene {
	t.Helper()
	fsys := vfs.NewSim(vfs.SimConfig{SectorSize: spec.sector}, rand.New(rand.NewSource(spec.seed)))
	s, err := Open(sceneOptions(fsys, spec.prealloc))
	require.NoError(t, err)
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	sc := &scene{fs: fsys, prealloc: spec.prealloc, entries: map[int64][]byte{}, files: map[string][]byte{}}
	rng := rand.New(rand.NewSource(spec.seed))
	for i, batch := range spec.batches {
		if i == spec.roll {
			rec.Log.Roll()
		}
		for _, size := range batch {
			z := int64(len(sc.written) + 1)
			e := makeEntry(z, size, rng)
			_, err := rec.Log.Append(e)
			require.NoError(t, err)
			sc.written = append(sc.written, z)
			sc.entries[z] = e
		}
		last := spec.inFlight && i == len(spec.batches)-1
		if last {
			fsys.SetConfig(vfs.SimConfig{SectorSize: spec.sector, SyncFail: 1})
		}
		d, err := rec.Log.Sync()
		if last {
			require.ErrorIs(t, err, ErrFailed, "the in-flight batch's fsync fails: written, not durable")
			fsys.SetConfig(vfs.SimConfig{SectorSize: spec.sector})
		} else {
			require.NoError(t, err)
			sc.durable = d
		}
	}
	names, err := fsys.List(sceneDir + "/" + VersionDir)
	require.NoError(t, err)
	for _, n := range names {
		if strings.HasPrefix(n, logPrefix) {
			p := sceneDir + "/" + VersionDir + "/" + n
			sc.files[p], err = vfs.ReadFull(fsys, p)
			require.NoError(t, err)
		}
	}
	return sc
}

// windowSector is a sector whose unsynced bytes differ from its durable ones.
type windowSector struct {
	file string
	off  int64
	n    int
}

// window lists the sectors a crash decides about, in file order.
func (sc *scene) window() []windowSector {
	var w []windowSector
	sc.fs.Clone(sceneRand).CrashWith(CrashFateAll(func(name string, off int64, n int) int {
		w = append(w, windowSector{name, off, n})
		return n
	}))
	return w
}

// CrashFateAll keeps every directory operation and size change and asks
// sector for each sector.
func CrashFateAll(sector func(name string, off int64, n int) int) vfs.CrashFate {
	return vfs.CrashFate{
		DirOps: func(pending int) int { return pending },
		Size:   func(string) bool { return true },
		Sector: sector,
	}
}

// outcome is how recovery ended on one crash image.
type outcome int

const (
	recoveredPrefix outcome = iota
	oneBitAway              // refused a record that differs from what was written in one bit
)

// checkImage recovers fsys (the scene after a crash) and checks the claim:
// recovery yields exactly a prefix of what was written that holds every
// durable txn, and a second recovery agrees without a warning. It may
// refuse only where the crash left a record one bit away from the one
// written — the same bytes as a durable record with a flipped bit, which
// recovery must refuse — and then names that file and offset.
func (sc *scene) checkImage(t testT, fsys *vfs.Sim, what string) outcome {
	t.Helper()
	images := map[string][]byte{}
	for p := range sc.files {
		if b, err := vfs.ReadFull(fsys, p); err == nil {
			images[p] = b
		}
	}
	s, err := Open(sceneOptions(fsys, sc.prealloc))
	require.NoError(t, err)
	rec, err := s.Recover(newTestTree().load)
	if err != nil {
		var c *CorruptError
		if !errors.Is(err, ErrDataLoss) || !errors.As(err, &c) {
			t.Fatalf("%s: recovery failed: %v", what, err)
		}
		p := sceneDir + "/" + VersionDir + "/" + c.File
		if diff := RecordBitsChanged(sc.files[p], images[p], c.Offset); diff != 1 {
			t.Fatalf("%s: refused, but the record at %s offset %d differs from the one written in %d bits: %v", what, c.File, c.Offset, diff, err)
		}
		return oneBitAway
	}
	got, order, err := readAll(rec.Log, 1)
	require.NoError(t, err, what)
	if len(order) > len(sc.written) || !slices.Equal(order, sc.written[:len(order)]) {
		t.Fatalf("%s: recovered %#x, not a prefix of the written %#x (warnings %q)", what, order, sc.written, rec.Warnings)
	}
	for _, z := range order {
		require.True(t, bytes.Equal(got[z], sc.entries[z]), "%s: txn %#x differs from the one written", what, z)
	}
	if lastOf(order) < sc.durable {
		t.Fatalf("%s: recovered up to %#x, but %#x was durable (warnings %q)", what, lastOf(order), sc.durable, rec.Warnings)
	}
	again, err := s.Recover(newTestTree().load)
	require.NoError(t, err, what)
	require.Empty(t, again.Warnings, "%s: a second recovery warns", what)
	require.Equal(t, rec.LastZxid, again.LastZxid, what)
	return recoveredPrefix
}

// crashScenes are layouts for the exhaustive walks: records straddling
// sector boundaries at many offsets, an in-flight batch that starts a file
// or grows its preallocation, and both sector sizes.
func crashScenes() []sceneSpec {
	var specs []sceneSpec
	for seed := int64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewSource(seed))
		batch := func(n int) []int {
			b := make([]int, n)
			for i := range b {
				b[i] = rng.Intn(160)
			}
			return b
		}
		specs = append(specs,
			// Durable records, then a batch in the middle of the file.
			sceneSpec{sector: 512, prealloc: 4096, batches: [][]int{batch(3), batch(2), batch(5)}, inFlight: true, roll: -1, seed: seed},
			// The in-flight batch is a new file's first: header and directory entry unsynced.
			sceneSpec{sector: 512, prealloc: 4096, batches: [][]int{batch(4), batch(4)}, inFlight: true, roll: 1, seed: seed},
			// The in-flight batch grows the preallocated file.
			sceneSpec{sector: 512, prealloc: 4096, batches: [][]int{batch(20), batch(8), batch(8)}, inFlight: true, roll: -1, seed: seed},
		)
		if seed <= 2 { // a 4 KiB sector has eight times the cuts
			specs = append(specs, sceneSpec{sector: 4096, prealloc: 8192, batches: [][]int{batch(3), batch(6)}, inFlight: true, roll: -1, seed: seed})
		}
	}
	return specs
}

// TestEveryCrashPointOfAnAppend crashes each scene at every point of its
// in-flight write — the write cut short at every byte, with and without its
// size change and directory entry — and with every subset of its sectors
// kept and lost. Recovery always yields a prefix holding every durable txn.
func TestEveryCrashPointOfAnAppend(t *testing.T) {
	points, coincidences := 0, 0
	for i, spec := range crashScenes() {
		sc := buildScene(t, spec)
		win := sc.window()
		require.NotEmpty(t, win, "scene %d has an in-flight window", i)
		check := func(what string, fate vfs.CrashFate) {
			fsys := sc.fs.Clone(sceneRand)
			fsys.CrashWith(fate)
			points++
			if sc.checkImage(t, fsys, fmt.Sprintf("scene %d: %s", i, what)) == oneBitAway {
				coincidences++
			}
		}
		// The write cut short at every byte: the sectors before the cut
		// kept, the one holding it torn there, the rest lost.
		for j, ws := range win {
			for cut := 0; cut <= ws.n; cut++ {
				for _, keepMeta := range []bool{true, false} {
					fate := vfs.CrashFate{
						DirOps: func(pending int) int { return map[bool]int{true: pending, false: 0}[keepMeta] },
						Size:   func(string) bool { return keepMeta },
						Sector: func(name string, off int64, n int) int {
							switch k := slices.Index(win, windowSector{name, off, n}); {
							case k < j:
								return n
							case k == j:
								return cut
							}
							return 0
						},
					}
					check(fmt.Sprintf("cut at byte %d of sector %d (%s at %d), metadata kept %v", cut, j, ws.file, ws.off, keepMeta), fate)
				}
			}
		}
		// Every subset of the window's sectors kept, the rest lost (a disk
		// reorders the writes of one fsync's batch).
		if len(win) <= 10 {
			for mask := 0; mask < 1<<len(win); mask++ {
				check(fmt.Sprintf("sectors kept %b", mask), CrashFateAll(func(name string, off int64, n int) int {
					if mask>>slices.Index(win, windowSector{name, off, n})&1 == 1 {
						return n
					}
					return 0
				}))
			}
		}
	}
	t.Logf("%d crash points; %d refused as one bit away from what was written", points, coincidences)
}

// TestRandomCrashPoints: random scenes, each window sector kept, lost or
// torn at a random byte, directory entries and size changes kept or lost.
func TestRandomCrashPoints(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sector := rapid.SampledFrom([]int{512, 4096}).Draw(t, "sector")
		spec := sceneSpec{sector: sector, prealloc: int64(sector) * int64(rapid.IntRange(1, 4).Draw(t, "prealloc sectors")),
			inFlight: true, roll: rapid.IntRange(-1, 3).Draw(t, "roll"), seed: rapid.Int64().Draw(t, "seed")}
		for i, n := 0, rapid.IntRange(1, 4).Draw(t, "batches"); i < n; i++ {
			spec.batches = append(spec.batches, rapid.SliceOfN(rapid.IntRange(0, 900), 1, 12).Draw(t, "batch"))
		}
		sc := buildScene(t, spec)
		fsys := sc.fs.Clone(sceneRand)
		fsys.CrashWith(vfs.CrashFate{
			DirOps: func(pending int) int { return rapid.IntRange(0, pending).Draw(t, "dir ops kept") },
			Size:   func(string) bool { return rapid.Bool().Draw(t, "size kept") },
			Sector: func(_ string, _ int64, n int) int {
				switch rapid.IntRange(0, 2).Draw(t, "fate") {
				case 0:
					return 0
				case 1:
					return n
				}
				return rapid.IntRange(0, n).Draw(t, "torn at")
			},
		})
		sc.checkImage(t, fsys, "random crash")
	})
}

// recordSpans lists [start, end) of the file header and of each record in a
// log file as written.
func recordSpans(t testT, data []byte) [][2]int64 {
	t.Helper()
	spans := [][2]int64{{0, fileHeaderLen}}
	s, err := newLogScanner(bytes.NewReader(data), int64(len(data)), "log", 0)
	require.NoError(t, err)
	for {
		off := s.Offset()
		ok, err := s.Next()
		require.NoError(t, err)
		if !ok {
			return spans
		}
		spans = append(spans, [2]int64{off, s.Offset()})
	}
}

// TestEveryBitFlipOfADurableLog flips, one at a time, every bit of every
// record of a durable two-file log. Recovery refuses, naming the file and
// the damaged record's offset, every flip in the older file and every flip
// in the newest file's records but its last; a flip in the last record is
// refused too, or (where a crash could have left the same bytes) cut off
// with a warning naming the file. Nothing durable is ever lost silently.
func TestEveryBitFlipOfADurableLog(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	sizes := func(n int) []int {
		b := make([]int, n)
		for i := range b {
			b[i] = rng.Intn(120)
		}
		return b
	}
	sc := buildScene(t, sceneSpec{sector: 512, prealloc: 4096, batches: [][]int{sizes(4), sizes(3), sizes(5), sizes(2)}, roll: 2, seed: 3})
	paths := make([]string, 0, len(sc.files))
	for p := range sc.files {
		paths = append(paths, p)
	}
	slices.Sort(paths) // log.1, then log.<first zxid of the second file>
	require.Len(t, paths, 2)
	refused, cut, whole := 0, 0, 0
	for fi, p := range paths {
		spans := recordSpans(t, sc.files[p])
		newest := fi == len(paths)-1
		for si, span := range spans {
			for off := span[0]; off < span[1]; off++ {
				for bit := uint(0); bit < 8; bit++ {
					what := fmt.Sprintf("%s: bit %d of byte %d", p, bit, off)
					fsys := sc.fs.Clone(sceneRand)
					require.NoError(t, fsys.FlipBit(p, off, bit))
					s, err := Open(sceneOptions(fsys, sc.prealloc))
					require.NoError(t, err)
					rec, err := s.Recover(newTestTree().load)
					if err != nil {
						var c *CorruptError
						require.ErrorIs(t, err, ErrDataLoss, what)
						require.True(t, errors.As(err, &c), what)
						require.Equal(t, p[strings.LastIndex(p, "/")+1:], c.File, what)
						require.Equal(t, span[0], c.Offset, what)
						refused++
						continue
					}
					_, order, err := readAll(rec.Log, 1)
					require.NoError(t, err, what)
					switch {
					case slices.Equal(order, sc.written):
						// The flip hit a byte recovery does not read (the header's dbid).
						require.True(t, span[0] == 0 && off >= 8, "%s: recovered everything from a damaged record", what)
						whole++
					case newest && si == len(spans)-1 && slices.Equal(order, sc.written[:len(sc.written)-1]):
						require.NotEmpty(t, rec.Warnings, what)
						require.Contains(t, rec.Warnings[0], p[strings.LastIndex(p, "/")+1:], what)
						t.Logf("cut: %s: %q", what, rec.Warnings)
						cut++
					default:
						t.Fatalf("%s: recovered %#x of %#x (warnings %q)", what, order, sc.written, rec.Warnings)
					}
				}
			}
		}
	}
	t.Logf("%d flips refused, %d cut off as a possible torn last record, %d in bytes recovery ignores", refused, cut, whole)
}
