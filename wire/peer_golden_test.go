package wire

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Peer vectors: the byte streams between the two servers of a ZooKeeper
// 3.8.0 ensemble (capture.sh peer). "out" is what the connecting server sent,
// "in" what it received. Election connections start with an InitialMessage
// and then carry length-prefixed notifications; quorum connections carry
// QuorumPackets back to back.

// loadPeerVectors lists the vectors of the peer streams (the .bin files
// with an offset and length); the peer directory's frame logs and txn log
// are checked with the client vectors.
func loadPeerVectors(t *testing.T) []goldenVector {
	t.Helper()
	var vs []goldenVector
	for _, v := range loadManifest(t, peerDir) {
		if v.Length > 0 {
			vs = append(vs, v)
		}
	}
	return vs
}

func peerBytes(t *testing.T, v goldenVector) []byte { return streamBytes(t, peerDir, v) }

// streamBytes returns the bytes of a vector of a raw stream in dir.
func streamBytes(t *testing.T, dir string, v goldenVector) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, v.File))
	if err != nil {
		t.Fatal(err)
	}
	if v.Offset+int64(v.Length) > int64(len(raw)) {
		t.Fatalf("%s: [%d, +%d) is past the end of %s", v.Name, v.Offset, v.Length, v.File)
	}
	return raw[v.Offset : v.Offset+int64(v.Length)]
}

// decodePeerVector decodes a peer vector by kind and requires it to be
// consumed exactly. A notification is read as the election connection reads
// it: a frame of at most ElectionMaxMessage bytes.
func decodePeerVector(t *testing.T, v goldenVector, b []byte) Record {
	t.Helper()
	var r Record
	switch {
	case v.Kind == "election/initial-message":
		r = &InitialMessage{}
	case v.Kind == "election/notification":
		fr := NewFrameReader(bytes.NewReader(b), ElectionMaxMessage)
		msg, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if 4+len(msg) != len(b) {
			t.Fatalf("%s: frame of %d bytes in a vector of %d", v.Name, len(msg), len(b))
		}
		b = msg
		r = &Notification{}
	case strings.HasPrefix(v.Kind, "quorum/"):
		r = &QuorumPacket{}
	default:
		t.Fatalf("%s: unknown kind %s", v.Name, v.Kind)
	}
	if err := Unmarshal(b, r); err != nil {
		t.Fatalf("%s: %v", v.Name, err)
	}
	if qp, ok := r.(*QuorumPacket); ok && "quorum/"+qp.Type.String() != v.Kind {
		t.Fatalf("%s: packet type %s", v.Name, qp.Type)
	}
	return r
}

func TestPeerGoldenRoundTrip(t *testing.T) {
	vs := loadPeerVectors(t)
	kinds := map[string]bool{}
	for _, v := range vs {
		kinds[v.Kind] = true
		b := peerBytes(t, v)
		r := decodePeerVector(t, v, b)
		enc := Marshal(r)
		if v.Kind == "election/notification" {
			enc = AppendFrame(nil, r)
		}
		if !bytes.Equal(enc, b) {
			t.Errorf("%s: re-encoded\n%x\nwant\n%x", v.Name, enc, b)
		}
	}
	for _, k := range []string{"election/initial-message", "election/notification", "quorum/FOLLOWERINFO",
		"quorum/LEADERINFO", "quorum/ACKEPOCH", "quorum/DIFF", "quorum/NEWLEADER", "quorum/UPTODATE",
		"quorum/PROPOSAL", "quorum/ACK", "quorum/COMMIT", "quorum/PING", "quorum/REQUEST"} {
		if !kinds[k] {
			t.Errorf("no peer vector of kind %s", k)
		}
	}
}

