package linearizability

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// The timeline puts every write (and, for the read checker, every read) on
// one axis of "slots" derived from zxids. An acknowledged write with zxid z
// sits at slot 4·rank(z), a read whose reply carries zxid z at 4·rank(z)+2:
// after every txn up to z and before the next. Those positions are exact, so
// replaying them in slot order is a linear-time check.
//
// Writes of unknown outcome (no reply, ConnectionLoss) and session expiries
// have no zxid: each gets a window of slots — after every write acknowledged
// before it was called and its own session's earlier replies, before its
// session's later replies — and may take effect anywhere in it, or never.
// Components (sets of paths tied together by replies, see keysOf) are
// checked apart; within one, see replayComponent.

type tlKind int

const (
	tlWrite   tlKind = iota // acknowledged write: exact slot
	tlRead                  // read: exact slot
	tlUnknown               // write of unknown outcome: window
	tlExpire                // session expiry: window
	tlReap                  // the server deleting a container or TTL node: window
)

type tlOp struct {
	kind    tlKind
	e       *Entry // nil for tlExpire and tlReap
	path    string // tlReap: the node
	session int64
	zxid    int64
	lo, hi  int64 // slots; lo == hi for exact ops
	must    bool  // tlExpire: known to have happened by hi
	keys    []string
	// deps are what the operation's result depends on, mods what it
	// changes (see footprint); they decide which pending operations must be
	// settled before an exact one.
	deps, mods []string
	// gap: for an uncertain operation whose window holds no acknowledged
	// write, the index of the zxid gap it falls in (else -1); every
	// operation that takes effect there uses one of its gapCap free zxids.
	gap    int
	gapCap int64
	// gapsClosed: for an exact operation, how many gaps lie wholly before it
	gapsClosed int
}

const slotInfinity = math.MaxInt64 / 4

func (o *tlOp) describe() string {
	switch o.kind {
	case tlExpire:
		return fmt.Sprintf("expiry of session %v", Hex64(o.session))
	case tlReap:
		return "the server's deletion of " + o.path
	}
	return o.e.describe()
}

// reapsIn reports whether ops hold a server's deletion (tlReap): only then
// does the model tell containers and TTL nodes from persistent ones.
func reapsIn(ops []*tlOp) bool {
	return slices.ContainsFunc(ops, func(o *tlOp) bool { return o.kind == tlReap })
}

// uncertain reports whether the operation has a window rather than a slot:
// it may take effect anywhere in it, or never.
func (o *tlOp) uncertain() bool { return o.kind != tlWrite && o.kind != tlRead }

// timeline is a history laid out for the replay.
type timeline struct {
	ops  []*tlOp
	rank map[int64]int64
	// single: the history comes from one server (History.SingleServer),
	// which answers every request in one order.
	single bool
	// reaping: the server deletes containers and TTL nodes by itself
	// (Options.Reaping).
	reaping bool
}

// duplicateZxids reports acknowledged successful writes sharing a zxid.
func duplicateZxids(h History) []Violation {
	var out []Violation
	seen := map[int64]*Entry{}
	for i := range h {
		e := &h[i]
		if !e.IsWrite() || e.OutcomeUnknown() || e.Zxid == nil || e.Err != ErrOK {
			continue
		}
		z := int64(*e.Zxid)
		if prev, dup := seen[z]; dup {
			out = append(out, Violation{
				Guarantee: GuaranteeWrites, Entries: []*Entry{e, prev},
				Explanation: fmt.Sprintf("two acknowledged writes carry the same zxid %v: %s and %s; a zxid names exactly one txn (was a txn lost and its zxid reused?)", Hex64(z), prev.describe(), e.describe()),
			})
		}
		seen[z] = e
	}
	return out
}

