package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// One fuzz target per decoder entry point. Each asserts that decoding never
// panics and that whatever decodes is stable: encoding it and decoding that
// gives the same value, and encoding again gives the same bytes. Seed
// corpora live in testdata/fuzz/<FuzzName>/ (written from the golden vectors
// by TestWriteFuzzSeeds).

// checkStable runs decode → encode → decode on b. A string holding a
// character beyond the BMP is the one thing that changes on the way: Java's
// jute writes it as two surrogates, which it reads back as two U+FFFD; from
// there on the record is stable.
func checkStable(t *testing.T, b []byte, decode func([]byte) (Record, error)) {
	t.Helper()
	first, err := decode(b)
	if err != nil {
		return
	}
	enc := Marshal(first)
	second, err := decode(enc)
	require.NoError(t, err, "re-encoded %#v as %x", first, enc)
	if !holdsEncodedSurrogate(enc) {
		require.Equal(t, first, second, "re-decoded")
	}
	enc = Marshal(second)
	third, err := decode(enc)
	require.NoError(t, err, "re-encoded %#v as %x", second, enc)
	require.Equal(t, second, third, "re-decoded")
	require.Equal(t, enc, Marshal(third), "re-encoded")
}

// holdsEncodedSurrogate reports whether b holds the three-byte form of a
// UTF-16 surrogate (ED A0..BF 80..BF), as jute writes a non-BMP character.
func holdsEncodedSurrogate(b []byte) bool {
	for i := 0; i+2 < len(b); i++ {
		if b[i] == 0xed && b[i+1] >= 0xa0 && b[i+1] <= 0xbf && b[i+2] >= 0x80 && b[i+2] <= 0xbf {
			return true
		}
	}
	return false
}

// lenient decodes one record from the start of b, ignoring what follows, as
// ZooKeeper reads a frame.
func lenient(fresh func() Record) func([]byte) (Record, error) {
	return func(b []byte) (Record, error) {
		r := fresh()
		d := NewDecoder(b)
		r.Decode(d)
		return r, d.Err()
	}
}

func FuzzFrame(f *testing.F) {
	f.Add([]byte("ruok"), uint32(0))
	f.Add(AppendFrame(nil, &RequestHeader{Xid: 1, Type: OpPing}), uint32(8))
	f.Fuzz(func(t *testing.T, stream []byte, max uint32) {
		limit := int(max % (2 * DefaultMaxBuffer))
		fr := NewFrameReader(bytes.NewReader(stream), limit)
		frame, word, err := fr.ReadFirstFrame()
		if word != "" {
			if err != nil || frame != nil || len(stream) < 4 {
				t.Fatalf("word %q with frame %x, err %v", word, frame, err)
			}
			return
		}
		var rebuilt []byte
		for err == nil {
			if len(frame) > fr.Max() {
				t.Fatalf("frame of %d bytes passed a limit of %d", len(frame), fr.Max())
			}
			rebuilt = AppendFrame(rebuilt, rawRecord(frame))
			frame, err = fr.ReadFrame()
		}
		var fe *FrameError
		if err != io.EOF && !errors.As(err, &fe) {
			t.Fatalf("error %v is neither io.EOF nor a FrameError", err)
		}
		// The frames read whole are a prefix of the stream, re-framed exactly.
		if !bytes.HasPrefix(stream, rebuilt) {
			t.Fatalf("re-framed %x is not a prefix of %x", rebuilt, stream)
		}
		if err == io.EOF && len(rebuilt) != len(stream) {
			t.Fatalf("clean end after %d of %d bytes", len(rebuilt), len(stream))
		}
	})
}

// rawRecord encodes as its bytes, to re-frame a payload.
type rawRecord []byte

func (r rawRecord) Encode(e *Encoder) { e.WriteRaw(r) }
func (r rawRecord) Decode(*Decoder)   {}

