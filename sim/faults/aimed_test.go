package faults

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGenerateSwitchesAimedKindsForEnsembles: an ensemble's seed switches
// each aimed kind on with even odds, within bounds Validate accepts, and a
// standalone server's never does (every aimed kind acts between members).
func TestGenerateSwitchesAimedKindsForEnsembles(t *testing.T) {
	on := map[AimedKind]int{}
	ensembles := 0
	for seed := int64(1); seed <= 400; seed++ {
		s := Generate(seed, rand.New(rand.NewPCG(uint64(seed), 3)), DefaultLimits)
		require.NoError(t, s.Validate())
		if !s.Ensemble {
			require.Empty(t, s.Aimed, "seed %d: standalone", seed)
			continue
		}
		ensembles++
		for _, a := range s.Aimed {
			on[a.Kind]++
			if len(AimedMoments[a.Kind]) > 0 {
				require.NotEmpty(t, a.Moments, "seed %d: %s aims at some of its moments", seed, a.Kind)
			}
			require.Contains(t, s.String(), "  aimed: ", "the header lists the switches")
		}
	}
	for _, k := range AimedKinds {
		require.InDelta(t, ensembles/2, on[k], float64(ensembles)/6, "%s is on in about half the ensembles", k)
	}
}

func TestParseRefusesBadAimedSwitches(t *testing.T) {
	head := `{"servers":3,"ensemble":true,"clients":1,"tick_ms":100,"session_timeout_ms":400,"safety_ms":10,"liveness_ms":1,"aimed":`
	good := head + `[{"kind":"sync-write-crash","chance":0.5,"max":2,"max_ms":100,"moments":["current","mark"],"from_ms":5}]}`
	s, err := Parse([]byte(good))
	require.NoError(t, err)
	a, ok := s.AimedSwitch(AimSyncWriteCrash)
	require.True(t, ok)
	require.True(t, a.AimsAt(AfterMark))
	require.False(t, a.AimsAt(AfterAck))
	for name, bad := range map[string]string{
		"unknown kind":   `[{"kind":"meteor","chance":1,"max":1,"max_ms":1}]`,
		"twice":          `[{"kind":"duel","chance":1,"max":1,"max_ms":1},{"kind":"duel","chance":1,"max":1,"max_ms":1}]`,
		"zero chance":    `[{"kind":"duel","chance":0,"max":1,"max_ms":1}]`,
		"chance above 1": `[{"kind":"duel","chance":1.5,"max":1,"max_ms":1}]`,
		"no firing":      `[{"kind":"duel","chance":1,"max":0,"max_ms":1}]`,
		"no bound":       `[{"kind":"duel","chance":1,"max":1,"max_ms":0}]`,
		"other moment":   `[{"kind":"hold-fsync","chance":1,"max":1,"max_ms":1,"moments":["mark"]}]`,
		"negative from":  `[{"kind":"duel","chance":1,"max":1,"max_ms":1,"from_ms":-1}]`,
	} {
		_, err := Parse([]byte(head + bad + "}"))
		require.Error(t, err, name)
	}
}
