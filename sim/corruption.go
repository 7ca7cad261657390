package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// Corrupted disks: a flipped bit in durable data (the bitflip fault), and
// how a refusal to start over it is judged — right only with a corruption
// to show for it, naming file and offset, or where the last crash left a
// record one bit away from the one written (docs/storage.md, "Limits").

// flippedBit remembers a corruption so that it can be undone after the
// server rightly refused to start.
type flippedBit struct {
	file string
	off  int64
	bit  uint
}

// refused handles a recovery that refused to start over its data: correct only when durable data was
// corrupted, and then only with an error that names file and offset — or when the last crash left a
// record one bit away from the one written, which recovery cannot tell from a flipped bit
// (docs/storage.md, "Limits": a torn write whose lost part held a single set bit).
func (s *server) refused(err error) {
	w := s.w
	var c *storage.CorruptError
	named := errors.As(err, &c) && c.File != ""
	w.tr.logf("server %d: refused to start: %v", s.sid, err)
	if s.corrupted == nil && named {
		if f, ok := s.crashLooksFlipped(c); ok {
			w.tr.logf("server %d: the crash left %s at offset %d one bit away from the record written (bit %d of byte %d): a flip to recovery", s.sid, c.File, c.Offset, f.bit, f.off)
			w.stats.CrashFlips++
			s.corrupted = &f
		}
	}
	switch {
	case s.corrupted == nil:
		w.fail(KindRecovery, "server %d refused to start although no durable data was corrupted: %v", s.sid, err)
	case !named:
		w.fail(KindRecovery, "server %d refused to start without naming file and offset: %v", s.sid, err)
	default:
		// The right answer. Undo the corruption (an operator restoring the
		// file) and start again: now everything durable must come back.
		w.stats.Refusals++
		f := s.corrupted
		if ferr := s.disk.FlipBit(f.file, f.off, f.bit); ferr != nil {
			w.fail(KindRecovery, "server %d: undo corruption of %s: %v", s.sid, f.file, ferr)
			return
		}
		s.corrupted = nil
		s.scheduleRestart(restartWait)
	}
}

// crashLooksFlipped reports whether the record recovery refused differs
// from the one written before the last crash in exactly one bit, and
// which bit that is.
func (s *server) crashLooksFlipped(c *storage.CorruptError) (flippedBit, bool) {
	path := dataDir + "/" + storage.VersionDir + "/" + c.File
	written := s.written[path]
	image, err := vfs.ReadFull(s.disk, path)
	if written == nil || err != nil || c.Offset+12 > int64(len(written)) || storage.RecordBitsChanged(written, image, c.Offset) != 1 {
		return flippedBit{}, false
	}
	for i := c.Offset; i < int64(len(written)); i++ {
		var b byte
		if i < int64(len(image)) {
			b = image[i]
		}
		if x := written[i] ^ b; x != 0 {
			return flippedBit{file: path, off: i, bit: uint(bits.TrailingZeros8(x))}, true
		}
	}
	return flippedBit{}, false
}

// logImages reads the log files as written, before a crash decides what
// of them survives (crashLooksFlipped).
func (s *server) logImages() map[string][]byte {
	dir := dataDir + "/" + storage.VersionDir
	names, err := s.disk.List(dir)
	if err != nil {
		return nil
	}
	images := map[string][]byte{}
	for _, n := range names {
		if strings.HasPrefix(n, "log.") {
			if b, err := vfs.ReadFull(s.disk, dir+"/"+n); err == nil {
				images[dir+"/"+n] = b
			}
		}
	}
	return images
}

// corruptDurable flips one bit inside the records of a log file, the newest
// included. A flipped bit in a record written in full is never what a crash
// leaves (docs/storage.md), so recovery must refuse naming file and offset,
// or recover without losing anything durable (a bit in bytes it does not
// read, or in a tail a crash left torn anyway).
func (s *server) corruptDurable() {
	dir := dataDir + "/" + storage.VersionDir
	names, err := s.disk.List(dir)
	if err != nil {
		s.w.fail(KindRecovery, "server %d: list %s: %v", s.sid, dir, err)
		return
	}
	type logFile struct {
		name string
		zxid uint64
	}
	var logs []logFile
	for _, n := range names {
		if hex, ok := strings.CutPrefix(n, "log."); ok {
			if z, err := strconv.ParseUint(hex, 16, 64); err == nil {
				logs = append(logs, logFile{n, z})
			}
		}
	}
	slices.SortFunc(logs, func(a, b logFile) int { return cmp.Compare(a.zxid, b.zxid) })
	if len(logs) == 0 {
		return
	}
	r := s.w.streams.Stream(fmt.Sprintf("corrupt/%d/%d", s.id, s.gen))
	name := dir + "/" + logs[r.IntN(len(logs))].name
	end, err := s.recordsEnd(name)
	if err != nil {
		s.w.fail(KindRecovery, "server %d: read %s: %v", s.sid, name, err)
		return
	}
	if end <= 16 {
		return // only the file header: no txn in it
	}
	f := &flippedBit{file: name, off: r.Int64N(end), bit: uint(r.IntN(8))}
	if err := s.disk.FlipBit(f.file, f.off, f.bit); err != nil {
		s.w.fail(KindRecovery, "server %d: corrupt %s: %v", s.sid, name, err)
		return
	}
	s.w.tr.logf("server %d: flipped bit %d of %s at offset %d", s.sid, f.bit, f.file, f.off)
	s.corrupted = f
	s.damaged = s.w.ensemble != nil // counts as failed from now until synchronized
}

// recordsEnd is where a log file's non-zero bytes end (its records; the
// preallocated rest is zeros).
func (s *server) recordsEnd(name string) (int64, error) {
	buf, err := vfs.ReadFull(s.disk, name)
	if err != nil {
		return 0, err
	}
	end := len(buf)
	for end > 0 && buf[end-1] == 0 {
		end--
	}
	return int64(end), nil
}
