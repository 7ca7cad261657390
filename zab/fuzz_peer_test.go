package zab_test

import (
	"testing"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// FuzzPeerPackets injects arbitrary quorum packets, from a member or a
// stranger, into a member of an established 3-member ensemble, in any role.
// Whatever the bytes, no member panics, the members never disagree on a
// txn they both applied (same digest at the same zxid), and once the
// garbage stops the ensemble serves a write again.
func FuzzPeerPackets(f *testing.F) {
	seeds := []wire.QuorumPacket{
		{Type: wire.PacketCommit, Zxid: 0x100000005},
		{Type: wire.PacketProposal, Zxid: 0x100000003, Data: []byte{0, 0, 0, 1}},
		{Type: wire.PacketLeaderInfo, Zxid: 0x100000000, Data: wire.Marshal(&wire.LeaderInfo{ProtocolVersion: wire.ProtocolVersion})},
		{Type: wire.PacketAckEpoch, Zxid: 0, Data: wire.Marshal(&wire.AckEpoch{CurrentEpoch: 7})},
		{Type: wire.PacketAck, Zxid: 0x100000009},
		{Type: wire.PacketFollowerInfo, Zxid: 0x500000000, Data: wire.Marshal(&wire.LearnerInfo{ServerID: 2, ProtocolVersion: wire.ProtocolVersion})},
		{Type: wire.PacketRequest, Data: wire.Marshal(&wire.ForwardedRequest{SessionID: 5, Cxid: 1, Type: wire.OpCreate, Body: []byte{0, 0}})},
		{Type: wire.PacketPing, Data: wire.Marshal(&wire.PingTouches{Touches: []wire.SessionTouch{{SessionID: 1, Timeout: 100}}})},
		{Type: wire.PacketRevalidate, Data: wire.Marshal(&wire.RevalidateRequest{SessionID: 1, Timeout: 100})},
		{Type: wire.PacketTrunc, Zxid: 0},
		{Type: wire.PacketSnap, Zxid: 0x100000001},
		{Type: wire.PacketNewLeader, Zxid: 0x100000000},
		{Type: wire.PacketUpToDate, Zxid: -1},
		{Type: 99, Zxid: 1},
	}
	for i, qp := range seeds {
		f.Add(uint8(i%3+1), uint8(i%4+1), wire.Marshal(&qp))
	}
	f.Fuzz(func(t *testing.T, to, from uint8, raw []byte) {
		var qp wire.QuorumPacket
		if wire.Unmarshal(raw, &qp) != nil {
			return
		}
		c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 1)
		c.Run(time.Second, 50*time.Millisecond)
		cl := c.Connect(1, 0, nil, 30000)
		c.Stabilize(1000)
		cl.Send(wire.OpCreate, &wire.CreateRequest{Path: "/a", ACL: wire.OpenACLUnsafe})
		c.Stabilize(1000)

		target := c.Node(int64(to%3 + 1))
		c.Step(target, zab.PeerPacket{From: int64(from%5 + 1), Packet: qp, Snapshot: raw})
		c.Step(target, zab.PeerPacket{From: int64(from%5 + 1), Packet: qp, Snapshot: raw})
		c.Run(20*time.Second, 50*time.Millisecond)
		zabtest.RequireAgreement(t, c)

		leader := c.Leader()
		if leader == 0 {
			t.Fatalf("no leader after the garbage stopped:\n%s", c.Status())
		}
		w := c.Connect(leader, 0, nil, 30000)
		c.Stabilize(1000)
		w.Send(wire.OpCreate, &wire.CreateRequest{Path: "/after", ACL: wire.OpenACLUnsafe})
		c.Stabilize(1000)
		zabtest.RequireAgreement(t, c)
		if _, _, err := c.Node(leader).Peer.Tree().GetData("/after", nil, false, 0); err != wire.ErrOK {
			t.Fatalf("the ensemble serves no write after the garbage: %v\n%s", err, c.Status())
		}
	})
}
