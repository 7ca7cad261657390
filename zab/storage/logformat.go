package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"io"
	"math/bits"

	"github.com/zabd/zabd/wire"
)

// Log file layout (ZooKeeper's FileTxnLog):
//
//	FileHeader: int magic "ZKLG", int version 2, long dbid 0
//	records:    long Adler32(entry), int len(entry), entry, byte 'B'
//	padding:    zeros up to the preallocated size
//
// A record whose checksum and length are both zero is the end of the log
// (the start of the padding).
const (
	fileHeaderLen = wire.FileHeaderSize
	endOfRecord   = 'B'
	// maxEntryLen bounds a record's length field so that garbage cannot
	// make the reader allocate without limit. ZooKeeper's jute.maxbuffer
	// default is 1 MiB less 1 KiB per packet; a txn can be a little larger.
	maxEntryLen = 16 << 20
)

func appendFileHeader(b []byte, magic int32, dbid int64) []byte {
	return append(b, wire.Marshal(&wire.FileHeader{Magic: magic, Version: wire.FileVersion, DbID: dbid})...)
}

func checkFileHeader(h []byte, magic int32) error {
	var hdr wire.FileHeader
	if len(h) < fileHeaderLen {
		return fmt.Errorf("file header is %d bytes, want %d", len(h), fileHeaderLen)
	}
	if err := wire.Unmarshal(h[:fileHeaderLen], &hdr); err != nil {
		return err
	}
	if hdr.Magic != magic {
		return fmt.Errorf("magic %#08x, want %#08x", uint32(hdr.Magic), uint32(magic))
	}
	if hdr.Version != wire.FileVersion {
		return fmt.Errorf("format version %d, want %d", hdr.Version, wire.FileVersion)
	}
	return nil
}

// recordLen is the size of entry's record: checksum, length, entry, end byte.
func recordLen(entry []byte) int { return recordOverhead + len(entry) }

const recordOverhead = 8 + 4 + 1

func appendRecord(b, entry []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(adler32.Checksum(entry)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(entry)))
	b = append(b, entry...)
	return append(b, endOfRecord)
}

// stopKind says why a log scan stopped.
type stopKind int

const (
	stopEOF     stopKind = iota // the file ended exactly after a record
	stopPadding                 // zero checksum and length, and only zeros after
	stopBad                     // a torn, garbled or out-of-order record, or nonzero bytes in the padding
)

// logScanner reads the records of one log file in order. It never returns a
// record that fails its checksum, does not decode as a txn entry, or does
// not raise the zxid.
type logScanner struct {
	r    io.ReaderAt
	size int64
	name string

	off      int64 // offset of the next record
	prevZxid int64 // zxid of the last record returned (or the floor given)
	// buf holds the file's bytes from bufOff on, read ahead (readAhead at
	// a time) so that a record costs no read call of its own: a read
	// call is microseconds, and recovery reads every record twice (the
	// check, then the replay).
	buf    []byte
	bufOff int64

	Entry []byte // the current record's entry; valid until the next call
	Zxid  int64

	Stop   stopKind
	Reason string // for stopBad

	// TrustPadding makes the scan stop at the first zero checksum and
	// length without checking that only zeros follow: for reading a log
	// that recovery has already checked (64 MiB of padding per file).
	TrustPadding bool
	// TrustEntries makes the scan check each record's checksum, end byte
	// and zxid order but not that its entry decodes as a txn: for reading
	// a log whose records recovery has already decoded (or that this
	// process appended), whose reader decodes what it uses anyway. A
	// record damaged since is still caught by its checksum.
	TrustEntries bool
}

