package peernet

import (
	"bufio"
	"encoding/binary"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

func TestVotesTravelBetweenThreeMembers(t *testing.T) {
	nodes, _, _ := startNets(t, []int64{1, 2, 3}, nil, nil)
	for _, from := range []int64{1, 2, 3} {
		for _, to := range []int64{1, 2, 3} {
			if from == to {
				continue
			}
			nodes[from].SendVotes([]zab.Vote{vote(to, from)})
			got := nodes[to].nextVote(t)
			assert.Equal(t, from, got.From)
			assert.Equal(t, from, got.Notification.Leader)
			assert.Equal(t, int64(5), got.Notification.Zxid)
		}
	}
}

// dialElection connects to a Net's election port as server id and sends
// the handshake.
func dialElection(t *testing.T, addr string, id int64, announce string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	hello := wire.InitialMessage{ProtocolVersion: wire.ElectionProtocolV2, ServerID: id, Address: announce}
	_, err = nc.Write(wire.Marshal(&hello))
	require.NoError(t, err)
	return nc, bufio.NewReader(nc)
}

// A connection from a larger id is kept and carries notifications both
// ways, framed as ZooKeeper frames them.
func TestLargerIDsConnectionSurvives(t *testing.T) {
	nodes, _, members := startNets(t, []int64{2}, []int64{3}, nil)
	n2 := nodes[2]
	nc, br := dialElection(t, n2.ElectionAddr().String(), 3, members[1].ElectionAddr)

	n2.SendVotes([]zab.Vote{vote(3, 2)})
	got := readFrame(t, br)
	assert.Equal(t, int64(2), got.Leader)
	assert.Equal(t, wire.NotificationVersion, got.Version)

	note := wire.Notification{State: wire.PeerLeading, Leader: 3, Zxid: 9, ElectionEpoch: 2, PeerEpoch: 2, Version: 2, Config: []byte(dynamicConfig(members))}
	_, err := nc.Write(wire.AppendFrame(nil, &note))
	require.NoError(t, err)
	v := n2.nextVote(t)
	assert.Equal(t, zab.PeerVote{From: 3, Notification: note}, v)
}

// A connection from a smaller id is closed, and the larger one dials back
// with its own handshake, then sends what it has.
func TestSmallerIDIsCalledBack(t *testing.T) {
	nodes, lns, members := startNets(t, []int64{2}, []int64{1}, nil)
	n2 := nodes[2]
	nc, _ := dialElection(t, n2.ElectionAddr().String(), 1, members[1].ElectionAddr)
	expectClosed(t, nc)

	back, err := acceptRaw(t, lns[1][1])
	require.NoError(t, err)
	defer back.Close()
	br := bufio.NewReader(back)
	hello, err := readInitialMessage(br)
	require.NoError(t, err)
	assert.Equal(t, wire.InitialMessage{ProtocolVersion: wire.ElectionProtocolV2, ServerID: 2, Address: members[0].ElectionAddr}, hello)

	n2.SendVotes([]zab.Vote{vote(1, 2)})
	assert.Equal(t, int64(2), readFrame(t, br).Leader)
}

// A smaller id that has something to send dials, says who it is, hangs up
// and waits: the notification goes on the connection the larger id opens.
func TestSmallerIDSendsOnTheCallBack(t *testing.T) {
	nodes, lns, members := startNets(t, []int64{1}, []int64{2}, nil)
	nodes[1].SendVotes([]zab.Vote{vote(2, 1)})
	first, err := acceptRaw(t, lns[2][1])
	require.NoError(t, err)
	hello, err := readInitialMessage(bufio.NewReader(first))
	require.NoError(t, err)
	assert.Equal(t, int64(1), hello.ServerID)
	expectClosed(t, first)

	nc, br := dialElection(t, nodes[1].ElectionAddr().String(), 2, members[1].ElectionAddr)
	assert.Equal(t, int64(1), readFrame(t, br).Leader)
	_ = nc
}

func TestElectionPortRefusesBadPeers(t *testing.T) {
	nodes, _, members := startNets(t, []int64{1, 2}, []int64{3}, nil)
	n2 := nodes[2]
	addr := n2.ElectionAddr().String()
	big := make([]byte, 4)
	binary.BigEndian.PutUint32(big, wire.ElectionMaxMessage+1)

	for _, tc := range []struct {
		name string
		id   int64
		send []byte
		log  []string
	}{
		{"HTTP on the election port", 0, []byte("GET / HTTP/1.1\r\n\r\nxxxxxxxxxxxxxxxxxxxxxx"), []string{"bad handshake", "bare server id"}},
		{"unknown version", 0, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0xaa}, []string{"bad handshake", "unknown version -4294967295"}},
		{"non-member", 9, nil, []string{"refusing a connection", "server=9", "not a member"}},
		{"own id", 2, nil, []string{"refusing a connection", "server=2", "our own id"}},
		{"wrong address", 3, nil, []string{"refusing a connection", "server=3", "announces election address 10.9.9.9:1", "lists " + members[2].ElectionAddr}},
		{"oversized frame", 3, big, []string{"dropping the connection", "server=3", "exceeds the limit of 524288"}},
		{"garbage notification", 3, []byte{0, 0, 0, 3, 1, 2, 3}, []string{"dropping the connection", "server=3", "notification"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var nc net.Conn
			switch {
			case tc.send != nil && tc.id == 0:
				var err error
				nc, err = net.Dial("tcp", addr)
				require.NoError(t, err)
				defer nc.Close()
				_, err = nc.Write(tc.send)
				require.NoError(t, err)
			case tc.name == "wrong address":
				nc, _ = dialElection(t, addr, tc.id, "10.9.9.9:1")
			default:
				nc, _ = dialElection(t, addr, tc.id, members[len(members)-1].ElectionAddr)
				if tc.id == 3 {
					_, err := nc.Write(tc.send)
					require.NoError(t, err)
				}
			}
			expectClosed(t, nc)
			n2.log.waitLog(t, tc.log...)
		})
	}
	// The member goes on: votes still travel.
	nodes[1].SendVotes([]zab.Vote{vote(2, 1)})
	assert.Equal(t, int64(1), n2.nextVote(t).From)
}

