package faults

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// Limits bounds what Generate may choose.
type Limits struct {
	// Ensembles are the shapes a seed picks from: {voters, observers};
	// {1, 0} is a standalone server.
	Ensembles    [][2]int
	MaxClients   int
	MaxOps       int // per client
	MaxFaults    int
	SafetyMs     int64
	LivenessMs   int64
	AllowedKinds []Kind // nil: all
	// AimedKinds are the aimed kinds a seed may switch on (nil: none).
	AimedKinds []AimedKind
}

// DefaultLimits is what the seed sweep uses.
var DefaultLimits = Limits{
	Ensembles:  [][2]int{{1, 0}, {3, 0}, {3, 1}, {5, 0}, {5, 2}},
	MaxClients: 10, // the speed target's 3 servers and 10 clients
	MaxOps:     200,
	MaxFaults:  12,
	SafetyMs:   20_000,
	LivenessMs: 60_000,
	AimedKinds: AimedKinds,
}

// Generate draws a schedule from r within lim; seed is recorded in it and
// seeds the workload and disks. The same r state gives the same schedule.
//
// It is swarm testing: besides the shape of the ensemble, the seed switches
// each fault kind on or off (each with even odds), so that a run
// concentrates on a few kinds at the rates its fault count gives them,
// rather than spreading every kind thin over every run; an ensemble's seed
// switches each aimed kind on or off the same way, each with a chance of
// its own.
func Generate(seed int64, r *rand.Rand, lim Limits) *Schedule {
	shape := [2]int{1, 0}
	if len(lim.Ensembles) > 0 {
		shape = lim.Ensembles[r.IntN(len(lim.Ensembles))]
	}
	tick := []int64{50, 100, 200}[r.IntN(3)]
	s := &Schedule{
		Seed:             seed,
		Servers:          shape[0] + shape[1],
		Ensemble:         shape[0] > 1 || shape[1] > 0,
		Observers:        shape[1],
		Clients:          1 + r.IntN(lim.MaxClients),
		OpsPerClient:     1 + r.IntN(lim.MaxOps),
		TickMs:           tick,
		SessionTimeoutMs: tick * int64(4+r.IntN(17)), // within [2, 20] ticks after clamping, mostly
		SafetyMs:         lim.SafetyMs,
		LivenessMs:       lim.LivenessMs,
	}
	if s.Ensemble {
		// A learner cut off from its leader keeps answering its clients'
		// pings until syncLimit (2 ticks in the simulator) passes, and
		// its touches reach the leader a ping later: a session shorter
		// than that could be expired while its client saw no gap.
		s.SessionTimeoutMs = max(s.SessionTimeoutMs, 6*tick)
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
	kinds := lim.AllowedKinds
	if kinds == nil {
		kinds = Kinds
	}
	var on []Kind
	for _, k := range kinds {
		if r.IntN(2) == 0 && (s.Ensemble || !slices.Contains(NetworkKinds, k)) {
			on = append(on, k)
		}
	}
	s.Swarm = on
	n := 0
	if lim.MaxFaults > 0 && len(on) > 0 {
		n = r.IntN(lim.MaxFaults + 1)
	}
	for range n {
		f := Fault{AtMs: r.Int64N(lim.SafetyMs + 1), Kind: on[r.IntN(len(on))]}
		s.drawFault(&f, r)
		s.Faults = append(s.Faults, f)
	}
	slices.SortStableFunc(s.Faults, func(a, b Fault) int { return cmp.Compare(a.AtMs, b.AtMs) })
	if r.IntN(2) == 0 {
		// The leader reaps empty containers and expired TTL nodes every
		// 100 ms to 4 s (ZooKeeper's default is a minute: too slow to
		// meet the run's writes).
		s.ReapIntervalMs = 100 + r.Int64N(3901)
	}
	// Drawn last, so that the schedule's other choices stay what they were
	// before aimed faults existed.
	s.drawAimed(r, lim.AimedKinds)
	return s
}

// drawFault fills in the fault's parameters.
func (s *Schedule) drawFault(f *Fault, r *rand.Rand) {
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
		// Up to a whole session timeout: past half of it every client
		// times out on every fsync for the whole stall, each time leaving
		// writes of unknown outcome, tens of them on a few paths (the
		// run's witness lets the checkers decide them, docs/simulator.md).
		f.Delay = 1 + r.Int64N(s.SessionTimeoutMs)
	case Drop:
		f.Client = 1 + r.IntN(s.Clients)
	case Pause:
		f.Client = 1 + r.IntN(s.Clients)
		f.ForMs = 1 + r.Int64N(3*s.SessionTimeoutMs)
	case ClockJump:
		f.Server = r.IntN(s.Servers)
		f.JumpMs = r.Int64N(2*3_600_000) - 3_600_000
	case BreakConn, Clog, SlowLink:
		f.Server = r.IntN(s.Servers)
		f.Peer = (f.Server + 1 + r.IntN(s.Servers-1)) % s.Servers
		f.ForMs = 1 + r.Int64N(4*s.SessionTimeoutMs)
		if f.Kind == BreakConn {
			f.ForMs = 0
		}
		if f.Kind == SlowLink {
			f.Delay = 1 + r.Int64N(10*s.TickMs)
		}
	case Partition:
		f.Mode = PartitionModes[r.IntN(len(PartitionModes))]
		f.ForMs = 1 + r.Int64N(4*s.SessionTimeoutMs)
		perm := r.Perm(s.Servers)
		switch f.Mode {
		case Isolate:
			// One server, a minority, or a majority of the servers.
			f.Group = sortedInts(perm[:1+r.IntN(s.Servers-1)])
		case OneWay:
			f.Group = sortedInts(perm[:1])
		case Bridge:
			f.Server = perm[0]
			f.Group = sortedInts(perm[1 : 1+max(1, (s.Servers-1)/2)])
		}
	}
}

func sortedInts(v []int) []int {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}