// buildTimeline lays out h. includeReads adds reads as exact operations;
// reaping adds the server's deletions of containers and TTL nodes
// (addReaps).
func buildTimeline(h History, includeReads, reaping bool) *timeline {
	tl := &timeline{rank: map[int64]int64{}, single: h.SingleServer(), reaping: reaping}
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

	bySession := map[int64][]*Entry{}
	for i := range h {
		if e := &h[i]; e.Kind == KindOp {
			bySession[e.Session.int()] = append(bySession[e.Session.int()], e)
		}
	}
	acked := ackedByReturn(h, func(e *Entry) bool { return e.IsWrite() })
	ephemeralKeys := map[int64][]string{}
	for i := range h {
		e := &h[i]
		if e.IsWrite() {
			for _, k := range ephemeralCreateKeys(e, observed) {
				ephemeralKeys[e.Session.int()] = append(ephemeralKeys[e.Session.int()], k)
			}
		}
	}

	replies := map[int64]*sessionReplies{}
	for i := range h {
		e := &h[i]
		switch {
		case e.IsWrite() && !e.OutcomeUnknown():
			if e.Zxid == nil {
				continue // not a valid history (see History.Validate): nothing to place
			}
			z := int64(*e.Zxid)
			slot := 4 * tl.rank[z]
			tl.ops = append(tl.ops, &tlOp{kind: tlWrite, e: e, session: e.Session.int(), zxid: z, lo: slot, hi: slot, keys: keysOf(e, observed, ephemeralKeys)})
		case e.IsWrite():
			s := e.Session.int()
			if replies[s] == nil {
				replies[s] = tl.indexSession(bySession[s])
			}
			sessionLo, hi := replies[s].sessionWindow(e.Call)
			lo := max(tl.lowerBound(acked, e.Call), sessionLo)
			tl.ops = append(tl.ops, &tlOp{kind: tlUnknown, e: e, session: e.Session.int(), lo: lo, hi: max(hi, lo), keys: keysOf(e, observed, ephemeralKeys)})
		case includeReads && e.isRead() && e.Returned() && e.Zxid != nil && e.Err != ErrConnectionLoss:
			z := int64(*e.Zxid)
			slot := 4*tl.rank[z] + 2
			tl.ops = append(tl.ops, &tlOp{kind: tlRead, e: e, session: e.Session.int(), zxid: z, lo: slot, hi: slot, keys: keysOf(e, observed, ephemeralKeys)})
		}
	}
	tl.addExpiries(h, bySession, ephemeralKeys)
	if reaping {
		tl.addReaps(h, observed)
	}
	ephemeralPrints := map[int64][2][]string{}
	for i := range h {
		if e := &h[i]; e.IsWrite() {
			deps, mods := ephemeralFootprint(e)
			fp := ephemeralPrints[e.Session.int()]
			ephemeralPrints[e.Session.int()] = [2][]string{append(fp[0], deps...), append(fp[1], mods...)}
		}
	}
	tl.placeInGaps()
	for _, op := range tl.ops {
		if op.kind == tlReap {
			continue // addReaps gave its footprint
		}
		if op.kind == tlExpire || op.e.Op == OpClose {
			fp := ephemeralPrints[op.session]
			op.deps, op.mods = fp[0], append(slices.Clip(fp[1]), sessionKey(op.session))
			continue
		}
		op.deps, op.mods = footprintOf(op.e, op.kind != tlUnknown)
		op.deps = append(op.deps, sessionKey(op.session)) // fails once its session has ended
		if searchShortcuts && op.kind == tlWrite && op.e.Err != ErrOK {
			// An acknowledged write that failed changed nothing (the
			// replay checks that the model agrees), so no pending
			// operation has to be ordered against it for what it changes.
			op.mods = nil
		}
	}
	for _, op := range tl.ops {
		// Sorted sets, which relevantPending intersects by binary search:
		// a session's end holds the keys of every ephemeral it had,
		// hundreds (their parent's once each), and meets every exact
		// operation while it is pending.
		op.deps, op.mods = sortedSet(op.deps), sortedSet(op.mods)
	}
	return tl
}

