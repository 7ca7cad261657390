package faults

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// AimedKind names an aimed fault: one that fires on an event of a run (a
// durable write of discovery or synchronization, a packet of the
// handshake) rather than at a time, so that it lands inside windows a few
// microseconds of a member's life wide. The package comment lists each
// kind with the rule it targets; the simulator's sim/aimed_*.go carry them
// out.
type AimedKind string

// The aimed fault kinds.
const (
	// AimSyncWriteCrash crashes a member right after a durable write of
	// discovery or synchronization, before the sends that follow it, or
	// right after it sent ACKEPOCH or its NEWLEADER ACK.
	AimSyncWriteCrash AimedKind = "sync-write-crash"
	// AimHoldFsync holds a learner's fsyncs (and the write of a snapshot a
	// SNAP installed) when NEWLEADER, UPTODATE or a SNAP arrives.
	AimHoldFsync AimedKind = "hold-fsync"
	// AimDuel cuts a member that starts to lead off from part of the
	// ensemble, one member seeing both sides, until the cut heals during
	// discovery: two would-be leaders at once, sharing that member.
	AimDuel AimedKind = "duel"
	// AimLateInfo delays a learner's FOLLOWERINFO (or OBSERVERINFO), and
	// what follows it on its connection, past a new election.
	AimLateInfo AimedKind = "late-followerinfo"
	// AimFanoutCrash crashes a leader in the middle of a fan-out: before
	// it sends a COMMIT (PROPOSAL, INFORM, NEWLEADER, UPTODATE, LEADERINFO)
	// to one learner, after the same packet to those before it.
	AimFanoutCrash AimedKind = "fanout-crash"
)

// AimedKinds lists every aimed kind in a fixed order.
var AimedKinds = []AimedKind{AimSyncWriteCrash, AimHoldFsync, AimDuel, AimLateInfo, AimFanoutCrash}

// Moment names one kind of event an aimed kind can fire on (see the
// package comment).
type Moment string

// The moments of sync-write-crash.
const (
	AfterLead     Moment = "lead"     // a leader's epoch files written
	AfterAccepted Moment = "accepted" // a learner's epoch files written, currentEpoch unchanged
	AfterCurrent  Moment = "current"  // a learner's epoch files written with a new currentEpoch
	AfterMark     Moment = "mark"     // the updatingEpoch mark written
	AfterFsync    Moment = "fsync"    // an fsync done in discovery or synchronization
	AfterSnapshot Moment = "snapshot" // the snapshot a SNAP installed written
	AfterAck      Moment = "ack"      // ACKEPOCH or a NEWLEADER ACK sent
)

// The moments of fanout-crash and hold-fsync: the packet.
const (
	AtProposal   Moment = "proposal"
	AtCommit     Moment = "commit" // COMMIT, or INFORM to an observer
	AtNewLeader  Moment = "newleader"
	AtUpToDate   Moment = "uptodate"
	AtLeaderInfo Moment = "leaderinfo"
	AtSnap       Moment = "snap"
	AtDiff       Moment = "diff" // DIFF or TRUNC: held across the whole synchronization
)

// AimedMoments lists, for each kind that has several, the moments it can
// fire on; a seed aims at a subset of them (swarm testing again: a seed
// that aims only at the updatingEpoch mark does not spend its crashes on
// the first election's epoch writes).
var AimedMoments = map[AimedKind][]Moment{
	AimSyncWriteCrash: {AfterLead, AfterAccepted, AfterCurrent, AfterMark, AfterFsync, AfterSnapshot, AfterAck},
	AimHoldFsync:      {AtDiff, AtNewLeader, AtUpToDate, AtSnap},
	AimFanoutCrash:    {AtProposal, AtCommit, AtNewLeader, AtUpToDate, AtLeaderInfo},
}

// Aimed switches one aimed kind on for a run. Each event that can trigger
// the kind fires it with probability Chance, drawn from the kind's own
// random stream in the order the events happen, at most Max times, and
// only during the safety phase; what a firing draws (a crash's down time,
// a hold, a delay, a partition's length) is at most MaxMs. The switches
// are part of the schedule, so a schedule file replays them exactly.
type Aimed struct {
	Kind   AimedKind `json:"kind"`
	Chance float64   `json:"chance"`
	Max    int       `json:"max"`
	MaxMs  int64     `json:"max_ms"`
	// Moments are the events the kind fires on, for a kind that has
	// several (AimedMoments); empty: all of them.
	Moments []Moment `json:"moments,omitempty"`
	// FromMs is when the switch is armed: events before it do not fire
	// it, so that a run may keep its firings for the elections after the
	// first, when members have histories to lose.
	FromMs int64 `json:"from_ms,omitempty"`
}

