package sim

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zabd/zabd/zab/tlatrace"
)

// sweepSeeds is how many seeds TestSeedSweep runs: 2,385 of the first
// 3,000 are ensembles of 3 to 7 servers, and they take about 41 s of CPU
// (20 s on two idle cores, minutes on a shared one); ZABSIM_SEEDS
// overrides it for longer hunts
// (ZABSIM_SEEDS=100000 go test ./sim -run Sweep -timeout 0), -short runs a
// tenth.
const sweepSeeds = 3000

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

// sweepResult is what one seed of a sweep found.
type sweepResult struct {
	seed     int64
	res      *Result
	ensemble bool
}

// sweep runs seeds first..first+n-1 on every core (each run stays on one
// goroutine and is deterministic) and calls report for each, in seed
// order; it stops at the first failure.
func sweep(first int64, n int, opts Options, report func(sweepResult) bool) {
	workers := runtime.GOMAXPROCS(0)
	results := make([]chan sweepResult, n)
	for i := range results {
		results[i] = make(chan sweepResult, 1)
	}
	var next int64
	var mu sync.Mutex
	stop := false
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				done := stop
				mu.Unlock()
				if done || i >= int64(n) {
					return
				}
				s := ScheduleForSeed(first + i)
				results[i] <- sweepResult{seed: first + i, res: Run(s, opts), ensemble: s.Ensemble}
			}
		}()
	}
	for i := range results {
		r, ok := <-results[i]
		if !ok || !report(r) {
			mu.Lock()
			stop = true
			mu.Unlock()
			break
		}
	}
	wg.Wait()
}

// TestSeedSweep runs seeds 1..N, each a whole simulation with an ensemble
// shape and a schedule of faults drawn from the seed; a failure is shrunk
// and reported with the commands that replay it. The summary says how
// many ensemble runs there were and how fast the simulator went.
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
	defer SetBatchGC()()
	meter := StartMeter()
	var ensembles int
	var simulated time.Duration
	var failed *sweepResult
	var allowed tlatrace.Counts
	sweep(first, n, Options{}, func(r sweepResult) bool {
		simulated += r.res.Stats.SimTime
		allowed.Add(r.res.Stats.Allowances)
		if r.ensemble {
			ensembles++
		}
		if r.res.Failed() {
			failed = &r
			return false
		}
		return true
	})
	if failed != nil {
		// ZABSIM_SHRINK=0 reports the failing seed without shrinking it:
		// the mutation runner (mutants_test.go) only asks whether the sweep
		// fails, and shrinking spends up to two minutes per failure.
		var shrunk *ShrinkResult
		if os.Getenv("ZABSIM_SHRINK") != "0" {
			s := Shrink(failed.res, Options{}, ShrinkBudget{Runs: 200, Time: 2 * time.Minute})
			shrunk = &s
		}
		t.Fatalf("seed %d: %s", failed.seed, Report(fmt.Sprintf("-seed %d", failed.seed), failed.res, Options{}, shrunk))
	}
	wall, _ := meter.Elapsed()
	t.Logf("%d seeds (%d ensembles) passed in %v, %s simulated: %s",
		n, ensembles, wall.Round(time.Millisecond), simulated.Round(time.Second), meter.Speed(simulated))
	t.Logf("trace conformance allowances taken: %s", FormatAllowances(allowed))
}
