package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// FrameHeaderSize is the size of a frame's big-endian length prefix.
const FrameHeaderSize = 4

// The problems a frame can have; a *FrameError wraps exactly one of them, so
// callers test with errors.Is.
var (
	ErrFrameNegative  = errors.New("negative frame length")
	ErrFrameTooLarge  = errors.New("frame longer than the limit")
	ErrFrameTruncated = errors.New("connection ended inside a frame")
)

// FrameError describes a frame that cannot be read. The connection it came
// from is unusable afterwards: ZooKeeper closes it.
type FrameError struct {
	Problem error // ErrFrameNegative, ErrFrameTooLarge or ErrFrameTruncated
	Length  int32 // the announced length, when the prefix was read whole
	Max     int   // the limit in force
	Read    int   // bytes of the frame (prefix included) read before the input ended
	Err     error // the reader's error for a truncated frame
}

func (e *FrameError) Error() string {
	switch e.Problem {
	case ErrFrameNegative:
		return fmt.Sprintf("wire: frame length %d is negative", e.Length)
	case ErrFrameTooLarge:
		return fmt.Sprintf("wire: frame length %d exceeds the limit of %d bytes", e.Length, e.Max)
	}
	return fmt.Sprintf("wire: connection ended after %d bytes of a frame (length %d): %v", e.Read, e.Length, e.Err)
}

// Unwrap exposes both the problem and, for a truncated frame, the reader's error.
func (e *FrameError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Problem}
	}
	return []error{e.Problem, e.Err}
}

// FrameReader reads length-prefixed frames from a stream into one reusable
// buffer. The buffer never grows beyond Max bytes: the length is checked
// before anything is allocated.
type FrameReader struct {
	r   io.Reader
	max int
	hdr [FrameHeaderSize]byte
	buf []byte
}

// NewFrameReader reads frames from r, refusing frames longer than max bytes;
// max <= 0 means DefaultMaxBuffer.
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxBuffer
	}
	return &FrameReader{r: r, max: max}
}

// Max returns the largest frame length the reader accepts.
func (f *FrameReader) Max() int { return f.max }

// ReadFrame returns the next frame's payload, without its length prefix. The
// payload aliases the reader's buffer and is valid until the next read. A
// stream that ends cleanly between frames gives io.EOF; every other failure is
// a *FrameError.
func (f *FrameReader) ReadFrame() ([]byte, error) {
	n, err := f.readLength()
	if err != nil {
		return nil, err
	}
	return f.readBody(n)
}

// ReadFirstFrame reads the first frame of a client connection. As ZooKeeper
// does, it first interprets the four bytes as a length and checks whether they
// spell a four-letter command (see FourLetterWord): if so it returns the word
// and no frame, and reads nothing more.
func (f *FrameReader) ReadFirstFrame() (frame []byte, word string, err error) {
	n, err := f.readLength()
	if w, ok := FourLetterWord(n); ok {
		return nil, w, nil
	}
	if err != nil {
		return nil, "", err
	}
	frame, err = f.readBody(n)
	return frame, "", err
}

// readLength reads a length prefix and checks it against the limit. On a
// negative or oversized length it still returns the length with the error, so
// that ReadFirstFrame can look for a four-letter word; when the prefix could
// not be read whole it returns 0, which spells no word.
func (f *FrameReader) readLength() (int32, error) {
	got, err := io.ReadFull(f.r, f.hdr[:])
	switch {
	case err == io.EOF:
		return 0, io.EOF
	case err != nil:
		return 0, &FrameError{Problem: ErrFrameTruncated, Length: -1, Max: f.max, Read: got, Err: err}
	}
	n := int32(binary.BigEndian.Uint32(f.hdr[:]))
	if n < 0 {
		return n, &FrameError{Problem: ErrFrameNegative, Length: n, Max: f.max}
	}
	if int64(n) > int64(f.max) {
		return n, &FrameError{Problem: ErrFrameTooLarge, Length: n, Max: f.max}
	}
	return n, nil
}

func (f *FrameReader) readBody(n int32) ([]byte, error) {
	if cap(f.buf) < int(n) {
		f.buf = make([]byte, n)
	}
	f.buf = f.buf[:n]
	got, err := io.ReadFull(f.r, f.buf)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, &FrameError{Problem: ErrFrameTruncated, Length: n, Max: f.max, Read: FrameHeaderSize + got, Err: err}
	}
	return f.buf, nil
}

// BeginFrame reserves a length prefix and returns its position, to be passed
// to EndFrame once the frame's records are encoded.
func (e *Encoder) BeginFrame() int {
	start := len(e.buf)
	e.buf = append(e.buf, 0, 0, 0, 0)
	return start
}

// EndFrame fills in the length prefix reserved by BeginFrame at start.
func (e *Encoder) EndFrame(start int) {
	binary.BigEndian.PutUint32(e.buf[start:], uint32(len(e.buf)-start-FrameHeaderSize))
}

// AppendFrame appends one frame holding recs, in order, to buf and returns
// the extended buffer.
func AppendFrame(buf []byte, recs ...Record) []byte {
	e := Encoder{buf: buf}
	start := e.BeginFrame()
	for _, r := range recs {
		r.Encode(&e)
	}
	e.EndFrame(start)
	return e.buf
}

// fourLetterWords are the commands ZooKeeper 3.8 recognises in place of the
// first frame's length (FourLetterCommands), keyed by that length.
var fourLetterWords = func() map[int32]string {
	m := make(map[int32]string)
	for _, w := range []string{
		"conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "ruok", "stmk",
		"srst", "srvr", "stat", "wchc", "wchp", "wchs", "mntr", "isro", "hash",
	} {
		m[int32(binary.BigEndian.Uint32([]byte(w)))] = w
	}
	// A telnet client's interrupt (IAC IP IAC DO) in place of a command.
	m[int32(-0x000b0003)] = TelnetClose
	return m
}()

// TelnetClose is the name FourLetterWord gives the telnet interrupt sequence
// 0xfff4fffd, which ZooKeeper also treats as a command (it closes the connection).
const TelnetClose = "telnet close"

// FourLetterWord reports whether a connection's first four bytes, read as a
// frame length, spell a four-letter command, and which.
func FourLetterWord(length int32) (string, bool) {
	w, ok := fourLetterWords[length]
	return w, ok
}
