package zab

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStagesFollowZabPhases: each role's stages are in the order of Zab's
// phases — the code compares stages with < and >=, so a stage must never
// belong to an earlier phase than the one before it — and each has a name
// of its own.
func TestStagesFollowZabPhases(t *testing.T) {
	type stage interface {
		fmt.Stringer
		phase() Phase
	}
	check := func(t *testing.T, first Phase, stages []stage) {
		names := map[string]bool{}
		prev := first
		for _, s := range stages {
			require.GreaterOrEqual(t, s.phase(), prev, "stage %s goes back to phase %s", s, s.phase())
			require.False(t, names[s.String()], "two stages are named %q", s)
			names[s.String()] = true
			prev = s.phase()
		}
		require.Equal(t, PhaseBroadcast, prev, "the last stage is not broadcast")
	}
	t.Run("leader", func(t *testing.T) {
		check(t, PhaseDiscovery, []stage{leaderGathering, leaderEpochProposed, leaderSynchronizing, leaderBroadcasting})
	})
	t.Run("learner", func(t *testing.T) {
		check(t, PhaseDiscovery, []stage{learnerDiscovery, learnerEpochAccepted, learnerSyncing,
			learnerNewLeaderSeen, learnerNewLeaderAcked, learnerUpToDate})
	})
	t.Run("learner handler", func(t *testing.T) {
		check(t, PhaseDiscovery, []stage{handlerAwaitingAckEpoch, handlerEpochAcked, handlerSyncing,
			handlerNewLeaderSent, handlerNewLeaderAcked, handlerUpToDate})
	})
}
