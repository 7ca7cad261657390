package sim

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/sim/faults"
)

// aimedScenarios are schedules in testdata/aimed that an aimed fault made
// fail once, each a regression test now: it must pass every invariant and
// checker, and its aimed faults must still fire where they did (the
// trace names the firing).
var aimedScenarios = map[string]struct {
	fired string // a piece of the firing's trace line
	check func(t *testing.T, r *Result)
}{
	// Seed 554's run, shrunk: a learner whose FOLLOWERINFO is held back
	// past a new election is synchronized by SNAP and crashes right after
	// writing the snapshot of the installed tree, before NEWLEADER makes
	// the new epoch current. The simulator's shell wrote that snapshot
	// without the updatingEpoch mark (zabd's installs it with
	// storage.Store.InstallSnapshot, which sets the mark first), and the
	// restart refused epoch files older than the snapshot's epoch.
	"snap-installed-crash": {
		fired: "aimed:sync-write-crash: wrote snapshot snapshot.10000000d of the tree a SNAP installed",
		check: func(t *testing.T, r *Result) {
			require.Equal(t, 2, r.Stats.AimedFaults, "the late FOLLOWERINFO and the crash")
			require.GreaterOrEqual(t, r.Stats.Crashes, 1)
		},
	},
}

func TestAimedScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/aimed/*.json")
	require.NoError(t, err)
	require.Len(t, files, len(aimedScenarios), "every aimed scenario file has its checks, and every check its file")
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			sc, ok := aimedScenarios[name]
			require.True(t, ok, "no checks for %s", file)
			sched, err := faults.Load(file)
			require.NoError(t, err)
			var trace bytes.Buffer
			res := Run(sched, Options{Trace: &trace})
			require.False(t, res.Failed(), "%v\nreplay: go run ./cmd/zabsim -schedule sim/%s -v", res.Failures, file)
			require.Contains(t, trace.String(), sc.fired)
			sc.check(t, res)
		})
	}
}

// TestEachAimedKindFires switches each aimed kind on alone, at every
// chance, on a five-voter seed's schedule: it fires (the trace says so,
// in the form `fault ... aimed:KIND: ...`), and the correct core passes.
func TestEachAimedKindFires(t *testing.T) {
	base := ScheduleForSeed(1)
	require.Equal(t, 5, base.Voters())
	for _, k := range faults.AimedKinds {
		t.Run(string(k), func(t *testing.T) {
			s := base.Clone()
			s.Aimed = []faults.Aimed{{Kind: k, Chance: 1, Max: 3, MaxMs: 2000}}
			var trace bytes.Buffer
			res := Run(s, Options{Trace: &trace, SkipCheckers: true})
			require.False(t, res.Failed(), "%v", res.Failures)
			require.Positive(t, res.Stats.AimedFaults)
			require.LessOrEqual(t, res.Stats.AimedFaults, 3, "at most Max firings")
			lines := 0
			for _, l := range strings.Split(trace.String(), "\n") {
				if strings.Contains(l, " fault ") && strings.Contains(l, " aimed:"+string(k)+": ") {
					lines++
				}
			}
			require.Equal(t, res.Stats.AimedFaults, lines, "each firing is one fault line of the trace")
		})
	}
}

// TestAimedFaultsReplayFromTheSchedule: the aimed switches are part of
// the schedule, so its JSON replays a seed's run, aimed faults included,
// byte for byte, and a schedule without them runs without them.
func TestAimedFaultsReplayFromTheSchedule(t *testing.T) {
	sched := ScheduleForSeed(7)
	require.NotEmpty(t, sched.Aimed, "seed 7 switches aimed faults on")
	back, err := faults.Parse(sched.MarshalIndented())
	require.NoError(t, err)
	var a, b bytes.Buffer
	ra := Run(sched, Options{Trace: &a, SkipCheckers: true})
	rb := Run(back, Options{Trace: &b, SkipCheckers: true})
	require.Equal(t, ra.Stats, rb.Stats)
	require.Positive(t, ra.Stats.AimedFaults)
	require.Equal(t, a.String(), b.String())
	require.Contains(t, a.String(), "  aimed: ", "the header lists the switches")

	none := sched.Clone()
	none.Aimed = nil
	var c bytes.Buffer
	rc := Run(none, Options{Trace: &c, SkipCheckers: true})
	require.Zero(t, rc.Stats.AimedFaults)
	require.NotContains(t, c.String(), " aimed:")
}
