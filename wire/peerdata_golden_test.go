package wire

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ensemble capture (capture.sh ensemble): three voters and an observer
// of ZooKeeper 3.8.0, every election and quorum connection recorded, driven
// through forwarded writes of many kinds, pings with touches, INFORM,
// REVALIDATE (valid and not), DIFF with txns, SNAP and its snapshot stream,
// and TRUNC after a leader crash. Servers 1-3 vote, 4 observes; server 2
// led epoch 1 and server 3 epoch 2. A quorum connection's "out" stream is
// what the learner sent, "in" what its leader sent.
const ensembleDir = "testdata/golden/ensemble"

// kindSnapshotStream names the bytes that follow a SNAP packet.
const kindSnapshotStream = "quorum/snapshot-stream"

// capturedPacket is one QuorumPacket of a capture, with its payload.
type capturedPacket struct {
	name   string // the manifest's vector name
	conn   string // "quorum-to2-1"
	from   PacketSender
	offset int64
	raw    []byte
	qp     QuorumPacket
	data   Record // DecodePacketData's result
}

// senderOf tells who sent a quorum stream's packets: the dialling learner
// sent the "out" stream.
func senderOf(v goldenVector) PacketSender {
	if strings.Contains(v.File, ".out.") {
		return FromLearner
	}
	return FromLeader
}

// loadPackets decodes every quorum packet of dir, and its data, in stream
// order; a packet or payload that does not decode fails the test.
func loadPackets(t *testing.T, dir string) []capturedPacket {
	t.Helper()
	var ps []capturedPacket
	for _, v := range loadManifest(t, dir) {
		if !strings.HasPrefix(v.Kind, "quorum/") || v.Kind == kindSnapshotStream {
			continue
		}
		p := capturedPacket{name: v.Name, conn: strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(v.File, ".bin"), ".in"), ".out"),
			from: senderOf(v), offset: v.Offset, raw: streamBytes(t, dir, v)}
		require.NoError(t, Unmarshal(p.raw, &p.qp), v.Name)
		require.Equal(t, v.Kind, "quorum/"+p.qp.Type.String(), v.Name)
		var err error
		p.data, err = DecodePacketData(&p.qp, p.from)
		require.NoError(t, err, v.Name)
		ps = append(ps, p)
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].conn != ps[j].conn || ps[i].from != ps[j].from {
			return ps[i].conn+ps[i].from.String() < ps[j].conn+ps[j].from.String()
		}
		return ps[i].offset < ps[j].offset
	})
	return ps
}

// TestPacketDataGoldenRoundTrip: in both peer captures every quorum
// packet's data decodes as its type and sender define it and re-encodes to
// the same bytes; the packets without a payload carry null data. The
// ensemble capture holds every packet type but the two that activate a
// reconfig.
func TestPacketDataGoldenRoundTrip(t *testing.T) {
	types := map[PacketType]bool{}
	for _, dir := range []string{peerDir, ensembleDir} {
		for _, p := range loadPackets(t, dir) {
			types[p.qp.Type] = true
			if p.data == nil {
				assert.Nil(t, p.qp.Data, "%s: data of a packet without payload", p.name)
				continue
			}
			assertSameBytes(t, p.qp.Data, Marshal(p.data), "%s: re-encoded payload", p.name)
		}
	}
	for typ := range packetSenders {
		if typ == PacketCommitAndActivate || typ == PacketInformAndActivate {
			continue // only a reconfig sends them; see TestReconfigPayloadLayouts
		}
		assert.True(t, types[typ], "no captured %s packet", typ)
	}
}

// TestEnsembleGoldenRoundTrip: every record of the ensemble capture's
// streams (initial messages, notifications, packets) re-encodes to its
// bytes, as the two-server capture's do in TestPeerGoldenRoundTrip.
func TestEnsembleGoldenRoundTrip(t *testing.T) {
	n := 0
	for _, v := range loadManifest(t, ensembleDir) {
		if v.Kind == kindSnapshotStream {
			continue
		}
		b := streamBytes(t, ensembleDir, v)
		r := decodePeerVector(t, v, b)
		enc := Marshal(r)
		if v.Kind == "election/notification" {
			enc = AppendFrame(nil, r)
		}
		assert.Equal(t, b, enc, v.Name)
		n++
	}
	assert.Greater(t, n, 900, "vectors checked")
}

