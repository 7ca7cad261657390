// The replay search: each component's operations applied in slot order
// to the set of trees the uncertain operations (no reply, ConnectionLoss,
// expiry) could have produced, resolving pending operations breadth first
// within a budget, sampling when the set grows too large.

package linearizability

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// stepExact applies an exact operation and explains a mismatch. In place,
// it changes t; otherwise it leaves t alone and returns t itself when the
// operation changes nothing (a read, a failed write) or a changed copy.
func stepExact(t *tree, op *tlOp, inPlace bool) (*tree, string) {
	if op.kind == tlRead {
		return t, checkRead(t, op.e)
	}
	x, closes, why := stepWrite(t, op.e, op.zxid, true)
	if why != "" {
		return t, why
	}
	if !closes && len(x.order) == 0 {
		return t, ""
	}
	if !inPlace {
		t = t.clone()
	}
	return commitStep(t, x, closes, op.session, op.zxid), ""
}

// stepNondet gives every state op may lead to from t (empty: impossible),
// leaving t alone.
func stepNondet(t *tree, op *tlOp) []*tree {
	switch op.kind {
	case tlRead, tlWrite:
		next, why := stepExact(t, op, false)
		if why != "" {
			return nil
		}
		return []*tree{next}
	case tlExpire:
		gone := closeSessionInto(t.clone(), op.session, 0)
		if op.must {
			return []*tree{gone}
		}
		return []*tree{t, gone}
	case tlReap:
		n := t.nodes[op.path]
		if n == nil || !t.reapable(op.path, n) {
			return []*tree{t}
		}
		x := &txn{base: t, changed: map[string]*node{}}
		x.put(op.path, nil)
		x.removeChild(op.path, 0)
		return []*tree{t, commitStep(t.clone(), x, false, 0, 0)}
	}
	x, closes, _ := stepWrite(t, op.e, 0, false)
	if !closes && len(x.order) == 0 {
		return []*tree{t}
	}
	return []*tree{t, commitStep(t.clone(), x, closes, op.session, 0)}
}

// Failure is a component whose operations admit no legal order. It keeps what
// Porcupine needs to draw the history.
type Failure struct {
	model porcupine.Model
	info  porcupine.LinearizationInfo
}

// replayResult is the outcome of checking one component.
type replayResult struct {
	failed *tlOp   // the operation no legal order explains
	why    string  // in words
	others []*tlOp // the uncertain operations that could not explain it
	fail   *Failure
	gaveUp bool
	// tooMany: the set replay outgrew maxStates (else Porcupine's deadline)
	tooMany bool
}

// Bounds on a segment handed to Porcupine: its search keeps a bitset of the
// segment per visited state, so memory grows with the square of the length,
// and it explores the orders of the uncertain operations, which grow
// exponentially with their number. Larger segments are decided by the set
// replay alone (which is exact; Porcupine is a second opinion).
const (
	porcupineMaxOps       = 20_000
	porcupineMaxUncertain = 8
)

// vizMaxOps bounds how much of a failing segment the visualisation draws.
const vizMaxOps = 60

// pstate is one possible state during the set replay: a tree, and the
// uncertain operations (indices into the component) that have not taken
// effect yet but still may.
type pstate struct {
	t       *tree
	pending []int
	used    gapUse
}

func (p *pstate) equal(o *pstate) bool {
	return slices.Equal(p.pending, o.pending) && slices.Equal(p.used, o.used) && p.t.equal(o.t)
}

// gapUse counts, per zxid gap, the uncertain operations a state has let
// take effect there: pairs (gap, count) sorted by gap, never changed in place.
type gapUse []int

// past forgets the gaps before gap closed: nothing can take effect there
// any more, and states that differ only there are the same from now on.
func (u gapUse) past(closed int) gapUse {
	i := 0
	for i < len(u) && u[i] < closed {
		i += 2
	}
	return u[i:]
}

