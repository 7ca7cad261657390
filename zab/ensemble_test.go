package zab_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/zabtest"
)

func TestEnsembleElectsAndReplicates(t *testing.T) {
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: 3}, 1)
	c.Run(2*time.Second, 50*time.Millisecond)
	t.Log("\n" + strings.Join(c.Trace, "\n"))
	t.Log("\n" + strings.Join(c.Notices, "\n"))
	t.Log("\n" + c.Status())
	require.NotZero(t, c.Leader())
	cl := c.Connect(1, 0, nil, 4000)
	c.Stabilize(1000)
	t.Log(cl.Take())
	cl.Send(wire.OpCreate, &wire.CreateRequest{Path: "/a", Data: []byte("x"), ACL: wire.OpenACLUnsafe})
	c.Stabilize(1000)
	t.Log(cl.Take())
	t.Log("\n" + c.Status())
}
