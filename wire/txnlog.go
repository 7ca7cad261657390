package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
)

// FileHeader opens ZooKeeper's txn log and snapshot files.
type FileHeader struct {
	Magic   int32
	Version int32
	DbID    int64
}

func (r *FileHeader) Encode(e *Encoder) {
	e.WriteInt(r.Magic)
	e.WriteInt(r.Version)
	e.WriteLong(r.DbID)
}

func (r *FileHeader) Decode(d *Decoder) {
	r.Magic = d.ReadInt()
	r.Version = d.ReadInt()
	r.DbID = d.ReadLong()
}

// Magic numbers and version of ZooKeeper's data files.
const (
	TxnLogMagic   int32 = 0x5a4b4c47 // "ZKLG"
	SnapshotMagic int32 = 0x5a4b534e // "ZKSN"
	FileVersion   int32 = 2
	// FileHeaderSize is the encoded size of a FileHeader.
	FileHeaderSize = 16
	// txnEndOfRecord follows every entry of a txn log ('B').
	txnEndOfRecord = 'B'
)

// TxnEntry is one logged txn: its header, its body (nil for a closeSession
// logged without one) and the tree digest ZooKeeper 3.8 appends when digests
// are enabled.
type TxnEntry struct {
	Header TxnHeader
	Body   Record
	Digest *TxnDigest
}

// Encode writes the entry as ZooKeeper marshals it: header, body, digest.
func (r *TxnEntry) Encode(e *Encoder) {
	r.Header.Encode(e)
	if r.Body != nil {
		r.Body.Encode(e)
	}
	if r.Digest != nil {
		r.Digest.Encode(e)
	}
}

// Decode reads a whole entry: it consumes the rest of d, since only the
// entry's end tells whether a digest follows the body.
func (r *TxnEntry) Decode(d *Decoder) {
	*r = TxnEntry{}
	r.Header.Decode(d)
	if d.Err() != nil {
		return
	}
	bodyStart := d.Offset()
	body, err := DecodeTxnBody(r.Header.Type, d)
	if err != nil {
		d.Fail(r.Header.Type.String()+" txn", err)
		return
	}
	if r.Header.Type != OpCloseSession || d.Offset() > bodyStart {
		r.Body = body
	}
	switch d.Remaining() {
	case 0:
	case txnDigestSize:
		r.Digest = &TxnDigest{}
		r.Digest.Decode(d)
	default:
		d.Fail("txn digest", fmt.Errorf("%d trailing bytes, want 0 or %d", d.Remaining(), txnDigestSize))
	}
}

// DecodeTxnEntry decodes one txn as stored in a log entry or carried in a
// proposal: a TxnHeader, the body its type calls for, and an optional
// TxnDigest filling the rest exactly. A closeSession logged without a body
// (before ZooKeeper 3.6) has a nil Body.
func DecodeTxnEntry(b []byte) (TxnEntry, error) {
	d := &Decoder{b: b}
	var t TxnEntry // a direct call, so that t can stay on the stack
	t.Decode(d)
	return t, d.end()
}

// CheckTxnEntry returns the error DecodeTxnEntry would return for b, and
// nil when it would succeed, without building the txn: a counting pass
// reads past strings, buffers and vectors without allocating them. A log
// scan that only checks records uses it.
func CheckTxnEntry(b []byte) error {
	d := &Decoder{b: b, discard: true}
	var t TxnEntry // a direct call, so that t can stay on the stack
	t.Decode(d)
	return d.end()
}

// txnDigestSize is the encoded size of a TxnDigest.
const txnDigestSize = 12

// ErrBadChecksum means a txn log entry's Adler-32 checksum does not match.
var ErrBadChecksum = errors.New("checksum mismatch")

// TxnLogError names the file offset where a txn log could not be read.
type TxnLogError struct {
	Offset int64
	Err    error
}

func (e *TxnLogError) Error() string {
	return fmt.Sprintf("wire: txn log at offset %d: %v", e.Offset, e.Err)
}

func (e *TxnLogError) Unwrap() error { return e.Err }

