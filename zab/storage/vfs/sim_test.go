package vfs

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func write(t *testing.T, f File, off int64, b []byte) {
	t.Helper()
	_, err := f.WriteAt(b, off)
	require.NoError(t, err)
}

func contents(t *testing.T, fs FS, name string) []byte {
	t.Helper()
	b, err := ReadFull(fs, name)
	require.NoError(t, err)
	return b
}

func TestSimSyncedDataSurvivesCrash(t *testing.T) {
	s := NewSim(SimConfig{SectorSize: 512, KeepUnsynced: 0}, rand.New(rand.NewSource(1)))
	require.NoError(t, s.MkdirAll("/d"))
	f, err := s.Create("/d/a")
	require.NoError(t, err)
	write(t, f, 0, []byte("durable"))
	require.NoError(t, f.Sync())
	require.NoError(t, s.SyncDir("/d"))
	write(t, f, 0, []byte("DURABLE and more"))
	s.Crash()
	require.Equal(t, []byte("durable"), contents(t, s, "/d/a"))
	_, err = f.ReadAt(make([]byte, 1), 0)
	require.ErrorIs(t, err, ErrCrashed)
}

func TestSimUnsyncedDirectoryEntriesAreLost(t *testing.T) {
	// Without SyncDir a crash keeps a random prefix of the journal: over
	// many seeds the file both survives and vanishes, never anything else.
	seen := map[bool]bool{}
	for seed := int64(0); seed < 50; seed++ {
		s := NewSim(SimConfig{}, rand.New(rand.NewSource(seed)))
		require.NoError(t, s.MkdirAll("/d"))
		f, _ := s.Create("/d/a")
		write(t, f, 0, []byte("x"))
		require.NoError(t, f.Sync())
		s.Crash()
		names, err := s.List("/d")
		require.NoError(t, err)
		seen[len(names) == 1] = true
	}
	require.Equal(t, map[bool]bool{true: true, false: true}, seen)
}

func TestSimRenameIsAtomic(t *testing.T) {
	for seed := int64(0); seed < 50; seed++ {
		s := NewSim(SimConfig{}, rand.New(rand.NewSource(seed)))
		require.NoError(t, s.MkdirAll("/d"))
		old, _ := s.Create("/d/f")
		write(t, old, 0, []byte("old"))
		require.NoError(t, old.Sync())
		require.NoError(t, s.SyncDir("/d"))
		tmp, _ := s.Create("/d/f.tmp")
		write(t, tmp, 0, []byte("new"))
		require.NoError(t, tmp.Sync())
		require.NoError(t, s.Rename("/d/f.tmp", "/d/f"))
		s.Crash()
		got := string(contents(t, s, "/d/f"))
		require.Contains(t, []string{"old", "new"}, got, "seed %d", seed)
	}
}

func TestSimKeepsOrLosesEachSectorIndependently(t *testing.T) {
	// Two unsynced sectors: over many seeds every combination of kept and
	// lost shows up, a later sector kept while an earlier one is lost too.
	combos := map[string]bool{}
	for seed := int64(0); seed < 200; seed++ {
		s := NewSim(SimConfig{SectorSize: 512, KeepUnsynced: 0.5}, rand.New(rand.NewSource(seed)))
		require.NoError(t, s.MkdirAll("/d"))
		f, _ := s.Create("/d/f")
		require.NoError(t, f.Truncate(1024))
		require.NoError(t, f.Sync())
		require.NoError(t, s.SyncDir("/d"))
		write(t, f, 0, []byte{1})
		write(t, f, 512, []byte{2})
		s.Crash()
		b := contents(t, s, "/d/f")
		combos[string([]byte{b[0], b[512]})] = true
	}
	require.Len(t, combos, 4)
}

