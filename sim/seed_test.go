package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/sim/randstream"
)

// TestSnapshotStepIsDrawnOnItsOwnStream checks that a seed whose run takes
// snapshots draws a small fuzzy-snapshot step, that drawing it leaves every
// other choice of the schedule as the "schedule" stream alone makes it, and
// that the schedule's JSON carries it so that -schedule replays it.
func TestSnapshotStepIsDrawnOnItsOwnStream(t *testing.T) {
	withSnapshots := 0
	for seed := int64(1); seed <= 40; seed++ {
		s := ScheduleForSeed(seed)
		plain := faults.Generate(seed, randstream.New(seed).Stream("schedule"), faults.DefaultLimits)
		if s.SnapCount == 0 {
			require.Zero(t, s.SnapshotStepNodes, "seed %d: no snapshots, no step", seed)
			require.Equal(t, plain, s)
			continue
		}
		withSnapshots++
		require.GreaterOrEqual(t, s.SnapshotStepNodes, 1, "seed %d", seed)
		require.LessOrEqual(t, s.SnapshotStepNodes, maxSnapshotStepNodes, "seed %d", seed)
		plain.SnapshotStepNodes = s.SnapshotStepNodes
		require.Equal(t, plain, s, "seed %d: the step shifted another choice", seed)
		back, err := faults.Parse(s.MarshalIndented())
		require.NoError(t, err)
		require.Equal(t, s.SnapshotStepNodes, back.SnapshotStepNodes, "seed %d: the JSON carries the step", seed)
		require.Contains(t, s.String(), "fuzzy snapshots:", "seed %d: the trace's header prints the step", seed)
	}
	require.Greater(t, withSnapshots, 5)
}