// take returns the use after op takes effect, or false if its gap is full.
func (u gapUse) take(op *tlOp) (gapUse, bool) {
	if op.gap < 0 {
		return u, true
	}
	for i := 0; i < len(u); i += 2 {
		if u[i] == op.gap {
			if int64(u[i+1]) >= op.gapCap {
				return nil, false
			}
			out := slices.Clone(u)
			out[i+1]++
			return out, true
		}
	}
	if op.gapCap < 1 {
		return nil, false
	}
	out := append(slices.Clone(u), op.gap, 1)
	for i := len(out) - 2; i >= 2 && out[i] < out[i-2]; i -= 2 {
		out[i], out[i+1], out[i-2], out[i-1] = out[i-2], out[i-1], out[i], out[i+1]
	}
	return out, true
}

// searchShortcuts switches on what makes the set replay smaller without
// changing a verdict: an acknowledged write that failed orders no pending
// operation (buildTimeline), and data no read returns is not told apart
// (dataReadIn). Tests switch them off to compare with the plain search.
// (A third, leaving unsettled the pending operations that could have no
// effect before an exact one, was dropped: TestSearchShortcutsKeepVerdicts
// found a history whose reads it failed and the plain search passed.)
var searchShortcuts = true

// maxStates bounds the set replay's states (beyond it, sampleStates of them
// are kept), maxSearchSteps the steps of the resolutions before one
// operation (minResolveSteps for each state at least). Beyond them the
// replay goes on with a sample (see resolve and
// stateSet.sample): a legal order found in it is a legal order, but if none
// is found the check is undecided, which counts as a failure.
var (
	maxStates       = 1 << 13
	sampleStates    = 1 << 8
	maxSearchSteps  = 1 << 15
	minResolveSteps = 64
)

// replayComponent checks one component. Operations are taken in slot order
// with a set of possible states: an exact operation must match in at least
// one state (those where it does not are dropped); an uncertain operation
// joins each state's pending list, and before an exact operation the
// pending ones relevant to it are settled (see resolve). With nothing
// pending the set has one state and the replay is a plain linear walk.
//
// Every segment from a point with no pending operation to the next such
// point that holds uncertain operations is also handed to Porcupine (the
// NondeterministicModel of the tree, seeded with the set of states at the
// segment's start), within the deadline: its verdict must be Ok. The set
// replay gives the states at the segment's end, which Porcupine cannot.
func replayComponent(ops []*tlOp, deadline time.Time) *replayResult {
	var res *replayResult
	for salt := range uint64(sampleAttempts) {
		if res = replaySampled(ops, deadline, salt); res == nil || !res.tooMany || time.Now().After(deadline) {
			break
		}
	}
	return res
}

// sampleAttempts is how many different samples replayComponent tries
// before it calls a component undecided.
const sampleAttempts = 3

// replaySampled is one replay of a component; salt picks the sample kept
// when the states outgrow their bounds.
func replaySampled(ops []*tlOp, deadline time.Time, salt uint64) *replayResult {
	states := []*pstate{{t: freshTree(dataReadIn(ops), reapsIn(ops))}}
	var memo successors
	cut, cutStates, open := 0, []*pstate(nil), false
	sampled := false // states were left out: running out of them proves nothing
	for i := 0; i < len(ops); i++ {
		op := ops[i]
		if op.uncertain() {
			if !open { // a segment for Porcupine starts here
				cut, cutStates, open = i, cloneStates(states), true
			}
			for _, st := range states {
				st.pending = append(slices.Clip(st.pending), i)
			}
			continue
		}
		next, why, left := stepStates(states, ops, i, salt, &memo)
		sampled = sampled || left
		if len(next) == 0 && sampled || sampled && time.Now().After(deadline) {
			return &replayResult{failed: op, gaveUp: true, tooMany: true, others: uncertainOf(ops[cut : i+1])}
		}
		if len(next) == 0 {
			if !open {
				cut, cutStates = i, nil
			}
			return failureAt(ops, cut, cutStates, i, why, deadline)
		}
		states = next
		if open && quiet(states) {
			if res := porcupineSegment(ops, cut, i+1, cutStates, deadline); res != nil {
				return res
			}
			open = false
		}
	}
	states, left := resolveAll(states, ops, slotInfinity, salt, &memo)
	if len(states) == 0 && (sampled || left) {
		return &replayResult{failed: ops[len(ops)-1], gaveUp: true, tooMany: true, others: uncertainOf(ops[cut:])}
	}
	if len(states) == 0 {
		return failureAt(ops, cut, cutStates, len(ops)-1, "an expiry known to have happened could not take effect anywhere", deadline)
	}
	if !open {
		return nil
	}
	return porcupineSegment(ops, cut, len(ops), cutStates, deadline)
}

