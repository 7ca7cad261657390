package zab_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

func reapHarness(t *testing.T) *zabtest.Harness {
	return zabtest.New(t, zab.Config{
		ServerID:               1,
		Tree:                   datatree.Config{ExtendedTypesEnabled: true},
		ContainerCheckInterval: 10 * time.Second,
	}, 1)
}

// TestContainerReapedFromTicks: once its last child is gone, a container is
// removed at the next check by the server's own deleteContainer txn, which
// fires the watches on it like any delete.
func TestContainerReapedFromTicks(t *testing.T) {
	h := reapHarness(t)
	a := h.Session(30000)
	a.Send(wire.OpCreateContainer, &wire.CreateRequest{Path: "/c", ACL: wire.OpenACLUnsafe, Flags: wire.ModeContainer}) // 0x2
	a.Create("/c/x", "", wire.ModePersistent)                                                                           // 0x3
	a.Delete("/c/x", -1)                                                                                                // 0x4
	a.Exists("/c", true)
	h.Take()
	h.Advance(9 * time.Second)
	a.Ping()
	h.Expect("c1 reply xid=-2 zxid=0x4 ok")
	h.Advance(time.Second)
	h.Expect("c1 event NodeDeleted /c")
	reap := h.Log[len(h.Log)-1]
	require.Equal(t, wire.TxnHeader{ClientID: 0, Cxid: 0, Zxid: 5, Time: h.Now.Wall, Type: wire.OpDeleteContainer}, reap.Header)
	require.Equal(t, &wire.DeleteTxn{Path: "/c"}, reap.Body)
}

// TestTTLNodeReapedAfterItsTTL: a childless TTL node goes at the first check
// after mtime + ttl, measured on the wall clock.
func TestTTLNodeReapedAfterItsTTL(t *testing.T) {
	h := reapHarness(t)
	a := h.Session(30000)
	a.CreateTTL("/t", "", 15000) // 0x2
	a.Exists("/t", true)
	h.Take()
	h.Advance(10 * time.Second) // 10 s old: kept
	a.Ping()
	h.Expect("c1 reply xid=-2 zxid=0x2 ok")
	h.Advance(10 * time.Second) // 20 s old: reaped
	h.Expect("c1 event NodeDeleted /t")
	require.Equal(t, wire.OpDeleteContainer, h.Log[len(h.Log)-1].Header.Type)
}
