package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/linearizability"
)

// TestReapingIsOnAndJudged runs seed 5's schedule with the servers reaping
// containers and TTL nodes every 500 ms, nodes its clients saw: the run passes with the checkers
// allowing the servers' own deletions, and the same history fails them when
// they are told the servers never delete anything by themselves — so the
// reaper really ran, and really took nodes the history had seen.
func TestReapingIsOnAndJudged(t *testing.T) {
	sched := ScheduleForSeed(5)
	sched.ReapIntervalMs = 500
	res := Run(sched, Options{})
	require.False(t, res.Failed(), "%v", res.Failures)
	h := res.LinearizabilityHistory()
	require.True(t, linearizability.CheckAll(h, CheckerOptions(sched)).OK())

	strict := CheckerOptions(sched)
	strict.Reaping = false
	report := linearizability.CheckAll(h, strict)
	require.False(t, report.OK(), "without reaping in the model, the reaper's deletions are violations")
}
