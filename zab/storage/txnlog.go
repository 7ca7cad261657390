package storage

import (
	"fmt"

	"github.com/zabd/zabd/wire"

	"github.com/zabd/zabd/zab/storage/vfs"
)

// writeChunk bounds what the log has written but not yet fsynced: before an
// Append would make the buffered records exceed it, the log writes and
// fsyncs what it holds. So the bytes a crash can leave half-written (the
// in-flight window, see docs/storage.md) are at most writeChunk, or one
// record (with the file header) larger than that. Recovery relies on it:
// damage followed by valid records more than writeChunk further on cannot
// be a crash's doing.
const writeChunk = 1 << 20

// Log appends txn entries to ZooKeeper-format log files with group commit:
// Append buffers, and one Sync writes and fsyncs everything appended since
// the previous Sync (a batch larger than writeChunk is written and fsynced
// in chunks of at most that as it is appended). The Log is not safe for concurrent use: the shell
// drives it from one goroutine (appending the next batch while nothing else
// touches it), as ZooKeeper's SyncRequestProcessor does.
//
// Every Log is born from Store.Recover; after recovery the first Append
// starts a new file, so a file is never appended to after a restart.
//
// Failure is final: after a write or fsync error every call returns the same
// error, wrapping ErrFailed, and the shell must stop the process.
type Log struct {
	fs   vfs.FS
	dir  string
	opts Options

	cur      vfs.File
	curName  string
	curOff   int64 // where the next buffered byte goes
	curSize  int64 // file size including the zero-filled preallocation
	dirDirty bool  // a file was created in dir since its last fsync

	pending     []byte // records appended since the last write
	lastZxid    int64
	durableZxid int64
	sinceRoll   int
	rollAfter   int
	rollPending bool
	err         error
}

func newLog(fs vfs.FS, dir string, opts Options, lastZxid int64) *Log {
	l := &Log{fs: fs, dir: dir, opts: opts, lastZxid: lastZxid, durableZxid: lastZxid}
	l.resetRoll()
	return l
}

// resetRoll draws the next roll point as ZooKeeper does: after
// snapCount/2 + rand(snapCount/2) txns.
func (l *Log) resetRoll() {
	half := l.opts.SnapCount / 2
	l.sinceRoll, l.rollPending = 0, false
	l.rollAfter = half + l.opts.Rand.Intn(half)
}

// LastZxid is the zxid of the last txn appended (or, before any append, the
// last one recovered or the truncation point).
func (l *Log) LastZxid() int64 { return l.lastZxid }

// DurableZxid is the highest zxid made durable by Sync (or recovered, or
// fsynced by an Append that flushed a full chunk).
func (l *Log) DurableZxid() int64 { return l.durableZxid }

// Append buffers one txn entry (TxnHeader, body, optional digest; see
// EncodeEntry). Its zxid must exceed LastZxid. The entry is durable only
// after a later Sync returns a zxid at least its own. It reports whether
// this entry started a new log file (after SnapCount/2 + rand(SnapCount/2)
// txns, after Roll, and on the first Append after Recover or Truncate): the
// moment ZooKeeper takes a snapshot.
func (l *Log) Append(entry []byte) (rolled bool, err error) {
	if l.err != nil {
		return false, l.err
	}
	zxid, err := EntryZxid(entry)
	if err != nil {
		return false, fmt.Errorf("append: %w", err)
	}
	if zxid <= l.lastZxid {
		return false, fmt.Errorf("append: zxid %#x does not follow the log's last zxid %#x", zxid, l.lastZxid)
	}
	if len(entry) > maxEntryLen {
		return false, fmt.Errorf("append: txn entry of %d bytes exceeds %d", len(entry), maxEntryLen)
	}
	if l.cur == nil || l.rollPending {
		if err := l.startFile(zxid); err != nil {
			return false, l.fail(err)
		}
		rolled = true
	} else if len(l.pending) > 0 && len(l.pending)+recordLen(entry) > writeChunk {
		if err := l.flushSync(); err != nil {
			return false, l.fail(err)
		}
	}
	l.pending = appendRecord(l.pending, entry)
	l.lastZxid = zxid
	l.sinceRoll++
	if l.sinceRoll > l.rollAfter {
		l.rollPending = true
	}
	return rolled, nil
}