// TxnLogReader reads a ZooKeeper txn log file (FileTxnLog): a FileHeader,
// then per entry a checksum long (Adler-32 of the entry), the entry as a jute
// buffer and the byte 'B'. The file is preallocated with zeros, so an empty
// entry marks the end.
type TxnLogReader struct {
	r      *bufio.Reader
	off    int64 // bytes consumed
	end    int64 // end of the last whole entry
	max    int
	Header FileHeader
	buf    []byte
}

// NewTxnLogReader reads the file header from r; entries longer than max
// bytes (<= 0: DefaultMaxBuffer) are refused.
func NewTxnLogReader(r io.Reader, max int) (*TxnLogReader, error) {
	if max <= 0 {
		max = DefaultMaxBuffer
	}
	l := &TxnLogReader{r: bufio.NewReader(r), max: max}
	hdr, err := l.read(FileHeaderSize)
	if err != nil {
		return nil, &TxnLogError{Offset: 0, Err: fmt.Errorf("file header: %w", err)}
	}
	if err := Unmarshal(hdr, &l.Header); err != nil {
		return nil, &TxnLogError{Offset: 0, Err: err}
	}
	l.end = l.off
	if l.Header.Magic != TxnLogMagic {
		return nil, &TxnLogError{Offset: 0, Err: fmt.Errorf("magic %#x is not a txn log's %#x", l.Header.Magic, TxnLogMagic)}
	}
	return l, nil
}

// Next returns the next entry and the file offset it starts at; io.EOF after
// the last one.
func (l *TxnLogReader) Next() (TxnEntry, int64, error) {
	start := l.off
	fail := func(err error) (TxnEntry, int64, error) {
		return TxnEntry{}, start, &TxnLogError{Offset: start, Err: err}
	}
	head, err := l.read(12)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return TxnEntry{}, start, io.EOF
	}
	if err != nil {
		return fail(err)
	}
	sum := binary.BigEndian.Uint64(head)
	n := int32(binary.BigEndian.Uint32(head[8:]))
	if n == 0 {
		return TxnEntry{}, start, io.EOF
	}
	if n < 0 || int(n) > l.max {
		return fail(fmt.Errorf("entry length %d not in 1..%d", n, l.max))
	}
	entry, err := l.read(int(n) + 1)
	if err != nil {
		return fail(fmt.Errorf("entry of %d bytes: %w", n, err))
	}
	if entry[n] != txnEndOfRecord {
		return fail(fmt.Errorf("entry ends with %#x, not 'B'", entry[n]))
	}
	entry = entry[:n]
	if got := uint64(adler32.Checksum(entry)); got != sum {
		return fail(fmt.Errorf("%w: stored %#x, computed %#x", ErrBadChecksum, sum, got))
	}
	t, err := DecodeTxnEntry(entry)
	if err != nil {
		return fail(err)
	}
	l.end = l.off
	return t, start, nil
}

// read returns the next n bytes of the file in the reader's buffer.
func (l *TxnLogReader) read(n int) ([]byte, error) {
	if cap(l.buf) < n {
		l.buf = make([]byte, n)
	}
	l.buf = l.buf[:n]
	got, err := io.ReadFull(l.r, l.buf)
	l.off += int64(got)
	return l.buf, err
}

// AppendTxnLogEntry appends one entry in the txn log's layout: checksum,
// length-prefixed entry, 'B'.
func AppendTxnLogEntry(buf []byte, t *TxnEntry) []byte {
	e := Encoder{buf: buf}
	sumAt := len(e.buf)
	e.WriteLong(0)
	start := e.BeginFrame()
	t.Encode(&e)
	e.EndFrame(start)
	binary.BigEndian.PutUint64(e.buf[sumAt:], uint64(adler32.Checksum(e.buf[start+FrameHeaderSize:])))
	e.buf = append(e.buf, txnEndOfRecord)
	return e.buf
}

// End returns the file offset just after the last entry Next returned (after
// the header if none): where a writer appending to the log would start.
func (l *TxnLogReader) End() int64 { return l.end }
