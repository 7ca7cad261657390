package zab_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// TestAuthAndWhoAmI: a digest auth adds the identity, answered at once with
// zxid 0; whoAmI lists the connection's identities.
func TestAuthAndWhoAmI(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	a.AddAuth("digest", "alice:secret")
	a.Send(wire.OpWhoAmI, &wire.Empty{})
	h.Expect(
		"c1 reply xid=-4 zxid=0x0 ok",
		"c1 reply xid=1 zxid=0x1 ok [digest:alice ip:127.0.0.1]", // ZooKeeper's hash set order
	)
	// The identity now passes digest ACLs.
	acl := []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: datatree.DigestID("alice:secret")}}}
	a.Send(wire.OpCreate, &wire.CreateRequest{Path: "/private", Data: []byte("x"), ACL: acl})
	a.GetData("/private", false)
	h.Expect(
		"c1 reply xid=2 zxid=0x2 ok /private",
		`c1 reply xid=3 zxid=0x2 ok "x" {c=0x2 m=0x2 p=0x2 v=0 cv=0 eph=0x0 n=0}`,
	)
	b := h.Session(10000)
	b.GetData("/private", false)
	h.Expect("c2 reply xid=1 zxid=0x3 NoAuth")
}

// TestAuthAfterWatchReachesEvents: a watch set before an addauth delivers
// events that the new identity may read, as ZooKeeper checks READ against the
// connection's identities when it delivers, not when the watch was set.
func TestAuthAfterWatchReachesEvents(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	b := h.Session(10000)
	a.Exists("/private", true)
	a.AddAuth("digest", "alice:secret")
	b.AddAuth("digest", "alice:secret")
	h.Expect(
		"c1 reply xid=1 zxid=0x2 NoNode",
		"c1 reply xid=-4 zxid=0x0 ok",
		"c2 reply xid=-4 zxid=0x0 ok",
	)
	acl := []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: datatree.DigestID("alice:secret")}}}
	b.Send(wire.OpCreate, &wire.CreateRequest{Path: "/private", Data: []byte("x"), ACL: acl})
	h.Expect(
		"c1 event NodeCreated /private",
		"c2 reply xid=1 zxid=0x3 ok /private",
	)
}

// TestAuthFailureCloses: an unknown scheme answers AuthFailed, then closes.
func TestAuthFailureCloses(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	a.AddAuth("kerberos", "x")
	a.Exists("/", false) // after the close: nobody to answer
	h.Expect("c1 reply xid=-4 zxid=0x0 AuthFailed", "c1 close")
}

// TestUnknownOpcodeCloses: Unimplemented with zxid -1, then close; the
// session survives.
func TestUnknownOpcodeCloses(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	frame := []byte{0, 0, 0, 9, 0, 0, 0, 77} // xid 9, opcode 77
	ev, ok := zab.DecodeRequest(a.Conn, frame)
	require.True(t, ok)
	var unknown *wire.UnknownOpError
	require.True(t, errors.As(ev.DecodeErr, &unknown))
	h.Step(ev)
	h.Expect("c1 reply xid=9 zxid=0x-1 Unimplemented", "c1 close")
	require.Len(t, h.Peer.SessionTable(), 1)
}

// TestMalformedBodies: a read whose body does not decode answers
// MarshallingError and keeps the connection; a write's becomes an error txn.
func TestMalformedBodies(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	read, ok := zab.DecodeRequest(a.Conn, []byte{0, 0, 0, 1, 0, 0, 0, byte(wire.OpGetData), 0, 0})
	require.True(t, ok)
	require.Error(t, read.DecodeErr)
	h.Step(read)
	write, ok := zab.DecodeRequest(a.Conn, []byte{0, 0, 0, 2, 0, 0, 0, byte(wire.OpSetData), 0xff})
	require.True(t, ok)
	h.Step(write)
	h.Expect(
		"c1 reply xid=1 zxid=0x1 MarshallingError",
		"c1 reply xid=2 zxid=0x2 MarshallingError",
	)
	_, ok = zab.DecodeRequest(a.Conn, []byte{0, 0, 1})
	require.False(t, ok, "a frame shorter than a request header")
}

