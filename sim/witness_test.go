package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/linearizability"
)

// TestWitnessExplainsTheRun: a run full of writes of unknown outcome (seed
// 2088: five members, slow fsyncs of over a second, 40 writes lost with
// their connections) passes, its witness names every delivered txn once,
// in zxid order, and the witness is held to the replies: told that a lost
// write which took effect had failed instead, it no longer explains the
// history when a later reply shows that write.
func TestWitnessExplainsTheRun(t *testing.T) {
	sched := ScheduleForSeed(2088)
	res := Run(sched, Options{})
	require.False(t, res.Failed(), "%v", res.Failures)
	w := res.Witness
	require.NotEmpty(t, w)
	for i := 1; i < len(w); i++ {
		require.Greater(t, w[i].Zxid, w[i-1].Zxid, "witness txn %d", i)
	}
	h := res.LinearizabilityHistory()
	opts := CheckerOptions(sched)
	require.NoError(t, w.Explains(h, opts))

	lost := map[[2]int64]bool{}
	for _, e := range h {
		if e.Kind == linearizability.KindOp && e.OutcomeUnknown() && e.IsWrite() {
			lost[[2]int64{int64(e.Session), int64(e.Xid)}] = true
		}
	}
	// Each lost write that took effect, told failed instead: where a later
	// reply shows its effect, the committed order no longer explains the
	// history.
	tried, broken := 0, 0
	for i := range w {
		if !lost[[2]int64{int64(w[i].Session), int64(w[i].Xid)}] || w[i].Op == "error" {
			continue
		}
		bad := append(linearizability.Witness(nil), w...)
		bad[i].Op = "error"
		tried++
		if bad.Explains(h, opts) != nil {
			broken++
		}
	}
	t.Logf("%d of the %d lost writes that took effect show in later replies", broken, tried)
	require.Positive(t, broken)
}
