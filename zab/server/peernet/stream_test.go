package peernet

import (
	"bufio"
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/wire"
)

// Any packets and snapshots written back to back read back exactly, each
// record ending where the next begins.
func TestStreamReadsBackWhatWasWritten(t *testing.T) {
	snaps := [][]byte{syncSnapshot(t, 0), syncSnapshot(t, 7), syncSnapshot(t, 30)}
	rapid.Check(t, func(t *rapid.T) {
		var stream []byte
		type rec struct {
			qp   wire.QuorumPacket
			snap []byte
		}
		var want []rec
		for i, n := 0, rapid.IntRange(1, 8).Draw(t, "records"); i < n; i++ {
			r := rec{qp: wire.QuorumPacket{
				Type: wire.PacketType(rapid.Int32Range(1, 19).Draw(t, "type")),
				Zxid: rapid.Int64().Draw(t, "zxid"),
				Data: rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "data"),
			}}
			if rapid.Bool().Draw(t, "null data") {
				r.qp.Data = nil
			}
			for j, k := 0, rapid.IntRange(-1, 3).Draw(t, "ids"); j < k; j++ {
				r.qp.AuthInfo = append(r.qp.AuthInfo, wire.Id{Scheme: rapid.StringMatching(`[a-z0-9]{0,8}`).Draw(t, "scheme"), ID: rapid.StringMatching(`[ -~]{0,20}`).Draw(t, "id")})
			}
			if r.qp.Type == wire.PacketSnap {
				r.snap = snaps[rapid.IntRange(0, len(snaps)-1).Draw(t, "snapshot")]
			}
			stream = append(stream, wire.Marshal(&r.qp)...)
			stream = append(stream, r.snap...)
			want = append(want, r)
		}
		n := &Net{cfg: Config{MaxField: DefaultMaxField, MaxSnapshot: DefaultMaxSnapshot}}
		br := bufio.NewReader(bytes.NewReader(stream))
		for _, w := range want {
			qp, snap, err := n.readQuorumPacket(br)
			if err != nil {
				t.Fatalf("reading %s: %v", w.qp.Type, err)
			}
			if !bytes.Equal(wire.Marshal(&qp), wire.Marshal(&w.qp)) || !bytes.Equal(snap, w.snap) {
				t.Fatalf("read %+v (%d snapshot bytes), wrote %+v (%d)", qp, len(snap), w.qp, len(w.snap))
			}
		}
		if _, _, err := n.readQuorumPacket(br); err != io.EOF {
			t.Fatalf("after the last record: %v, want io.EOF", err)
		}
	})
}

// A stream cut anywhere inside a record is an unexpected end, never a
// record; cut between records it is a clean end.
func TestTruncatedRecords(t *testing.T) {
	pkt := wire.Marshal(&wire.QuorumPacket{Type: wire.PacketSnap, Zxid: 5, Data: []byte("x"), AuthInfo: []wire.Id{{Scheme: "ip", ID: "1.2.3.4"}}})
	stream := append(pkt, syncSnapshot(t, 5)...)
	n := &Net{cfg: Config{MaxField: DefaultMaxField, MaxSnapshot: DefaultMaxSnapshot}}
	for cut := 1; cut < len(stream); cut++ {
		_, _, err := n.readQuorumPacket(bufio.NewReader(bytes.NewReader(stream[:cut])))
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut at %d of %d", cut, len(stream))
	}
	_, _, err := n.readQuorumPacket(bufio.NewReader(bytes.NewReader(nil)))
	assert.Equal(t, io.EOF, err)
}

func TestSnapshotStreamLimit(t *testing.T) {
	snap := syncSnapshot(t, 20)
	_, err := readSnapshotStream(bufio.NewReader(bytes.NewReader(snap)), DefaultMaxField, len(snap)-1)
	require.ErrorIs(t, err, ErrTooLarge)
	got, err := readSnapshotStream(bufio.NewReader(bytes.NewReader(snap)), DefaultMaxField, len(snap))
	require.NoError(t, err)
	assert.Equal(t, snap, got)
}

