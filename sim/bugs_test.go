package sim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/sim/faults"
)

// bugSearch is how many seeds TestBrokenCoresAreCaught searches for each
// broken core: the plain seed sweep must catch each within that many (the
// first catching seed is in docs/simulator.md's table).
var bugSearch = map[string]int{
	"reply-before-fsync":           100,
	"watch-after-reply":            100,
	"expire-without-close-txn":     100,
	"read-overtakes-write":         100,
	"diff-instead-of-trunc":        100,
	"epoch-not-persisted":          3000,
	"ack-newleader-before-durable": 3000,
}

// TestBrokenCoresAreCaught switches on each deliberately broken behaviour
// and sweeps seeds until one fails that passes without it; that failure is
// shrunk, written as a schedule file, read back and replayed: the replay
// fails the same way with the bug and passes without it.
func TestBrokenCoresAreCaught(t *testing.T) {
	require.Len(t, bugSearch, len(BugNames()), "every bug has its search bound")
	for _, name := range BugNames() {
		t.Run(name, func(t *testing.T) {
			bugs, err := ParseBugs(name)
			require.NoError(t, err)
			buggy := Options{Bugs: bugs}
			var caught *sweepResult
			sweep(1, bugSearch[name], buggy, func(r sweepResult) bool {
				if r.res.Failed() && !Run(r.res.Schedule, Options{}).Failed() {
					caught = &r
					return false
				}
				return true // not caught, or failing for another reason
			})
			require.NotNil(t, caught, "no seed in 1..%d caught %s", bugSearch[name], name)
			res := caught.res
			sched := res.Schedule
			shrunk := Shrink(res, buggy, ShrinkBudget{Runs: 200})
			path := filepath.Join(t.TempDir(), "shrunk.json")
			require.NoError(t, os.WriteFile(path, shrunk.Schedule.MarshalIndented(), 0o644))
			back, err := faults.Load(path)
			require.NoError(t, err)
			replay := Run(back, buggy)
			require.True(t, replay.Failed(), "the shrunk schedule replays the failure")
			require.Equal(t, shrunk.Result.Failures[0], replay.Failures[0])
			require.False(t, Run(back, Options{}).Failed(), "without the bug the shrunk schedule passes")
			require.LessOrEqual(t, len(back.Faults), len(sched.Faults))
			require.LessOrEqual(t, back.Clients*back.OpsPerClient, sched.Clients*sched.OpsPerClient)
			t.Logf("seed %d caught it: %s\nshrunk in %d runs to %d clients × %d ops, %d faults",
				caught.seed, res.Failures[0], shrunk.Runs, back.Clients, back.OpsPerClient, len(back.Faults))
		})
	}
}