// TestEnsembleGoldenFields checks chosen payloads field by field.
func TestEnsembleGoldenFields(t *testing.T) {
	const (
		opsA    int64 = 0x0100000d82380000 // the two busy sessions on follower 1
		opsB    int64 = 0x0100000d82380001
		moved   int64 = 0x0100000d82380002 // opened on 1, moved to 3, closed, then resumed on 4 and 1
		held    int64 = 0x0100000d82380006 // alive while follower 3 was sent a snapshot
		timeout int32 = 10000              // what the kazoo clients negotiated
	)
	config := "server.1=127.0.0.1:22013:22014:participant\nserver.2=127.0.0.1:22023:22024:participant\n" +
		"server.3=127.0.0.1:22031:22032:participant\nserver.4=127.0.0.1:22043:22044:observer\nversion=0"
	byName := map[string]capturedPacket{}
	for _, p := range loadPackets(t, ensembleDir) {
		byName[p.name] = p
	}
	want := map[string]Record{
		"quorum-to2-3.out/quorum/FOLLOWERINFO#1": &LearnerInfo{ServerID: 1, ProtocolVersion: ProtocolVersion},
		"quorum-to2-5.out/quorum/OBSERVERINFO#1": &LearnerInfo{ServerID: 4, ProtocolVersion: ProtocolVersion},
		"quorum-to2-3.in/quorum/LEADERINFO#1":    &LeaderInfo{ProtocolVersion: ProtocolVersion},
		// Server 3 came back to the leader of the epoch it had accepted.
		"quorum-to2-6.out/quorum/ACKEPOCH#1": &AckEpoch{CurrentEpoch: -1},
		// Server 1 acknowledges epoch 2, having been in epoch 1.
		"quorum-to3-3.out/quorum/ACKEPOCH#1": &AckEpoch{CurrentEpoch: 1},
		"quorum-to3-3.in/quorum/NEWLEADER#1": &NewLeaderConfig{Config: []byte(config)},
		"quorum-to2-3.out/quorum/PING#6": &PingTouches{Touches: []SessionTouch{
			{SessionID: opsB, Timeout: timeout}, {SessionID: opsA, Timeout: timeout}}},
		"quorum-to2-3.out/quorum/REQUEST#1": &ForwardedRequest{SessionID: opsA, Type: OpCreateSession,
			Body: Marshal(&CreateSessionTxn{TimeOut: timeout})},
		"quorum-to2-3.out/quorum/REQUEST#5": &ForwardedRequest{SessionID: opsA, Cxid: 3, Type: OpSetData,
			Body: Marshal(&SetDataRequest{Path: "/ops", Data: []byte("oo"), Version: -1})},
		"quorum-to2-3.out/quorum/REQUEST#8": &ForwardedRequest{SessionID: opsA, Cxid: 7, Type: OpSync,
			Body: Marshal(&PathRequest{Path: "/ops"})},
		"quorum-to2-3.out/quorum/REQUEST#11": &ForwardedRequest{SessionID: opsB, Cxid: 2, Type: OpDelete,
			Body: Marshal(&PathVersionRequest{Path: "/ops/b0", Version: -1})},
		"quorum-to2-4.out/quorum/REVALIDATE#1": &RevalidateRequest{SessionID: moved, Timeout: timeout},
		"quorum-to2-4.in/quorum/REVALIDATE#1":  &RevalidateReply{SessionID: moved, Valid: true},
		"quorum-to2-5.out/quorum/REVALIDATE#1": &RevalidateRequest{SessionID: moved, Timeout: timeout},
		"quorum-to2-5.in/quorum/REVALIDATE#1":  &RevalidateReply{SessionID: moved, Valid: false},
		"quorum-to2-3.in/quorum/REVALIDATE#1":  &RevalidateReply{SessionID: moved, Valid: false},
		"quorum-to2-7.in/quorum/PROPOSAL#1": &TxnEntry{
			Header: TxnHeader{ClientID: held, Cxid: 2, Zxid: 0x100000037, Time: 1795614943189, Type: OpCloseSession},
			Body:   &CloseSessionTxn{Paths2Delete: []string{"/held"}},
			Digest: &TxnDigest{Version: 2, TreeDigest: 44310181719}},
	}
	for name, w := range want {
		p, ok := byName[name]
		if !assert.True(t, ok, "%s: not in the manifest", name) {
			continue
		}
		assert.Equal(t, w, p.data, name)
		assertSameBytes(t, p.qp.Data, Marshal(w), "%s: encoding the expected payload", name)
	}
	// Packets whose meaning is in the zxid: the leader of epoch 2 sent its
	// followers a DIFF up to 0x100000038 and told the old leader, which had
	// logged up to 0x10000003a alone, to drop what follows 0x100000038.
	assert.Equal(t, int64(0x100000038), byName["quorum-to3-3.in/quorum/DIFF#1"].qp.Zxid)
	assert.Equal(t, int64(0x10000003a), byName["quorum-to3-5.out/quorum/ACKEPOCH#1"].qp.Zxid)
	assert.Equal(t, int64(0x100000038), byName["quorum-to3-5.in/quorum/TRUNC#1"].qp.Zxid)
	assert.Equal(t, int64(0x100000036), byName["quorum-to2-7.in/quorum/SNAP#1"].qp.Zxid)
}