// Roll makes the next Append start a new file (e.g. when the shell takes a
// snapshot for its own reasons).
func (l *Log) Roll() { l.rollPending = true }

// Sync writes and fsyncs everything appended so far and returns the highest
// durable zxid. An error wraps ErrFailed and is fatal (see Log).
func (l *Log) Sync() (int64, error) {
	if l.err != nil {
		return l.durableZxid, l.err
	}
	if err := l.flushSync(); err != nil {
		return l.durableZxid, l.fail(err)
	}
	return l.durableZxid, nil
}

// Close syncs and closes the current file.
func (l *Log) Close() error {
	if _, err := l.Sync(); err != nil {
		return err
	}
	return l.closeFile()
}

func (l *Log) fail(err error) error {
	l.err = fmt.Errorf("%w: txn log %s: %w", ErrFailed, l.dir, err)
	return l.err
}

// startFile finishes the current file, making all of it durable, before it
// creates the next one. Recovery relies on that order: a log file that has a
// successor is complete on disk, so damage in it is damage to durable data.
func (l *Log) startFile(zxid int64) error {
	if err := l.flushSync(); err != nil {
		return err
	}
	if err := l.closeFile(); err != nil {
		return err
	}
	name := LogName(zxid)
	f, err := l.fs.Create(join(l.dir, name))
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	l.cur, l.curName, l.curOff, l.curSize = f, name, 0, 0
	l.pending = appendFileHeader(l.pending, wire.TxnLogMagic, 0)
	l.dirDirty = true
	l.resetRoll()
	return nil
}

func (l *Log) closeFile() error {
	if l.cur == nil {
		return nil
	}
	err := l.cur.Close()
	l.cur = nil
	if err != nil {
		return fmt.Errorf("close %s: %w", l.curName, err)
	}
	return nil
}

// write writes the buffered records, first extending the preallocated,
// zero-filled region as ZooKeeper does: whenever the write would come within
// 4 KiB of the end, by another PreallocSize.
func (l *Log) write() error {
	if len(l.pending) == 0 {
		return nil
	}
	end := l.curOff + int64(len(l.pending))
	if prealloc := l.opts.PreallocSize; prealloc > 0 && end+4096 >= l.curSize {
		size := l.curSize
		for end+4096 >= size {
			size += prealloc
		}
		if err := l.cur.Truncate(size); err != nil {
			return fmt.Errorf("preallocate %s to %d bytes: %w", l.curName, size, err)
		}
		l.curSize = size
	}
	if _, err := l.cur.WriteAt(l.pending, l.curOff); err != nil {
		return fmt.Errorf("write %s at offset %d: %w", l.curName, l.curOff, err)
	}
	l.curOff = end
	l.pending = l.pending[:0]
	return nil
}

func (l *Log) flushSync() error {
	if l.cur == nil {
		return nil
	}
	if err := l.write(); err != nil {
		return err
	}
	if err := l.cur.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", l.curName, err)
	}
	if l.dirDirty {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return fmt.Errorf("fsync directory %s: %w", l.dir, err)
		}
		l.dirDirty = false
	}
	l.durableZxid = l.lastZxid
	return nil
}

// Truncate removes every txn above zxid (the TRUNC of ZooKeeper's sync, and
// the first step of Store.InstallSnapshot). It first makes what is
// buffered durable, removes whole files newest first, then cuts the file that
// holds zxid, so a crash in between leaves a prefix of the history. A cut
// that drops records replaces the file by a copy of what it keeps
// (keepPrefix); only zero padding is cut in place. The next Append starts a
// new file.
func (l *Log) Truncate(zxid int64) error {
	if l.err != nil {
		return l.err
	}
	if err := l.flushSync(); err != nil {
		return l.fail(err)
	}
	if err := l.closeFile(); err != nil {
		return l.fail(err)
	}
	if err := truncateFiles(l.fs, l.dir, zxid); err != nil {
		return l.fail(err)
	}
	l.lastZxid = min(l.lastZxid, zxid)
	l.durableZxid = min(l.durableZxid, zxid)
	return nil
}

