package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Record is a jute record: a struct with a fixed field layout that encodes to
// and decodes from ZooKeeper's big-endian binary format.
//
// Decode never panics: a short or malformed input leaves the error in the
// Decoder (see Decoder.Err), and the record's fields are then unspecified.
type Record interface {
	Encode(e *Encoder)
	Decode(d *Decoder)
}

// Encoder appends jute-encoded values to a byte slice. The zero value is ready
// to use; Reset keeps the capacity so a hot path can reuse one Encoder.
type Encoder struct {
	buf []byte
}

// NewEncoder returns an Encoder that appends to buf[:0], reusing its capacity
// (or, given none, starting with room for a typical record).
func NewEncoder(buf []byte) *Encoder {
	if cap(buf) == 0 {
		buf = make([]byte, 0, typicalRecord)
	}
	return &Encoder{buf: buf[:0]}
}

// typicalRecord is room for most records at once: headers, stats, txns and
// requests on short paths. Growing from nothing one append at a time would
// reallocate five times on the way.
const typicalRecord = 128

// Bytes returns the encoded bytes. They alias the Encoder's buffer until the
// next Reset.
func (e *Encoder) Bytes() []byte { return e.buf }

// Len returns the number of bytes encoded so far.
func (e *Encoder) Len() int { return len(e.buf) }

// Reset empties the Encoder, keeping its capacity.
func (e *Encoder) Reset() { e.buf = e.buf[:0] }

// WriteInt appends a 32-bit big-endian integer.
func (e *Encoder) WriteInt(v int32) { e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v)) }

// WriteLong appends a 64-bit big-endian integer.
func (e *Encoder) WriteLong(v int64) { e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v)) }

// WriteBool appends a one-byte boolean (0 or 1).
func (e *Encoder) WriteBool(v bool) {
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// WriteBuffer appends a length-prefixed byte buffer; nil encodes as jute's
// null buffer (length -1), an empty non-nil slice as length 0.
func (e *Encoder) WriteBuffer(b []byte) {
	if b == nil {
		e.WriteInt(-1)
		return
	}
	e.WriteInt(int32(len(b)))
	e.buf = append(e.buf, b...)
}

// WriteString appends a length-prefixed ustring as ZooKeeper's Java writes
// it (UTF-8, but a character outside the BMP as two three-byte surrogates;
// see appendJavaString). Jute's null string is read back as "", so "" is
// written as length 0.
func (e *Encoder) WriteString(s string) {
	at := len(e.buf)
	e.WriteInt(0)
	e.buf = appendJavaString(e.buf, s)
	binary.BigEndian.PutUint32(e.buf[at:], uint32(len(e.buf)-at-4))
}

// WriteNullableString appends s, or jute's null string (length -1) when
// null is set. Only fields where ZooKeeper tells null from "" need it.
func (e *Encoder) WriteNullableString(s string, null bool) {
	if null {
		e.WriteInt(-1)
		return
	}
	e.WriteString(s)
}

// nullStringAt turns the empty string written at offset at into jute's null
// string (length -1); anything else there stays as written.
func (e *Encoder) nullStringAt(at int) {
	if at+4 <= len(e.buf) && binary.BigEndian.Uint32(e.buf[at:]) == 0 {
		binary.BigEndian.PutUint32(e.buf[at:], 1<<32-1)
	}
}

// WriteVectorLen appends a vector's element count; nil vectors are written as
// -1 (jute's null vector) by passing isNil.
func (e *Encoder) WriteVectorLen(n int, isNil bool) {
	if isNil {
		e.WriteInt(-1)
		return
	}
	e.WriteInt(int32(n))
}

// WriteStrings appends a vector<ustring>.
func (e *Encoder) WriteStrings(v []string) {
	e.WriteVectorLen(len(v), v == nil)
	for _, s := range v {
		e.WriteString(s)
	}
}

// WriteRaw appends bytes with no length prefix.
func (e *Encoder) WriteRaw(b []byte) { e.buf = append(e.buf, b...) }

// Write appends a nested record.
func (e *Encoder) Write(r Record) { r.Encode(e) }

// Marshal encodes r into a fresh byte slice.
func Marshal(r Record) []byte {
	e := Encoder{buf: make([]byte, 0, typicalRecord)}
	r.Encode(&e)
	return e.buf
}

// ErrShort means the input ended before the record did.
var ErrShort = errors.New("jute: input ends inside a record")

// DecodeError says what was malformed and at which byte offset of the input.
type DecodeError struct {
	Offset int
	What   string
	Err    error
}

func (e *DecodeError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("jute: %s at offset %d: %v", e.What, e.Offset, e.Err)
	}
	return fmt.Sprintf("jute: %s at offset %d", e.What, e.Offset)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Decoder reads jute values from a byte slice. The first error is sticky:
// later reads return zero values, so a record's Decode can read every field
// and the caller checks Err once.
//
// Strings are always copied. Buffers are copied unless Alias is set, in which
// case they point into the input, which the caller must then keep unchanged.
type Decoder struct {
	b     []byte
	off   int
	err   error
	Alias bool
	// discard makes a counting pass: strings, buffers and vectors are
	// checked and skipped, and read as empty, so nothing is allocated.
	discard bool
}

// NewDecoder returns a Decoder over b.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// Reset points the Decoder at new input and clears its error.
func (d *Decoder) Reset(b []byte) { d.b, d.off, d.err = b, 0, nil }

// Err returns the first error met, or nil.
func (d *Decoder) Err() error { return d.err }

// Offset returns the number of bytes consumed.
func (d *Decoder) Offset() int { return d.off }

// Remaining returns the number of unread bytes.
func (d *Decoder) Remaining() int { return len(d.b) - d.off }

// Rest returns the unread bytes without consuming them.
func (d *Decoder) Rest() []byte { return d.b[d.off:] }

// Fail records err as the Decoder's error unless one is already set.
func (d *Decoder) Fail(what string, err error) {
	if d.err == nil {
		d.err = &DecodeError{Offset: d.off, What: what, Err: err}
	}
}

func (d *Decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b)-d.off {
		d.Fail(what, ErrShort)
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

// ReadInt reads a 32-bit big-endian integer.
func (d *Decoder) ReadInt() int32 {
	p := d.take(4, "int")
	if p == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(p))
}

// ReadLong reads a 64-bit big-endian integer.
func (d *Decoder) ReadLong() int64 {
	p := d.take(8, "long")
	if p == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(p))
}

