package storage

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

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
// Log.Sync per batch, on the real file system (b.TempDir), against a bare
// loop that writes the same framed bytes to a plain file and fdatasyncs it
// the same way. The two alternate batch by batch, so that both see the same
// disk (which other processes share); it reports each one's txns/s and
// log/bare, the log's share of the bare loop's rate.
func BenchmarkAppendSync(b *testing.B) {
	for _, batch := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) { benchAppendSync(b, batch) })
	}
}

func benchAppendSync(b *testing.B, batch int) {
	dir := b.TempDir()
	s, err := Open(Options{FS: vfs.OS{}, Dir: dir, Rand: rand.New(rand.NewSource(1))})
	if err != nil {
		b.Fatal(err)
	}
	rec, err := s.Recover(func(*wire.Decoder, int64) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	bare, err := vfs.OS{}.Create(filepath.Join(dir, "bare"))
	if err != nil {
		b.Fatal(err)
	}
	defer bare.Close()
	// One entry, its zxid rewritten per append (the log copies it).
	entry := entry100(1, rand.New(rand.NewSource(2)))
	record := appendRecord(nil, entry)
	records := make([]byte, 0, len(record)*batch)
	for range batch {
		records = append(records, record...)
	}
	var logTime, bareTime time.Duration
	var bareOff int64
	b.SetBytes(100)
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		n := min(batch, b.N-i)
		start := time.Now()
		for j := i; j < i+n; j++ {
			binary.BigEndian.PutUint64(entry[12:], uint64(j+1))
			if _, err := rec.Log.Append(entry); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := rec.Log.Sync(); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := bare.WriteAt(records[:n*len(record)], bareOff); err != nil {
			b.Fatal(err)
		}
		bareOff += int64(n * len(record))
		if err := bare.Sync(); err != nil {
			b.Fatal(err)
		}
		logTime += mid.Sub(start)
		bareTime += time.Since(mid)
	}
	b.StopTimer()
	logRate, bareRate := float64(b.N)/logTime.Seconds(), float64(b.N)/bareTime.Seconds()
	b.ReportMetric(logRate, "log-txns/s")
	b.ReportMetric(bareRate, "bare-txns/s")
	b.ReportMetric(logRate/bareRate, "log/bare")
	rec.Log.Close()
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