func TestPeerGoldenFieldValues(t *testing.T) {
	const (
		session1     int64 = 0x0100001826a90000 // the zkCli sessions on server 1 and on server 2
		session2     int64 = 0x0200001827260000
		peerRecorded int64 = 1795260980000 // ms
	)
	// Each server announces its own view: its real ports, the proxy ports
	// for the other server.
	config1 := "server.1=127.0.0.1:21921:21922:participant\nserver.2=127.0.0.1:21933:21934:participant\nversion=0"
	config2 := "server.1=127.0.0.1:21923:21924:participant\nserver.2=127.0.0.1:21931:21932:participant\nversion=0"
	byName := map[string]goldenVector{}
	for _, v := range loadPeerVectors(t) {
		byName[v.Name] = v
	}
	want := map[string]Record{
		"election-to1-1.out/election/initial-message#1": &InitialMessage{ProtocolVersion: ElectionProtocolV1,
			ServerID: 2, Address: "127.0.0.1:21932"},
		// Both servers start LOOKING in round 1, each voting for itself; server
		// 1 then switches to the higher id.
		"election-to1-1.out/election/notification#1": &Notification{State: PeerLooking, Leader: 2, ElectionEpoch: 1,
			Version: NotificationVersion, Config: []byte(config2)},
		"election-to1-1.in/election/notification#1": &Notification{State: PeerLooking, Leader: 1, ElectionEpoch: 1,
			Version: NotificationVersion, Config: []byte(config1)},
		"election-to1-1.in/election/notification#2": &Notification{State: PeerLooking, Leader: 2, ElectionEpoch: 1,
			Version: NotificationVersion, Config: []byte(config1)},
		"quorum-to2-1.out/quorum/FOLLOWERINFO#1": &QuorumPacket{Type: PacketFollowerInfo,
			Data: Marshal(&LearnerInfo{ServerID: 1, ProtocolVersion: 0x10000, ConfigVersion: 0})},
		"quorum-to2-1.in/quorum/LEADERINFO#1": &QuorumPacket{Type: PacketLeaderInfo, Zxid: 0x100000000,
			Data: []byte{0, 1, 0, 0}},
		"quorum-to2-1.out/quorum/ACKEPOCH#1": &QuorumPacket{Type: PacketAckEpoch, Data: []byte{0, 0, 0, 0}},
		"quorum-to2-1.in/quorum/UPTODATE#1":  &QuorumPacket{Type: PacketUpToDate, Zxid: -1},
		"quorum-to2-1.in/quorum/PROPOSAL#2": &QuorumPacket{Type: PacketProposal, Zxid: 0x100000002,
			Data: Marshal(&TxnEntry{
				Header: TxnHeader{ClientID: session1, Cxid: 1, Zxid: 0x100000002, Time: peerRecorded + 4312, Type: OpCreate},
				Body:   &CreateTxn{Path: "/peer-21920", Data: []byte("p"), ACL: OpenACLUnsafe, ParentCVersion: 1},
				Digest: &TxnDigest{Version: 2, TreeDigest: 0x22ed58de3}})},
		"quorum-to2-1.in/quorum/COMMIT#2": &QuorumPacket{Type: PacketCommit, Zxid: 0x100000002},
		"quorum-to2-1.out/quorum/ACK#4":   &QuorumPacket{Type: PacketAck, Zxid: 0x100000002},
		// The follower forwards its client's request: session, cxid, type, body.
		"quorum-to2-1.out/quorum/REQUEST#2": &QuorumPacket{Type: PacketRequest, Zxid: -1,
			Data: be(session1, int32(1), int32(OpCreate), Marshal(&CreateRequest{Path: "/peer-21920",
				Data: []byte("p"), ACL: OpenACLUnsafe})),
			AuthInfo: []Id{{Scheme: "ip", ID: "127.0.0.1"}}},
		// A follower's ping reply lists its sessions and their timeouts.
		"quorum-to2-1.out/quorum/PING#3": &QuorumPacket{Type: PacketPing, Zxid: 0x100000004,
			Data: be(session2, int32(30000))},
	}
	for name, w := range want {
		v, ok := byName[name]
		if !ok {
			t.Errorf("%s: not in the manifest", name)
			continue
		}
		b := peerBytes(t, v)
		got := decodePeerVector(t, v, b)
		if !assert.Equal(t, w, got, name) {
			continue
		}
		enc := Marshal(w)
		if v.Kind == "election/notification" {
			enc = AppendFrame(nil, w)
		}
		assert.Equal(t, b, enc, "%s: encoding the expected record", name)
	}
}

// TestReconfigGolden checks the reconfig the second ensemble served: an
// incremental change (leaving and newMembers are jute nulls) answered with
// the new config as the data of /zookeeper/config, and logged as a setData
// of that node under the reconfig type.
func TestReconfigGolden(t *testing.T) {
	const session int64 = 0x0100001856470000
	const reconfigured int64 = 1795260997659
	newConfig := []byte("server.1=127.0.0.1:21951:21952:participant\nserver.2=127.0.0.1:21961:21962:participant\n" +
		"server.3=127.0.0.1:21971:21972:observer;127.0.0.1:21970\nversion=100000002")
	want := map[string][]Record{
		"reconfig-1/request/reconfig#1": {&RequestHeader{Xid: 1, Type: OpReconfig}, &ReconfigRequest{
			JoiningServers: "server.3=127.0.0.1:21971:21972:observer;127.0.0.1:21970",
			LeavingNull:    true, NewMembersNull: true, CurConfigID: -1}},
		"reconfig-1/reply/reconfig#1": {&ReplyHeader{Xid: 1, Zxid: 0x100000002}, &GetDataResponse{Data: newConfig,
			Stat: Stat{Mzxid: 0x100000002, Mtime: reconfigured, Version: -1, Aversion: -1, DataLength: int32(len(newConfig))}}},
	}
	byName := map[string]goldenVector{}
	for _, v := range loadManifest(t, peerDir) {
		byName[v.Name] = v
	}
	for name, w := range want {
		b := vectorBytes(t, peerDir, byName[name])
		got, err := decodeFrameVector(byName[name].Kind, b)
		if assert.NoError(t, err, name) && assert.Equal(t, w, got, name) {
			assert.Equal(t, b, encodeRecords(w), "%s: encoding the expected records", name)
		}
	}

	raw, err := os.ReadFile(filepath.Join(peerDir, "txnlog.bin"))
	require.NoError(t, err)
	off := byName["txnlog/txn/reconfig#1"].Offset
	entry, end := txnEntryAt(t, raw, off)
	got, err := DecodeTxnEntry(entry)
	require.NoError(t, err)
	require.NotNil(t, got.Digest)
	wantTxn := TxnEntry{
		Header: TxnHeader{ClientID: session, Cxid: 1, Zxid: 0x100000002, Time: reconfigured, Type: OpReconfig},
		Body:   &SetDataTxn{Path: "/zookeeper/config", Data: newConfig, Version: -1},
		Digest: got.Digest, // the tree digest is opaque here; its layout is checked by re-encoding
	}
	require.Equal(t, wantTxn, got)
	assert.Equal(t, raw[off:end], AppendTxnLogEntry(nil, &wantTxn))
}