// TestProtocolMisuse: a request before the connect, and a second connect,
// close the connection.
func TestProtocolMisuse(t *testing.T) {
	h := newHarness(t)
	early := h.Open()
	early.Exists("/", false)
	h.Expect("c1 close")

	a := h.Session(10000)
	a.Connect(10000, 0)
	h.Expect("c2 close")
}

// TestLargeInputs: a ping storm, a huge multi and a 100 KB path are each
// answered as ZooKeeper answers them, without harm to the Peer.
func TestLargeInputs(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	for range 1000 {
		a.Ping()
	}
	require.Len(t, h.Take(), 1000)

	ops := make([]wire.MultiOp, 5000)
	for i := range ops {
		ops[i] = wire.MultiOp{Type: wire.OpCheck, Body: &wire.PathVersionRequest{Path: "/", Version: -1}}
	}
	a.Send(wire.OpMulti, &wire.MultiRequest{Ops: ops})
	got := h.Take()
	require.Len(t, got, 1)
	require.True(t, strings.HasPrefix(got[0], "c1 reply xid=1 zxid=0x2 ok [check/ok check/ok"), got[0])

	long := "/" + strings.Repeat("p", 100*1024)
	a.Create(long, "", wire.ModePersistent)
	a.Exists(long, false)
	got = h.Take()
	require.Len(t, got, 2)
	require.Contains(t, got[0], "c1 reply xid=2 zxid=0x3 ")
}

// TestRepeatedAuthAddsOnce: a connection's identities are a set, as in
// ZooKeeper: an addauth storm of one identity leaves it listed once.
func TestRepeatedAuthAddsOnce(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	for range 1000 {
		a.AddAuth("digest", "dave:p")
	}
	h.Take()
	a.Send(wire.OpWhoAmI, &wire.Empty{})
	h.Expect("c1 reply xid=1 zxid=0x1 ok [ip:127.0.0.1 digest:dave]")
}

// TestReusedConnIDStartsAfresh: a shell that reports a connection id opened
// again (it must not) gets a new connection: the old one's watches and
// session do not carry over to it.
func TestReusedConnIDStartsAfresh(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	a.Exists("/x", true)
	h.Take()
	h.Step(zab.ConnOpened{Conn: a.Conn, Addr: "127.0.0.1"})
	b := h.Session(10000)
	b.Create("/x", "", wire.ModePersistent)
	h.Expect("c2 reply xid=1 zxid=0x3 ok /x")
	a.Exists("/", false) // the new c1 has no session yet
	h.Expect("c1 close")
}

// nullPathFrame is a request frame with xid and op whose body is the multi
// of ops, each op's path being jute's null string when NullPath is set.
func nullPathFrame(xid int32, op wire.OpCode, ops ...wire.MultiOp) []byte {
	return append(wire.Marshal(&wire.RequestHeader{Xid: xid, Type: op}), wire.Marshal(&wire.MultiRequest{Ops: ops})...)
}