// dataReadIn lists the paths whose data a read among ops returns (nil:
// keep every node's data).
func dataReadIn(ops []*tlOp) map[string]bool {
	if !searchShortcuts {
		return nil
	}
	out := map[string]bool{}
	for _, op := range ops {
		if op.kind != tlRead {
			continue
		}
		if op.e.Op == OpGetData {
			out[cmp.Or(op.e.Path, "/")] = true
		}
		for _, s := range op.e.Ops {
			if s.Op == OpGetData {
				out[cmp.Or(s.Path, "/")] = true
			}
		}
	}
	return out
}

// quiet reports whether no uncertain operation is pending in any state.
func quiet(states []*pstate) bool {
	for _, st := range states {
		if len(st.pending) > 0 {
			return false
		}
	}
	return true
}

func cloneStates(states []*pstate) []*pstate {
	out := make([]*pstate, len(states))
	for i, st := range states {
		out[i] = &pstate{t: st.t.clone(), pending: slices.Clone(st.pending), used: st.used}
	}
	return out
}

// stepStates applies the exact operation ops[i] to every possible state.
// First the pending operations that matter to it are resolved (see
// resolve); the others stay pending: they commute with ops[i], so deciding
// them later, when something observes them, loses nothing. why explains the
// mismatch in the first state when none survives. sampled reports that
// the set of states, or a resolution, outgrew its bound and only a sample
// of it was kept (see stateSet.sample and resolve).
func stepStates(states []*pstate, ops []*tlOp, i int, salt uint64, memo *successors) (out []*pstate, why string, sampled bool) {
	op := ops[i]
	if len(states) == 1 && len(states[0].pending) == 0 {
		memo.forget()                                 // the tree is about to change in place
		next, why := stepExact(states[0].t, op, true) // nothing else holds it
		if why != "" {
			return nil, why, false
		}
		states[0].t = next
		return states, "", false
	}
	var set stateSet
	budget := resolveBudget(len(states))
	for _, st := range states {
		cands, left := resolve(st, ops, op, op.lo, budget, salt, memo)
		sampled = sampled || left
		for _, c := range cands {
			next, w := stepExact(c.t, op, false)
			if w != "" {
				if why == "" {
					why = w
				}
				continue
			}
			set.add(&pstate{t: next, pending: c.pending, used: c.used.past(op.gapsClosed)})
		}
	}
	out, left := set.sample(salt)
	memo.keep(out)
	return out, why, sampled || left
}