func TestSimTornSector(t *testing.T) {
	torn := false
	for seed := int64(0); seed < 50 && !torn; seed++ {
		s := NewSim(SimConfig{SectorSize: 512, TornSector: 1}, rand.New(rand.NewSource(seed)))
		require.NoError(t, s.MkdirAll("/d"))
		f, _ := s.Create("/d/f")
		require.NoError(t, f.Truncate(512))
		require.NoError(t, f.Sync())
		require.NoError(t, s.SyncDir("/d"))
		full := make([]byte, 512)
		for i := range full {
			full[i] = 0xff
		}
		write(t, f, 0, full)
		s.Crash()
		b := contents(t, s, "/d/f")
		// A torn sector is new bytes up to a cut, old (zero) bytes after.
		cut := 0
		for cut < len(b) && b[cut] == 0xff {
			cut++
		}
		for _, c := range b[cut:] {
			require.Zero(t, c)
		}
		torn = cut > 0 && cut < 512
	}
	require.True(t, torn)
}

func TestSimInjectedFaults(t *testing.T) {
	s := NewSim(SimConfig{WriteNoSpace: 1}, rand.New(rand.NewSource(1)))
	require.NoError(t, s.MkdirAll("/d"))
	f, _ := s.Create("/d/f")
	_, err := f.WriteAt([]byte("x"), 0)
	require.ErrorIs(t, err, ErrNoSpace)

	s.SetConfig(SimConfig{SyncFail: 1})
	write(t, f, 0, []byte("x"))
	require.ErrorIs(t, f.Sync(), ErrSimFault)
	require.ErrorIs(t, s.SyncDir("/d"), ErrSimFault)

	s.SetConfig(SimConfig{SyncSlow: 1, SlowSyncDelay: 7})
	require.NoError(t, f.Sync())
	require.NoError(t, f.Sync())
	require.EqualValues(t, 14, s.TakeSyncDelay())
	require.Zero(t, s.TakeSyncDelay())

	s.SetConfig(SimConfig{ReadFlip: 1})
	write(t, f, 0, []byte{0, 0, 0, 0})
	got := make([]byte, 4)
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	require.NotEqual(t, []byte{0, 0, 0, 0}, got)
	s.SetConfig(SimConfig{})
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0, 0, 0}, got, "a read flip does not change the disk")
}

func TestSimIsDeterministic(t *testing.T) {
	run := func() []byte {
		s := NewSim(SimConfig{SectorSize: 512, KeepUnsynced: 0.5, TornSector: 0.3}, rand.New(rand.NewSource(42)))
		require.NoError(t, s.MkdirAll("/d"))
		f, _ := s.Create("/d/f")
		require.NoError(t, s.SyncDir("/d"))
		for i := 0; i < 20; i++ {
			write(t, f, int64(i*300), []byte{byte(i + 1), byte(i + 2)})
		}
		s.Crash()
		return contents(t, s, "/d/f")
	}
	require.Equal(t, run(), run())
}

func TestSimCrashWithDecidesEachSector(t *testing.T) {
	s := NewSim(SimConfig{SectorSize: 512}, rand.New(rand.NewSource(1)))
	require.NoError(t, s.MkdirAll("/d"))
	f, _ := s.Create("/d/f")
	require.NoError(t, f.Truncate(1536))
	require.NoError(t, f.Sync())
	require.NoError(t, s.SyncDir("/d"))
	full := make([]byte, 1536)
	for i := range full {
		full[i] = 0xff
	}
	write(t, f, 0, full)
	c := s.Clone(rand.New(rand.NewSource(2)))
	var asked []int64
	c.CrashWith(CrashFate{
		DirOps: func(pending int) int { return pending },
		Size:   func(string) bool { return true },
		Sector: func(name string, off int64, n int) int {
			require.Equal(t, "/d/f", name)
			require.Equal(t, 512, n)
			asked = append(asked, off)
			return map[int64]int{0: 0, 512: 512, 1024: 100}[off]
		},
	})
	require.Equal(t, []int64{0, 512, 1024}, asked, "every unsynced sector, in order")
	b := contents(t, c, "/d/f")
	require.Equal(t, make([]byte, 512), b[:512], "lost")
	require.Equal(t, full[:512], b[512:1024], "kept")
	require.Equal(t, full[:100], b[1024:1124], "torn at 100")
	require.Equal(t, make([]byte, 412), b[1124:])
	// The original is untouched by what happened to its clone.
	require.Equal(t, full, contents(t, s, "/d/f"))
}

