package election

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

var update = flag.Bool("update", false, "rewrite testdata/*.trace from the current behaviour")

// The same inputs give the same outputs: a faulty run played twice (fresh
// Elections, fresh maps with their own iteration orders) sends the same
// notifications at the same times and decides the same.
func TestDeterminism(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawPlan(t)
		play := func() *cluster {
			c := newPlannedCluster(t, p)
			runPlan(c, p, p.heal+5*time.Minute, func() bool { return c.now >= p.heal && c.converged() })
			return c
		}
		a, b := play(), play()
		require.Equal(t, a.log, b.log)
		require.Equal(t, a.sent, b.sent)
		require.Equal(t, a.decisions, b.decisions)
	})
}

// The elections docs/election.md walks through, kept as files so that the
// document shows what the code does: three voters with different zxids,
// messages taking 10ms, under ZooKeeper's fixed final wait and under the
// adaptive one; each trace runs until nothing is left in flight. Run with
// -update to rewrite them.
func TestTraceThreeVoters(t *testing.T) {
	for _, tc := range []struct {
		rule finalWaitRule
		file string
	}{
		{finalWaitRules[1], "three_voters.trace"},
		{finalWaitRules[0], "three_voters_adaptive.trace"},
	} {
		t.Run(tc.rule.name, func(t *testing.T) {
			voters := []int64{1, 2, 3}
			c := newCluster(t, voters, nil, map[int64]local{1: {0x100000004, 1}, 2: {0x100000007, 1}, 3: {0x100000005, 1}}, tc.rule.tune)
			c.start(voters...)
			require.True(t, c.runUntil(time.Second, c.allDecided(voters...)))
			c.runFor(time.Second)
			require.Empty(t, c.inflight)
			got := c.trace() + "\n"
			path := filepath.Join("testdata", tc.file)
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update to create it")
			require.Equal(t, string(want), got)
		})
	}
}
