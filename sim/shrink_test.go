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

func TestWithServersRenumbersAndDropsFaults(t *testing.T) {
	s := &faults.Schedule{Seed: 1, Servers: 7, Ensemble: true, Observers: 2, Clients: 2, OpsPerClient: 10,
		SessionTimeoutMs: 1000, TickMs: 100, SafetyMs: 5000, LivenessMs: 5000, Faults: []faults.Fault{
			{AtMs: 1, Kind: faults.Crash, Server: 4, DownMs: 10},                                  // a voter that goes
			{AtMs: 2, Kind: faults.Crash, Server: 6, DownMs: 10},                                  // the second observer
			{AtMs: 3, Kind: faults.Clog, Server: 5, Peer: 1, ForMs: 10},                           // first observer - voter 2
			{AtMs: 4, Kind: faults.SlowLink, Server: 0, Peer: 3, ForMs: 10, Delay: 5},             // to a voter that goes
			{AtMs: 5, Kind: faults.Partition, Mode: faults.Isolate, Group: []int{2, 3}, ForMs: 9}, // loses 3
			{AtMs: 6, Kind: faults.Partition, Mode: faults.Bridge, Server: 4, Group: []int{0}, ForMs: 9},
			{AtMs: 7, Kind: faults.Partition, Mode: faults.IsoLeader, ForMs: 9},
			{AtMs: 8, Kind: faults.Drop, Client: 2},
		}}
	require.NoError(t, s.Validate())

	three := withServers(s, 3, 1)
	require.NoError(t, three.Validate())
	require.Equal(t, 4, three.Servers)
	require.Equal(t, 1, three.Observers)
	require.Equal(t, []faults.Fault{
		{AtMs: 3, Kind: faults.Clog, Server: 3, Peer: 1, ForMs: 10}, // the observer is now the fourth server
		{AtMs: 5, Kind: faults.Partition, Mode: faults.Isolate, Group: []int{2}, ForMs: 9},
		{AtMs: 7, Kind: faults.Partition, Mode: faults.IsoLeader, ForMs: 9},
		{AtMs: 8, Kind: faults.Drop, Client: 2},
	}, three.Faults)

	alone := withServers(withServers(s, 3, 0), 1, 0)
	require.NoError(t, alone.Validate())
	require.False(t, alone.Ensemble)
	require.Equal(t, []faults.Fault{{AtMs: 8, Kind: faults.Drop, Client: 2}}, alone.Faults)
	require.Len(t, s.Faults, 8, "the original is untouched")
	require.Equal(t, []int{2, 3}, s.Faults[4].Group)

	var shapes [][2]int
	for _, c := range fewerServers(s) {
		shapes = append(shapes, [2]int{c.Voters(), c.Observers})
	}
	require.Equal(t, [][2]int{{3, 0}, {3, 2}, {5, 0}}, shapes, "boldest first")
}

// TestShrinkFewerServers shrinks a five-voter run that fails because of a
// broken core (ZOOKEEPER-1154's DIFF where a TRUNC is due) to a
// three-voter one that still fails with it and passes without it.
func TestShrinkFewerServers(t *testing.T) {
	bugs, err := ParseBugs("diff-instead-of-trunc")
	require.NoError(t, err)
	opts := Options{Bugs: bugs, SkipCheckers: true}
	sched := ScheduleForSeed(50)
	require.Equal(t, 5, sched.Voters(), "seed 50 is a five-voter ensemble")
	res := Run(sched, opts)
	require.True(t, res.Failed(), "seed 50 catches the bug")
	shrunk := Shrink(res, opts, ShrinkBudget{Runs: 4})
	require.Equal(t, 3, shrunk.Schedule.Servers, "shrunk to three servers")
	replay := Run(shrunk.Schedule, opts)
	require.True(t, replay.Failed())
	require.Equal(t, res.Failures[0].Kind, replay.Failures[0].Kind)
	require.False(t, Run(shrunk.Schedule, Options{SkipCheckers: true}).Failed(), "without the bug it passes")
}
