package localens_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server/localens"
	"github.com/zabd/zabd/zab/server/zkprocess"
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

// TestMixedHierarchicalQuorum: zabd and ZooKeeper members with the same
// groups ({1,2} and {3}, so that a quorum needs all three) print the same
// quorum config (QuorumHierarchical.toString, at the end of conf), and
// agree on quorums: without ZooKeeper member 2 the zabd leader stops, and
// without zabd member 1 so does the ZooKeeper follower; back, they serve.
func TestMixedHierarchicalQuorum(t *testing.T) {
	skipUnderRace(t)
	m := startMixed(t, "dZd", 0, map[string]string{"group.1": "1:2", "group.2": "3"})
	ctx := context.Background()
	quorumConfig := func(id int64) string {
		conf, err := zkprocess.FourLetterWord(ctx, m.Member(id).ClientAddr, "conf")
		require.NoError(t, err)
		i := strings.Index(conf, "server.1=")
		require.GreaterOrEqual(t, i, 0, "server %d's conf lists the servers:\n%s", id, conf)
		return conf[i:]
	}
	zk := quorumConfig(2)
	require.Contains(t, zk, "group.1=1:2\ngroup.2=3\nweight.1=1\nweight.2=1\nweight.3=1\nversion=0")
	require.Equal(t, zk, quorumConfig(1), "zabd prints the quorum config as ZooKeeper does")
	writeAndReadEverywhere(t, m.Ensemble, "/before")
	for _, id := range []int64{2, 1} {
		m.Member(id).Stop(syscall.SIGKILL)
		deadline := time.Now().Add(30 * time.Second)
		for { // the leader gives up once it misses the member for syncLimit
			modes := m.Modes(ctx)
			if !slices.Contains(modes, "leader") && !slices.Contains(modes, "follower") {
				break
			}
			require.False(t, time.Now().After(deadline), "the others still serve without %d (%s): %q", id, kindName(m.kind(id)), modes)
			time.Sleep(50 * time.Millisecond) // polling real processes with a deadline
		}
		require.NoError(t, m.Restart(id))
		waitServing(t, m.Ensemble)
		writeAndReadEverywhere(t, m.Ensemble, fmt.Sprintf("/after%d", id))
	}
}
