package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"pgregory.net/rapid"
)

func lengthPrefix(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

func TestFrameLimit(t *testing.T) {
	// A frame of exactly the limit is served; one byte more is refused
	// before its body is read or allocated.
	body := bytes.Repeat([]byte{7}, DefaultMaxBuffer)
	fr := NewFrameReader(bytes.NewReader(append(lengthPrefix(DefaultMaxBuffer), body...)), 0)
	got, err := fr.ReadFrame()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("frame of %d bytes: len %d, %v", DefaultMaxBuffer, len(got), err)
	}

	fr = NewFrameReader(bytes.NewReader(lengthPrefix(DefaultMaxBuffer+1)), 0)
	_, err = fr.ReadFrame()
	var fe *FrameError
	if !errors.As(err, &fe) || !errors.Is(err, ErrFrameTooLarge) || fe.Length != DefaultMaxBuffer+1 || fe.Max != DefaultMaxBuffer {
		t.Fatalf("oversized frame: %v", err)
	}
	if cap(fr.buf) != 0 {
		t.Fatalf("refused frame allocated %d bytes", cap(fr.buf))
	}
	if !strings.Contains(err.Error(), "1048576") || !strings.Contains(err.Error(), "1048575") {
		t.Errorf("message does not name length and limit: %v", err)
	}
}

func TestFrameConfiguredLimit(t *testing.T) {
	fr := NewFrameReader(bytes.NewReader(append(lengthPrefix(11), make([]byte, 11)...)), 10)
	if fr.Max() != 10 {
		t.Fatalf("Max = %d", fr.Max())
	}
	if _, err := fr.ReadFrame(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("got %v", err)
	}
}

func TestFrameErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input []byte
		want  error
		read  int
	}{
		{"negative length", lengthPrefix(-5), ErrFrameNegative, 0},
		{"prefix cut short", []byte{0, 0}, ErrFrameTruncated, 2},
		{"body cut short", append(lengthPrefix(10), 1, 2, 3), ErrFrameTruncated, 7},
		{"no body", lengthPrefix(3), ErrFrameTruncated, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewFrameReader(bytes.NewReader(tc.input), 0).ReadFrame()
			var fe *FrameError
			if !errors.As(err, &fe) || !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if tc.want == ErrFrameTruncated && (fe.Read != tc.read || !errors.Is(err, io.ErrUnexpectedEOF)) {
				t.Fatalf("read %d (want %d), err %v", fe.Read, tc.read, err)
			}
		})
	}
	// A stream that ends between frames is a clean end, not a frame error.
	if _, err := NewFrameReader(bytes.NewReader(nil), 0).ReadFrame(); err != io.EOF {
		t.Fatalf("empty stream: %v", err)
	}
	// A reader's own error is kept.
	boom := errors.New("boom")
	_, err := NewFrameReader(io.MultiReader(bytes.NewReader(lengthPrefix(4)), iotest.ErrReader(boom)), 0).ReadFrame()
	if !errors.Is(err, boom) || !errors.Is(err, ErrFrameTruncated) {
		t.Fatalf("reader error: %v", err)
	}
}

func TestFramesReuseBuffer(t *testing.T) {
	var stream []byte
	stream = AppendFrame(stream, &RequestHeader{Xid: 1, Type: OpGetData}, &PathWatchRequest{Path: "/a", Watch: true})
	stream = AppendFrame(stream, &RequestHeader{Xid: 2, Type: OpPing})
	stream = AppendFrame(stream)
	fr := NewFrameReader(iotest.HalfReader(bytes.NewReader(stream)), 0)
	first, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	var h RequestHeader
	var body PathWatchRequest
	d := NewDecoder(first)
	h.Decode(d)
	body.Decode(d)
	if d.Err() != nil || d.Remaining() != 0 || h != (RequestHeader{1, OpGetData}) || body != (PathWatchRequest{"/a", true}) {
		t.Fatalf("first frame: %+v %+v %v", h, body, d.Err())
	}
	second, err := fr.ReadFrame()
	if err != nil || Unmarshal(second, &h) != nil || h != (RequestHeader{2, OpPing}) {
		t.Fatalf("second frame: %x %v", second, err)
	}
	if &first[0] != &second[0] {
		t.Error("the reader did not reuse its buffer")
	}
	if empty, err := fr.ReadFrame(); err != nil || len(empty) != 0 {
		t.Fatalf("empty frame: %x %v", empty, err)
	}
	if _, err := fr.ReadFrame(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

func TestFrameRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		payloads := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 300), 0, 8).Draw(t, "payloads")
		e := NewEncoder(nil)
		for _, p := range payloads {
			start := e.BeginFrame()
			e.WriteRaw(p)
			e.EndFrame(start)
		}
		fr := NewFrameReader(bytes.NewReader(e.Bytes()), 300)
		for i, p := range payloads {
			got, err := fr.ReadFrame()
			if err != nil || !bytes.Equal(got, p) {
				t.Fatalf("frame %d: %x, %v; want %x", i, got, err, p)
			}
		}
		if _, err := fr.ReadFrame(); err != io.EOF {
			t.Fatalf("after the last frame: %v", err)
		}
	})
}

func TestFourLetterWords(t *testing.T) {
	for _, w := range []string{"ruok", "srvr", "stat", "mntr", "conf", "cons", "crst", "srst", "envi",
		"wchs", "wchc", "wchp", "dump", "dirs", "isro", "hash", "gtmk", "stmk"} {
		n := int32(binary.BigEndian.Uint32([]byte(w)))
		if got, ok := FourLetterWord(n); !ok || got != w {
			t.Errorf("FourLetterWord(%q as %d) = %q, %v", w, n, got, ok)
		}
		frame, word, err := NewFrameReader(strings.NewReader(w), 0).ReadFirstFrame()
		if err != nil || word != w || frame != nil {
			t.Errorf("ReadFirstFrame(%q) = %x, %q, %v", w, frame, word, err)
		}
	}
	if got, ok := FourLetterWord(int32(-0x000b0003)); !ok || got != TelnetClose {
		t.Errorf("telnet interrupt: %q, %v", got, ok)
	}
	for _, w := range []string{"abcd", "RUOK", "ruo "} {
		if _, ok := FourLetterWord(int32(binary.BigEndian.Uint32([]byte(w)))); ok {
			t.Errorf("%q recognised", w)
		}
	}
	// A first frame that is a real request is read as one.
	stream := AppendFrame(nil, &ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)})
	frame, word, err := NewFrameReader(bytes.NewReader(stream), 0).ReadFirstFrame()
	if err != nil || word != "" || !bytes.Equal(frame, stream[4:]) {
		t.Fatalf("connect frame: %x %q %v", frame, word, err)
	}
	// An unknown word is just an oversized length.
	_, _, err = NewFrameReader(strings.NewReader("abcd"), 0).ReadFirstFrame()
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("unknown word: %v", err)
	}
}