// resolve gives the states st may be in just before slot as far as the
// pending operations relevant to x are concerned (all of them when x is
// nil, see relevantPending). Each takes effect now, in any order the
// windows allow, or not yet
// (if its window is still open) or never (if it has closed: an operation
// whose window passed with nothing relevant in between may as well be
// decided now). Writes of sessions that have ended are dropped: they can no
// longer take effect.
//
// The search goes breadth first, one more operation applied per level. When
// it would hold more than budget steps, each level keeps only a sample of
// its steps (the same share for every level, so that states with many
// operations applied are kept as well as those with few) and sampled is
// set: the states returned are then some of the possible ones, not all.
func resolve(st *pstate, ops []*tlOp, x *tlOp, slot int64, budget int, salt uint64, memo *successors) (out []*pstate, sampled bool) {
	rel, rest := relevantPending(st, ops, x)
	type step struct {
		t     *tree
		rem   []int // relevant operations not applied
		floor int64 // the latest window start among those applied: later ones must not end before it
		used  gapUse
	}
	key := func(n *step) uint64 {
		h := fnvWord(n.t.fp, uint64(n.floor))
		for _, k := range n.rem {
			h = fnvWord(h, uint64(k))
		}
		for _, k := range n.used {
			h = fnvWord(h, uint64(k))
		}
		return h
	}
	seen := []*step{{t: st.t, rem: rel, floor: math.MinInt64, used: st.used}}
	index := map[uint64][]*step{key(seen[0]): {seen[0]}}
	for frontier := seen; len(frontier) > 0; {
		var next []*step
		for _, n := range frontier {
			for j, k := range n.rem {
				if ops[k].hi < n.floor || n.t.dead[ops[k].session] ||
					slices.ContainsFunc(rel, func(a int) bool { return !slices.Contains(n.rem, a) && sentBefore(ops[k], ops[a]) }) {
					continue // its window is over, its session is, or its session's later request came first
				}
				applied := memo.applied(n.t, ops, k)
				if applied == n.t {
					continue // no effect now: the same as leaving it pending, which allows more
				}
				used, fits := n.used.take(ops[k])
				if !fits {
					continue // no zxid left for it where its window lies
				}
				rem := slices.DeleteFunc(append(slices.Clone(n.rem[:j]), n.rem[j+1:]...), func(a int) bool {
					return sentBefore(ops[a], ops[k]) || applied.dead[ops[a].session] // never now
				})
				child := &step{t: applied, rem: rem, floor: max(n.floor, ops[k].lo), used: used}
				h := key(child)
				if !slices.ContainsFunc(index[h], func(o *step) bool {
					return o.floor == child.floor && slices.Equal(o.rem, child.rem) && slices.Equal(o.used, child.used) && o.t.equal(child.t)
				}) {
					index[h] = append(index[h], child)
					next = append(next, child)
				}
			}
		}
		if keep := max(budget/(len(rel)+1), budget-len(seen)); len(next) > keep {
			// Keep the steps with the smallest salted keys: a sample
			// that does not depend on the order they were found in.
			next, sampled = smallestBy(next, keep, func(n *step) uint64 { return fnvWord(key(n), salt) }), true
		}
		seen = append(seen, next...)
		frontier = next
	}
	var set stateSet
	for _, n := range seen {
		// Once a session has ended, its requests can no longer take effect
		// and its expiry (or a close of unknown outcome) has happened:
		// keeping them pending would only tell apart states that are the
		// same.
		pending := slices.DeleteFunc(slices.Clone(rest), func(k int) bool { return n.t.dead[ops[k].session] })
		possible := true
		for _, k := range n.rem {
			switch {
			case n.t.dead[ops[k].session]:
			case ops[k].hi >= slot:
				pending = append(pending, k)
			case ops[k].must:
				possible = false
			}
		}
		if possible {
			slices.Sort(pending)
			set.add(&pstate{t: n.t, pending: pending, used: n.used})
		}
	}
	return set.list, sampled
}

// successors remembers what each uncertain operation makes of a tree (the
// last of stepNondet's states: the one where it took effect), by the
// tree's identity. Before every exact operation, resolve applies each
// state's relevant pending operations to it afresh; reads change no tree,
// so along a run of reads the same trees meet the same pending operations
// again and again (hundreds of reads of the final state after a few
// sessions' expiries and closes of unknown outcome, each expiry deleting
// scores of ephemerals under one parent). The result is the same tree:
// once computed, it is looked up. Equal trees made in different orders are
// one tree here, so that telling the states apart again costs no walk of
// them.
//
// This is sound because a tree held by a state, or made from one by
// resolve, is never changed in place but by stepStates when it is the only
// state and nothing is pending, which forgets everything first.
type successors struct {
	next map[*tree]map[int]*tree // tree, index of the operation in the component: the tree after it
	size int                     // entries in next
	made map[uint64][]*tree      // the trees in next's entries, by fingerprint
}

// maxSuccessors bounds the trees successors holds besides the states'
// (beyond it, what is not known yet is computed each time): as many as
// the states themselves may be (maxStates).
const maxSuccessors = 1 << 13

