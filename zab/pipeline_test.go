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

	h.Release()
	h.Expect(
		"c1 reply xid=2 zxid=0x4 ok {c=0x3 m=0x4 p=0x3 v=1 cv=0 eph=0x0 n=0}",
		"c1 reply xid=3 zxid=0x5 ok {c=0x3 m=0x5 p=0x3 v=2 cv=0 eph=0x0 n=0}",
		`c1 reply xid=4 zxid=0x5 ok "2" {c=0x3 m=0x5 p=0x3 v=2 cv=0 eph=0x0 n=0}`,
	)
}
