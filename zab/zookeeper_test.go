package zab_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

// realZooKeeper is Debian's ZooKeeper 3.8, run for one differential test.
type realZooKeeper struct {
	t    *testing.T
	ctx  context.Context // bounds every exchange with it
	addr string
}

// startZooKeeper starts a private ZooKeeper on 127.0.0.1 for t (skipping t
// when it is not installed); it stops when t ends.
func startZooKeeper(t *testing.T) *realZooKeeper {
	zk := zkprocess.ForTest(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return &realZooKeeper{t: t, ctx: ctx, addr: zk.Addr}
}

// session opens a new session (10 s timeout); its connection closes when
// the test ends.
func (z *realZooKeeper) session() *client.Conn {
	c, err := client.Dial(z.ctx, z.addr, client.Session{Timeout: 10 * time.Second})
	require.NoError(z.t, err)
	z.t.Cleanup(func() { _ = c.Close() })
	return c
}