// TestNullPathMultiTakesNoTxn: a multi with a null path in any op is
// answered MarshallingError with an empty multi response and takes no
// zxid, in its turn behind the session's earlier write, as ZooKeeper 3.8
// answers it; mixed with a read op it cannot be decoded, which takes a
// zxid. A multiRead answers the ops before the null path.
func TestNullPathMultiTakesNoTxn(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000) // 0x1
	createA := wire.MultiOp{Type: wire.OpCreate, Body: &wire.CreateRequest{Path: "/a", ACL: wire.OpenACLUnsafe}}
	nullSet := wire.MultiOp{Type: wire.OpSetData, Body: &wire.SetDataRequest{Version: -1}, NullPath: true}
	getRoot := wire.MultiOp{Type: wire.OpGetChildren, Body: &wire.PathWatchRequest{Path: "/"}}
	step := func(frame []byte) {
		ev, ok := zab.DecodeRequest(a.Conn, frame)
		require.True(t, ok)
		require.NoError(t, ev.DecodeErr)
		h.Step(ev)
	}
	h.Hold()
	a.Create("/first", "", wire.ModePersistent) // xid 1, 0x2
	step(nullPathFrame(2, wire.OpMulti, createA, nullSet))
	h.Expect()
	h.Release()
	h.Expect(
		"c1 reply xid=1 zxid=0x2 ok /first",
		"c1 reply xid=2 zxid=0x2 MarshallingError []",
	)
	step(nullPathFrame(3, wire.OpMulti, nullSet, getRoot))
	h.Expect("c1 reply xid=3 zxid=0x3 MarshallingError")
	require.Equal(t, wire.OpError, h.Log[len(h.Log)-1].Header.Type)
	step(nullPathFrame(4, wire.OpMultiRead, getRoot, wire.MultiOp{Type: wire.OpGetData, Body: &wire.PathWatchRequest{}, NullPath: true}, getRoot))
	h.Expect("c1 reply xid=4 zxid=0x3 MarshallingError [getChildren/ok]")
	require.Len(t, h.Log, 3, "createSession, /first and the undecodable multi")
	_, err := h.Peer.Tree().Exists("/a", false, 0)
	require.Equal(t, wire.ErrNoNode, err)
}

// TestNullPathMultiOnALearner: a learner answers a multi with a null path
// itself, without forwarding it, with the bytes the leader answers it with
// (and a standalone server): no txn anywhere. A leader that has one
// forwarded anyway, as a ZooKeeper learner forwards it, logs an error txn
// of MarshallingError, so that the learner's client is answered.
func TestNullPathMultiOnALearner(t *testing.T) {
	c := checkedCluster(t, zabtest.ClusterConfig{Voters: 3})
	leader := serving(t, c)
	follower := leader%3 + 1
	nullCheck := wire.MultiOp{Type: wire.OpCheck, Body: &wire.PathVersionRequest{Version: -1}, NullPath: true}
	var frames [][]byte
	var clients []*zabtest.ClusterClient
	for _, id := range []int64{follower, leader} {
		cl := session(t, c, id)
		clients = append(clients, cl)
		mark, before := len(c.Trace), c.Node(leader).Peer.LastZxid()
		ev, ok := zab.DecodeRequest(cl.Conn, nullPathFrame(1, wire.OpMulti, nullCheck))
		require.True(t, ok)
		c.Step(cl.Node, ev)
		c.Stabilize(1000)
		msgs := cl.TakeMessages()
		require.Len(t, msgs, 1, "server %d", id)
		require.Equal(t, fmt.Sprintf("c%d reply xid=1 zxid=%#x MarshallingError []", cl.Conn, before), zabtest.Format(&msgs[0]), "server %d", id)
		f := msgs[0].AppendFrame(nil)
		frames = append(frames, append(f[:8:8], f[16:]...)) // all but the zxid, checked above
		require.False(t, sent(c, mark, "REQUEST"), "server %d forwarded it", id)
		require.Equal(t, before, c.Node(leader).Peer.LastZxid(), "server %d: no txn", id)
	}
	require.Equal(t, frames[0], frames[1], "the learner's reply and the leader's, but for their zxids")

	// The follower's session: the leader takes the request as the
	// follower's.
	sessionID := clients[0].Session
	fr := wire.ForwardedRequest{SessionID: sessionID, Cxid: 2, Type: wire.OpMulti, Body: wire.Marshal(&wire.MultiRequest{Ops: []wire.MultiOp{nullCheck}})}
	c.Inject(follower, leader, wire.QuorumPacket{Type: wire.PacketRequest, Data: wire.Marshal(&fr)})
	c.Stabilize(1000)
	log := c.Node(leader).Log
	last := log[len(log)-1]
	require.Equal(t, wire.TxnHeader{ClientID: sessionID, Cxid: 2, Zxid: last.Header.Zxid, Time: last.Header.Time, Type: wire.OpError}, last.Header)
	require.Equal(t, &wire.ErrorTxn{Err: wire.ErrMarshallingError}, last.Body)
}