// applied returns the tree after ops[k] took effect in t (t itself when
// it has no effect there).
func (m *successors) applied(t *tree, ops []*tlOp, k int) *tree {
	if a, ok := m.next[t][k]; ok {
		return a
	}
	ts := stepNondet(t, ops[k])
	a := ts[len(ts)-1]
	if m.size >= maxSuccessors {
		return a
	}
	if m.next == nil {
		m.next, m.made = map[*tree]map[int]*tree{}, map[uint64][]*tree{}
	}
	if m.next[t] == nil {
		m.next[t] = map[int]*tree{}
	}
	if a != t { // it took effect: an equal tree made before stands for a
		if i := slices.IndexFunc(m.made[a.fp], a.equal); i < 0 {
			m.made[a.fp] = append(m.made[a.fp], a)
		} else if m.made[a.fp][i] != t { // resolve reads t itself as no effect
			a = m.made[a.fp][i]
		}
	}
	m.next[t][k] = a
	m.size++
	return a
}

// keep forgets the trees that states do not lead to: resolve only ever
// starts from a state's tree, so no later resolution looks them up.
func (m *successors) keep(states []*pstate) {
	kept, made, size := map[*tree]map[int]*tree{}, map[uint64][]*tree{}, 0
	var walk func(t *tree)
	walk = func(t *tree) {
		succ, ok := m.next[t]
		if _, done := kept[t]; done || !ok {
			return
		}
		kept[t] = succ
		size += len(succ)
		for _, a := range succ {
			if a != t && !slices.Contains(made[a.fp], a) {
				made[a.fp] = append(made[a.fp], a)
			}
			walk(a)
		}
	}
	for _, st := range states {
		walk(st.t)
	}
	m.next, m.made, m.size = kept, made, size
}

// forget drops everything: a tree is about to change in place.
func (m *successors) forget() { m.next, m.made, m.size = nil, nil, 0 }

// sentBefore reports whether a and b are writes of unknown outcome of one
// session and a was sent first: a session's requests take effect in the
// order sent, so once b has, a never will.
func sentBefore(a, b *tlOp) bool {
	return a.kind == tlUnknown && b.kind == tlUnknown && a.session == b.session && a.e.Call < b.e.Call
}

// relevantPending splits st's pending operations into those that must be
// settled before the exact operation x (all of them when x is nil) and the
// rest. Relevant are those that change what x (or another relevant one)
// depends on, or depend on what it changes, and those their sessions sent
// before them: once a request takes effect, the ones its session sent
// earlier must be decided too (they took effect before it, or never).
func relevantPending(st *pstate, ops []*tlOp, x *tlOp) (rel, rest []int) {
	if x == nil {
		return slices.Clone(st.pending), nil
	}
	in := make([]bool, len(st.pending))
	// Each operation found relevant is compared once with those not (yet):
	// one that meets any of them is relevant.
	for found := []*tlOp{x}; len(found) > 0; {
		m := found[len(found)-1]
		found = found[:len(found)-1]
		for j, k := range st.pending {
			if o := ops[k]; !in[j] && (meet(o.mods, m.deps) || meet(o.deps, m.mods) || sentBefore(o, m)) {
				in[j] = true
				found = append(found, o)
			}
		}
	}
	for j, k := range st.pending {
		if in[j] {
			rel = append(rel, k)
		} else {
			rest = append(rest, k)
		}
	}
	return rel, rest
}

// resolveAll resolves every pending operation of every state at slot;
// sampled as for stepStates.
func resolveAll(states []*pstate, ops []*tlOp, slot int64, salt uint64, memo *successors) (out []*pstate, sampled bool) {
	var set stateSet
	budget := resolveBudget(len(states))
	for _, st := range states {
		cands, left := resolve(st, ops, nil, slot, budget, salt, memo)
		sampled = sampled || left
		for _, c := range cands {
			set.add(c)
		}
	}
	out, left := set.sample(salt)
	return out, sampled || left
}

