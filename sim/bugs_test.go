package sim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/sim/faults"
)

// TestBrokenCoresAreCaught switches on each deliberately broken behaviour
// and sweeps seeds until one fails that passes without it; that failure is
// shrunk, written as a schedule file, read back and replayed: the replay
// fails the same way with the bug and passes without it.
func TestBrokenCoresAreCaught(t *testing.T) {
	for _, name := range BugNames() {
		t.Run(name, func(t *testing.T) {
			bugs, err := ParseBugs(name)
			require.NoError(t, err)
			buggy := Options{Bugs: bugs}
			for seed := int64(1); seed <= 100; seed++ {
				sched := ScheduleForSeed(seed)
				res := Run(sched, buggy)
				if !res.Failed() || Run(sched, Options{}).Failed() {
					continue // not caught, or failing for another reason
				}
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
					seed, res.Failures[0], shrunk.Runs, back.Clients, back.OpsPerClient, len(back.Faults))
				return
			}
			t.Fatalf("no seed in 1..100 caught %s", name)
		})
	}
}
