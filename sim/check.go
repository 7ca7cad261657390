package sim

import (
	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/sim/faults"
)

// KindHistory prefixes the failure kinds of the history checkers; the
// guarantee's name follows, so the shrinker keeps to the same guarantee.
const KindHistory = "history: "

// LinearizabilityHistory is the run's history in the linearizability
// package's format, ready for its checkers or for a history file.
func (r *Result) LinearizabilityHistory() linearizability.History {
	h := make(linearizability.History, len(r.History))
	for i := range r.History {
		h[i] = historyEntry(&r.History[i])
	}
	return h
}

// CheckerOptions are the options the history checkers judge a run of sched
// with.
func CheckerOptions(sched *faults.Schedule) linearizability.Options {
	// With reaping on, containers and TTL nodes may vanish without a
	// history line, as the servers' own deleteContainer txns remove them.
	opts := linearizability.Options{Reaping: sched.ReapIntervalMs > 0}
	if sched.Ensemble {
		// A learner reports touches in the PING reply after the request,
		// or, cut off from the leader, not before its syncLimit (2 ticks)
		// ends its serving; a slow link delays that reply by up to 10
		// ticks more (faults.SlowLink).
		opts.TouchLag = 13 * ms(sched.TickMs)
	}
	return opts
}

// checkHistory runs every checker of the linearizability package over the
// run's history and turns each violation into a failure.
func (w *world) checkHistory() {
	h := make(linearizability.History, len(w.history))
	for i := range w.history {
		h[i] = historyEntry(&w.history[i])
	}
	opts := CheckerOptions(w.sched)
	opts.Witness = w.witness
	report := linearizability.CheckAll(h, opts)
	if report.Unexplained != nil {
		w.fail(KindWitness, "%v", report.Unexplained)
	}
	for _, g := range linearizability.Guarantees {
		for _, v := range report.Violations[g] {
			if linearizability.NotPromised(g) {
				w.stats.NotPromised++
				w.tr.logf("history: %s (not promised by ZooKeeper): %s", g, v.Explanation)
				continue
			}
			w.fail(KindHistory+g, "%s", v.Explanation)
			if w.rec.On() {
				w.recordViolation(h, &w.failures[len(w.failures)-1], v)
			}
		}
	}
}
