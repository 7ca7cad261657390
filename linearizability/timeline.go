package linearizability

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The timeline puts every write (and, for the read checker, every read) on
// one axis of "slots" derived from zxids. An acknowledged write with zxid z
// sits at slot 4·rank(z), a read whose reply carries zxid z at 4·rank(z)+2:
// after every txn up to z and before the next. Those positions are exact, so
// replaying them in slot order is a linear-time check.
//
// Writes of unknown outcome (no reply, ConnectionLoss) and session expiries
// have no zxid: each gets a window of slots — after every write acknowledged
// before it was called, before its own session's next reply — and may take
// effect anywhere in it, or never. Only the components (sets of paths tied
// together by replies, see keysOf) that hold such an operation are handed to
// Porcupine, and only from the start of the first window on: before it the
// replay is exact.

type tlKind int

const (
	tlWrite   tlKind = iota // acknowledged write: exact slot
	tlRead                  // read: exact slot
	tlUnknown               // write of unknown outcome: window
	tlExpire                // session expiry: window
)

type tlOp struct {
	kind    tlKind
	e       *Entry // nil for tlExpire
	session int64
	zxid    int64
	lo, hi  int64 // slots; lo == hi for exact ops
	must    bool  // tlExpire: known to have happened by hi
	keys    []string
}

const slotInfinity = math.MaxInt64 / 4

func (o *tlOp) describe() string {
	if o.kind == tlExpire {
		return fmt.Sprintf("expiry of session %v", Hex64(o.session))
	}
	return o.e.describe()
}

// timeline is a history laid out for the replay.
type timeline struct {
	ops     []*tlOp
	assumed map[string]bool
	rank    map[int64]int64
	dupZxid []Violation
}

// buildTimeline lays out h. includeReads adds reads as exact operations.
func buildTimeline(h History, includeReads bool, guarantee string) *timeline {
	tl := &timeline{rank: map[int64]int64{}}
	// Rank every zxid a reply carries.
	var zxids []int64
	for i := range h {
		if e := &h[i]; e.Kind == KindOp && e.Zxid != nil && e.Returned() && !e.OutcomeUnknown() {
			zxids = append(zxids, int64(*e.Zxid))
		}
	}
	slices.Sort(zxids)
	zxids = slices.Compact(zxids)
	for i, z := range zxids {
		tl.rank[z] = int64(i)
	}
	observed := observedPaths(h)
	tl.assumed = assumedParents(h, observed)

	bySession := map[int64][]*Entry{}
	for i := range h {
		if e := &h[i]; e.Kind == KindOp {
			bySession[e.Session.int()] = append(bySession[e.Session.int()], e)
		}
	}
	for _, es := range bySession {
		sort.SliceStable(es, func(a, b int) bool { return es[a].Seq < es[b].Seq })
	}
	ackedByReturn := tl.ackedWritesByReturn(h)
	ephemeralKeys := map[int64][]string{}
	for i := range h {
		e := &h[i]
		if e.IsWrite() {
			for _, k := range ephemeralCreateKeys(e, observed) {
				ephemeralKeys[e.Session.int()] = append(ephemeralKeys[e.Session.int()], k)
			}
		}
	}

	seenZxid := map[int64]*Entry{}
	for i := range h {
		e := &h[i]
		switch {
		case e.IsWrite() && !e.OutcomeUnknown():
			if e.Zxid == nil {
				continue // a reply without a zxid (e.g. SessionExpired): no effect
			}
			z := int64(*e.Zxid)
			if prev, dup := seenZxid[z]; dup && e.Err == ErrOK && prev.Err == ErrOK {
				tl.dupZxid = append(tl.dupZxid, Violation{
					Guarantee: guarantee, Entries: []*Entry{prev, e},
					Explanation: fmt.Sprintf("two acknowledged writes carry the same zxid %v: %s and %s; a zxid names exactly one txn (was a txn lost and its zxid reused?)", Hex64(z), prev.describe(), e.describe()),
				})
			}
			seenZxid[z] = e
			slot := 4 * tl.rank[z]
			tl.ops = append(tl.ops, &tlOp{kind: tlWrite, e: e, session: e.Session.int(), zxid: z, lo: slot, hi: slot, keys: keysOf(e, observed, ephemeralKeys)})
		case e.IsWrite():
			lo := tl.lowerBound(ackedByReturn, e.Call)
			hi := tl.nextSessionSlot(bySession[e.Session.int()], e)
			tl.ops = append(tl.ops, &tlOp{kind: tlUnknown, e: e, session: e.Session.int(), lo: lo, hi: max(hi, lo), keys: keysOf(e, observed, ephemeralKeys)})
		case includeReads && e.isRead() && e.Returned() && e.Zxid != nil && e.Err != ErrConnectionLoss:
			z := int64(*e.Zxid)
			slot := 4*tl.rank[z] + 2
			tl.ops = append(tl.ops, &tlOp{kind: tlRead, e: e, session: e.Session.int(), zxid: z, lo: slot, hi: slot, keys: keysOf(e, observed, ephemeralKeys)})
		}
	}
	tl.addExpiries(h, bySession, ephemeralKeys)
	return tl
}

