package zab_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

func newHarness(t *testing.T) *zabtest.Harness {
	return zabtest.New(t, zab.Config{ServerID: zab.StandaloneServerID}, 1)
}

// TestGroupCommitAndReadOrder: writes wait for one fsync that covers them
// all; meanwhile another session's read is answered at once from the
// applied tree, and the writer's own read waits behind its writes.
func TestGroupCommitAndReadOrder(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000) // createSession 0x1
	b := h.Session(10000) // createSession 0x2
	a.Create("/x", "0", wire.ModePersistent)
	h.Expect("c1 reply xid=1 zxid=0x3 ok /x")

	h.Hold()
	a.SetData("/x", "1", -1)
	a.SetData("/x", "2", 1)
	a.GetData("/x", false)
	b.GetData("/x", false)
	h.Expect(`c2 reply xid=1 zxid=0x3 ok "0" {c=0x3 m=0x3 p=0x3 v=0 cv=0 eph=0x0 n=0}`)
	require.Equal(t, []int64{4, 5}, h.Pending(), "both writes proposed before either is durable")
	require.Equal(t, 3, h.Peer.OutstandingRequests(), "two writes and the read behind them")

	h.Release()
	h.Expect(
		"c1 reply xid=2 zxid=0x4 ok {c=0x3 m=0x4 p=0x3 v=1 cv=0 eph=0x0 n=0}",
		"c1 reply xid=3 zxid=0x5 ok {c=0x3 m=0x5 p=0x3 v=2 cv=0 eph=0x0 n=0}",
		`c1 reply xid=4 zxid=0x5 ok "2" {c=0x3 m=0x5 p=0x3 v=2 cv=0 eph=0x0 n=0}`,
	)
	require.Zero(t, h.Peer.OutstandingRequests())
}

// TestFIFOPerSession: a session's replies come in request order whatever
// mixes of writes and reads it sends, and its reads see its own writes.
func TestFIFOPerSession(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	h.Hold()
	a.Exists("/q", false)                     // answered at once: nothing pending
	a.Create("/q", "", wire.ModePersistent)   // 0x2
	a.Exists("/q", false)                     // waits
	a.Create("/q/1", "", wire.ModePersistent) // 0x3
	a.GetChildren("/q", false)                // waits
	h.Expect("c1 reply xid=1 zxid=0x1 NoNode")
	h.ReleaseTo(2)
	h.Expect(
		"c1 reply xid=2 zxid=0x2 ok /q",
		"c1 reply xid=3 zxid=0x2 ok {c=0x2 m=0x2 p=0x2 v=0 cv=0 eph=0x0 n=0}",
	)
	h.Release()
	h.Expect(
		"c1 reply xid=4 zxid=0x3 ok /q/1",
		"c1 reply xid=5 zxid=0x3 ok [1]",
	)
}

// TestSyncWaitsForEarlierWrites: another session's sync is answered only
// once every txn proposed before it is applied, and that session's later
// read waits behind the sync.
func TestSyncWaitsForEarlierWrites(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	b := h.Session(10000)
	h.Hold()
	a.Create("/s", "v", wire.ModePersistent) // 0x3
	b.Sync("/s")
	b.GetData("/s", false)
	h.Expect()
	h.Release()
	h.Expect(
		"c1 reply xid=1 zxid=0x3 ok /s",
		"c2 reply xid=1 zxid=0x3 ok /s",
		`c2 reply xid=2 zxid=0x3 ok "v" {c=0x3 m=0x3 p=0x3 v=0 cv=0 eph=0x0 n=0}`,
	)
	// With nothing in flight, a sync answers at once.
	b.Sync("/")
	h.Expect("c2 reply xid=3 zxid=0x3 ok /")
}

// TestReadyZnodeWatchBeforeData is SPEC's "ready znode" pattern: a reader
// that saw /ready and watches it gets NodeDeleted before any reply showing
// the new /f1 and /f2.
func TestReadyZnodeWatchBeforeData(t *testing.T) {
	h := newHarness(t)
	w := h.Session(10000)                       // writer
	r := h.Session(10000)                       // reader
	w.Create("/ready", "", wire.ModePersistent) // 0x3
	w.Create("/f1", "old", wire.ModePersistent) // 0x4
	w.Create("/f2", "old", wire.ModePersistent) // 0x5
	h.Take()
	r.Exists("/ready", true)
	h.Take()
	h.Hold()
	w.Delete("/ready", -1)                      // 0x6
	w.SetData("/f1", "new", -1)                 // 0x7
	w.SetData("/f2", "new", -1)                 // 0x8
	w.Create("/ready", "", wire.ModePersistent) // 0x9
	r.GetData("/f1", false)                     // answered now: old data
	h.Expect(`c2 reply xid=2 zxid=0x5 ok "old" {c=0x4 m=0x4 p=0x4 v=0 cv=0 eph=0x0 n=0}`)
	h.ReleaseTo(6)
	h.Expect(
		"c2 event NodeDeleted /ready",
		"c1 reply xid=4 zxid=0x6 ok",
	)
	h.Release()
	r.GetData("/f1", false)
	h.Expect(
		"c1 reply xid=5 zxid=0x7 ok {c=0x4 m=0x7 p=0x4 v=1 cv=0 eph=0x0 n=0}",
		"c1 reply xid=6 zxid=0x8 ok {c=0x5 m=0x8 p=0x5 v=1 cv=0 eph=0x0 n=0}",
		"c1 reply xid=7 zxid=0x9 ok /ready",
		`c2 reply xid=3 zxid=0x9 ok "new" {c=0x4 m=0x7 p=0x4 v=1 cv=0 eph=0x0 n=0}`,
	)
}

// TestWriterSeesOwnWatchBeforeReply: the events a txn fires reach the
// writer's own connection before its reply.
func TestWriterSeesOwnWatchBeforeReply(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	a.Create("/n", "", wire.ModePersistent)
	a.GetData("/n", true)
	h.Take()
	a.SetData("/n", "x", -1)
	h.Expect(
		"c1 event NodeDataChanged /n",
		"c1 reply xid=3 zxid=0x3 ok {c=0x2 m=0x3 p=0x2 v=1 cv=0 eph=0x0 n=0}",
	)
}

// TestFailedWriteTakesAZxid: a write refused in preparation is an error
// txn with its own zxid, and the reply carries that zxid.
func TestFailedWriteTakesAZxid(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	a.Delete("/missing", -1)
	h.Expect("c1 reply xid=1 zxid=0x2 NoNode")
	require.Equal(t, wire.OpError, h.Log[len(h.Log)-1].Header.Type)
}
