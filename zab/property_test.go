package zab_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// TestPipelinePromises drives a Peer with random requests from several
// sessions while durability is released at random points, and checks after
// every step the promises the pipeline makes: nothing is answered beyond
// what is durable; each connection gets its replies in request order with
// non-decreasing zxids; a watch event comes before any reply whose zxid is
// at least that of the txn that fired it; every request is answered in the
// end; and a restart from the log rebuilds the same tree.
func TestPipelinePromises(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := zabtest.New(rt, zab.Config{ServerID: 1, SnapCount: 20, SnapshotStepNodes: 1}, rapid.Uint64().Draw(rt, "seed"))
		clients := []*zabtest.Client{h.Session(30000), h.Session(30000), h.Session(30000)}
		paths := []string{"/a", "/b", "/a/c"}
		type conn struct {
			lastXid, lastZxid int64
			sent              int
			answered          int
		}
		conns := map[zab.ConnID]*conn{}
		watched := map[watchRead]watchedPath{}
		for _, c := range clients {
			conns[c.Conn] = &conn{}
		}
		h.Take()
		seen := len(h.Effects)
		check := func() {
			for _, m := range h.Effects[seen:] {
				c := conns[m.Conn]
				require.Equal(rt, zab.Reply, m.Kind, "no connect or close expected: %s", zabtest.Format(&m))
				if m.Header.Xid == wire.XidNotification {
					continue
				}
				require.LessOrEqual(rt, m.Header.Zxid, h.Durable, "answered beyond the durable log: %s", zabtest.Format(&m))
				require.Greater(rt, int64(m.Header.Xid), c.lastXid, "reply out of order: %s", zabtest.Format(&m))
				require.GreaterOrEqual(rt, m.Header.Zxid, c.lastZxid, "zxid went back: %s", zabtest.Format(&m))
				c.lastXid, c.lastZxid = int64(m.Header.Xid), m.Header.Zxid
				c.answered++
			}
			seen = len(h.Effects)
		}
		for range rapid.IntRange(1, 80).Draw(rt, "steps") {
			cl := clients[rapid.IntRange(0, len(clients)-1).Draw(rt, "client")]
			path := paths[rapid.IntRange(0, len(paths)-1).Draw(rt, "path")]
			switch rapid.IntRange(0, 8).Draw(rt, "op") {
			case 0:
				cl.Create(path, "x", wire.CreateMode(rapid.IntRange(0, 3).Draw(rt, "mode")))
			case 1:
				cl.SetData(path, fmt.Sprint(rapid.Int().Draw(rt, "data")), int32(rapid.IntRange(-1, 2).Draw(rt, "version")))
			case 2:
				cl.Delete(path, -1)
			case 3:
				watch := rapid.Bool().Draw(rt, "watch")
				if xid := cl.GetData(path, watch); watch {
					watched[watchRead{cl.Conn, xid}] = watchedPath{path: path}
				}
			case 4:
				watch := rapid.Bool().Draw(rt, "watch")
				if xid := cl.Exists(path, watch); watch {
					watched[watchRead{cl.Conn, xid}] = watchedPath{path: path, exists: true}
				}
			case 5:
				cl.Sync(path)
			case 6:
				h.Hold()
				conns[cl.Conn].sent--
			case 7:
				if pending := h.Pending(); len(pending) > 0 {
					h.ReleaseTo(pending[rapid.IntRange(0, len(pending)-1).Draw(rt, "upTo")])
				}
				conns[cl.Conn].sent--
			case 8:
				h.Advance(time.Duration(rapid.IntRange(0, 100).Draw(rt, "ms")) * time.Millisecond)
				conns[cl.Conn].sent--
			}
			conns[cl.Conn].sent++
			check()
		}
		h.Release()
		check()
		for id, c := range conns {
			require.Equal(rt, c.sent, c.answered, "c%d: every request answered", id)
		}
		checkWatchBeforeData(rt, h, watched)

		digest, zxid := h.Peer.Digest(), h.Peer.LastZxid()
		require.NoError(rt, h.Restart())
		require.Equal(rt, zxid, h.Peer.LastZxid())
		require.Equal(rt, digest, h.Peer.Digest())
	})
}

// watchRead is a read that asked for a watch.
type watchRead struct {
	conn zab.ConnID
	xid  int32
}

// watchedPath is what a watchRead watches: a path, and whether the read was
// an exists (which leaves a watch on a missing node; getData does not).
type watchedPath struct {
	path   string
	exists bool
}

// checkWatchBeforeData: a data or exists watch registered by a read
// answered at zxid r fires at the first later txn that creates, deletes or
// sets the data of its path; on that connection, the event must come
// before any reply carrying that txn's zxid or a later one.
func checkWatchBeforeData(t require.TestingT, h *zabtest.Harness, watched map[watchRead]watchedPath) {
	touches := func(z int64, path string) bool {
		for i := range h.Log {
			txn := &h.Log[i]
			if txn.Header.Zxid != z {
				continue
			}
			switch b := txn.Body.(type) {
			case *wire.CreateTxn:
				return b.Path == path
			case *wire.DeleteTxn:
				return b.Path == path
			case *wire.SetDataTxn:
				return b.Path == path
			}
		}
		return false
	}
	type key struct {
		conn zab.ConnID
		path string
	}
	registered := map[key]int64{} // earliest registration's zxid
	maxReplied := map[zab.ConnID]int64{}
	for _, m := range h.Effects {
		if m.Kind != zab.Reply {
			continue
		}
		if m.Header.Xid != wire.XidNotification {
			maxReplied[m.Conn] = max(maxReplied[m.Conn], m.Header.Zxid)
			w, ok := watched[watchRead{m.Conn, m.Header.Xid}]
			if ok && (m.Header.Err == wire.ErrOK || w.exists && m.Header.Err == wire.ErrNoNode) {
				k := key{m.Conn, w.path}
				if _, had := registered[k]; !had {
					registered[k] = m.Header.Zxid
				}
			}
			continue
		}
		ev := m.Body.(*wire.WatcherEvent)
		k := key{m.Conn, ev.Path}
		r, ok := registered[k]
		require.True(t, ok, "c%d: %s without a watch", m.Conn, zabtest.Format(&m))
		delete(registered, k)
		z := r + 1
		for z <= h.Peer.LastZxid() && !touches(z, ev.Path) {
			z++
		}
		require.Less(t, maxReplied[m.Conn], z, "c%d: %s (fired by 0x%x) came after a reply with zxid 0x%x", m.Conn, zabtest.Format(&m), z, maxReplied[m.Conn])
	}
}
