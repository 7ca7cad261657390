package sim

import (
	"slices"
	"time"

	"github.com/zabd/zabd/sim/faults"
)

// ShrinkResult is the smallest failing schedule the shrinker found.
type ShrinkResult struct {
	Schedule *faults.Schedule
	Result   *Result // its run
	Runs     int     // simulations the shrinker ran
	Stopped  bool    // a budget ran out before no cut was left to try
}

// ShrinkBudget bounds the shrinker: at most Runs simulations and, if Time
// is set, no new simulation after Time has passed (a run whose checkers
// must weigh many writes of unknown outcome can take seconds).
type ShrinkBudget struct {
	Runs int
	Time time.Duration
}

// Shrink cuts a failing schedule down — fewer faults, fewer clients, fewer
// operations, shorter fault durations — keeping each cut that still fails
// with a failure of the same kind as the original's first one, until no
// single cut does or the budget is spent. The result replays with Run (and
// `zabsim -schedule FILE`).
//
// With bugs switched on in opts, a cut must also pass without them, so the
// shrunk schedule is one that fails because of the bug and nothing else.
func Shrink(failing *Result, opts Options, budget ShrinkBudget) ShrinkResult {
	opts.Trace = nil
	best := ShrinkResult{Schedule: failing.Schedule, Result: failing}
	start := time.Now()
	spent := func() bool {
		return best.Runs >= budget.Runs || (budget.Time > 0 && time.Since(start) >= budget.Time)
	}
	kind := failing.Failures[0].Kind
	clean := opts
	clean.Bugs = Bugs{}
	try := func(s *faults.Schedule) bool {
		if spent() || s.Validate() != nil {
			return false
		}
		best.Runs++
		r := Run(s, opts)
		if !r.Failed() || r.Failures[0].Kind != kind {
			return false
		}
		if opts.Bugs != (Bugs{}) {
			best.Runs++
			if Run(s, clean).Failed() {
				return false
			}
		}
		best.Schedule, best.Result = s, r
		return true
	}
	for progress := true; progress && !spent(); {
		progress = false
		for _, cand := range candidates(best.Schedule) {
			if try(cand) {
				progress = true
				break // restart from the smaller schedule: its candidates differ
			}
		}
	}
	best.Stopped = spent()
	return best
}

// candidates lists one-step reductions of s, the boldest first so that big
// cuts are tried before small ones.
func candidates(s *faults.Schedule) []*faults.Schedule {
	// Fewer servers first: every later run is cheaper for it.
	out := fewerServers(s)
	if len(s.Faults) > 1 {
		c := s.Clone()
		c.Faults = c.Faults[len(c.Faults)/2:]
		out = append(out, c)
		c = s.Clone()
		c.Faults = c.Faults[:len(c.Faults)/2]
		out = append(out, c)
	}
	for i := len(s.Faults) - 1; i >= 0; i-- {
		c := s.Clone()
		c.Faults = slices.Delete(c.Faults, i, i+1)
		out = append(out, c)
	}
	for _, n := range fewer(s.Clients) {
		out = append(out, withClients(s, n))
	}
	for _, n := range fewer(s.OpsPerClient) {
		c := s.Clone()
		c.OpsPerClient = n
		out = append(out, c)
	}
	for i, f := range s.Faults {
		shorter := f
		shorter.DownMs /= 2
		shorter.ForMs /= 2
		shorter.Delay /= 2
		if shorter.DownMs != f.DownMs || shorter.ForMs != f.ForMs || shorter.Delay != f.Delay {
			c := s.Clone()
			c.Faults[i] = shorter
			out = append(out, c)
		}
	}
	// A partition that cuts off fewer servers.
	for i, f := range s.Faults {
		if f.Kind != faults.Partition || len(f.Group) < 2 {
			continue
		}
		for j := range f.Group {
			c := s.Clone()
			c.Faults[i].Group = slices.Delete(c.Faults[i].Group, j, j+1)
			out = append(out, c)
		}
	}
	return out
}

// fewerServers proposes smaller ensembles, boldest first: a standalone
// server (from three voters and no observers), three voters instead of
// five, no observers; and a majority quorum in place of groups. The
// servers kept keep their place among the voters and observers (and so
// their ids, but for observers, which move down with the voters removed);
// faults that name a removed server go, and so do network faults when the
// ensemble becomes a standalone server. Groups go with any voter removed.
func fewerServers(s *faults.Schedule) []*faults.Schedule {
	if !s.Ensemble {
		return nil
	}
	var out []*faults.Schedule
	voters := s.Voters()
	if voters == 3 && s.Observers == 0 {
		out = append(out, withServers(s, 1, 0))
	}
	if voters == 5 {
		out = append(out, withServers(s, 3, 0))
		if s.Observers > 0 {
			out = append(out, withServers(s, 3, s.Observers))
		}
	}
	if s.Observers > 0 {
		out = append(out, withServers(s, voters, 0))
	}
	if s.Groups != nil {
		c := s.Clone()
		c.Groups, c.Weights = nil, nil
		out = append(out, c)
	}
	return out
}

// withServers keeps the first voters voters and the first observers
// observers of s, renumbering the observers to follow the voters.
func withServers(s *faults.Schedule, voters, observers int) *faults.Schedule {
	c := s.Clone()
	c.Servers, c.Observers, c.Ensemble = voters+observers, observers, voters+observers > 1
	if voters != s.Voters() {
		c.Groups, c.Weights = nil, nil
	}
	// newIndex maps a server's index in s to its index in c, or -1.
	newIndex := func(i int) int {
		switch {
		case i < voters:
			return i
		case i >= s.Voters() && i-s.Voters() < observers:
			return voters + i - s.Voters()
		}
		return -1
	}
	c.Faults = slices.DeleteFunc(c.Faults, func(f faults.Fault) bool {
		return !c.Ensemble && slices.Contains(faults.NetworkKinds, f.Kind)
	})
	kept := c.Faults[:0]
	for _, f := range c.Faults {
		f.Group = slices.DeleteFunc(f.Group, func(g int) bool { return newIndex(g) < 0 })
		for i, g := range f.Group {
			f.Group[i] = newIndex(g)
		}
		server, peer := newIndex(f.Server), newIndex(f.Peer)
		switch {
		case f.Kind == faults.Drop || f.Kind == faults.Pause:
		case server < 0 || (peer < 0 && isLinkFault(f.Kind)):
			continue
		case f.Kind == faults.Partition && f.Mode != faults.IsoLeader && (len(f.Group) == 0 || len(f.Group) == c.Servers):
			continue // it would cut off nobody, or everybody from nobody
		}
		f.Server = max(server, 0)
		if isLinkFault(f.Kind) {
			f.Peer = peer
		}
		kept = append(kept, f)
	}
	c.Faults = kept
	return c
}

// fewer proposes smaller counts than n, boldest first: 1, a half, three
// quarters, seven eighths, one less.
func fewer(n int) []int {
	var out []int
	for _, m := range []int{1, n / 2, n * 3 / 4, n * 7 / 8, n - 1} {
		if m >= 1 && m < n && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// withClients keeps the first n clients and the faults that concern them.
func withClients(s *faults.Schedule, n int) *faults.Schedule {
	c := s.Clone()
	c.Clients = n
	c.Faults = slices.DeleteFunc(c.Faults, func(f faults.Fault) bool { return f.Client > n })
	return c
}

// isLinkFault reports whether a fault of kind k acts on the link between
// Server and Peer.
func isLinkFault(k faults.Kind) bool {
	return k == faults.BreakConn || k == faults.Clog || k == faults.SlowLink
}
