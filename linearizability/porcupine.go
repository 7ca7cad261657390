// The Porcupine fallback: segments the set replay cannot decide alone, and
// every failure to be drawn, go to Porcupine's nondeterministic model of
// the tree, whose partial linearizations explain where the history stuck.

package linearizability

import (
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// porcupineSegment asks Porcupine whether ops[from:to], started from the
// states at from, are linearizable; nil when they are (or hold no uncertain
// operation, or are too large for it, see porcupineMaxOps).
func porcupineSegment(ops []*tlOp, from, to int, init []*pstate, deadline time.Time) *replayResult {
	seg := ops[from:to]
	if n := len(uncertainOf(seg)); n == 0 || n > porcupineMaxUncertain || len(seg) > porcupineMaxOps {
		return nil
	}
	model := tlModel(treesOf(init))
	history := porcupineOps(seg)
	remaining := time.Until(deadline)
	if remaining <= 0 {
		return &replayResult{failed: seg[0], gaveUp: true, others: uncertainOf(seg)}
	}
	switch porcupine.CheckOperationsTimeout(model, history, remaining) {
	case porcupine.Ok:
		return nil
	case porcupine.Unknown:
		return &replayResult{failed: seg[0], gaveUp: true, others: uncertainOf(seg)}
	}
	// Porcupine reads a timeout of zero or less as none at all.
	res, info := porcupine.CheckOperationsVerbose(model, history, max(time.Until(deadline), time.Millisecond))
	out := &replayResult{others: uncertainOf(seg), fail: &Failure{model: model, info: info}}
	if res == porcupine.Unknown {
		out.failed, out.gaveUp = seg[0], true
		return out
	}
	out.failed, out.why = explainStuck(treesOf(init), seg, info)
	return out
}

// explainStuck finds the first exact operation missing from Porcupine's
// longest partial linearization and says what the model expected there.
func explainStuck(init []*tree, ops []*tlOp, info porcupine.LinearizationInfo) (*tlOp, string) {
	var longest []int
	for _, part := range info.PartialLinearizations() {
		for _, lin := range part {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	in := make(map[int]bool, len(longest))
	for _, id := range longest {
		in[id] = true
	}
	states := init
	for _, id := range longest {
		var next []*tree
		for _, s := range states {
			next = appendDistinct(next, stepNondet(s, ops[id])...)
		}
		states = next
	}
	for id, op := range ops {
		if in[id] || op.uncertain() || len(states) == 0 {
			continue
		}
		_, why := stepExact(states[0], op, false)
		return op, fmt.Sprintf("%s; Porcupine's longest legal prefix has %d operations and leaves %d possible states, none of which explains it (first: %s)", why, len(longest), len(states), states[0].describe())
	}
	return ops[0], "Porcupine found no legal order"
}

func appendDistinct(dst []*tree, ts ...*tree) []*tree {
	for _, t := range ts {
		dup := false
		for _, d := range dst {
			if d.equal(t) {
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, t)
		}
	}
	return dst
}

// porcupineOps turns timeline operations into Porcupine operations with
// client ids numbered from 0 for the visualisation. Their times are slots,
// spread so that exact operations sharing a slot (reads of one zxid) follow
// one another in the replay's order instead of overlapping: reads commute,
// so no order is lost, and Porcupine need not try every order of a few
// dozen reads of one zxid (2^n of them; a client polling one node made it
// run out of its deadline with a single uncertain operation). An exact
// operation at slot e is at e·m+1+k (k: how many before it share e), an
// uncertain one calls at lo·m and returns at hi·m+m-1: an exact operation
// and an uncertain one, or two uncertain ones, overlap exactly when their
// slots did (slots by rank among the operations').
func porcupineOps(ops []*tlOp) []porcupine.Operation {
	// Slots are ranked first: a window may end at slotInfinity.
	var slots []int64
	for _, op := range ops {
		slots = append(slots, op.lo, op.hi)
	}
	slices.Sort(slots)
	slots = slices.Compact(slots)
	rank := func(slot int64) int64 {
		i, _ := slices.BinarySearch(slots, slot)
		return int64(i)
	}
	shared := map[int64]int64{} // exact operations seen so far per slot
	m := int64(2)
	for _, op := range ops {
		if !op.uncertain() {
			shared[op.lo]++
			m = max(m, shared[op.lo]+2)
		}
	}
	clear(shared)
	clients := map[int64]int{}
	out := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		id, ok := clients[op.session]
		if !ok {
			id = len(clients)
			clients[op.session] = id
		}
		call, ret := rank(op.lo)*m, rank(op.hi)*m+m-1
		if !op.uncertain() {
			call = rank(op.lo)*m + 1 + shared[op.lo]
			ret = call
			shared[op.lo]++
		}
		out[i] = porcupine.Operation{ClientId: id, Input: op, Call: call, Return: ret}
	}
	return out
}

// tlModel is the Porcupine model of a component of the znode tree starting
// from any of the states init. Operations of unknown outcome (and expiries not known to have
// happened) step to two states: unchanged, and applied.
func tlModel(init []*tree) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any {
			out := make([]any, len(init))
			for i, t := range init {
				out[i] = t
			}
			return out
		},
		Step: func(state, input, _ any) []any {
			next := stepNondet(state.(*tree), input.(*tlOp))
			out := make([]any, len(next))
			for i, t := range next {
				out[i] = t
			}
			return out
		},
		Equal: func(a, b any) bool { return a.(*tree).equal(b.(*tree)) },
		Hash:  func(state any) uint64 { return state.(*tree).fp },
		DescribeOperation: func(input, _ any) string {
			return input.(*tlOp).describe()
		},
		DescribeState: func(state any) string { return state.(*tree).describe() },
	}
	return nm.ToModel()
}
