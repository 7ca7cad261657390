package sim

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/sim/randstream"
	"github.com/zabd/zabd/sim/simclient"
)

// TestSeedChoicesOnTheirOwnStreams checks what ScheduleForSeed adds to the
// generator's schedule: a seed whose run takes snapshots draws a small
// fuzzy-snapshot step, some seeds draw intruders, a bound on peer queues,
// batching event loops, ZooKeeper's synchronization rules or recipe
// clients, and none of these shifts any other choice of the
// schedule as the "schedule" stream alone makes it; the schedule's JSON
// carries them all, so that -schedule replays them.
func TestSeedChoicesOnTheirOwnStreams(t *testing.T) {
	withSnapshots, withIntruders, withLoops, withZooKeeperSync, withRecipes, withGroups := 0, 0, 0, 0, 0, 0
	for seed := int64(1); seed <= 60; seed++ {
		s := ScheduleForSeed(seed)
		back, err := faults.Parse(s.MarshalIndented())
		require.NoError(t, err)
		require.Equal(t, s, back, "seed %d: the JSON carries the whole schedule", seed)

		plain := faults.Generate(seed, randstream.New(seed).Stream("schedule"), faults.DefaultLimits)
		rest := s.Clone()
		rest.Faults = slices.DeleteFunc(rest.Faults, func(f faults.Fault) bool { return f.Kind == faults.Intrude })
		if len(rest.Faults) < len(s.Faults) {
			withIntruders++
			require.Equal(t, faults.Intrude, rest.Swarm[len(rest.Swarm)-1], "seed %d: the header names the intruders", seed)
			rest.Swarm = rest.Swarm[:len(rest.Swarm)-1]
		}
		if s.SnapCount == 0 {
			require.Zero(t, s.SnapshotStepNodes, "seed %d: no snapshots, no step", seed)
		} else {
			withSnapshots++
			require.GreaterOrEqual(t, s.SnapshotStepNodes, 1, "seed %d", seed)
			require.LessOrEqual(t, s.SnapshotStepNodes, maxSnapshotStepNodes, "seed %d", seed)
			require.Contains(t, s.String(), "fuzzy snapshots:", "seed %d: the header prints the step", seed)
			plain.SnapshotStepNodes = s.SnapshotStepNodes
		}
		if s.PeerQueueBytes != 0 {
			require.True(t, s.Ensemble, "seed %d: only ensembles bound their peer queues", seed)
			require.GreaterOrEqual(t, s.PeerQueueBytes, 4096, "seed %d", seed)
			require.LessOrEqual(t, s.PeerQueueBytes, 256<<10, "seed %d", seed)
			plain.PeerQueueBytes = s.PeerQueueBytes
		}
		if s.LoopDelayUs != 0 {
			withLoops++
			require.GreaterOrEqual(t, s.LoopDelayUs, int64(10), "seed %d", seed)
			require.LessOrEqual(t, s.LoopDelayUs, int64(1000), "seed %d", seed)
			require.Contains(t, s.String(), "event loops:", "seed %d: the header prints the loop delay", seed)
			plain.LoopDelayUs = s.LoopDelayUs
		}
		if s.ZooKeeperSync {
			withZooKeeperSync++
			require.True(t, s.Ensemble, "seed %d: only ensembles synchronize", seed)
			require.Contains(t, s.String(), "ZooKeeper's rules", "seed %d: the header says so", seed)
			plain.ZooKeeperSync = true
		}
		if s.Recipe != "" {
			withRecipes++
			require.Contains(t, []string{simclient.RecipeLock, simclient.RecipeElection, simclient.RecipeQueue, simclient.RecipeBarrier}, s.Recipe, "seed %d", seed)
			require.GreaterOrEqual(t, s.RecipeClients, 2, "seed %d", seed)
			require.LessOrEqual(t, s.RecipeClients, s.Clients, "seed %d", seed)
			require.Contains(t, s.String(), "recipe:", "seed %d: the header says so", seed)
			plain.Recipe, plain.RecipeClients = s.Recipe, s.RecipeClients
		}
		if s.Groups != nil {
			withGroups++
			require.GreaterOrEqual(t, s.Voters(), 3, "seed %d: groups of three voters or more", seed)
			_, err := s.Quorum()
			require.NoError(t, err, "seed %d", seed)
			require.Contains(t, s.String(), "hierarchical quorum:", "seed %d: the header says so", seed)
			plain.Groups, plain.Weights = s.Groups, s.Weights
		}
		if len(plain.Faults) == 0 {
			plain.Faults = rest.Faults // nil and empty alike
		}
		require.Equal(t, plain, rest, "seed %d: a choice of its own shifted another", seed)
	}
	require.Greater(t, withSnapshots, 10)
	require.Greater(t, withIntruders, 5)
	require.Greater(t, withLoops, 15)
	require.Greater(t, withZooKeeperSync, 3)
	require.Greater(t, withRecipes, 5)
	require.Greater(t, withGroups, 3)
}

// TestGroupsAreTheEnsemblesQuorum: a schedule's groups are the quorum its
// members and checkers use. Seed 206 draws groups {1}, {2,3} with 1 and 2
// weighing 0, so voter 3 is a quorum by itself: it proposes its first
// epoch to itself alone, where a majority would need a second voter.
func TestGroupsAreTheEnsemblesQuorum(t *testing.T) {
	sched := ScheduleForSeed(206)
	require.Equal(t, [][]int64{{1}, {2, 3}}, sched.Groups)
	require.Equal(t, map[int64]int64{1: 0, 2: 0}, sched.Weights)
	var trace bytes.Buffer
	res := Run(sched, Options{Trace: &trace})
	require.False(t, res.Failed(), "%v", res.Failures)
	require.True(t, strings.Contains(trace.String(), "server 3: leader: proposing epoch 1 to [3]\n"),
		"server 3 did not propose its first epoch to itself alone (replay: go run ./cmd/zabsim -seed 206 -v)")
}
