package sim

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSameSeedSameTrace runs seeds twice in one process and compares their
// traces byte for byte: nothing outside the seed (map order, the wall
// clock, pointer values) may reach a run. The checkers are left out: their
// Porcupine search has a wall-clock deadline, the one thing in a run that
// real time may decide.
func TestSameSeedSameTrace(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		var a, b bytes.Buffer
		ra := Run(ScheduleForSeed(seed), Options{Trace: &a, SkipCheckers: true})
		rb := Run(ScheduleForSeed(seed), Options{Trace: &b, SkipCheckers: true})
		require.Greater(t, a.Len(), 1000, "seed %d: the trace should say what happened", seed)
		require.True(t, bytes.Equal(a.Bytes(), b.Bytes()), "seed %d: traces differ", seed)
		require.Equal(t, ra.Stats, rb.Stats)
		require.Equal(t, ra.LinearizabilityHistory(), rb.LinearizabilityHistory())
	}
}

// TestTracingDoesNotChangeTheRun checks that a run without a trace makes
// the same choices as one with it.
func TestTracingDoesNotChangeTheRun(t *testing.T) {
	var buf bytes.Buffer
	traced := Run(ScheduleForSeed(4), Options{Trace: &buf, SkipCheckers: true})
	plain := Run(ScheduleForSeed(4), Options{SkipCheckers: true})
	require.Equal(t, traced.Stats, plain.Stats)
	require.Equal(t, traced.LinearizabilityHistory(), plain.LinearizabilityHistory())
}
