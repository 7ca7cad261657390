package storage

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/zabd/zabd/zab/storage/vfs"
)

// Iterator reads txn entries in zxid order across log files, from the files
// on disk, up to the durable zxid at its creation: it never returns a txn
// that Sync has not reported durable. It checks each record's checksum and
// zxid order; that an entry decodes as a txn, recovery checked (the caller
// decodes the entries it uses, and gets an error from a bad one).
type Iterator struct {
	fs    vfs.FS
	dir   string
	files []logFile
	from  int64
	upTo  int64

	file    vfs.File
	scanner *logScanner
	prev    int64
	err     error
}

// Iterator returns an iterator over the durable txns with zxid >= from (for
// replay at start, and for a leader's DIFF). The caller must Close it and
// must not call Append, Sync, Truncate or Purge meanwhile.
func (l *Log) Iterator(from int64) (*Iterator, error) {
	files, err := listLogs(l.fs, l.dir)
	if err != nil {
		return nil, err
	}
	return &Iterator{fs: l.fs, dir: l.dir, files: filesFrom(files, from), from: from, upTo: l.durableZxid}, nil
}

// filesFrom keeps the last file that starts at or before zxid and all later
// ones: the files that can hold txns >= zxid.
func filesFrom(files []logFile, zxid int64) []logFile {
	i := len(files)
	for i > 0 && files[i-1].zxid > zxid {
		i--
	}
	return files[max(i-1, 0):]
}

// Next advances to the next txn; false at the end or on error (see Err).
// A bad record is an error: after recovery the log holds only valid ones.
func (it *Iterator) Next() bool {
	for it.err == nil && it.prev < it.upTo {
		if it.scanner == nil {
			if len(it.files) == 0 {
				return false
			}
			it.err = it.open(it.files[0])
			it.files = it.files[1:]
			continue
		}
		ok, err := it.scanner.Next()
		switch {
		case err != nil:
			it.err = err
		case ok && it.scanner.Zxid > it.upTo:
			return false
		case ok && it.scanner.Zxid < it.from:
			it.prev = it.scanner.Zxid
		case ok:
			it.prev = it.scanner.Zxid
			return true
		case it.scanner.Stop == stopBad:
			it.err = it.scanner.corruption()
		default:
			it.err = it.closeFile()
		}
	}
	return false
}

func (it *Iterator) open(f logFile) error {
	file, err := it.fs.Open(join(it.dir, f.name))
	if err != nil {
		return fmt.Errorf("open %s: %w", f.name, err)
	}
	size, err := file.Size()
	if err == nil {
		it.scanner, err = newLogScanner(file, size, f.name, max(it.prev, f.zxid-1))
	}
	if err == nil {
		// Recovery checked every record and its padding; what was
		// appended since was encoded here.
		it.scanner.TrustPadding, it.scanner.TrustEntries = true, true
	}
	if err != nil {
		file.Close()
		return err
	}
	it.file = file
	return nil
}

func (it *Iterator) closeFile() error {
	it.scanner = nil
	if it.file == nil {
		return nil
	}
	err := it.file.Close()
	it.file = nil
	return err
}

// Zxid is the current txn's zxid.
func (it *Iterator) Zxid() int64 { return it.scanner.Zxid }

// Entry is the current txn entry (see DecodeEntry); it is valid until the
// next call of Next.
func (it *Iterator) Entry() []byte { return it.scanner.Entry }

// Err is the error that stopped the iteration, if any.
func (it *Iterator) Err() error { return it.err }

// Close releases the open file.
func (it *Iterator) Close() error { return it.closeFile() }

func sortByZxid[T any](s []T, zxid func(T) int64) {
	slices.SortFunc(s, func(a, b T) int { return cmp.Compare(zxid(a), zxid(b)) })
}
