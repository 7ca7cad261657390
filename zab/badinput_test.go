package zab_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
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
