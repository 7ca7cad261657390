package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func lengthPrefix(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

func TestFrameLimit(t *testing.T) {
	// A frame of exactly the limit is served; one byte more is refused
	// before its body is read or allocated.
	body := bytes.Repeat([]byte{7}, DefaultMaxBuffer)
	fr := NewFrameReader(bytes.NewReader(append(lengthPrefix(DefaultMaxBuffer), body...)), 0)
	got, err := fr.ReadFrame()
	require.NoError(t, err)
	assert.True(t, bytes.Equal(got, body), "frame of exactly the limit")

	fr = NewFrameReader(bytes.NewReader(lengthPrefix(DefaultMaxBuffer+1)), 0)
	_, err = fr.ReadFrame()
	var fe *FrameError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, ErrFrameTooLarge)
	assert.Equal(t, int32(DefaultMaxBuffer+1), fe.Length)
	assert.Equal(t, DefaultMaxBuffer, fe.Max)
	assert.Zero(t, cap(fr.buf), "a refused frame allocated its buffer")
	assert.EqualError(t, err, "wire: frame length 1048576 exceeds the limit of 1048575 bytes")
}

func TestFrameConfiguredLimit(t *testing.T) {
	fr := NewFrameReader(bytes.NewReader(append(lengthPrefix(11), make([]byte, 11)...)), 10)
	assert.Equal(t, 10, fr.Max())
	_, err := fr.ReadFrame()
	assert.ErrorIs(t, err, ErrFrameTooLarge)
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
			require.ErrorAs(t, err, &fe)
			assert.ErrorIs(t, err, tc.want)
			if tc.want == ErrFrameTruncated {
				assert.Equal(t, tc.read, fe.Read)
				assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			}
		})
	}
	assert.EqualError(t, &FrameError{Problem: ErrFrameNegative, Length: -5}, "wire: frame length -5 is negative")

	// A stream that ends between frames is a clean end, not a frame error.
	_, err := NewFrameReader(bytes.NewReader(nil), 0).ReadFrame()
	assert.Equal(t, io.EOF, err)

	// A reader's own error is kept.
	boom := errors.New("boom")
	_, err = NewFrameReader(io.MultiReader(bytes.NewReader(lengthPrefix(4)), iotest.ErrReader(boom)), 0).ReadFrame()
	assert.ErrorIs(t, err, boom)
	assert.ErrorIs(t, err, ErrFrameTruncated)
}

func TestFramesReuseBuffer(t *testing.T) {
	var stream []byte
	stream = AppendFrame(stream, &RequestHeader{Xid: 1, Type: OpGetData}, &PathWatchRequest{Path: "/a", Watch: true})
	stream = AppendFrame(stream, &RequestHeader{Xid: 2, Type: OpPing})
	stream = AppendFrame(stream)
	fr := NewFrameReader(iotest.HalfReader(bytes.NewReader(stream)), 0)

	first, err := fr.ReadFrame()
	require.NoError(t, err)
	var h RequestHeader
	var body PathWatchRequest
	d := NewDecoder(first)
	h.Decode(d)
	body.Decode(d)
	require.NoError(t, d.Err())
	assert.Zero(t, d.Remaining())
	assert.Equal(t, RequestHeader{1, OpGetData}, h)
	assert.Equal(t, PathWatchRequest{"/a", true}, body)

	second, err := fr.ReadFrame()
	require.NoError(t, err)
	require.NoError(t, Unmarshal(second, &h))
	assert.Equal(t, RequestHeader{2, OpPing}, h)
	assert.Same(t, &first[0], &second[0], "the reader did not reuse its buffer")

	empty, err := fr.ReadFrame()
	require.NoError(t, err)
	assert.Empty(t, empty)
	_, err = fr.ReadFrame()
	assert.Equal(t, io.EOF, err)
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
			require.NoError(t, err, "frame %d", i)
			require.True(t, bytes.Equal(got, p), "frame %d: %x, want %x", i, got, p)
		}
		_, err := fr.ReadFrame()
		require.Equal(t, io.EOF, err)
	})
}

func TestFourLetterWords(t *testing.T) {
	for _, w := range []string{"ruok", "srvr", "stat", "mntr", "conf", "cons", "crst", "srst", "envi",
		"wchs", "wchc", "wchp", "dump", "dirs", "isro", "hash", "gtmk", "stmk"} {
		got, ok := FourLetterWord(int32(binary.BigEndian.Uint32([]byte(w))))
		assert.True(t, ok, w)
		assert.Equal(t, w, got)
		frame, word, err := NewFrameReader(strings.NewReader(w), 0).ReadFirstFrame()
		require.NoError(t, err, w)
		assert.Equal(t, w, word)
		assert.Nil(t, frame)
	}
	got, ok := FourLetterWord(int32(-0x000b0003)) // 0xfff4fffd, telnet's interrupt
	assert.True(t, ok)
	assert.Equal(t, TelnetClose, got)
	for _, w := range []string{"abcd", "RUOK", "ruo "} {
		_, ok := FourLetterWord(int32(binary.BigEndian.Uint32([]byte(w))))
		assert.False(t, ok, w)
	}

	// A first frame that is a real request is read as one.
	stream := AppendFrame(nil, &ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)})
	frame, word, err := NewFrameReader(bytes.NewReader(stream), 0).ReadFirstFrame()
	require.NoError(t, err)
	assert.Empty(t, word)
	assert.Equal(t, stream[4:], frame)

	// An unknown word is just an oversized length; a cut one is truncated.
	_, _, err = NewFrameReader(strings.NewReader("abcd"), 0).ReadFirstFrame()
	assert.ErrorIs(t, err, ErrFrameTooLarge)
	_, _, err = NewFrameReader(strings.NewReader("ruo"), 0).ReadFirstFrame()
	assert.ErrorIs(t, err, ErrFrameTruncated)
}