func TestInitialMessageRoundTrip(t *testing.T) {
	m := wire.InitialMessage{ProtocolVersion: wire.ElectionProtocolV2, ServerID: 3, Address: "127.0.0.1:3888|10.0.0.3:3888"}
	got, err := readInitialMessage(bufio.NewReader(bytes.NewReader(wire.Marshal(&m))))
	require.NoError(t, err)
	assert.Equal(t, m, got)
}

func FuzzReadPacket(f *testing.F) {
	f.Add(wire.Marshal(&wire.QuorumPacket{Type: wire.PacketProposal, Zxid: 1, Data: []byte("abc")}))
	f.Add(wire.Marshal(&wire.QuorumPacket{Type: wire.PacketRequest, Zxid: -1, AuthInfo: []wire.Id{{Scheme: "digest", ID: "a:b"}}}))
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		br := bufio.NewReader(bytes.NewReader(b))
		qp, err := readPacket(br, 1<<16)
		if err != nil {
			return
		}
		// What was accepted is the record jute reads from the input's
		// start, and exactly its bytes were consumed. (Bytes are not
		// compared with a re-encoding: jute strings are read as Java reads
		// them, so malformed UTF-8 in an auth id comes back as U+FFFD.)
		d := wire.NewDecoder(b)
		var direct wire.QuorumPacket
		direct.Decode(d)
		if d.Err() != nil || !reflect.DeepEqual(direct, qp) {
			t.Fatalf("accepted %+v, but jute reads %+v (%v) from the input", qp, direct, d.Err())
		}
		if rest, _ := io.ReadAll(br); d.Offset()+len(rest) != len(b) {
			t.Fatalf("consumed %d bytes, the record is %d", len(b)-len(rest), d.Offset())
		}
		// And the record survives its own encoding, except that jute
		// writes a character beyond the BMP as two surrogates, which it
		// reads back as two U+FFFD; from there on the record is stable.
		var again, third wire.QuorumPacket
		if err := wire.Unmarshal(wire.Marshal(&qp), &again); err != nil || !reflect.DeepEqual(again, withoutAstral(qp)) {
			t.Fatalf("%+v re-encoded reads back as %+v (%v)", qp, again, err)
		}
		if err := wire.Unmarshal(wire.Marshal(&again), &third); err != nil || !reflect.DeepEqual(third, again) {
			t.Fatalf("%+v re-encoded reads back as %+v (%v)", again, third, err)
		}
	})
}

// withoutAstral is qp as jute reads it back after writing it: each
// character of its auth strings beyond the BMP becomes two U+FFFD.
func withoutAstral(qp wire.QuorumPacket) wire.QuorumPacket {
	replace := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			if r > 0xffff {
				b.WriteString("\ufffd\ufffd")
			} else {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	if len(qp.AuthInfo) == 0 {
		return qp
	}
	qp.AuthInfo = append([]wire.Id(nil), qp.AuthInfo...)
	for i := range qp.AuthInfo {
		qp.AuthInfo[i].Scheme = replace(qp.AuthInfo[i].Scheme)
		qp.AuthInfo[i].ID = replace(qp.AuthInfo[i].ID)
	}
	return qp
}

func FuzzReadSnapshotStream(f *testing.F) {
	f.Add(syncSnapshot(f, 3))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, '/', 0, 0, 0, 1, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := readSnapshotStream(bufio.NewReader(bytes.NewReader(b)), 1<<16, 1<<20)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(b, got) {
			t.Fatalf("returned bytes that are not the input's prefix")
		}
	})
}

func FuzzReadInitialMessage(f *testing.F) {
	f.Add(wire.Marshal(&wire.InitialMessage{ProtocolVersion: wire.ElectionProtocolV2, ServerID: 1, Address: "127.0.0.1:3888"}))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := readInitialMessage(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			return
		}
		if enc := wire.Marshal(&m); !bytes.HasPrefix(b, enc) {
			t.Fatalf("accepted %+v, whose encoding is not the input's prefix", m)
		}
		if m.Address == "" || len(m.Address) > wire.ElectionMaxAddress {
			t.Fatalf("accepted address of %d bytes", len(m.Address))
		}
	})
}
