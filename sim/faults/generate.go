package faults

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// Limits bounds what Generate may choose.
type Limits struct {
	Servers      int // exactly this many servers (the ensemble of one, for now)
	MaxClients   int
	MaxOps       int // per client
	MaxFaults    int
	SafetyMs     int64
	LivenessMs   int64
	AllowedKinds []Kind // nil: all
}

// DefaultLimits is what the seed sweep uses.
var DefaultLimits = Limits{
	Servers:    1,
	MaxClients: 6, // more, with crashes and stalls, outgrow the checkers' search (docs/simulator.md)
	MaxOps:     200,
	MaxFaults:  12,
	SafetyMs:   20_000,
	LivenessMs: 60_000,
}

// Generate draws a schedule from r within lim; seed is recorded in it and
// seeds the workload and disks. The same r state gives the same schedule.
func Generate(seed int64, r *rand.Rand, lim Limits) *Schedule {
	kinds := lim.AllowedKinds
	if kinds == nil {
		kinds = Kinds
	}
	tick := []int64{50, 100, 200}[r.IntN(3)]
	s := &Schedule{
		Seed:             seed,
		Servers:          lim.Servers,
		Clients:          1 + r.IntN(lim.MaxClients),
		OpsPerClient:     1 + r.IntN(lim.MaxOps),
		TickMs:           tick,
		SessionTimeoutMs: tick * int64(4+r.IntN(17)), // within [2, 20] ticks after clamping, mostly
		SafetyMs:         lim.SafetyMs,
		LivenessMs:       lim.LivenessMs,
	}
	// Clients spread their work over the safety phase, so that faults land
	// while they work: on average one operation per SafetyMs/OpsPerClient.
	s.MaxThinkMs = max(1, 2*s.SafetyMs/int64(s.OpsPerClient))
	if r.IntN(2) == 0 {
		s.SnapCount = 2 + r.IntN(100) // snapshots and log rolls within the run
	}
	if s.SessionTimeoutMs > 20*tick {
		s.SessionTimeoutMs = 20 * tick
	}
	n := 0
	if lim.MaxFaults > 0 && len(kinds) > 0 {
		n = r.IntN(lim.MaxFaults + 1)
	}
	for range n {
		f := Fault{AtMs: r.Int64N(lim.SafetyMs + 1), Kind: kinds[r.IntN(len(kinds))]}
		switch f.Kind {
		case Crash:
			f.Server = r.IntN(s.Servers)
			f.Torn = r.IntN(2) == 0
			f.DownMs = r.Int64N(3 * s.SessionTimeoutMs)
		case BitFlip, FailFsync:
			f.Server = r.IntN(s.Servers)
		case NoSpace:
			f.Server = r.IntN(s.Servers)
			f.ForMs = 1 + r.Int64N(2000)
		case SlowFsync:
			f.Server = r.IntN(s.Servers)
			f.ForMs = 1 + r.Int64N(5000)
			// A delay past half the session timeout makes every client time
			// out on every fsync for the whole stall, each time leaving
			// writes of unknown outcome: tens of them on a few paths, more
			// than the checkers can decide (docs/simulator.md).
			f.Delay = 1 + r.Int64N(min(500, s.SessionTimeoutMs/2))
		case Drop:
			f.Client = 1 + r.IntN(s.Clients)
		case Pause:
			f.Client = 1 + r.IntN(s.Clients)
			f.ForMs = 1 + r.Int64N(3*s.SessionTimeoutMs)
		case ClockJump:
			f.JumpMs = r.Int64N(2*3_600_000) - 3_600_000
		}
		s.Faults = append(s.Faults, f)
	}
	slices.SortStableFunc(s.Faults, func(a, b Fault) int { return cmp.Compare(a.AtMs, b.AtMs) })
	return s
}
