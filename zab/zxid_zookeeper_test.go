package zab_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// TestReplyZxidsMatchZooKeeper sends one script of requests, one at a time,
// to a fresh Debian ZooKeeper 3.8 and to a fresh Peer, and compares every
// reply header's zxid and error: reads and pings carry the last zxid
// applied (another session's creation included), failed writes take a zxid
// of their own, auth answers zxid 0, a failed multi answers OK.
func TestReplyZxidsMatchZooKeeper(t *testing.T) {
	zk := startZooKeeper(t)
	zkA := zk.session()
	var zkB *client.Conn

	h := newHarness(t)
	peerA := h.Session(10000)
	var peerB *zabtest.Client

	type step struct {
		name string
		b    bool // sent by the second session
		op   wire.OpCode
		body wire.Record
	}
	open := wire.OpenACLUnsafe
	script := []step{
		{"exists", false, wire.OpExists, &wire.PathWatchRequest{Path: "/"}},
		{"create", false, wire.OpCreate, &wire.CreateRequest{Path: "/a", ACL: open}},
		{"delete missing", false, wire.OpDelete, &wire.PathVersionRequest{Path: "/missing", Version: -1}},
		{"setData bad version", false, wire.OpSetData, &wire.SetDataRequest{Path: "/a", Version: 5}},
		{"second session", true, 0, nil},
		{"ping", false, wire.OpPing, nil},
		{"auth", false, wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}},
		{"sync", false, wire.OpSync, &wire.PathRequest{Path: "/"}},
		{"getData watch", false, wire.OpGetData, &wire.PathWatchRequest{Path: "/a", Watch: true}},
		{"other session's setData", true, wire.OpSetData, &wire.SetDataRequest{Path: "/a", Data: []byte("x"), Version: -1}},
		{"setWatches2", false, wire.OpSetWatches2, &wire.SetWatchesRequest{RelativeZxid: 1, DataWatches: []string{"/a"}, ExistWatches: []string{"/b"},
			ChildWatches: []string{}, PersistentWatches: []string{}, PersistentRecursiveWatches: []string{}, Persistent: true}},
		{"failing multi", false, wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
			{Type: wire.OpCreate, Body: &wire.CreateRequest{Path: "/m", ACL: open}},
			{Type: wire.OpDelete, Body: &wire.PathVersionRequest{Path: "/nope", Version: -1}},
		}}},
		{"whoAmI", false, wire.OpWhoAmI, nil},
		{"getChildren missing", false, wire.OpGetChildren, &wire.PathWatchRequest{Path: "/missing"}},
		{"create invalid ACL", false, wire.OpCreate, &wire.CreateRequest{Path: "/a/b"}},
		{"closeSession", false, wire.OpCloseSession, nil},
	}
	for _, s := range script {
		if s.op == 0 {
			zkB = zk.session()
			peerB = h.Session(10000)
			continue
		}
		zkConn, peer := zkA, peerA
		if s.b {
			zkConn, peer = zkB, peerB
		}
		r, err := zkConn.Do(zk.ctx, s.op, s.body)
		require.NoError(t, err, s.name)

		// The Peer gets the same bytes, decoded as the shell decodes them.
		xid := r.Header.Xid // as the ZooKeeper client numbered it
		frame := wire.Marshal(&wire.RequestHeader{Xid: xid, Type: s.op})
		if s.body != nil {
			frame = append(frame, wire.Marshal(s.body)...)
		}
		ev, ok := zab.DecodeRequest(peer.Conn, frame)
		require.True(t, ok)
		h.Take()
		h.Step(ev)
		var got *wire.ReplyHeader
		for i := range h.Effects {
			m := &h.Effects[i]
			if m.Conn == peer.Conn && m.Kind == zab.Reply && m.Header.Xid == xid {
				got = &m.Header
			}
		}
		h.Take()
		require.NotNil(t, got, "%s: the Peer answered", s.name)
		require.Equal(t, r.Header.Err, got.Err, "%s: error", s.name)
		require.Equal(t, r.Header.Zxid, got.Zxid, "%s: zxid", s.name)
	}
}
