package peernet

import (
	"bufio"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

func followerInfo(to, sid int64) zab.PeerMessage {
	info := wire.LearnerInfo{ServerID: sid, ProtocolVersion: wire.ProtocolVersion}
	return zab.PeerMessage{To: to, Packet: wire.QuorumPacket{Type: wire.PacketFollowerInfo, Zxid: 1 << 32, Data: wire.Marshal(&info)}}
}

func packet(to int64, typ wire.PacketType, zxid int64) zab.PeerMessage {
	return zab.PeerMessage{To: to, Packet: wire.QuorumPacket{Type: typ, Zxid: zxid}}
}

// nextPacket skips votes until a quorum event arrives.
func (n *testNode) nextQuorum(t *testing.T) zab.Event {
	t.Helper()
	for {
		switch ev := n.next(t).(type) {
		case zab.PeerVote:
		default:
			return ev
		}
	}
}

func TestLearnerAndLeaderExchangePacketsAndASnapshot(t *testing.T) {
	nodes, _, _ := startNets(t, []int64{1, 2}, nil, nil)
	leader, learner := nodes[1], nodes[2]

	learner.SendPeer([]zab.PeerMessage{followerInfo(1, 2)})
	ev := leader.nextQuorum(t).(zab.PeerPacket)
	assert.Equal(t, int64(2), ev.From)
	assert.Equal(t, wire.PacketFollowerInfo, ev.Packet.Type)

	snap := syncSnapshot(t, 40)
	leader.SendPeer([]zab.PeerMessage{
		packet(2, wire.PacketLeaderInfo, 2<<32),
		{To: 2, Packet: wire.QuorumPacket{Type: wire.PacketSnap, Zxid: 7}, Snapshot: snap},
		packet(2, wire.PacketNewLeader, 2<<32),
	})
	got := []zab.PeerPacket{learner.nextQuorum(t).(zab.PeerPacket), learner.nextQuorum(t).(zab.PeerPacket), learner.nextQuorum(t).(zab.PeerPacket)}
	assert.Equal(t, wire.PacketLeaderInfo, got[0].Packet.Type)
	assert.Equal(t, wire.PacketSnap, got[1].Packet.Type)
	assert.Equal(t, snap, got[1].Snapshot, "the snapshot stream arrives whole")
	assert.Equal(t, wire.PacketNewLeader, got[2].Packet.Type)

	// The learner closes (PeerClose): the leader hears of it, the learner
	// does not; a new FOLLOWERINFO opens a new connection.
	learner.SendPeer([]zab.PeerMessage{{To: 1, Kind: zab.PeerClose}})
	assert.Equal(t, zab.PeerDisconnected{Peer: 2}, leader.nextQuorum(t))
	learner.SendPeer([]zab.PeerMessage{followerInfo(1, 2)})
	assert.Equal(t, wire.PacketFollowerInfo, leader.nextQuorum(t).(zab.PeerPacket).Packet.Type)
	leader.SendPeer([]zab.PeerMessage{packet(2, wire.PacketPing, 3)})
	assert.Equal(t, wire.PacketPing, learner.nextQuorum(t).(zab.PeerPacket).Packet.Type)

	// The leader closes: the learner hears of it.
	leader.SendPeer([]zab.PeerMessage{{To: 2, Kind: zab.PeerClose}})
	assert.Equal(t, zab.PeerDisconnected{Peer: 1}, learner.nextQuorum(t))
	leader.noEventQueued(t)
}

// A SNAP streamed in pieces (the leader serving between them) arrives as
// one packet with the whole stream, and what follows the last piece comes
// after it.
func TestSnapStreamedInPiecesArrivesWhole(t *testing.T) {
	nodes, _, _ := startNets(t, []int64{1, 2}, nil, nil)
	leader, learner := nodes[1], nodes[2]
	learner.SendPeer([]zab.PeerMessage{followerInfo(1, 2)})
	require.Equal(t, wire.PacketFollowerInfo, leader.nextQuorum(t).(zab.PeerPacket).Packet.Type)

	snap := syncSnapshot(t, 40)
	third := len(snap) / 3
	leader.SendPeer([]zab.PeerMessage{{To: 2, Packet: wire.QuorumPacket{Type: wire.PacketSnap, Zxid: 7}, Snapshot: snap[:third]}})
	leader.SendPeer([]zab.PeerMessage{{To: 2, Kind: zab.PeerSnapshotPart, Snapshot: snap[third : 2*third]}})
	leader.SendPeer([]zab.PeerMessage{
		{To: 2, Kind: zab.PeerSnapshotPart, Snapshot: snap[2*third:], SnapshotEnd: true},
		packet(2, wire.PacketNewLeader, 2<<32),
	})
	got := learner.nextQuorum(t).(zab.PeerPacket)
	assert.Equal(t, wire.PacketSnap, got.Packet.Type)
	assert.Equal(t, snap, got.Snapshot, "the pieces arrive as one stream")
	assert.Equal(t, wire.PacketNewLeader, learner.nextQuorum(t).(zab.PeerPacket).Packet.Type)
	learner.noEventQueued(t)
}

// A learner's connection reaches the core at once, whatever the member's
// role (the core holds or refuses it); the core's close reaches the
// learner as a lost connection.
func TestLearnerConnectionReachesTheCore(t *testing.T) {
	nodes, _, _ := startNets(t, []int64{1, 2}, nil, nil)
	nodes[2].SendPeer([]zab.PeerMessage{followerInfo(1, 2)})
	assert.Equal(t, wire.PacketFollowerInfo, nodes[1].nextQuorum(t).(zab.PeerPacket).Packet.Type)
	nodes[1].SendPeer([]zab.PeerMessage{{To: 2, Kind: zab.PeerClose}})
	assert.Equal(t, zab.PeerDisconnected{Peer: 1}, nodes[2].nextQuorum(t))
}

func TestUnreachableLeaderIsReported(t *testing.T) {
	nodes, lns, _ := startNets(t, []int64{2}, []int64{1}, func(c *Config) { c.LeaderDialWindow = 100 * time.Millisecond })
	lns[1][0].Close() // nobody listens on server 1's quorum port
	nodes[2].SendPeer([]zab.PeerMessage{followerInfo(1, 2)})
	assert.Equal(t, zab.PeerDisconnected{Peer: 1}, nodes[2].nextQuorum(t))
	nodes[2].log.waitLog(t, "cannot reach leader", "server=1")
}

func rawQuorum(t *testing.T, addr string, send ...[]byte) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	for _, b := range send {
		_, err := nc.Write(b)
		require.NoError(t, err)
	}
	return nc
}