// ackedWritesByReturn lists acknowledged writes by return time with the
// running maximum of their zxids.
type returnedZxid struct {
	ret     int64
	maxZxid int64
}

func (tl *timeline) ackedWritesByReturn(h History) []returnedZxid {
	var out []returnedZxid
	for i := range h {
		if e := &h[i]; e.IsWrite() && !e.OutcomeUnknown() && e.Zxid != nil {
			out = append(out, returnedZxid{ret: *e.Return, maxZxid: int64(*e.Zxid)})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ret < out[b].ret })
	for i := 1; i < len(out); i++ {
		out[i].maxZxid = max(out[i].maxZxid, out[i-1].maxZxid)
	}
	return out
}

// lowerBound is the first slot an operation called at time call may take:
// after every write acknowledged before the call.
func (tl *timeline) lowerBound(acked []returnedZxid, call int64) int64 {
	i := sort.Search(len(acked), func(i int) bool { return acked[i].ret >= call })
	if i == 0 {
		return -1
	}
	return 4*tl.rank[acked[i-1].maxZxid] + 1
}

// nextSessionSlot is the last slot at which e may still take effect: before
// the next reply with a zxid that its session receives (a session's requests
// are applied in the order it sent them).
func (tl *timeline) nextSessionSlot(sessionOps []*Entry, e *Entry) int64 {
	for _, o := range sessionOps {
		if o.Seq <= e.Seq || o.Zxid == nil || !o.Returned() || o.OutcomeUnknown() {
			continue
		}
		slot := 4 * tl.rank[int64(*o.Zxid)]
		if o.isRead() || !o.IsWrite() {
			slot += 2
		}
		return slot - 1
	}
	return slotInfinity
}

// addExpiries adds, for every session that created ephemerals and was not
// seen to close, its expiry as an operation with a window: after its last
// reply, and (if the history shows the expiry: an Expired event or a
// SessionExpired reply) before any reply to an operation called after that.
func (tl *timeline) addExpiries(h History, bySession map[int64][]*Entry, ephemeralKeys map[int64][]string) {
	closed := map[int64]bool{}
	expiredAt := map[int64]int64{}
	for i := range h {
		e := &h[i]
		if e.Kind == KindOp && e.Op == OpClose && e.Returned() && e.Err == ErrOK {
			closed[e.Session.int()] = true
		}
		t, ok := expiryObservedAt(e)
		if ok {
			if old, seen := expiredAt[e.Session.int()]; !seen || t < old {
				expiredAt[e.Session.int()] = t
			}
		}
	}
	// Replies by call time, to bound a known expiry from above.
	type called struct{ call, slot int64 }
	var calls []called
	for _, op := range tl.ops {
		if op.kind == tlWrite || op.kind == tlRead {
			calls = append(calls, called{op.e.Call, op.lo})
		}
	}
	sort.Slice(calls, func(a, b int) bool { return calls[a].call < calls[b].call })
	minSlotFrom := make([]int64, len(calls)+1)
	minSlotFrom[len(calls)] = slotInfinity
	for i := len(calls) - 1; i >= 0; i-- {
		minSlotFrom[i] = min(calls[i].slot, minSlotFrom[i+1])
	}
	sessions := make([]int64, 0, len(ephemeralKeys))
	for s := range ephemeralKeys {
		sessions = append(sessions, s)
	}
	slices.Sort(sessions)
	for _, s := range sessions {
		if closed[s] {
			continue
		}
		lo := int64(-1)
		for _, e := range bySession[s] {
			if e.Zxid != nil && e.Returned() && !e.OutcomeUnknown() && e.Err != ErrSessionExpired {
				slot := 4 * tl.rank[int64(*e.Zxid)]
				if !e.IsWrite() {
					slot += 2
				}
				lo = max(lo, slot+1)
			}
		}
		op := &tlOp{kind: tlExpire, session: s, lo: lo, hi: slotInfinity, keys: ephemeralKeys[s]}
		if t, ok := expiredAt[s]; ok {
			i := sort.Search(len(calls), func(i int) bool { return calls[i].call > t })
			op.must = true
			op.hi = max(lo, minSlotFrom[i]-1)
		}
		tl.ops = append(tl.ops, op)
	}
}

