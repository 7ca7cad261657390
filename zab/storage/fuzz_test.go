package storage

import (
	"bytes"
	"errors"
	"hash/adler32"
	"math/rand"
	"testing"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// FuzzLogScan feeds arbitrary bytes to the log reader: it must never panic,
// and every record it returns must pass its checksum, decode as a txn and
// raise the zxid.
func FuzzLogScan(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := newLogScanner(bytes.NewReader(data), int64(len(data)), "log.1", 0)
		if err != nil {
			var c *CorruptError
			if !errors.As(err, &c) {
				t.Fatalf("header error %v is not a CorruptError", err)
			}
			return
		}
		prev := int64(0)
		for {
			off := s.Offset()
			ok, err := s.Next()
			if err != nil {
				t.Fatalf("read error on in-memory input: %v", err)
			}
			if !ok {
				break
			}
			if s.Zxid <= prev {
				t.Fatalf("zxid %#x after %#x", s.Zxid, prev)
			}
			prev = s.Zxid
			if got := adler32.Checksum(s.Entry); uint64(got) != uint64(be64(data[off:])) {
				t.Fatalf("record at %d returned with a bad checksum", off)
			}
		}
		if s.Offset() > int64(len(data)) {
			t.Fatalf("offset %d past the end %d", s.Offset(), len(data))
		}
	})
}

// FuzzRecoverLog runs recovery over a data directory whose only log file is
// arbitrary bytes: a clear error or a recovery, never a panic; and a second
// recovery agrees with the first.
func FuzzRecoverLog(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
		s, err := Open(Options{FS: fsys, Dir: "/d", Rand: rand.New(rand.NewSource(1))})
		if err != nil {
			t.Fatal(err)
		}
		file, err := fsys.Create("/d/version-2/" + LogName(1))
		if err != nil {
			t.Fatal(err)
		}
		file.WriteAt(data, 0)
		first, err := s.Recover(newTestTree().load)
		if err != nil {
			var c *CorruptError
			if !errors.As(err, &c) {
				t.Fatalf("recovery error %v names no file and offset", err)
			}
			return
		}
		again, err := s.Recover(newTestTree().load)
		if err != nil || again.LastZxid != first.LastZxid || len(again.Warnings) > 0 {
			t.Fatalf("second recovery: %v, last %#x vs %#x, warnings %q", err, again.LastZxid, first.LastZxid, again.Warnings)
		}
	})
}

// FuzzRecoverPreallocatedLog runs recovery over a log file that starts with
// a header and three valid records, goes on with arbitrary bytes and is
// zero-padded to a multiple of 512, as preallocation leaves it: the damage
// analysis (flipped bits, crash-shaped zeros, records after the damage) sees
// arbitrary damage. A refusal naming file and offset or a recovery, never a
// panic; a recovery keeps the three records, and a second one agrees.
func FuzzRecoverPreallocatedLog(f *testing.F) {
	rng := rand.New(rand.NewSource(1))
	good := appendFileHeader(nil, wire.TxnLogMagic, 0)
	for z := int64(1); z <= 3; z++ {
		good = appendRecord(good, makeEntry(z, 20, rng))
	}
	more := appendRecord(appendRecord(nil, makeEntry(4, 20, rng)), makeEntry(5, 20, rng))
	f.Add(more)
	flipped := bytes.Clone(more)
	flipped[30] ^= 4
	f.Add(flipped)
	f.Add(append(make([]byte, 600), more...))
	f.Fuzz(func(t *testing.T, tail []byte) {
		fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
		s, err := Open(Options{FS: fsys, Dir: "/d", Rand: rand.New(rand.NewSource(1))})
		if err != nil {
			t.Fatal(err)
		}
		file, err := fsys.Create("/d/version-2/" + LogName(1))
		if err != nil {
			t.Fatal(err)
		}
		data := append(bytes.Clone(good), tail...)
		data = append(data, make([]byte, (crashSector-len(data)%crashSector)%crashSector)...)
		file.WriteAt(data, 0)
		first, err := s.Recover(newTestTree().load)
		if err != nil {
			var c *CorruptError
			if !errors.As(err, &c) || c.File != LogName(1) {
				t.Fatalf("recovery error %v names no file and offset", err)
			}
			return
		}
		if first.LastZxid < 3 {
			t.Fatalf("recovered up to %#x, losing the valid records before the damage", first.LastZxid)
		}
		again, err := s.Recover(newTestTree().load)
		if err != nil || again.LastZxid != first.LastZxid || len(again.Warnings) > 0 {
			t.Fatalf("second recovery: %v, last %#x vs %#x, warnings %q", err, again.LastZxid, first.LastZxid, again.Warnings)
		}
	})
}

// FuzzParseSnapshot feeds arbitrary bytes to the snapshot reader with the
// datatree as the tree loader: a *CorruptError or a snapshot, never a panic.
func FuzzParseSnapshot(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ParseSnapshot(data, "snapshot.1", 1, func(d *wire.Decoder, zxid int64) error {
			_, err := datatree.Load(datatree.Config{}, d, zxid)
			return err
		})
		var c *CorruptError
		if err != nil && !errors.As(err, &c) {
			t.Fatalf("error %v is not a CorruptError", err)
		}
	})
}

func be64(b []byte) uint64 {
	var v uint64
	for _, c := range b[:8] {
		v = v<<8 | uint64(c)
	}
	return v
}