func TestQuorumPortRefusesBadPeers(t *testing.T) {
	nodes, _, _ := startNets(t, []int64{1, 2}, []int64{3}, func(c *Config) { c.HandshakeTimeout = 200 * time.Millisecond })
	leader := nodes[1]
	addr := leader.QuorumAddr().String()
	fi := func(sid int64) []byte { m := followerInfo(1, sid); return wire.Marshal(&m.Packet) }
	oversized := wire.Marshal(&wire.QuorumPacket{Type: wire.PacketAck})
	binary.BigEndian.PutUint32(oversized[12:], DefaultMaxField+1)

	for _, tc := range []struct {
		name string
		send [][]byte
		log  []string
	}{
		{"garbage", [][]byte{[]byte("\xff\xff\xff\xffjunk junk junk junk")}, []string{"dropping a connection", "packet data", "over the limit"}},
		{"negative length", [][]byte{append(make([]byte, 12), 0xff, 0xff, 0xff, 0xfe)}, []string{"dropping a connection", "packet data", "negative length -2"}},
		{"silence", nil, []string{"dropping a connection", "timeout"}},
		{"not FOLLOWERINFO first", [][]byte{wire.Marshal(&wire.QuorumPacket{Type: wire.PacketAck, Zxid: 1})}, []string{"dropping a connection", "first packet is ACK"}},
		{"non-member", [][]byte{fi(9)}, []string{"dropping a connection", "server 9 is not a member"}},
		{"oversized first packet", [][]byte{oversized}, []string{"dropping a connection", "over the limit of 2097150"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := rawQuorum(t, addr, tc.send...)
			expectClosed(t, nc)
			leader.log.waitLog(t, tc.log...)
			leader.noEventQueued(t)
		})
	}

	// A learner sending garbage after its introduction loses its
	// connection, and the leader's Peer hears of it.
	nc := rawQuorum(t, addr, fi(3))
	assert.Equal(t, int64(3), leader.nextQuorum(t).(zab.PeerPacket).From)
	_, err := nc.Write(oversized)
	require.NoError(t, err)
	assert.Equal(t, zab.PeerDisconnected{Peer: 3}, leader.nextQuorum(t))
	leader.log.waitLog(t, "dropping the connection", "server=3", "over the limit")
	expectClosed(t, nc)

	// The member goes on: a real learner connects.
	nodes[2].SendPeer([]zab.PeerMessage{followerInfo(1, 2)})
	assert.Equal(t, int64(2), leader.nextQuorum(t).(zab.PeerPacket).From)
}

