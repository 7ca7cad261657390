package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/runlog"
)

// TestRecordingDoesNotChangeTheRun: a recorded run makes the same choices
// as a plain one.
func TestRecordingDoesNotChangeTheRun(t *testing.T) {
	recorded := Run(ScheduleForSeed(4), Options{Record: true, SkipCheckers: true})
	plain := Run(ScheduleForSeed(4), Options{SkipCheckers: true})
	require.Equal(t, recorded.Stats, plain.Stats)
	require.Equal(t, recorded.LinearizabilityHistory(), plain.LinearizabilityHistory())
	require.Nil(t, plain.Record)
}

// TestTheRecordHoldsTheRun: the record of a seed holds what its trace
// says happened: every role change and crash, one operation per history
// operation, messages that arrive after they leave between members, in
// the order they were recorded.
func TestTheRecordHoldsTheRun(t *testing.T) {
	var trace strings.Builder
	res := Run(ScheduleForSeed(1), Options{Record: true, Trace: &trace})
	require.False(t, res.Failed(), "%v", res.Failures)
	r := res.Record
	require.NotNil(t, r)
	count := map[runlog.Kind]int{}
	var last int64
	for _, e := range r.Events {
		count[e.Kind]++
		require.GreaterOrEqual(t, e.At, last, "events in time order: %+v", e)
		last = e.At
		switch e.Kind {
		case runlog.KindMessage, runlog.KindVote:
			require.LessOrEqual(t, e.Sent, e.At, "%+v", e)
			require.Contains(t, r.Members, e.Member)
			require.Contains(t, r.Members, e.Peer)
		}
	}
	lines := strings.Split(trace.String(), "\n")
	countTrace := func(pred func(string) bool) int {
		n := 0
		for _, l := range lines {
			if pred(l) {
				n++
			}
		}
		return n
	}
	require.Equal(t, countTrace(func(l string) bool { return strings.Contains(l, ": crash (") }), count[runlog.KindCrash])
	require.Equal(t, countTrace(func(l string) bool { return strings.Contains(l, ") leader=") && strings.Contains(l, " -> ") }), count[runlog.KindRole])
	require.Equal(t, countTrace(func(l string) bool { return strings.Contains(l, " history op ") }), count[runlog.KindOp])
	require.Positive(t, count[runlog.KindMessage])
	require.Positive(t, count[runlog.KindVote])
	require.Positive(t, count[runlog.KindDurable])
	require.Zero(t, count[runlog.KindFailure])
}

// TestARecordedFailureNamesItsOperations: a history checker's failure is
// recorded where its culprit operation ended, with the operations
// involved.
func TestARecordedFailureNamesItsOperations(t *testing.T) {
	bugs, err := ParseBugs("watch-after-reply")
	require.NoError(t, err)
	res := Run(ScheduleForSeed(1), Options{Record: true, Bugs: bugs})
	require.True(t, res.Failed())
	ops := map[int]runlog.Event{}
	var failures []runlog.Event
	for _, e := range res.Record.Events {
		switch e.Kind {
		case runlog.KindOp, runlog.KindNotice:
			ops[e.ID] = e
		case runlog.KindFailure:
			failures = append(failures, e)
		}
	}
	require.Len(t, failures, len(res.Failures))
	for _, f := range failures {
		require.NotEmpty(t, f.Ops, "%s", f.Text)
		culprit, ok := ops[f.Ops[0]]
		require.True(t, ok, "failure names op %d, which the record holds", f.Ops[0])
		require.Equal(t, culprit.At, f.At, "marked where its culprit returned")
	}
}
