package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/sim/faults"
)

func TestFewer(t *testing.T) {
	require.Empty(t, fewer(1))
	require.Equal(t, []int{1}, fewer(2))
	require.Equal(t, []int{1, 5, 7, 8, 9}, fewer(10))
}

func TestCandidatesAreSmallerAndValid(t *testing.T) {
	s := &faults.Schedule{Seed: 1, Servers: 1, Clients: 4, OpsPerClient: 10, SessionTimeoutMs: 1000, TickMs: 100,
		SafetyMs: 5000, LivenessMs: 5000, Faults: []faults.Fault{
			{AtMs: 10, Kind: faults.Drop, Client: 4},
			{AtMs: 20, Kind: faults.Crash, DownMs: 100},
			{AtMs: 30, Kind: faults.Pause, Client: 1, ForMs: 50},
		}}
	require.NoError(t, s.Validate())
	for _, c := range candidates(s) {
		require.NoError(t, c.Validate())
		smaller := len(c.Faults) < len(s.Faults) || c.Clients < s.Clients || c.OpsPerClient < s.OpsPerClient
		shorter := false
		for i := range c.Faults {
			if len(c.Faults) == len(s.Faults) && (c.Faults[i].DownMs < s.Faults[i].DownMs || c.Faults[i].ForMs < s.Faults[i].ForMs) {
				shorter = true
			}
		}
		require.True(t, smaller || shorter, "candidate %s is no reduction", c)
	}
	// Dropping clients drops the faults that name them.
	two := withClients(s, 2)
	require.Len(t, two.Faults, 2)
	require.NoError(t, two.Validate())
	require.Len(t, s.Faults, 3, "the original is untouched")
}
