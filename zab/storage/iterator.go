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
	return newIterator(l.fs, l.dir, from, l.durableZxid)
}

// ReadLog returns an iterator over the logged txns with zxids in [from,
// upTo], from the files alone, for a reader running beside the Log's
// writer (a leader's DIFF from the log, ZooKeeper's
// getProposalsFromTxnLog): it reads no state of the open Log. upTo must be
// durable, so that nothing the iterator reads is still being written; a
// file that Purge removes before the iterator opens it ends the iteration
// with an error.
func (s *Store) ReadLog(from, upTo int64) (*Iterator, error) {
	return newIterator(s.opts.FS, s.logDir, from, upTo)
}

func newIterator(fs vfs.FS, dir string, from, upTo int64) (*Iterator, error) {
	files, err := listLogs(fs, dir)
	if err != nil {
		return nil, err
	}
	return &Iterator{fs: fs, dir: dir, files: filesFrom(files, from), from: from, upTo: upTo}, nil
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

// NewestSnapshot returns the zxid and size in bytes of the newest snapshot
// file, as ZooKeeper's leader finds it to bound a DIFF from the log
// (FileTxnSnapLog.findMostRecentSnapshot); both are 0 when there is none.
// It reads only the directory and the file's size, so it may run beside
// the writers; a snapshot being written counts with its size so far.
func (s *Store) NewestSnapshot() (zxid, size int64, err error) {
	names, err := s.opts.FS.List(s.dir)
	if err != nil {
		return 0, 0, fmt.Errorf("list %s: %w", s.dir, err)
	}
	snaps := listSnapshots(names)
	if len(snaps) == 0 {
		return 0, 0, nil
	}
	newest := snaps[len(snaps)-1]
	f, err := s.opts.FS.Open(join(s.dir, newest.name))
	if err != nil {
		return 0, 0, fmt.Errorf("open %s: %w", newest.name, err)
	}
	defer f.Close()
	if size, err = f.Size(); err != nil {
		return 0, 0, fmt.Errorf("size of %s: %w", newest.name, err)
	}
	return newest.zxid, size, nil
}
