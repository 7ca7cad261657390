package zab_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// TestQueuedSendsGoWithTheirConnection: a shell may step several events
// before it takes a Ready (zabd's loop steps every event waiting). A
// learner's FOLLOWERINFO, the loss of that connection, and its
// FOLLOWERINFO on the next one, stepped together: the LEADERINFO queued
// for the first connection goes with it, and the next connection carries
// one LEADERINFO, not two (the simulator's event loops met it: the
// learner took the second for a protocol error).
func TestQueuedSendsGoWithTheirConnection(t *testing.T) {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	leader := serving(t, c)
	learner := leader%3 + 1
	p := c.Node(leader).Peer
	accepted, _ := p.Epochs()
	info := func() zab.PeerPacket {
		li := wire.LearnerInfo{ServerID: learner, ProtocolVersion: wire.ProtocolVersion}
		return zab.PeerPacket{From: learner, Packet: wire.QuorumPacket{Type: wire.PacketFollowerInfo,
			Zxid: accepted << 32, Data: wire.Marshal(&li)}}
	}
	p.Step(c.Now, info())
	p.Step(c.Now, zab.PeerDisconnected{Peer: learner})
	p.Step(c.Now, info())
	rd := p.Ready()
	var infos int
	for _, m := range rd.PeerMessages {
		if m.To == learner && m.Packet.Type == wire.PacketLeaderInfo {
			infos++
		}
	}
	require.Equal(t, 1, infos, "one LEADERINFO for the learner's one connection")
}

// TestNoCloseForALeaderConnectionReportedGone: a follower hears that its
// leader's connection is gone, and, in the same batch of events, the
// FOLLOWERINFO of that member's next connection (it looked again and
// elected this one). Leaving the role has no connection to close: a
// close in the Ready would be carried out on the connection the shell
// holds by then, the new one, while the Peer holds its FOLLOWERINFO
// (simulator seed 123990: the learner, closed on, introduced itself
// again, and the Peer, once it led, sent LEADERINFO to both of its
// connections' introductions over the one left).
func TestNoCloseForALeaderConnectionReportedGone(t *testing.T) {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	leader := serving(t, c)
	follower := leader%3 + 1
	p := c.Node(follower).Peer
	accepted, _ := c.Node(leader).Peer.Epochs()
	li := wire.LearnerInfo{ServerID: leader, ProtocolVersion: wire.ProtocolVersion}
	p.Step(c.Now, zab.PeerDisconnected{Peer: leader})
	require.Equal(t, zab.RoleLooking, p.State().Role)
	p.Step(c.Now, zab.PeerPacket{From: leader, Packet: wire.QuorumPacket{Type: wire.PacketFollowerInfo,
		Zxid: accepted << 32, Data: wire.Marshal(&li)}})
	rd := p.Ready()
	for _, m := range rd.PeerMessages {
		require.False(t, m.To == leader && m.Kind == zab.PeerClose, "a close of server %d's connection, which is its new one: %+v", leader, rd.PeerMessages)
	}
	require.Equal(t, zab.RoleLooking, p.State().Role, "the introduction is held while the member looks")
}