// newLogScanner checks the file header. prevZxid is the zxid every record
// must exceed.
func newLogScanner(r io.ReaderAt, size int64, name string, prevZxid int64) (*logScanner, error) {
	s := &logScanner{r: r, size: size, name: name, off: fileHeaderLen, prevZxid: prevZxid}
	h := make([]byte, fileHeaderLen)
	if _, err := r.ReadAt(h, 0); err != nil && !(err == io.EOF && size >= fileHeaderLen) {
		if err == io.EOF {
			return nil, &CorruptError{File: name, Offset: 0, Reason: fmt.Sprintf("file of %d bytes ends inside the file header", size)}
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if err := checkFileHeader(h, wire.TxnLogMagic); err != nil {
		return nil, &CorruptError{File: name, Offset: 0, Reason: "not a txn log: " + err.Error()}
	}
	return s, nil
}

// Offset is where the next record starts (after Next returns false: where
// the valid log ends).
func (s *logScanner) Offset() int64 { return s.off }

// readAhead is how much a read call fetches at least (the file's end
// permitting); the padding check reads the same amount at a time.
const readAhead = 64 << 10

// read returns the n bytes at off, valid until the next call.
func (s *logScanner) read(off int64, n int) ([]byte, error) {
	if off >= s.bufOff && off+int64(n) <= s.bufOff+int64(len(s.buf)) {
		return s.buf[off-s.bufOff:][:n], nil
	}
	want := max(n, int(min(readAhead, s.size-off)))
	if cap(s.buf) < want {
		s.buf = make([]byte, want)
	}
	b := s.buf[:want]
	got, err := s.r.ReadAt(b, off)
	s.buf, s.bufOff = b[:got], off
	if got >= n {
		return b[:n], nil
	}
	if err == nil || err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	return nil, err
}

// Next reads the next record. It returns false at the end of the valid
// records, with Stop saying why, or with an error if reading failed.
func (s *logScanner) Next() (bool, error) {
	if s.off == s.size {
		s.Stop = stopEOF
		return false, nil
	}
	if s.size-s.off < 12 {
		return s.bad("file ends inside a record's checksum and length")
	}
	head, err := s.read(s.off, 12)
	if err != nil {
		return false, s.ioErr(err)
	}
	sum := binary.BigEndian.Uint64(head)
	n := int64(int32(binary.BigEndian.Uint32(head[8:])))
	if sum == 0 && n == 0 {
		if s.TrustPadding {
			s.Stop = stopPadding
			return false, nil
		}
		return s.atPadding()
	}
	switch {
	case n <= 0 || n > maxEntryLen:
		return s.bad(fmt.Sprintf("record length %d", n))
	case s.size-s.off-12 < n+1:
		return s.bad(fmt.Sprintf("file ends inside a record of %d bytes", n))
	}
	rec, err := s.read(s.off+12, int(n)+1)
	if err != nil {
		return false, s.ioErr(err)
	}
	entry := rec[:n]
	if rec[n] != endOfRecord {
		return s.bad(fmt.Sprintf("end-of-record byte %#02x, want 'B'", rec[n]))
	}
	zxid, reason := checkEntry(entry, sum, s.prevZxid, !s.TrustEntries)
	if reason != "" {
		return s.bad(reason)
	}
	s.Entry, s.Zxid, s.prevZxid = entry, zxid, zxid
	s.off += 12 + n + 1
	return true, nil
}

// checkEntry checks a record's entry against the checksum field sum and the
// zxid it must exceed, and with decode that the entry decodes as a txn;
// reason is "" if the record is valid.
func checkEntry(entry []byte, sum uint64, prev int64, decode bool) (zxid int64, reason string) {
	if got := uint64(adler32.Checksum(entry)); got != sum {
		return 0, fmt.Sprintf("checksum %#x, record says %#x", got, sum)
	}
	zxid, err := EntryZxid(entry)
	if err == nil && decode {
		err = wire.CheckTxnEntry(entry)
	}
	if err != nil {
		return 0, "record passes its checksum but is not a txn: " + err.Error()
	}
	if zxid <= prev {
		return 0, fmt.Sprintf("zxid %#x does not follow %#x", zxid, prev)
	}
	return zxid, ""
}

// atPadding checks that everything from the current offset is zero.
func (s *logScanner) atPadding() (bool, error) {
	for off := s.off; off < s.size; off += readAhead {
		b, err := s.read(off, int(min(readAhead, s.size-off)))
		if err != nil {
			return false, s.ioErr(err)
		}
		if i := firstNonZero(b); i >= 0 {
			return s.bad(fmt.Sprintf("nonzero byte at offset %d inside the zero padding", off+int64(i)))
		}
	}
	s.Stop = stopPadding
	return false, nil
}

func (s *logScanner) bad(reason string) (bool, error) {
	s.Stop, s.Reason = stopBad, reason
	return false, nil
}

func (s *logScanner) ioErr(err error) error {
	return fmt.Errorf("read %s at offset %d: %w", s.name, s.off, err)
}

// corruption describes where and why the scan stopped on a bad record.
func (s *logScanner) corruption() *CorruptError {
	return &CorruptError{File: s.name, Offset: s.off, Reason: s.Reason}
}

// firstNonZero returns the index of b's first nonzero byte, or -1. The
// padding it checks is most of a log file (64 MiB preallocated), so whole
// blocks are compared at once (bytes.Equal is vectorized) and only a block
// that differs is searched byte by byte.
func firstNonZero(b []byte) int {
	for start := 0; start < len(b); start += len(zeroBlock) {
		block := b[start:min(start+len(zeroBlock), len(b))]
		if bytes.Equal(block, zeroBlock[:len(block)]) {
			continue
		}
		for i, c := range block {
			if c != 0 {
				return start + i
			}
		}
	}
	return -1
}

var zeroBlock [readAhead]byte

// RecordBitsChanged counts the bits in which the record (or the file
// header, at offset 0) at off differs between a log file as it was
// written and an image of it after a crash: 1 is the one crash that
// recovery cannot tell from a flipped bit (a lost part of a record that
// held a single set bit: docs/storage.md, "Limits"), which the crash tests
// and the simulator accept as a refusal, and repair as an operator would.
func RecordBitsChanged(written, image []byte, off int64) int {
	end := int64(fileHeaderLen)
	if off > 0 {
		end = off + int64(recordLen(make([]byte, binary.BigEndian.Uint32(written[off+8:]))))
	}
	diff := 0
	for i := off; i < end && i < int64(len(written)); i++ {
		var b byte
		if i < int64(len(image)) {
			b = image[i]
		}
		diff += bits.OnesCount8(written[i] ^ b)
	}
	return diff
}