// expiryObservedAt reports when e shows its session gone.
func expiryObservedAt(e *Entry) (int64, bool) {
	if e.Kind == KindEvent && e.Type == StateExpired {
		return e.At, true
	}
	if e.Kind == KindOp && e.Returned() && e.Err == ErrSessionExpired {
		return *e.Return, true
	}
	return 0, false
}

// observedPaths are the paths some operation names. A parent that is
// observed ties its children's creates and deletes to itself (its cversion,
// pzxid and children change with them); an unobserved parent does not.
// Parents of sequential creates are always tied: the suffix counts creates.
func observedPaths(h History) map[string]bool {
	obs := map[string]bool{}
	add := func(op, path, mode string) {
		obs[path] = true
		if op == OpCreate && modeNames[mode].Sequential() {
			p, _ := parentOf(path)
			obs[p] = true
		}
	}
	for i := range h {
		e := &h[i]
		if e.Kind != KindOp {
			continue
		}
		if e.Path != "" {
			add(e.Op, e.Path, e.Mode)
		}
		if e.Created != "" {
			obs[e.Created] = true
		}
		for _, s := range e.Ops {
			add(s.Op, s.Path, s.Mode)
		}
	}
	return obs
}

// assumedParents are parents of created paths that no operation names and
// that are not in a fresh tree: they must have existed before the history.
func assumedParents(h History, observed map[string]bool) map[string]bool {
	fresh := freshTree()
	out := map[string]bool{}
	for p := range observed {
		parent, _ := parentOf(p)
		for parent != "/" && !observed[parent] && fresh.nodes[parent] == nil {
			out[parent] = true
			parent, _ = parentOf(parent)
		}
	}
	return out
}

func pathKeys(op, path, created, mode string, observed map[string]bool) []string {
	if path == "" {
		path = "/"
	}
	keys := []string{path}
	if created != "" && created != path {
		keys = append(keys, created)
	}
	if op == OpCreate || op == OpDelete {
		if parent, _ := parentOf(path); observed[parent] {
			keys = append(keys, parent)
		}
	}
	return keys
}

// keysOf lists the paths whose state e's reply depends on or changes.
func keysOf(e *Entry, observed map[string]bool, ephemeralKeys map[int64][]string) []string {
	switch e.Op {
	case OpClose:
		return ephemeralKeys[e.Session.int()]
	case OpMulti, OpMultiRead:
		var keys []string
		for i, s := range e.Ops {
			created := ""
			if i < len(e.Results) {
				created = e.Results[i].Created
			}
			keys = append(keys, pathKeys(s.Op, s.Path, created, s.Mode, observed)...)
		}
		return keys
	}
	return pathKeys(e.Op, e.Path, e.Created, e.Mode, observed)
}

// ephemeralCreateKeys are the keys of e's ephemeral creates.
func ephemeralCreateKeys(e *Entry, observed map[string]bool) []string {
	var keys []string
	if e.Op == OpCreate && modeNames[e.Mode].Ephemeral() {
		keys = append(keys, pathKeys(e.Op, e.Path, e.Created, e.Mode, observed)...)
	}
	for i, s := range e.Ops {
		if s.Op == OpCreate && modeNames[s.Mode].Ephemeral() {
			created := ""
			if i < len(e.Results) {
				created = e.Results[i].Created
			}
			keys = append(keys, pathKeys(s.Op, s.Path, created, s.Mode, observed)...)
		}
	}
	return keys
}