// resolveBudget is how many search steps each of n states may take in one
// resolution: together at most maxSearchSteps, and no fewer than
// minResolveSteps each.
func resolveBudget(n int) int {
	return max(maxSearchSteps/max(n, 1), minResolveSteps)
}

// sample returns the set's states, or when there are more than maxStates,
// the sampleStates of them with the smallest hashes salted with salt (a sample that does not
// depend on the order they were added in), and reports whether any was left
// out.
func (s *stateSet) sample(salt uint64) ([]*pstate, bool) {
	if len(s.list) <= maxStates {
		return s.list, false
	}
	return smallestBy(s.list, sampleStates, func(p *pstate) uint64 { return fnvWord(p.hash(), salt) }), true
}

// smallestBy returns the n elements of xs with the smallest keys (in key
// order; ties in xs's order), leaving xs alone.
func smallestBy[T any](xs []T, n int, key func(T) uint64) []T {
	type keyed struct {
		k uint64
		x T
	}
	ks := make([]keyed, len(xs))
	for i, x := range xs {
		ks[i] = keyed{key(x), x}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return cmp.Compare(a.k, b.k) })
	out := make([]T, min(n, len(ks)))
	for i := range out {
		out[i] = ks[i].x
	}
	return out
}

// stateSet is a set of possible states, indexed by fingerprint so that
// adding one costs a lookup, not a scan.
type stateSet struct {
	list  []*pstate
	index map[uint64][]*pstate
}

func (p *pstate) hash() uint64 {
	h := p.t.fp
	for _, k := range p.pending {
		h = fnvWord(h, uint64(k))
	}
	for _, k := range p.used {
		h = fnvWord(h, uint64(k))
	}
	return h
}

// add puts st in the set unless an equal state is there.
func (s *stateSet) add(st *pstate) {
	if s.index == nil {
		s.index = map[uint64][]*pstate{}
	}
	h := st.hash()
	for _, d := range s.index[h] {
		if d.equal(st) {
			return
		}
	}
	s.index[h] = append(s.index[h], st)
	s.list = append(s.list, st)
}

func treesOf(states []*pstate) []*tree {
	out := make([]*tree, len(states))
	for i, st := range states {
		out[i] = st.t
	}
	return out
}

// failureAt reports that no possible state explains ops[i], and draws the
// segment since cut (or, when there is no segment or it is long, ops[i]
// alone against the states just before it, found again by the set replay).
func failureAt(ops []*tlOp, cut int, cutStates []*pstate, i int, why string, deadline time.Time) *replayResult {
	res := &replayResult{failed: ops[i], why: why, others: uncertainOf(ops[cut : i+1])}
	from, init := cut, cutStates
	if init == nil || i+1-cut > vizMaxOps {
		from, init = i, statesBefore(ops, i)
	}
	model := tlModel(treesOf(init))
	_, info := porcupine.CheckOperationsVerbose(model, porcupineOps(ops[from:i+1]), max(time.Until(deadline), 200*time.Millisecond))
	res.fail = &Failure{model: model, info: info}
	return res
}

// statesBefore replays ops[:i] again to get the states just before ops[i].
func statesBefore(ops []*tlOp, i int) []*pstate {
	states := []*pstate{{t: freshTree(dataReadIn(ops), reapsIn(ops))}}
	var memo successors
	for k := 0; k < i; k++ {
		if ops[k].uncertain() {
			for _, st := range states {
				st.pending = append(slices.Clip(st.pending), k)
			}
			continue
		}
		states, _, _ = stepStates(states, ops, k, 0, &memo)
	}
	budget := resolveBudget(len(states))
	var set stateSet
	for _, st := range states {
		cands, _ := resolve(st, ops, ops[i], ops[i].lo, budget, 0, &memo)
		for _, c := range cands {
			set.add(c)
		}
	}
	return set.list
}

func uncertainOf(ops []*tlOp) []*tlOp {
	var out []*tlOp
	for _, op := range ops {
		if op.uncertain() {
			out = append(out, op)
		}
	}
	return out
}
