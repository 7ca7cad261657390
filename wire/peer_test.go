package wire

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
)

// be builds big-endian bytes from ints (4 bytes), int64s (8), strings and
// byte slices (raw), to spell out the layouts ZooKeeper's Java code writes.
func be(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case int32:
			b = binary.BigEndian.AppendUint32(b, uint32(v))
		case int64:
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		case string:
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		default:
			panic("be: unsupported part")
		}
	}
	return b
}

func TestNotificationLayouts(t *testing.T) {
	config := "server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\nversion=0"
	// FastLeaderElection.buildMsg with config, as 3.8 sends it.
	full := be(int32(2), int64(1), int64(0x100000005), int64(3), int64(1), int32(2), int32(len(config)), config)
	n := Notification{State: PeerLeading, Leader: 1, Zxid: 0x100000005, ElectionEpoch: 3, PeerEpoch: 1,
		Version: NotificationVersion, Config: []byte(config)}
	if got := Marshal(&n); !bytes.Equal(got, full) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, full)
	}
	var got Notification
	if err := Unmarshal(full, &got); err != nil || !reflect.DeepEqual(got, n) {
		t.Fatalf("decoded %+v, %v", got, err)
	}

	// Older layouts: 40 bytes (a version field that is not read) and 28
	// bytes (no peerEpoch: it comes from the zxid's epoch half).
	forty := be(int32(0), int64(2), int64(0x300000001), int64(7), int64(3), int32(1))
	if err := Unmarshal(forty, &got); err != nil || !reflect.DeepEqual(got, Notification{
		State: PeerLooking, Leader: 2, Zxid: 0x300000001, ElectionEpoch: 7, PeerEpoch: 3}) {
		t.Fatalf("40-byte layout: %+v, %v", got, err)
	}
	twentyEight := be(int32(1), int64(2), int64(0x300000001), int64(7))
	if err := Unmarshal(twentyEight, &got); err != nil || !reflect.DeepEqual(got, Notification{
		State: PeerFollowing, Leader: 2, Zxid: 0x300000001, ElectionEpoch: 7, PeerEpoch: 3}) {
		t.Fatalf("28-byte layout: %+v, %v", got, err)
	}

	for name, bad := range map[string][]byte{
		"too short":       twentyEight[:27],
		"config too long": be(int32(0), int64(1), int64(1), int64(1), int64(1), int32(2), int32(10), "abc"),
		"negative config": be(int32(0), int64(1), int64(1), int64(1), int64(1), int32(2), int32(-1)),
		"cut in version":  forty[:38],
	} {
		if err := Unmarshal(bad, &got); err == nil {
			t.Errorf("%s: decoded %+v", name, got)
		}
	}
}

func TestInitialMessage(t *testing.T) {
	want := be(int64(-65536), int64(3), int32(14), "127.0.0.1:3888")
	m := InitialMessage{ProtocolVersion: ElectionProtocolV1, ServerID: 3, Address: "127.0.0.1:3888"}
	if got := Marshal(&m); !bytes.Equal(got, want) {
		t.Fatalf("encoded %x, want %x", got, want)
	}
	var got InitialMessage
	if err := Unmarshal(want, &got); err != nil || got != m {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	for name, bad := range map[string][]byte{
		"bare server id":  be(int64(3), int64(3), int32(1), "x"),
		"unknown version": be(int64(-65534), int64(3), int32(1), "x"),
		"empty address":   be(int64(-65535), int64(3), int32(0)),
		"address too big": be(int64(-65535), int64(3), int32(ElectionMaxAddress+1), make([]byte, ElectionMaxAddress+1)),
		"truncated":       want[:len(want)-1],
	} {
		if err := Unmarshal(bad, &got); err == nil {
			t.Errorf("%s: decoded %+v", name, got)
		}
	}
}

func TestQuorumRecordsLayout(t *testing.T) {
	// A PING carries neither data nor auth info: both are jute nulls.
	ping := QuorumPacket{Type: PacketPing, Zxid: 0x200000007}
	if got, want := Marshal(&ping), be(int32(5), int64(0x200000007), int32(-1), int32(-1)); !bytes.Equal(got, want) {
		t.Errorf("ping %x, want %x", got, want)
	}
	req := QuorumPacket{Type: PacketRequest, Zxid: -1, Data: []byte{1, 2},
		AuthInfo: []Id{{Scheme: "ip", ID: "127.0.0.1"}}}
	want := be(int32(1), int64(-1), int32(2), []byte{1, 2}, int32(1), int32(2), "ip", int32(9), "127.0.0.1")
	if got := Marshal(&req); !bytes.Equal(got, want) {
		t.Errorf("request %x, want %x", got, want)
	}
	li := LearnerInfo{ServerID: 2, ProtocolVersion: 0x10000, ConfigVersion: 0x100000000}
	if got, want := Marshal(&li), be(int64(2), int32(0x10000), int64(0x100000000)); !bytes.Equal(got, want) {
		t.Errorf("learner info %x, want %x", got, want)
	}
}