func TestNotificationWithAnotherServerListIsRefused(t *testing.T) {
	nodes, _, members := startNets(t, []int64{2}, []int64{3}, nil)
	nc, _ := dialElection(t, nodes[2].ElectionAddr().String(), 3, members[1].ElectionAddr)
	note := wire.Notification{State: wire.PeerLooking, Leader: 3, Version: 2, Config: []byte("server.3=10.0.0.3:2888:3888:participant\nversion=0")}
	_, err := nc.Write(wire.AppendFrame(nil, &note))
	require.NoError(t, err)
	expectClosed(t, nc)
	nodes[2].log.waitLog(t, "dropping the connection", "server=3", "server list disagrees", "10.0.0.3:2888:3888")
	nodes[2].noEventQueued(t)
}

// The newest notification for a peer replaces one not yet sent, and the
// last one sent goes again on a new connection.
func TestNewestVoteWinsAndIsResentOnReconnect(t *testing.T) {
	nodes, _, members := startNets(t, []int64{2}, []int64{3}, nil)
	n2 := nodes[2]
	nc, br := dialElection(t, n2.ElectionAddr().String(), 3, members[1].ElectionAddr)
	n2.SendVotes([]zab.Vote{vote(3, 7)})
	assert.Equal(t, int64(7), readFrame(t, br).Leader)
	nc.Close()

	nc2, br2 := dialElection(t, n2.ElectionAddr().String(), 3, members[1].ElectionAddr)
	assert.Equal(t, int64(7), readFrame(t, br2).Leader, "the last notification is sent again on the new connection")
	_ = nc2
}

// A vote for a member whose election port refuses the connection (its
// process is gone) tells the Peer so (zab.PeerUnreachable), so that its
// election stops waiting for that member's vote.
func TestRefusedElectionPortIsReported(t *testing.T) {
	nodes, lns, _ := startNets(t, []int64{2}, []int64{3}, nil)
	require.NoError(t, lns[3][1].Close()) // nothing listens on 3's election port now
	nodes[2].SendVotes([]zab.Vote{vote(3, 2)})
	for {
		if ev, ok := nodes[2].next(t).(zab.PeerUnreachable); ok {
			assert.Equal(t, zab.PeerUnreachable{Peer: 3}, ev)
			return
		}
	}
}

// When a working election link ends because the peer's process died, the
// last notification is sent again at once; the dial that takes it is
// refused, and the Peer learns the peer is gone without sending anything
// new (the case of a leader killed while its followers' votes go out on
// links it has just closed).
func TestDeadPeerIsReportedWhenItsLinkCloses(t *testing.T) {
	nodes, lns, members := startNets(t, []int64{2}, []int64{3}, nil)
	n2 := nodes[2]
	nc, br := dialElection(t, n2.ElectionAddr().String(), 3, members[1].ElectionAddr)
	note := wire.Notification{State: wire.PeerLooking, Leader: 3, Zxid: 9, ElectionEpoch: 2, PeerEpoch: 2, Version: 2, Config: []byte(dynamicConfig(members))}
	_, err := nc.Write(wire.AppendFrame(nil, &note))
	require.NoError(t, err)
	n2.nextVote(t)
	n2.SendVotes([]zab.Vote{vote(3, 2)})
	readFrame(t, br) // the link works both ways

	require.NoError(t, lns[3][1].Close()) // 3's process dies: its port closes,
	require.NoError(t, nc.Close())        // and so does its end of the link
	for {
		if ev, ok := n2.next(t).(zab.PeerUnreachable); ok {
			assert.Equal(t, zab.PeerUnreachable{Peer: 3}, ev)
			return
		}
	}
}