// components groups the timeline's operations by connected keys, each
// component's operations sorted by slot.
func (tl *timeline) components() [][]*tlOp {
	parent := map[string]string{}
	var find func(string) string
	find = func(k string) string {
		p, ok := parent[k]
		if !ok || p == k {
			parent[k] = k
			return k
		}
		r := find(p)
		parent[k] = r
		return r
	}
	for _, op := range tl.ops {
		for _, k := range op.keys[min(1, len(op.keys)):] {
			a, b := find(op.keys[0]), find(k)
			if a != b {
				parent[a] = b
			}
		}
	}
	groups := map[string][]*tlOp{}
	var roots []string
	for _, op := range tl.ops {
		if len(op.keys) == 0 {
			continue // touches nothing a reply shows
		}
		r := find(op.keys[0])
		if _, ok := groups[r]; !ok {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], op)
	}
	slices.Sort(roots)
	out := make([][]*tlOp, 0, len(roots))
	for _, r := range roots {
		g := groups[r]
		sort.SliceStable(g, func(a, b int) bool { return g[a].lo < g[b].lo })
		out = append(out, g)
	}
	return out
}

// stepExact applies an exact operation in place and explains a mismatch.
func stepExact(t *tree, assumed map[string]bool, op *tlOp) (*tree, string) {
	if op.kind == tlRead {
		return t, checkRead(t, assumed, op.e)
	}
	x, closes, why := stepWrite(t, assumed, op.e, op.zxid, true)
	if why != "" {
		return t, why
	}
	return commitStep(t, assumed, x, closes, op.session, op.zxid), ""
}

// stepNondet gives every state op may lead to from t (empty: impossible).
func stepNondet(t *tree, assumed map[string]bool, op *tlOp) []*tree {
	switch op.kind {
	case tlRead, tlWrite:
		next, why := stepExact(t.clone(), assumed, op)
		if why != "" {
			return nil
		}
		return []*tree{next}
	case tlExpire:
		gone := closeSessionInto(t.clone(), assumed, op.session, 0)
		if op.must {
			return []*tree{gone}
		}
		return []*tree{t, gone}
	}
	x, closes, _ := stepWrite(t, assumed, op.e, 0, false)
	if !closes && len(x.order) == 0 {
		return []*tree{t}
	}
	return []*tree{t, commitStep(t.clone(), assumed, x, closes, op.session, 0)}
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
}

// vizContext is how many operations before a failure the visualisation shows.
const vizContext = 30

// replayComponent checks one component: exactly up to the first uncertain
// operation, then with Porcupine until the end, within deadline.
func replayComponent(ops []*tlOp, assumed map[string]bool, deadline time.Time) *replayResult {
	firstUncertain := len(ops)
	for i, op := range ops {
		if op.kind == tlUnknown || op.kind == tlExpire {
			firstUncertain = i
			break
		}
	}
	t := freshTree()
	for i, op := range ops[:firstUncertain] {
		var why string
		t, why = stepExact(t, assumed, op)
		if why != "" {
			from := max(0, i-vizContext)
			res := &replayResult{failed: op, why: why}
			res.fail = porcupineFailure(ops[:from], ops[from:i+1], assumed, deadline)
			return res
		}
	}
	if firstUncertain == len(ops) {
		return nil
	}
	rest := ops[firstUncertain:]
	model := tlModel(t, assumed)
	history := porcupineOps(rest)
	remaining := time.Until(deadline)
	if remaining <= 0 {
		return &replayResult{failed: rest[0], gaveUp: true}
	}
	result := porcupine.CheckOperationsTimeout(model, history, remaining)
	switch result {
	case porcupine.Ok:
		return nil
	case porcupine.Unknown:
		return &replayResult{failed: rest[0], gaveUp: true, others: uncertainOf(rest)}
	}
	// Porcupine reads a timeout of zero or less as none at all.
	res, info := porcupine.CheckOperationsVerbose(model, history, max(time.Until(deadline), time.Millisecond))
	out := &replayResult{others: uncertainOf(rest), fail: &Failure{model: model, info: info}}
	if res == porcupine.Unknown {
		out.failed, out.gaveUp = rest[0], true
		return out
	}
	out.failed, out.why = explainStuck(t, assumed, rest, info)
	return out
}

func uncertainOf(ops []*tlOp) []*tlOp {
	var out []*tlOp
	for _, op := range ops {
		if op.kind == tlUnknown || op.kind == tlExpire {
			out = append(out, op)
		}
	}
	return out
}