// String is the switch in one line, as the trace's header shows it.
func (a Aimed) String() string {
	s := fmt.Sprintf("%s chance=%g max=%d max-ms=%d", a.Kind, a.Chance, a.Max, a.MaxMs)
	if len(a.Moments) > 0 {
		s += fmt.Sprintf(" at=%v", a.Moments)
	}
	if a.FromMs > 0 {
		s += fmt.Sprintf(" from=%dms", a.FromMs)
	}
	return s
}

// AimsAt reports whether the switch fires on moment m.
func (a Aimed) AimsAt(m Moment) bool { return len(a.Moments) == 0 || slices.Contains(a.Moments, m) }

// aimedChances are the chances Generate draws from: a seed aims rarely,
// often, or at the first chance it gets.
var aimedChances = []float64{0.0625, 0.125, 0.25, 0.5, 1}

// drawAimed switches each kind of kinds on with even odds (swarm testing,
// as for the timed kinds), each with its own chance, count and bound.
// Every aimed kind acts between members, so only ensembles draw them.
func (s *Schedule) drawAimed(r *rand.Rand, kinds []AimedKind) {
	if !s.Ensemble {
		return
	}
	initLimit := 10 * s.TickMs // the simulator's initLimit
	for _, k := range kinds {
		if r.IntN(2) != 0 {
			continue
		}
		a := Aimed{Kind: k, Chance: aimedChances[r.IntN(len(aimedChances))], Max: 1 + r.IntN(3)}
		if moments := AimedMoments[k]; len(moments) > 0 {
			for _, m := range moments {
				if r.IntN(2) == 0 {
					a.Moments = append(a.Moments, m)
				}
			}
			if len(a.Moments) == 0 {
				a.Moments = []Moment{moments[r.IntN(len(moments))]}
			}
		}
		switch k {
		case AimSyncWriteCrash, AimFanoutCrash:
			// Down for up to a tick (back within the same discovery),
			// up to initLimit, or up to three session timeouts (as a
			// timed crash).
			a.MaxMs = 1 + r.Int64N([]int64{s.TickMs, initLimit, 3 * s.SessionTimeoutMs}[r.IntN(3)])
		case AimHoldFsync:
			a.MaxMs = s.TickMs + r.Int64N(initLimit) // up to about initLimit: past it the leader gives the learner up
		case AimDuel:
			a.MaxMs = s.TickMs + r.Int64N(initLimit) // heals while the would-be leader may still be in discovery
		case AimLateInfo:
			a.MaxMs = initLimit + r.Int64N(2*initLimit) // the learner gives up after initLimit, then elects again
		}
		if r.IntN(2) == 0 {
			a.FromMs = r.Int64N(s.SafetyMs/2 + 1)
		}
		s.Aimed = append(s.Aimed, a)
	}
}

// validateAimed reports the first unusable aimed switch.
func (s *Schedule) validateAimed() error {
	for i, a := range s.Aimed {
		switch {
		case !slices.Contains(AimedKinds, a.Kind):
			return fmt.Errorf("schedule: aimed %d: unknown kind %q", i, a.Kind)
		case slices.ContainsFunc(s.Aimed[:i], func(b Aimed) bool { return b.Kind == a.Kind }):
			return fmt.Errorf("schedule: aimed %d: %s switched on twice", i, a.Kind)
		case !(a.Chance > 0 && a.Chance <= 1):
			return fmt.Errorf("schedule: aimed %d (%s): chance %g, need 0 < chance <= 1", i, a.Kind, a.Chance)
		case a.Max < 1:
			return fmt.Errorf("schedule: aimed %d (%s): max %d, need at least 1", i, a.Kind, a.Max)
		case a.MaxMs < 1:
			return fmt.Errorf("schedule: aimed %d (%s): max_ms %d, need at least 1", i, a.Kind, a.MaxMs)
		case a.FromMs < 0:
			return fmt.Errorf("schedule: aimed %d (%s): from_ms %d is negative", i, a.Kind, a.FromMs)
		}
		for _, m := range a.Moments {
			if !slices.Contains(AimedMoments[a.Kind], m) {
				return fmt.Errorf("schedule: aimed %d (%s): unknown moment %q (want some of %v)", i, a.Kind, m, AimedMoments[a.Kind])
			}
		}
	}
	return nil
}

// AimedSwitch returns the switch of kind k, if the schedule has it on.
func (s *Schedule) AimedSwitch(k AimedKind) (Aimed, bool) {
	i := slices.IndexFunc(s.Aimed, func(a Aimed) bool { return a.Kind == k })
	if i < 0 {
		return Aimed{}, false
	}
	return s.Aimed[i], true
}

// aimedHeader is the header's line for the aimed switches ("" if none).
func (s *Schedule) aimedHeader() string {
	if len(s.Aimed) == 0 {
		return ""
	}
	parts := make([]string, len(s.Aimed))
	for i, a := range s.Aimed {
		parts[i] = a.String()
	}
	return "  aimed: " + strings.Join(parts, "; ") + "\n"
}
