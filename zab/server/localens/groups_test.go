package localens_test

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server/localens"
)

// TestHierarchicalQuorumDecides: three zabd members whose zoo.cfg puts 1
// and 2 in one group and 3 in another need all three for a quorum (more
// than half of the weight of more than half of the groups), where a
// majority would need two: with follower 1 down, leader 3 and follower 2
// stop serving (a majority would go on), and they serve again once 1 is
// back.
func TestHierarchicalQuorumDecides(t *testing.T) {
	if testing.Short() {
		t.Skip("runs zabd processes")
	}
	e, err := localens.Start(localens.Options{Binary: zabdBinary, Voters: 3, Dir: ensembleDir(t), TickTime: tick,
		Extra: map[string]string{"group.1": "1:2", "group.2": "3"}, RunRecord: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		e.Close()
		if t.Failed() {
			keepView(t, e)
		}
	})
	require.Equal(t, int64(3), waitServing(t, e), "the largest id leads a fresh ensemble")
	writeAndReadEverywhere(t, e, "/before")
	e.Member(1).Stop(syscall.SIGKILL)
	deadline := time.Now().Add(30 * time.Second)
	for { // the leader gives up once it misses 1 for syncLimit
		modes := e.Modes(context.Background())
		if !slices.Contains(modes, "leader") && !slices.Contains(modes, "follower") {
			break
		}
		require.False(t, time.Now().After(deadline), "2 and 3 still serve without 1: %q", modes)
		time.Sleep(50 * time.Millisecond) // polling real processes with a deadline
	}
	require.NoError(t, e.Restart(1))
	waitServing(t, e)
	writeAndReadEverywhere(t, e, "/after")
}