// sortedSet returns keys sorted without duplicates, leaving keys alone
// (footprints may share their arrays).
func sortedSet(keys []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(keys)))
}

// meet reports whether the sorted sets a and b share a key.
func meet(a, b []string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	for _, k := range a {
		if _, found := slices.BinarySearch(b, k); found {
			return true
		}
	}
	return false
}

// placeInGaps finds, for each uncertain operation, the gap between
// acknowledged writes' zxids its window lies in, and how many zxids that gap
// has free: a txn that took effect there used one of them (failed writes,
// session creations and expiries use them too, so this is an upper bound).
// Windows that span an acknowledged write, and gaps across an epoch change
// or past the last acknowledged write, are not bounded.
func (tl *timeline) placeInGaps() {
	var known []int64
	for _, op := range tl.ops {
		if op.kind == tlWrite {
			known = append(known, op.zxid)
		}
	}
	slices.Sort(known)
	known = slices.Compact(known)
	slot := func(i int) int64 { return 4 * tl.rank[known[i]] }
	for _, op := range tl.ops {
		op.gap = -1
		if !op.uncertain() {
			op.gapsClosed = sort.Search(len(known), func(i int) bool { return slot(i) > op.lo })
			continue
		}
		i := sort.Search(len(known), func(i int) bool { return slot(i) >= op.lo })
		if i == len(known) || slot(i) <= op.hi {
			continue // past the last acknowledged write, or spans one
		}
		below := int64(0)
		if i > 0 {
			below = known[i-1]
		}
		if below>>32 != known[i]>>32 {
			continue // the counter restarts with a new epoch
		}
		op.gap, op.gapCap = i, known[i]-below-1
	}
}

// sessionKey stands for a session being alive.
func sessionKey(session int64) string { return "session:" + Hex64(session).String() }

// lowerBound is the first slot an operation called at time call may take:
// after every write acknowledged before the call.
func (tl *timeline) lowerBound(acked []returnedWrite, call int64) int64 {
	w := latestBefore(acked, call)
	if w == nil {
		return -1
	}
	return 4*tl.rank[w.zxid] + 1
}

// replySlot is where an entry's reply sits on the timeline, if it has a
// definite one with a zxid.
func (tl *timeline) replySlot(o *Entry) (int64, bool) {
	if o.Kind != KindOp || o.Zxid == nil || !o.Returned() || o.OutcomeUnknown() || o.Err == ErrSessionExpired {
		return 0, false
	}
	slot := 4 * tl.rank[int64(*o.Zxid)]
	if !o.IsWrite() {
		slot += 2
	}
	return slot, true
}

// sessionReplies indexes a session's definite replies by call time: the
// running maximum of their slots from the left, and the minimum from the
// right of those that bound a write of unknown outcome from above (see
// boundsLater).
type sessionReplies struct {
	calls     []int64
	maxBefore []int64 // maxBefore[i]: highest slot among calls[:i+1]
	later     []int64 // calls of the replies that bound from above
	minAfter  []int64 // minAfter[i]: lowest slot among later[i:]
}

func (tl *timeline) indexSession(ops []*Entry) *sessionReplies {
	type reply struct {
		call, slot int64
		later      bool
	}
	var rs []reply
	for _, o := range ops {
		if slot, ok := tl.replySlot(o); ok {
			rs = append(rs, reply{o.Call, slot, tl.boundsLater(o)})
		}
	}
	sort.Slice(rs, func(a, b int) bool { return rs[a].call < rs[b].call })
	idx := &sessionReplies{calls: make([]int64, len(rs)), maxBefore: make([]int64, len(rs))}
	for i, r := range rs {
		idx.calls[i] = r.call
		idx.maxBefore[i] = r.slot
		if i > 0 {
			idx.maxBefore[i] = max(r.slot, idx.maxBefore[i-1])
		}
		if r.later {
			idx.later = append(idx.later, r.call)
			idx.minAfter = append(idx.minAfter, r.slot)
		}
	}
	for i := len(idx.minAfter) - 2; i >= 0; i-- {
		idx.minAfter[i] = min(idx.minAfter[i], idx.minAfter[i+1])
	}
	return idx
}