// porcupineFailure builds the visualisation of an exact replay's failure:
// before is replayed to get the initial state, window is drawn.
func porcupineFailure(before, window []*tlOp, assumed map[string]bool, deadline time.Time) *Failure {
	t := freshTree()
	for _, op := range before {
		t, _ = stepExact(t, assumed, op)
	}
	model := tlModel(t, assumed)
	// The window holds exact operations only, so the search is linear; the
	// floor keeps a visualisation even when the deadline has passed.
	_, info := porcupine.CheckOperationsVerbose(model, porcupineOps(window), max(time.Until(deadline), time.Second))
	return &Failure{model: model, info: info}
}

// explainStuck finds the first exact operation missing from Porcupine's
// longest partial linearization and says what the model expected there.
func explainStuck(init *tree, assumed map[string]bool, ops []*tlOp, info porcupine.LinearizationInfo) (*tlOp, string) {
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
	states := []*tree{init}
	for _, id := range longest {
		var next []*tree
		for _, s := range states {
			next = appendDistinct(next, stepNondet(s, assumed, ops[id])...)
		}
		states = next
	}
	for id, op := range ops {
		if in[id] || op.kind == tlUnknown || op.kind == tlExpire {
			continue
		}
		why := "no state reached before it allows its reply"
		if len(states) > 0 {
			_, why = stepExact(states[0].clone(), assumed, op)
		}
		return op, fmt.Sprintf("%s; %d possible states after the longest legal prefix of %d operations, none explains it (first: %s)", why, len(states), len(longest), states[0].describe())
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

// porcupineOps turns timeline operations into Porcupine operations whose
// times are slots, with client ids numbered from 0 for the visualisation.
func porcupineOps(ops []*tlOp) []porcupine.Operation {
	clients := map[int64]int{}
	out := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		id, ok := clients[op.session]
		if !ok {
			id = len(clients)
			clients[op.session] = id
		}
		out[i] = porcupine.Operation{ClientId: id, Input: op, Call: op.lo, Return: op.hi}
	}
	return out
}

// tlModel is the Porcupine model of a component of the znode tree starting
// from init. Operations of unknown outcome (and expiries not known to have
// happened) step to two states: unchanged, and applied.
func tlModel(init *tree, assumed map[string]bool) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{init} },
		Step: func(state, input, _ any) []any {
			next := stepNondet(state.(*tree), assumed, input.(*tlOp))
			out := make([]any, len(next))
			for i, t := range next {
				out[i] = t
			}
			return out
		},
		Equal: func(a, b any) bool { return a.(*tree).equal(b.(*tree)) },
		DescribeOperation: func(input, _ any) string {
			return input.(*tlOp).describe()
		},
		DescribeState: func(state any) string { return state.(*tree).describe() },
	}
	return nm.ToModel()
}

// checkTimeline replays every component and turns failures into violations.
func checkTimeline(tl *timeline, guarantee string, deadline time.Time, keep func(*tlOp) bool) []Violation {
	out := slices.Clone(tl.dupZxid)
	for _, comp := range tl.components() {
		res := replayComponent(comp, tl.assumed, deadline)
		if res == nil || !keep(res.failed) {
			continue
		}
		v := Violation{Guarantee: guarantee, Failure: res.fail}
		if res.failed.e != nil {
			v.Entries = append(v.Entries, res.failed.e)
		}
		var unknown []string
		for _, o := range res.others {
			if o.e != nil {
				v.Entries = append(v.Entries, o.e)
			}
			unknown = append(unknown, o.describe())
		}
		switch {
		case res.gaveUp:
			v.Explanation = fmt.Sprintf("Porcupine could not decide within the deadline whether the %d operations of unknown outcome in this component (%s) can be placed legally; an undecided check counts as a failure", len(res.others), strings.Join(unknown, "; "))
		case len(res.others) > 0:
			v.Explanation = fmt.Sprintf("%s: %s; no placement of the operations of unknown outcome (%s) explains it", res.failed.describe(), res.why, strings.Join(unknown, "; "))
		default:
			v.Explanation = fmt.Sprintf("%s: %s (model: every write before it in zxid order)", res.failed.describe(), res.why)
		}
		out = append(out, v)
	}
	return out
}