func FuzzRequest(f *testing.F) {
	f.Add(int32(OpGetData), Marshal(&PathWatchRequest{Path: "/a", Watch: true}))
	f.Add(int32(OpMultiRead), Marshal(&MultiRequest{Ops: []MultiOp{{Type: OpGetData, Body: &PathWatchRequest{Path: "/a"}},
		{Type: OpGetChildren, Body: &PathWatchRequest{}, NullPath: true}}}))
	f.Fuzz(func(t *testing.T, op int32, body []byte) {
		checkStable(t, body, func(b []byte) (Record, error) { return DecodeRequest(OpCode(op), b) })
	})
}

func FuzzResponse(f *testing.F) {
	f.Add(int32(OpGetData), Marshal(&GetDataResponse{Data: []byte("x")}))
	f.Fuzz(func(t *testing.T, op int32, body []byte) {
		checkStable(t, body, func(b []byte) (Record, error) { return DecodeResponse(OpCode(op), b) })
	})
}

func FuzzConnectRequest(f *testing.F) {
	f.Add(Marshal(&ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16), HasReadOnly: true}))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkStable(t, b, lenient(func() Record { return &ConnectRequest{} }))
	})
}

func FuzzConnectResponse(f *testing.F) {
	f.Add(Marshal(&ConnectResponse{TimeOut: 30000, SessionID: 1, Passwd: make([]byte, 16)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkStable(t, b, lenient(func() Record { return &ConnectResponse{} }))
	})
}

func FuzzTxn(f *testing.F) {
	f.Add(Marshal(&TxnEntry{Header: TxnHeader{Type: OpDelete}, Body: &DeleteTxn{Path: "/a"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkStable(t, b, func(b []byte) (Record, error) {
			e, err := DecodeTxnEntry(b)
			return &e, err
		})
		// The counting pass that only checks agrees with the decoder,
		// error for error.
		_, err := DecodeTxnEntry(b)
		require.Equal(t, err, CheckTxnEntry(b))
	})
}

func FuzzTxnLog(f *testing.F) {
	f.Add(append(Marshal(&FileHeader{Magic: TxnLogMagic, Version: FileVersion}),
		AppendTxnLogEntry(nil, &TxnEntry{Header: TxnHeader{Type: OpDelete}, Body: &DeleteTxn{Path: "/a"}})...))
	f.Fuzz(func(t *testing.T, file []byte) {
		r, err := NewTxnLogReader(bytes.NewReader(file), 1<<16)
		if err != nil {
			return
		}
		var rewritten []byte
		for {
			e, _, err := r.Next()
			if err != nil {
				var le *TxnLogError
				if err != io.EOF && !errors.As(err, &le) {
					t.Fatalf("error %v is neither io.EOF nor a TxnLogError", err)
				}
				break
			}
			rewritten = AppendTxnLogEntry(rewritten, &e)
		}
		// Re-encoding what was read gives entries that read back the same.
		r2, err := NewTxnLogReader(bytes.NewReader(append(file[:FileHeaderSize:FileHeaderSize], rewritten...)), 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		for {
			_, _, err := r2.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("re-encoded log: %v", err)
			}
		}
		if r2.End() != int64(FileHeaderSize+len(rewritten)) {
			t.Fatalf("re-encoded log read to %d of %d", r2.End(), FileHeaderSize+len(rewritten))
		}
	})
}

func FuzzNotification(f *testing.F) {
	f.Add(Marshal(&Notification{State: PeerLeading, Leader: 1, Version: NotificationVersion, Config: []byte("v")}))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkStable(t, b, lenient(func() Record { return &Notification{} }))
	})
}

func FuzzInitialMessage(f *testing.F) {
	f.Add(Marshal(&InitialMessage{ProtocolVersion: ElectionProtocolV1, ServerID: 1, Address: "127.0.0.1:3888"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkStable(t, b, lenient(func() Record { return &InitialMessage{} }))
	})
}

func FuzzQuorumPacket(f *testing.F) {
	f.Add(Marshal(&QuorumPacket{Type: PacketPing, Zxid: 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkStable(t, b, lenient(func() Record { return &QuorumPacket{} }))
	})
}
