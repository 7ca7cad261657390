package sim

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/sim/randstream"
	"github.com/zabd/zabd/sim/simclient"
)

// ScheduleForSeed is the schedule a seed stands for: drawn from the seed's
// own "schedule" stream within faults.DefaultLimits. When the run takes
// snapshots, the size of a fuzzy snapshot's step comes from a stream of its
// own ("snapshot-step"), so that drawing it shifts no other choice.
func ScheduleForSeed(seed int64) *faults.Schedule {
	streams := randstream.New(seed)
	s := faults.Generate(seed, streams.Stream("schedule"), faults.DefaultLimits)
	if s.SnapCount > 0 {
		s.SnapshotStepNodes = 1 + streams.Stream("snapshot-step").IntN(maxSnapshotStepNodes)
	}
	addIntruders(s, streams.Stream("intruders"))
	boundPeerQueues(s, streams.Stream("peer-queue"))
	slowLoops(s, streams.Stream("loop-delay"))
	syncAsZooKeeper(s, streams.Stream("zookeeper-sync"))
	runRecipes(s, streams.Stream("recipes"))
	groupVoters(s, streams.Stream("quorum-groups"))
	return s
}

// groupVoters gives one ensemble seed in four with three voters or more
// ZooKeeper's hierarchical quorum (zoo.cfg group.N, weight.N): the
// voters split into two or three groups, and one voter in five weighing
// 0 (it never leads and adds nothing to a quorum) or 2, so that quorums
// are not a majority's: a single voter, or a minority, may be one. From
// its own stream, so that every other choice stays as it was.
func groupVoters(s *faults.Schedule, r *rand.Rand) {
	voters := s.Voters()
	if !s.Ensemble || voters < 3 || r.IntN(4) != 0 {
		return
	}
	groups := make([][]int64, 2+r.IntN(2))
	for i, sid := range r.Perm(voters) {
		g := i // the first voters drawn open one group each
		if g >= len(groups) {
			g = r.IntN(len(groups))
		}
		groups[g] = append(groups[g], int64(sid+1))
	}
	for _, g := range groups {
		slices.Sort(g)
	}
	slices.SortFunc(groups, func(a, b []int64) int { return cmp.Compare(a[0], b[0]) })
	weights := map[int64]int64{}
	for sid := int64(1); sid <= int64(voters); sid++ {
		if r.IntN(5) == 0 {
			weights[sid] = 2 * r.Int64N(2)
		}
	}
	s.Groups = groups
	if len(weights) > 0 {
		s.Weights = weights
	}
	if _, err := s.Quorum(); err != nil {
		s.Weights = nil // every group weighed 0: the plain weights of 1
	}
}

// runRecipes has the clients of one seed in four with at least two of them
// run ZooKeeper's lock, leader election, queue or double barrier, half of
// them or more, so that
// the recipe checkers judge the recipes under the seed's faults. From its
// own stream, so that every other choice stays as it was.
func runRecipes(s *faults.Schedule, r *rand.Rand) {
	if s.Clients < 2 || r.IntN(4) != 0 {
		return
	}
	s.Recipe = []string{simclient.RecipeLock, simclient.RecipeElection, simclient.RecipeQueue, simclient.RecipeBarrier}[r.IntN(4)]
	s.RecipeClients = max(2, s.Clients/2+r.IntN(s.Clients/2+1))
}

// syncAsZooKeeper has one ensemble seed in four synchronize learners by
// ZooKeeper 3.8's rules, as a zabd member of a mixed ensemble does
// (Schedule.ZooKeeperSync), so that path of the leader runs under the
// same faults as zabd's own. From its own stream, so that every other
// choice stays as it was.
func syncAsZooKeeper(s *faults.Schedule, r *rand.Rand) {
	s.ZooKeeperSync = s.Ensemble && r.IntN(4) == 0
}

// slowLoops gives one seed in two event loops that come back for the
// Peer's Ready a while after an event (Schedule.LoopDelayUs), log-uniform
// from 10 µs to 1 ms, so that Readies carry the effects of several events
// as zabd's do (a TRUNC and the proposals after it, a quorum's ACKs).
func slowLoops(s *faults.Schedule, r *rand.Rand) {
	if r.IntN(2) != 0 {
		return
	}
	s.LoopDelayUs = int64(10 * math.Pow(100, r.Float64()))
}

// boundPeerQueues gives one ensemble seed in four a small bound on what
// waits to be sent to a peer (Schedule.PeerQueueBytes), log-uniform from
// 4 KiB to 256 KiB: a link that stalls then fills its sender's queue, and
// the learner loses its connection and synchronizes again, as a zabd
// member configured so does. From its own stream, so that every other
// choice stays as it was.
func boundPeerQueues(s *faults.Schedule, r *rand.Rand) {
	if !s.Ensemble || r.IntN(4) != 0 {
		return
	}
	s.PeerQueueBytes = int(4096 * math.Pow(64, r.Float64()))
}

// addIntruders switches adversarial clients on in one seed in four (swarm
// style), with one to three intrusions on random clients' sessions: a wrong,
// an empty or the stolen password, a thief holding the session for up to
// two session timeouts. They come from their own stream, after the
// generator's faults, so that every other choice of the schedule stays as
// the "schedule" stream makes it.
func addIntruders(s *faults.Schedule, r *rand.Rand) {
	if s.Clients == 0 || r.IntN(4) != 0 {
		return
	}
	for range 1 + r.IntN(3) {
		f := faults.Fault{AtMs: r.Int64N(s.SafetyMs + 1), Kind: faults.Intrude, Client: 1 + r.IntN(s.Clients),
			Passwd: faults.Passwds[r.IntN(len(faults.Passwds))]}
		if f.Passwd == faults.StolenPasswd {
			f.ForMs = 1 + r.Int64N(2*s.SessionTimeoutMs)
		}
		s.Faults = append(s.Faults, f)
	}
	slices.SortStableFunc(s.Faults, func(a, b faults.Fault) int { return cmp.Compare(a.AtMs, b.AtMs) })
	s.Swarm = append(s.Swarm, faults.Intrude)
}

// maxSnapshotStepNodes bounds the drawn step of a fuzzy snapshot: the
// workload's trees hold about ten znodes, so a snapshot takes from two to
// ten steps and the txns applied meanwhile land in the middle of it.
const maxSnapshotStepNodes = 8

// Report explains a failed run: its failures, its schedule, and the command
// that replays it — replay is the zabsim argument naming the run ("-seed 42"
// or "-schedule FILE"), and the bugs in opts are named too; with shrunk set,
// also the smallest failing schedule found, as JSON for -schedule.
func Report(replay string, res *Result, opts Options, shrunk *ShrinkResult) string {
	var b strings.Builder
	b.WriteString("FAILED\n")
	for _, f := range res.Failures {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	b.WriteString(res.Schedule.String())
	bugs := ""
	if names := FormatBugs(opts.Bugs); names != "" {
		bugs = " -bugs " + names
	}
	fmt.Fprintf(&b, "replay: go run ./cmd/zabsim %s%s -v\n", replay, bugs)
	if shrunk != nil {
		if shrunk.Stopped {
			b.WriteString("shrinking stopped at its budget; a smaller schedule may exist\n")
		}
		fmt.Fprintf(&b, "shrunk in %d runs; it fails with: %s\nsave as FILE and replay with go run ./cmd/zabsim -schedule FILE%s -v:\n%s",
			shrunk.Runs, shrunk.Result.Failures[0], bugs, shrunk.Schedule.MarshalIndented())
	}
	return b.String()
}