// A learner's new connection replaces its old one: the leader hears of the
// old one's loss before anything from the new one.
func TestNewLearnerConnectionReplacesTheOld(t *testing.T) {
	nodes, _, _ := startNets(t, []int64{1}, []int64{3}, nil)
	leader := nodes[1]
	m := followerInfo(1, 3)
	first := rawQuorum(t, leader.QuorumAddr().String(), wire.Marshal(&m.Packet))
	assert.Equal(t, int64(3), leader.nextQuorum(t).(zab.PeerPacket).From)
	rawQuorum(t, leader.QuorumAddr().String(), wire.Marshal(&m.Packet))
	assert.Equal(t, zab.PeerDisconnected{Peer: 3}, leader.nextQuorum(t))
	assert.Equal(t, wire.PacketFollowerInfo, leader.nextQuorum(t).(zab.PeerPacket).Packet.Type)
	expectClosed(t, first)
	leader.noEventQueued(t)
}

// A learner that does not read loses its connection once its queue is
// full, instead of growing the leader's memory.
func TestSlowLearnerLosesItsConnection(t *testing.T) {
	nodes, _, _ := startNets(t, []int64{1}, []int64{3}, func(c *Config) {
		c.MaxQueuedBytes = 1 << 20
		c.WriteTimeout = time.Hour
	})
	leader := nodes[1]
	m := followerInfo(1, 3)
	nc := rawQuorum(t, leader.QuorumAddr().String(), wire.Marshal(&m.Packet))
	assert.Equal(t, int64(3), leader.nextQuorum(t).(zab.PeerPacket).From)
	payload := make([]byte, 64<<10)
	deadline := time.Now().Add(waitFor)
	for {
		leader.SendPeer([]zab.PeerMessage{{To: 3, Packet: wire.QuorumPacket{Type: wire.PacketProposal, Data: payload}}})
		select {
		case ev := <-leader.Events():
			assert.Equal(t, zab.PeerDisconnected{Peer: 3}, ev)
			leader.log.waitLog(t, "dropping the connection", "server=3", "send queue full")
			expectClosed(t, nc)
			return
		default:
		}
		require.True(t, time.Now().Before(deadline), "the slow learner was never dropped")
	}
}

// Reading a quorum stream back: packets back to back, with jute's layout.
func TestReadPacketStream(t *testing.T) {
	pkts := []wire.QuorumPacket{
		{Type: wire.PacketProposal, Zxid: 1<<32 | 1, Data: []byte("txn")},
		{Type: wire.PacketRequest, Zxid: -1, Data: []byte{}, AuthInfo: []wire.Id{{Scheme: "digest", ID: "u:x"}}},
		{Type: wire.PacketPing, Zxid: 2},
	}
	var stream []byte
	for i := range pkts {
		stream = append(stream, wire.Marshal(&pkts[i])...)
	}
	br := bufio.NewReader(bytesReader(stream))
	for i := range pkts {
		got, err := readPacket(br, DefaultMaxField)
		require.NoError(t, err)
		assert.Equal(t, wire.Marshal(&pkts[i]), wire.Marshal(&got))
	}
}
