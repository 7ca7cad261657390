package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/linearizability"
)

// TestReapingIsOnAndJudged runs seed 5's schedule with the servers reaping
// containers and TTL nodes every 500 ms, nodes its clients saw: the run passes with the checkers
// allowing the servers' own deletions (its witness explaining it), and the
// same history fails them when they are told the servers never delete
// anything by themselves — so the reaper really ran, and really took nodes
// the history had seen.
func TestReapingIsOnAndJudged(t *testing.T) {
	sched := ScheduleForSeed(5)
	sched.ReapIntervalMs = 500
	res := Run(sched, Options{})
	require.False(t, res.Failed(), "%v", res.Failures)
	h := res.LinearizabilityHistory()
	opts := CheckerOptions(sched)
	opts.Witness = res.Witness
	report := linearizability.CheckAll(h, opts)
	require.True(t, report.OK())
	require.NoError(t, report.Unexplained)

	strict := opts
	strict.Reaping = false
	report = linearizability.CheckAll(h, strict)
	require.False(t, report.OK(), "without reaping in the model, the reaper's deletions are violations")
	require.ErrorContains(t, report.Unexplained, "judged without reaping")
}
