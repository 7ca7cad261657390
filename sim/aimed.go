package sim

// Aimed faults (faults.Aimed): faults that fire on an event of the run
// rather than at a time, so that they land in windows that last a few
// microseconds of a member's life (between a durable write and the send
// that depends on it, between two packets of one fan-out). Each kind is
// carried out by its own file, whose comment names the rule it targets:
//
//   - aimed_crash.go: sync-write-crash;
//   - aimed_hold.go: hold-fsync;
//   - aimed_duel.go: duel;
//   - aimed_late.go: late-followerinfo;
//   - aimed_fanout.go: fanout-crash.
//
// A kind is on when the schedule switches it on (swarm testing: a seed
// draws which kinds, and with what chance). Every event that can trigger
// an enabled kind draws from that kind's own stream ("aimed/KIND"), in the
// order the events happen, so a run is still a function of its schedule:
// a failing seed, or its shrunk schedule file, replays exactly. A firing
// is traced as `fault ... aimed:KIND: why` and counted in
// Stats.AimedFaults; nothing fires after the safety phase.

import (
	"math/rand/v2"

	"github.com/zabd/zabd/sim/faults"
)

// aimer holds the run's aimed switches; a nil switch is off.
type aimer struct {
	w                                   *world
	syncCrash, hold, duel, late, fanout *aimedSwitch
}

// aimedSwitch is one kind switched on, with its stream and how often it
// fired.
type aimedSwitch struct {
	faults.Aimed
	rng   *rand.Rand
	fired int
}

func newAimer(w *world) aimer {
	a := aimer{w: w}
	for _, k := range faults.AimedKinds {
		cfg, ok := w.sched.AimedSwitch(k)
		if !ok {
			continue
		}
		sw := &aimedSwitch{Aimed: cfg, rng: w.streams.Stream("aimed/" + string(k))}
		switch k {
		case faults.AimSyncWriteCrash:
			a.syncCrash = sw
		case faults.AimHoldFsync:
			a.hold = sw
		case faults.AimDuel:
			a.duel = sw
		case faults.AimLateInfo:
			a.late = sw
		case faults.AimFanoutCrash:
			a.fanout = sw
		}
	}
	return a
}

// fires reports whether an event at moment m (for a kind without
// moments: "") fires sw: sw is on and aims at m, sw is armed (FromMs) and
// the safety phase lasts, sw has fired fewer than Max times, and its
// stream draws a value below Chance. A firing is counted.
func (a *aimer) fires(sw *aimedSwitch, m faults.Moment) bool {
	if sw == nil || sw.fired >= sw.Max || !sw.AimsAt(m) {
		return false
	}
	if now := a.w.clock.Mono(); now < ms(sw.FromMs) || now >= ms(a.w.sched.SafetyMs) {
		return false
	}
	if sw.Chance < 1 && sw.rng.Float64() >= sw.Chance {
		return false
	}
	sw.fired++
	a.w.stats.AimedFaults++
	return true
}

// drawMs draws a duration in [lo, MaxMs] ms (lo if MaxMs is smaller).
func (sw *aimedSwitch) drawMs(lo int64) int64 {
	if sw.MaxMs <= lo {
		return lo
	}
	return lo + sw.rng.Int64N(sw.MaxMs-lo+1)
}

// nowMs is the fault time the trace prints for a firing.
func (w *world) nowMs() int64 { return w.clock.Mono().Milliseconds() }

// aimedCrash crashes s for sw, drawing whether the last sector tears and
// how long the server stays down. The process dies where the caller
// stands: what it sent before reaches its peers (the kernel flushes a dead
// process's sockets), nothing after it is sent, and what was not yet
// fsynced may be lost.
func (s *server) aimedCrash(sw *aimedSwitch, why string) {
	f := faults.Fault{AtMs: s.w.nowMs(), Kind: faults.Crash, Server: s.id, Torn: sw.rng.IntN(2) == 0, DownMs: sw.rng.Int64N(sw.MaxMs + 1)}
	s.w.tr.logf("fault %s aimed:%s: %s", f, sw.Kind, why)
	s.stop("aimed: "+why, f.Torn, true)
	s.scheduleRestart(ms(f.DownMs))
}
