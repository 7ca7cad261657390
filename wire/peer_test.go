package wire

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	assert.Equal(t, full, Marshal(&n))
	var got Notification
	require.NoError(t, Unmarshal(full, &got))
	assert.Equal(t, n, got)

	// Older layouts: 40 bytes (a version field that is not read) and 28
	// bytes (no peerEpoch: it comes from the zxid's epoch half).
	forty := be(int32(0), int64(2), int64(0x300000001), int64(7), int64(3), int32(1))
	require.NoError(t, Unmarshal(forty, &got))
	assert.Equal(t, Notification{State: PeerLooking, Leader: 2, Zxid: 0x300000001, ElectionEpoch: 7, PeerEpoch: 3}, got)
	twentyEight := be(int32(1), int64(2), int64(0x300000001), int64(7))
	require.NoError(t, Unmarshal(twentyEight, &got))
	assert.Equal(t, Notification{State: PeerFollowing, Leader: 2, Zxid: 0x300000001, ElectionEpoch: 7, PeerEpoch: 3}, got)

	for name, bad := range map[string][]byte{
		"too short":       twentyEight[:27],
		"config too long": be(int32(0), int64(1), int64(1), int64(1), int64(1), int32(2), int32(10), "abc"),
		"negative config": be(int32(0), int64(1), int64(1), int64(1), int64(1), int32(2), int32(-1)),
		"cut in version":  forty[:38],
	} {
		assert.Error(t, Unmarshal(bad, &got), name)
	}
}

func TestInitialMessage(t *testing.T) {
	want := be(int64(-65536), int64(3), int32(14), "127.0.0.1:3888")
	m := InitialMessage{ProtocolVersion: ElectionProtocolV1, ServerID: 3, Address: "127.0.0.1:3888"}
	assert.Equal(t, want, Marshal(&m))
	var got InitialMessage
	require.NoError(t, Unmarshal(want, &got))
	assert.Equal(t, m, got)
	for name, bad := range map[string][]byte{
		"bare server id":  be(int64(3), int64(3), int32(1), "x"),
		"unknown version": be(int64(-65534), int64(3), int32(1), "x"),
		"empty address":   be(int64(-65535), int64(3), int32(0)),
		"address too big": be(int64(-65535), int64(3), int32(ElectionMaxAddress+1), make([]byte, ElectionMaxAddress+1)),
		"truncated":       want[:len(want)-1],
	} {
		assert.Error(t, Unmarshal(bad, &got), name)
	}
}

func TestQuorumRecordsLayout(t *testing.T) {
	// A PING carries neither data nor auth info: both are jute nulls.
	ping := QuorumPacket{Type: PacketPing, Zxid: 0x200000007}
	assert.Equal(t, be(int32(5), int64(0x200000007), int32(-1), int32(-1)), Marshal(&ping))
	req := QuorumPacket{Type: PacketRequest, Zxid: -1, Data: []byte{1, 2},
		AuthInfo: []Id{{Scheme: "ip", ID: "127.0.0.1"}}}
	want := be(int32(1), int64(-1), int32(2), []byte{1, 2}, int32(1), int32(2), "ip", int32(9), "127.0.0.1")
	assert.Equal(t, want, Marshal(&req))
	li := LearnerInfo{ServerID: 2, ProtocolVersion: 0x10000, ConfigVersion: 0x100000000}
	assert.Equal(t, be(int64(2), int32(0x10000), int64(0x100000000)), Marshal(&li))
}
