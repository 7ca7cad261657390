package sim

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/sim/faults"
)

// TestHistoryFilesReadBackStrictly writes runs' histories in the history
// format and reads them back with the linearizability package's strict
// reader: every field the simulator writes is one the format allows.
func TestHistoryFilesReadBackStrictly(t *testing.T) {
	for _, file := range []string{"testdata/scenarios/snapshots-and-crashes.json", "testdata/scenarios/pause-past-timeout-expires.json"} {
		sched, err := faults.Load(file)
		require.NoError(t, err)
		res := Run(sched, Options{SkipCheckers: true})
		h := res.LinearizabilityHistory()
		var buf bytes.Buffer
		require.NoError(t, linearizability.WriteHistory(&buf, h))
		back, err := linearizability.ReadHistory(&buf, file)
		require.NoError(t, err)
		require.Equal(t, len(h), len(back))
		ops, events := 0, 0
		for _, e := range back {
			switch e.Kind {
			case linearizability.KindOp:
				ops++
			case linearizability.KindEvent:
				events++
			}
		}
		require.Equal(t, res.Stats.Ops, ops)
		require.NotZero(t, events)
	}
}