// TestEnsembleGoldenRelations checks what the payloads mean against each
// other across the whole capture, so that every payload, not only the
// chosen ones, is read right.
func TestEnsembleGoldenRelations(t *testing.T) {
	ps := loadPackets(t, ensembleDir)
	proposals := map[int64]capturedPacket{} // by zxid, as the leaders proposed them
	timeouts := map[int64]int32{}           // session -> timeout, from createSession txns
	for _, p := range ps {
		if e, ok := p.data.(*TxnEntry); ok && p.qp.Type == PacketProposal {
			require.Equal(t, p.qp.Zxid, e.Header.Zxid, p.name)
			proposals[p.qp.Zxid] = p
			if b, ok := e.Body.(*CreateSessionTxn); ok {
				timeouts[e.Header.ClientID] = b.TimeOut
			}
		}
	}
	var informs, requests, touches, revalidations int
	for _, p := range ps {
		switch d := p.data.(type) {
		case *TxnEntry:
			if p.qp.Type == PacketInform {
				// An observer is sent the very bytes followers are proposed.
				informs++
				prop, ok := proposals[p.qp.Zxid]
				if assert.True(t, ok, "%s: no proposal of %#x", p.name, p.qp.Zxid) {
					assert.Equal(t, prop.qp.Data, p.qp.Data, p.name)
				}
			}
		case *ForwardedRequest:
			// A forwarded write becomes a txn of the same session, cxid and
			// type (sync is answered, not logged).
			requests++
			body, err := d.DecodeBody()
			require.NoError(t, err, p.name)
			if d.Type == OpCreateSession {
				assert.Equal(t, &CreateSessionTxn{TimeOut: timeouts[d.SessionID]}, body, p.name)
			}
			if d.Type == OpSync {
				continue
			}
			assert.True(t, hasTxnFor(proposals, d), "%s: no txn for %s of session %#x cxid %d", p.name, d.Type, d.SessionID, d.Cxid)
		case *PingTouches:
			for _, touch := range d.Touches {
				touches++
				assert.Equal(t, timeouts[touch.SessionID], touch.Timeout, "%s: session %#x", p.name, touch.SessionID)
			}
		case *RevalidateRequest:
			// The leader answers a connection's revalidations in order
			// (each connection of the capture has one).
			revalidations++
			reply := nextOnConn(ps, p.conn, FromLeader, PacketRevalidate)
			if assert.NotNil(t, reply, "%s: no reply", p.name) {
				assert.Equal(t, d.SessionID, reply.data.(*RevalidateReply).SessionID, p.name)
			}
			assert.Equal(t, timeouts[d.SessionID], d.Timeout, p.name)
		case *AckEpoch:
			// -1 exactly when the learner had accepted the leader's epoch.
			info := nextOnConn(ps, p.conn, FromLearner, PacketFollowerInfo, PacketObserverInfo)
			leaderInfo := nextOnConn(ps, p.conn, FromLeader, PacketLeaderInfo)
			require.NotNil(t, info, p.name)
			require.NotNil(t, leaderInfo, p.name)
			assert.Equal(t, info.qp.Zxid>>32 == leaderInfo.qp.Zxid>>32, d.CurrentEpoch == -1, p.name)
		}
	}
	assert.Greater(t, informs, 50)
	assert.Greater(t, requests, 50)
	assert.Greater(t, touches, 10)
	assert.Equal(t, 3, revalidations)
}