// ReadBool reads a one-byte boolean. Java's jute reads any non-zero byte as
// true; so do we.
func (d *Decoder) ReadBool() bool {
	p := d.take(1, "boolean")
	return p != nil && p[0] != 0
}

// readLen reads a length prefix, -1 meaning null, and checks it against the
// remaining input so that no allocation exceeds what the input could hold.
func (d *Decoder) readLen(what string) (n int, isNull bool) {
	v := d.ReadInt()
	if d.err != nil {
		return 0, false
	}
	if v == -1 {
		return 0, true
	}
	if v < 0 {
		d.Fail(what, fmt.Errorf("negative length %d", v))
		return 0, false
	}
	if int(v) > len(d.b)-d.off {
		d.Fail(what, fmt.Errorf("length %d exceeds the %d bytes left: %w", v, len(d.b)-d.off, ErrShort))
		return 0, false
	}
	return int(v), false
}

// ReadBuffer reads a length-prefixed buffer; jute's null buffer gives nil.
func (d *Decoder) ReadBuffer() []byte {
	n, isNull := d.readLen("buffer length")
	if isNull || d.err != nil {
		return nil
	}
	p := d.take(n, "buffer")
	if d.discard {
		return nil
	}
	if d.Alias {
		return p
	}
	out := make([]byte, n)
	copy(out, p)
	return out
}

// ReadRaw reads the next n bytes, which have no length prefix; like
// ReadBuffer it copies them unless Alias is set.
func (d *Decoder) ReadRaw(n int) []byte {
	if n < 0 {
		d.Fail("raw bytes", fmt.Errorf("negative count %d", n))
		return nil
	}
	p := d.take(n, "raw bytes")
	if p == nil || d.Alias {
		return p
	}
	return append([]byte(nil), p...)
}

// ReadString reads a length-prefixed string; jute's null string gives "".
func (d *Decoder) ReadString() string {
	s, _ := d.ReadNullableString()
	return s
}

// ReadNullableString reads a length-prefixed string and reports whether it
// was jute's null string (then s is ""). Malformed UTF-8 is replaced as
// ZooKeeper's Java reads it (see decodeJavaString).
func (d *Decoder) ReadNullableString() (s string, null bool) {
	n, isNull := d.readLen("string length")
	if isNull || d.err != nil {
		return "", isNull
	}
	p := d.take(n, "string")
	if d.discard {
		return "", false
	}
	return decodeJavaString(p), false
}

// ReadVectorLen reads a vector's element count: -1 for a null vector. Each
// element takes at least minElemSize bytes, which bounds the count by the
// remaining input before the caller allocates anything.
func (d *Decoder) ReadVectorLen(minElemSize int) int {
	v := d.ReadInt()
	if d.err != nil {
		return 0
	}
	if v == -1 {
		return -1
	}
	if v < 0 {
		d.Fail("vector length", fmt.Errorf("negative count %d", v))
		return 0
	}
	if minElemSize < 1 {
		minElemSize = 1
	}
	if int64(v)*int64(minElemSize) > int64(len(d.b)-d.off) {
		d.Fail("vector length", fmt.Errorf("%d elements cannot fit in %d bytes: %w", v, len(d.b)-d.off, ErrShort))
		return 0
	}
	return int(v)
}

// ReadStrings reads a vector<ustring>; a null vector gives nil.
func (d *Decoder) ReadStrings() []string {
	return readVector(d, 4, d.ReadString)
}

// readVector reads a vector whose elements take at least minElemSize bytes
// each, reading each element with read; a null vector gives nil. A counting
// pass reads and drops the elements and returns nil.
func readVector[E any](d *Decoder, minElemSize int, read func() E) []E {
	n := d.ReadVectorLen(minElemSize)
	if n < 0 || d.err != nil {
		return nil
	}
	if d.discard {
		for i := 0; i < n && d.err == nil; i++ {
			read()
		}
		return nil
	}
	out := make([]E, n)
	for i := range out {
		out[i] = read()
	}
	return out
}

// Read decodes a nested record.
func (d *Decoder) Read(r Record) { r.Decode(d) }

// Unmarshal decodes r from b and requires that b holds exactly one record.
func Unmarshal(b []byte, r Record) error { return unmarshal(&Decoder{b: b}, r) }

// unmarshal decodes r from all of d's input.
func unmarshal(d *Decoder, r Record) error {
	r.Decode(d)
	return d.end()
}

// end is the outcome of decoding a whole input: the first error, or an
// error if input is left over.
func (d *Decoder) end() error {
	if d.err != nil {
		return d.err
	}
	if d.off != len(d.b) {
		return &DecodeError{Offset: d.off, What: "record", Err: fmt.Errorf("%d trailing bytes", len(d.b)-d.off)}
	}
	return nil
}
