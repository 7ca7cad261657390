package sim

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/sim/faults"
)

// TestHistoryFilesReadBackStrictly writes runs' histories in the history
// format and reads them back with the linearizability package's strict
// reader: every field the simulator writes is one the format allows. Every
// SyncConnected and Expired names its server and term: a standalone
// server's start, an ensemble's epoch.
func TestHistoryFilesReadBackStrictly(t *testing.T) {
	for _, file := range []string{"testdata/scenarios/snapshots-and-crashes.json", "testdata/scenarios/pause-past-timeout-expires.json",
		"testdata/scenarios/ensemble-expiry-carried-out.json"} {
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
		terms := map[string]bool{}
		for _, e := range back {
			switch e.Kind {
			case linearizability.KindOp:
				ops++
			case linearizability.KindEvent:
				events++
			}
			if e.Type == linearizability.StateSyncConnected || e.Type == linearizability.StateExpired {
				require.NotEmpty(t, e.Server, "%s: %s of client %d seq %d", file, e.Type, e.Client, e.Seq)
				want := "start "
				if sched.Ensemble {
					want = "epoch "
				}
				require.True(t, strings.HasPrefix(e.Term, want), "%s: %s of client %d seq %d has term %q", file, e.Type, e.Client, e.Seq, e.Term)
				terms[e.Term] = true
			}
		}
		if strings.Contains(file, "crashes") {
			require.Greater(t, len(terms), 1, "%s: the crashes start new terms", file)
		}
		require.Equal(t, res.Stats.Ops, ops)
		require.NotZero(t, events)
	}
}