func truncateFiles(fs vfs.FS, dir string, zxid int64) error {
	files, err := listLogs(fs, dir)
	if err != nil {
		return err
	}
	removed := false
	for len(files) > 0 && files[len(files)-1].zxid > zxid {
		last := files[len(files)-1]
		if err := fs.Remove(join(dir, last.name)); err != nil {
			return fmt.Errorf("remove %s: %w", last.name, err)
		}
		files, removed = files[:len(files)-1], true
	}
	if removed {
		if err := fs.SyncDir(dir); err != nil {
			return fmt.Errorf("fsync directory %s: %w", dir, err)
		}
	}
	if len(files) == 0 {
		return nil
	}
	last := files[len(files)-1]
	f, err := fs.Open(join(dir, last.name))
	if err != nil {
		return err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return err
	}
	s, err := newLogScanner(f, size, last.name, last.zxid-1)
	if err != nil {
		return err
	}
	for {
		off := s.Offset()
		ok, err := s.Next()
		if err != nil {
			return err
		}
		if ok && s.Zxid <= zxid {
			continue
		}
		if !ok && s.Stop != stopBad {
			// Only zeros follow (checked): cutting them changes no byte a
			// crash could bring back.
			if err := f.Truncate(off); err != nil {
				return fmt.Errorf("truncate %s to %d bytes: %w", last.name, off, err)
			}
			if err := f.Sync(); err != nil {
				return fmt.Errorf("fsync %s: %w", last.name, err)
			}
			return nil
		}
		return keepPrefix(fs, dir, last.name, f, off)
	}
}

// keepPrefix replaces the file name in dir, open as f, by a copy of its
// first n bytes: written to tmp.<name> (over nothing), fsynced, renamed over
// name, and the directory fsynced. A crash leaves the old file or the new
// one, whole. Shrinking the file in place would not: until the shrink is
// fsynced a crash may keep the old size, and the sector holding the cut
// torn between the shrink's zeros and the old bytes reads as zeros followed
// by nonzero bytes within one sector — damage no crash of an append leaves,
// which recovery refuses (docs/storage.md; TestCrashRecovery, seed
// 2441058543187775725: a Truncate whose fsync failed, then the crash).
func keepPrefix(fsys vfs.FS, dir, name string, f vfs.File, n int64) error {
	tmp := tmpPrefix + name
	out, err := fsys.Create(join(dir, tmp))
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	buf := make([]byte, min(n, writeChunk))
	for off := int64(0); off < n && err == nil; off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), n-off)]
		if got, rerr := f.ReadAt(b, off); got < len(b) {
			err = fmt.Errorf("read %s at offset %d: %w", name, off, rerr)
		} else if _, werr := out.WriteAt(b, off); werr != nil {
			err = fmt.Errorf("write %s: %w", tmp, werr)
		}
	}
	if err == nil {
		if serr := out.Sync(); serr != nil {
			err = fmt.Errorf("fsync %s: %w", tmp, serr)
		}
	}
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", tmp, cerr)
	}
	if err == nil {
		if rerr := fsys.Rename(join(dir, tmp), join(dir, name)); rerr != nil {
			err = fmt.Errorf("rename %s to %s: %w", tmp, name, rerr)
		}
	}
	if err == nil {
		if serr := fsys.SyncDir(dir); serr != nil {
			err = fmt.Errorf("fsync directory %s: %w", dir, serr)
		}
	}
	return err
}

type logFile struct {
	name string
	zxid int64
}

// listLogs returns the log files of dir, oldest first.
func listLogs(fs vfs.FS, dir string) ([]logFile, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []logFile
	for _, n := range names {
		if z, ok := parseZxidName(n, logPrefix); ok {
			out = append(out, logFile{name: n, zxid: z})
		}
	}
	sortByZxid(out, func(f logFile) int64 { return f.zxid })
	return out, nil
}
