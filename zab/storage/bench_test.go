package storage

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// entry100 is a 100-byte txn entry (a setData with 42 bytes of data).
func entry100(zxid int64, rng *rand.Rand) []byte {
	e := makeEntry(zxid, 42, rng)
	if len(e) != 100 {
		panic(fmt.Sprintf("entry of %d bytes", len(e)))
	}
	return e
}

// BenchmarkAppendSync measures group commit: batches of 100-byte txns, one
// Sync per batch, on the real file system (b.TempDir), beside a bare loop
// that writes the same bytes and fdatasyncs the same way. Compare the
// txns/s metrics of log/batch=N and bare/batch=N.
func BenchmarkAppendSync(b *testing.B) {
	for _, batch := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("log/batch=%d", batch), func(b *testing.B) { benchLog(b, batch) })
		b.Run(fmt.Sprintf("bare/batch=%d", batch), func(b *testing.B) { benchBare(b, batch) })
	}
}

func benchLog(b *testing.B, batch int) {
	s, err := Open(Options{FS: vfs.OS{}, Dir: b.TempDir(), Rand: rand.New(rand.NewSource(1))})
	if err != nil {
		b.Fatal(err)
	}
	rec, err := s.Recover(func(*wire.Decoder, int64) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	// One entry, its zxid rewritten per append (the log copies it), so
	// that setting up b.N entries costs the timed loop no GC.
	entry := entry100(1, rand.New(rand.NewSource(2)))
	b.SetBytes(100)
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		for j := i; j < min(i+batch, b.N); j++ {
			binary.BigEndian.PutUint64(entry[12:], uint64(j+1))
			if _, err := rec.Log.Append(entry); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := rec.Log.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txns/s")
	rec.Log.Close()
}

// benchBare is the floor: one WriteAt of the batch's framed records at the
// end of a plain file, then fdatasync (vfs.OS's Sync), nothing else.
func benchBare(b *testing.B, batch int) {
	f, err := vfs.OS{}.Create(filepath.Join(b.TempDir(), "bare"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rng := rand.New(rand.NewSource(2))
	rec := appendRecord(nil, entry100(1, rng))
	buf := make([]byte, 0, len(rec)*batch)
	for range batch {
		buf = append(buf, rec...)
	}
	b.SetBytes(100)
	b.ResetTimer()
	var off int64
	for i := 0; i < b.N; i += batch {
		n := min(batch, b.N-i) * len(rec)
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			b.Fatal(err)
		}
		off += int64(n)
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txns/s")
}

// BenchmarkSnapshot1M writes a snapshot of a datatree with 1M znodes (100
// bytes of data each, 1000 parents of 1000 children) and restores it
// (read, checksum, datatree.Load). Run with -benchtime=1x or 3x.
func BenchmarkSnapshot1M(b *testing.B) {
	tree := datatree.New(datatree.Config{})
	zxid := int64(0)
	data := make([]byte, 100)
	create := func(path string) {
		zxid++
		txn := tree.Prepare(&datatree.Request{Op: wire.OpCreate, Body: &wire.CreateRequest{
			Path: path, Data: data, ACL: []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: "anyone"}}}}}, zxid, 1700000000000)
		tree.Apply(&txn, nil)
	}
	for p := 0; p < 1000; p++ {
		create(fmt.Sprintf("/p%03d", p))
		for c := 0; c < 999; c++ {
			create(fmt.Sprintf("/p%03d/c%03d", p, c))
		}
	}
	s, err := Open(Options{FS: vfs.OS{}, Dir: b.TempDir(), Rand: rand.New(rand.NewSource(1))})
	if err != nil {
		b.Fatal(err)
	}
	snap := &Snapshot{
		Zxid: tree.LastZxid(),
		WriteTree: func(w io.Writer) error {
			e := wire.NewEncoder(nil)
			sn := tree.StartSnapshot()
			for done := false; !done; {
				done = sn.Step(e, 4096)
				if _, err := w.Write(e.Bytes()); err != nil {
					return err
				}
				e.Reset()
			}
			return nil
		},
		Digest: func() ZxidDigest {
			return ZxidDigest{Zxid: tree.LastZxid(), Version: datatree.DigestVersion, Digest: tree.Digest()}
		},
	}
	var name string
	b.Run("write", func(b *testing.B) {
		for range b.N {
			if name, err = s.WriteSnapshot(snap); err != nil {
				b.Fatal(err)
			}
		}
		reportSnapshot(b, s, name)
	})
	b.Run("restore", func(b *testing.B) {
		for range b.N {
			var loaded *datatree.Tree
			_, err := ReadSnapshotFile(vfs.OS{}, filepath.Join(s.Dir(), name), func(d *wire.Decoder, z int64) (err error) {
				loaded, err = datatree.Load(datatree.Config{}, d, z)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			if loaded.Digest() != tree.Digest() {
				b.Fatal("restored tree's digest differs")
			}
		}
		reportSnapshot(b, s, name)
	})
}

func reportSnapshot(b *testing.B, s *Store, name string) {
	f, err := vfs.OS{}.Open(filepath.Join(s.Dir(), name))
	if err != nil {
		b.Fatal(err)
	}
	size, _ := f.Size()
	f.Close()
	per := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(per, "s/op")
	b.ReportMetric(float64(size)/1e6/per, "MB/s")
	b.ReportMetric(float64(size)/1e6, "MB")
}