// boundsLater reports whether reply o of a session bounds from above where
// that session's earlier write of unknown outcome may take effect. A write
// does: the server (an ensemble's leader) orders a session's writes as
// sent, and once the session has moved to another connection a request
// still on its way from the old one fails (SessionMoved). A read does on
// one server only, which answers it after the session's earlier writes.
// In an ensemble the write's reply was lost with its connection; the
// client may reconnect to a member that has not applied it yet, and that
// member answers reads from its own tree.
func (tl *timeline) boundsLater(o *Entry) bool { return tl.single || o.IsWrite() }

// sessionWindow bounds where an operation of unknown outcome called at call
// may take effect by its own session's replies: a session's requests are
// applied in the order it sent them, so after every one sent before it that
// has a reply, and before every later one that bounds it (boundsLater).
func (idx *sessionReplies) sessionWindow(call int64) (lo, hi int64) {
	lo, hi = -1, slotInfinity
	if i := sort.Search(len(idx.calls), func(i int) bool { return idx.calls[i] >= call }); i > 0 {
		lo = idx.maxBefore[i-1] + 1
	}
	if j := sort.Search(len(idx.later), func(i int) bool { return idx.later[i] > call }); j < len(idx.later) {
		hi = idx.minAfter[j] - 1
	}
	return lo, hi
}

// addExpiries adds, for every session that created ephemerals and was not
// seen to close, its expiry as an operation with a window: after its last
// reply, and, if the history shows the expiry (an Expired event or a
// SessionExpired reply), before the first write, or by the first sync,
// called after that and ordered after it (expiryBounds).
func (tl *timeline) addExpiries(h History, bySession map[int64][]*Entry, ephemeralKeys map[int64][]string) {
	f := gatherSessions(h)
	sessions := make([]int64, 0, len(ephemeralKeys))
	for s := range ephemeralKeys {
		sessions = append(sessions, s)
	}
	slices.Sort(sessions)
	for _, s := range sessions {
		if _, closed := f.closeZxid[s]; closed {
			continue
		}
		lo := int64(-1)
		for _, e := range bySession[s] {
			if slot, ok := tl.replySlot(e); ok {
				lo = max(lo, slot+1)
			}
		}
		op := &tlOp{kind: tlExpire, session: s, lo: lo, hi: slotInfinity, keys: ephemeralKeys[s]}
		if w := f.closedBefore[s].op; w != nil {
			// before the write's txn, or at the latest with the txn of
			// the sync's reply zxid (before the reads at that zxid)
			op.must = true
			hi := 4*tl.rank[int64(*w.Zxid)] - 1
			if w.Op == OpSync {
				hi += 2
			}
			op.hi = max(lo, hi)
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
	// tied to the sequential creates that may have made it or an ancestor
	keys = append(keys, counterPrefixes(path)...)
	if created != "" && created != path {
		keys = append(keys, counterPrefixes(created)...)
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

// checkTimeline replays every component and turns failures into violations.
func checkTimeline(tl *timeline, guarantee string, deadline time.Time, keep func(*tlOp) bool) []Violation {
	var out []Violation
	for _, comp := range tl.components() {
		res := replayComponent(comp, deadline)
		// An undecided component is a failure of every checker that
		// replays it, whatever operation it stopped at: dropping it as
		// "not ours" would let a deadline that runs out pass.
		if res == nil || (!res.gaveUp && !keep(res.failed)) {
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
		case res.gaveUp && res.tooMany:
			v.Explanation = fmt.Sprintf("at %s, the %d operations of unknown outcome in this component (%s) leave more than %d possible states, and no sample of them the search kept explains it; an undecided check counts as a failure", res.failed.describe(), len(res.others), strings.Join(unknown, "; "), maxStates)
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
