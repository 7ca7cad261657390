package sim

import (
	"os"
	"runtime/debug"
)

// batchGCPercent is the collector's target for a process that runs
// simulations back to back.
const batchGCPercent = 400

// SetBatchGC sets the garbage collector's target for a process that runs
// many simulations (a sweep, zabsim), unless GOGC is set in the
// environment, and returns a func that restores the previous target. A run
// allocates quickly and keeps little alive (a few MB: trees, simulated
// disks, the history), so the default target (GOGC=100, with a 4 MB floor)
// collects several times per run and, on a loaded machine, keeps write
// barriers on for much of it; at 400% a collection comes about once a run,
// for tens of MB more heap. It changes no result: runs are deterministic
// whatever the collector does.
func SetBatchGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	previous := debug.SetGCPercent(batchGCPercent)
	return func() { debug.SetGCPercent(previous) }
}
