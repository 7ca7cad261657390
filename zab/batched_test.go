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
