package sim

import (
	"fmt"
	"strings"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/sim/randstream"
)

// ScheduleForSeed is the schedule a seed stands for: drawn from the seed's
// own "schedule" stream within faults.DefaultLimits.
func ScheduleForSeed(seed int64) *faults.Schedule {
	return faults.Generate(seed, randstream.New(seed).Stream("schedule"), faults.DefaultLimits)
}

// Report explains a failed run: the failures, the schedule, and how to
// replay it; with shrunk set, also the smallest failing schedule found.
func Report(seed int64, res *Result, shrunk *ShrinkResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d failed:\n", seed)
	for _, f := range res.Failures {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	b.WriteString(res.Schedule.String())
	fmt.Fprintf(&b, "replay: go run ./cmd/zabsim -seed %d -v\n", seed)
	if shrunk != nil {
		fmt.Fprintf(&b, "shrunk in %d runs to (save as FILE, replay with go run ./cmd/zabsim -schedule FILE -v):\n%s",
			shrunk.Runs, shrunk.Schedule.MarshalIndented())
		fmt.Fprintf(&b, "which fails with: %s\n", shrunk.Result.Failures[0])
	}
	return b.String()
}