// Property: after any writes, truncations and syncs, a crash asks fate
// about exactly the sectors whose current bytes differ from the durable
// ones (zero-padded past each one's end), in file order, and builds each
// from the current bytes' prefix fate chose and the durable rest, as a
// plain model of the two contents does.
func TestSimCrashMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const sector = 64
		s := NewSim(SimConfig{SectorSize: sector}, rand.New(rand.NewSource(1)))
		require.NoError(t, s.MkdirAll("/d"))
		f, err := s.Create("/d/f")
		require.NoError(t, err)
		require.NoError(t, f.Sync())
		require.NoError(t, s.SyncDir("/d"))
		var cur, durable []byte
		// Several rounds of writes, truncations and syncs, each ended by a
		// crash: what a crash leaves is where the next round starts.
		for range rapid.IntRange(1, 3).Draw(t, "crashes") {
			for range rapid.IntRange(0, 12).Draw(t, "ops") {
				switch rapid.IntRange(0, 5).Draw(t, "op") {
				case 0, 1:
					off := rapid.IntRange(0, 5*sector).Draw(t, "off")
					b := rapid.SliceOfN(rapid.Byte(), 1, 2*sector).Draw(t, "data")
					_, err := f.WriteAt(b, int64(off))
					require.NoError(t, err)
					if end := off + len(b); end > len(cur) {
						cur = append(cur, make([]byte, end-len(cur))...)
					}
					copy(cur[off:], b)
				case 2:
					size := rapid.IntRange(0, 6*sector).Draw(t, "size")
					require.NoError(t, f.Truncate(int64(size)))
					if size > len(cur) {
						cur = append(cur, make([]byte, size-len(cur))...)
					}
					cur = cur[:size]
				case 3:
					require.NoError(t, f.Sync())
					durable = append([]byte(nil), cur...)
				case 4:
					got := make([]byte, len(cur))
					if len(cur) > 0 {
						_, err := f.ReadAt(got, 0)
						require.NoError(t, err)
					}
					require.Equal(t, string(cur), string(got), "reads see the current bytes")
				case 5:
					// Creating an existing file empties it (O_TRUNC).
					f, err = s.Create("/d/f")
					require.NoError(t, err)
					cur = nil
				}
			}
			keepSize := rapid.Bool().Draw(t, "keepSize")
			cuts := rapid.SliceOfN(rapid.IntRange(0, sector), 12, 12).Draw(t, "cuts")
			size := len(durable)
			if keepSize {
				size = len(cur)
			}
			padded := func(b []byte, lo, hi int) []byte {
				out := make([]byte, hi-lo)
				if lo < len(b) {
					copy(out, b[lo:min(hi, len(b))])
				}
				return out
			}
			want := padded(durable, 0, size)
			var wantAsked []int64
			for start := 0; start < size; start += sector {
				end := min(start+sector, size)
				c, d := padded(cur, start, end), padded(durable, start, end)
				if string(c) == string(d) {
					continue
				}
				cut := min(cuts[len(wantAsked)%len(cuts)], end-start)
				wantAsked = append(wantAsked, int64(start))
				copy(want[start:], c[:cut])
				copy(want[start+cut:end], d[cut:])
			}
			var asked []int64
			s.CrashWith(CrashFate{
				DirOps: func(pending int) int { return pending },
				Size:   func(string) bool { return keepSize },
				Sector: func(_ string, off int64, n int) int {
					cut := cuts[len(asked)%len(cuts)]
					asked = append(asked, off)
					return cut
				},
			})
			require.Equal(t, wantAsked, asked)
			got, err := ReadFull(s, "/d/f")
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
			cur, durable = want, append([]byte(nil), want...)
			if f, err = s.Open("/d/f"); err != nil {
				t.Fatal(err)
			}
		}
	})
}
