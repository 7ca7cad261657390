package sim

import (
	"fmt"
	"strings"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/sim/randstream"
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
	return s
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
