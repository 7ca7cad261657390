package sim

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// sweepSeeds is how many seeds TestSeedSweep runs, sized for about three
// minutes on a 2-core machine; ZABSIM_SEEDS overrides it for longer hunts
// (ZABSIM_SEEDS=100000 go test ./sim -run Sweep -timeout 0), -short runs a
// tenth.
const sweepSeeds = 12000

func seedCount(t *testing.T) int {
	if v := os.Getenv("ZABSIM_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ZABSIM_SEEDS=%q: want a positive count", v)
		}
		return n
	}
	if testing.Short() {
		return sweepSeeds / 10
	}
	return sweepSeeds
}

// TestSeedSweep runs seeds 1..N, each a whole simulation with a schedule of
// faults drawn from the seed; a failure is shrunk and reported with the
// commands that replay it.
func TestSeedSweep(t *testing.T) {
	first := int64(1)
	if v := os.Getenv("ZABSIM_FIRST_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("ZABSIM_FIRST_SEED=%q: %v", v, err)
		}
		first = n
	}
	n := seedCount(t)
	for seed := first; seed < first+int64(n); seed++ {
		res := Run(ScheduleForSeed(seed), Options{})
		if res.Failed() {
			shrunk := Shrink(res, Options{}, ShrinkBudget{Runs: 200, Time: 2 * time.Minute})
			t.Fatalf("seed %d: %s", seed, Report(fmt.Sprintf("-seed %d", seed), res, Options{}, &shrunk))
		}
	}
}