func hasTxnFor(proposals map[int64]capturedPacket, r *ForwardedRequest) bool {
	for _, p := range proposals {
		h := p.data.(*TxnEntry).Header
		if h.ClientID == r.SessionID && h.Cxid == r.Cxid && h.Type == r.Type {
			return true
		}
	}
	return false
}

// nextOnConn returns the first packet in ps of conn, from, and one of types.
func nextOnConn(ps []capturedPacket, conn string, from PacketSender, types ...PacketType) *capturedPacket {
	for i := range ps {
		if ps[i].conn != conn || ps[i].from != from {
			continue
		}
		for _, typ := range types {
			if ps[i].qp.Type == typ {
				return &ps[i]
			}
		}
	}
	return nil
}

// TestSnapshotStreamGolden: the bytes after each captured SNAP packet are
// the session table, the tree, and the signature, exactly (the tree itself
// is loaded by datatree's TestLoadSnapStreamGolden).
func TestSnapshotStreamGolden(t *testing.T) {
	var streams int
	for _, v := range loadManifest(t, ensembleDir) {
		if v.Kind != kindSnapshotStream {
			continue
		}
		streams++
		b := streamBytes(t, ensembleDir, v)
		raw, err := os.ReadFile(filepath.Join(ensembleDir, v.File))
		require.NoError(t, err)
		// The SNAP packet ends where the stream starts.
		var snap QuorumPacket
		require.NoError(t, Unmarshal(raw[v.Offset-20:v.Offset], &snap), v.Name)
		assert.Equal(t, PacketSnap, snap.Type, v.Name)

		d := NewDecoder(b)
		sessions := readVector(d, sessionTouchSize, func() SessionTouch {
			return SessionTouch{SessionID: d.ReadLong(), Timeout: d.ReadInt()}
		})
		require.NoError(t, d.Err(), v.Name)
		for _, s := range sessions {
			assert.Equal(t, int32(10000), s.Timeout, "%s: session %#x", v.Name, s.SessionID)
		}
		sig := Marshal(&SnapshotEnd{})
		assert.True(t, bytes.HasSuffix(b, sig), "%s ends with %x", v.Name, b[len(b)-len(sig):])
		assert.Equal(t, 1, bytes.Count(b, sig), v.Name)
	}
	assert.Equal(t, 3, streams)
}

// assertSameBytes compares byte slices by content: null and empty data are
// both no bytes to a payload.
func assertSameBytes(t *testing.T, want, got []byte, msgAndArgs ...any) {
	t.Helper()
	if !bytes.Equal(want, got) {
		assert.Fail(t, fmt.Sprintf("bytes differ:\n got %x\nwant %x", got, want), msgAndArgs...)
	}
}

// TestPingReplyGolden: every ping reply a 3.8 learner sent is PingReply of
// its leader's ping, byte for byte: the zxid echoed, the data empty rather
// than null when nothing was touched.
func TestPingReplyGolden(t *testing.T) {
	replies, empty := 0, 0
	for _, dir := range []string{peerDir, ensembleDir} {
		for _, p := range loadPackets(t, dir) {
			if p.qp.Type != PacketPing || p.from != FromLearner {
				continue
			}
			replies++
			touches := p.data.(*PingTouches).Touches
			if len(touches) == 0 {
				empty++
				assert.NotNil(t, p.qp.Data, p.name)
			}
			leaderPing := QuorumPacket{Type: PacketPing, Zxid: p.qp.Zxid}
			reply := PingReply(&leaderPing, touches)
			assert.Equal(t, p.raw, Marshal(&reply), p.name)
		}
	}
	assert.Greater(t, empty, 10)
	assert.Greater(t, replies, empty)
}
