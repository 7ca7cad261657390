package linearizability

import (
	"cmp"
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
	return tl
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

// Footprint keys: nodeKey(p) stands for whether p exists (and its owner),
// dataKey(p) for its data, versions and mzxid, kidsKey(p) for its children,
// cversion, pzxid and sequential counter, seqNameKey(prefix) for every node
// a sequential create of unknown name with that prefix may have made (the
// prefix and a 10-digit counter).
func nodeKey(p string) string    { return "node:" + p }
func dataKey(p string) string    { return "data:" + p }
func kidsKey(p string) string    { return "kids:" + p }
func seqNameKey(p string) string { return "seqname:" + p }

const sequentialCounterDigits = 10

// counterPrefixes are the prefixes that a sequential create would have
// to be given to make p or one of its ancestors (the name without its
// 10-digit counter): a sequential create of unknown name may have made them.
func counterPrefixes(p string) []string {
	var out []string
	for ; p != "/" && p != ""; p, _ = parentOf(p) {
		if _, base := parentOf(p); len(base) >= sequentialCounterDigits &&
			strings.Trim(base[len(base)-sequentialCounterDigits:], "0123456789") == "" {
			out = append(out, p[:len(p)-sequentialCounterDigits])
		}
	}
	return out
}

// seqNameKeys are the seqNameKeys of p's counter prefixes.
func seqNameKeys(p string) []string {
	var keys []string
	for _, prefix := range counterPrefixes(p) {
		keys = append(keys, seqNameKey(prefix))
	}
	return keys
}

// footprint gives what one (sub-)operation's effect depends on, what its
// reply shows besides (observes), and what it changes. Two creates or
// deletes of different children both change their parent's children, but
// in ways that commute (the unknown zxid of an uncertain one matches any
// pzxid), so a parent's kidsKey matters only to what observes it: reads and
// stats of the parent, deletes of it (NotEmpty), sequential creates under
// it (the counter).
func footprint(op, path, created, mode string) (deps, observes, mods []string) {
	if path == "" {
		path = "/"
	}
	parent, _ := parentOf(path)
	deps = seqNameKeys(path)
	if created != "" && created != path {
		deps = append(deps, seqNameKeys(created)...)
	}
	switch op {
	case OpCreate:
		deps = append(deps, nodeKey(parent))
		if modeNames[mode].Sequential() {
			deps = append(deps, kidsKey(parent))
			if created == "" {
				return deps, nil, []string{seqNameKey(path), kidsKey(parent)}
			}
		}
		name := path
		if created != "" {
			name = created
		}
		return append(deps, nodeKey(name)), nil, []string{nodeKey(name), dataKey(name), kidsKey(parent)}
	case OpDelete:
		return append(deps, nodeKey(path), dataKey(path), kidsKey(path)), nil,
			[]string{nodeKey(path), dataKey(path), kidsKey(parent)}
	case OpSetData, OpSetACL: // the returned stat shows the children too
		return append(deps, nodeKey(path), dataKey(path)), []string{kidsKey(path)}, []string{dataKey(path)}
	case OpGetData, OpExists, OpGetChildren:
		return deps, []string{nodeKey(path), dataKey(path), kidsKey(path)}, nil
	}
	return append(deps, nodeKey(path), dataKey(path)), nil, nil // check
}

// footprintOf is the union of an entry's (sub-)operations' footprints:
// what the operation depends on and what it changes. What its reply shows
// counts only for an operation with a reply (an exact one).
func footprintOf(e *Entry, exact bool) (deps, mods []string) {
	add := func(op, path, created, mode string) {
		d, o, m := footprint(op, path, created, mode)
		deps, mods = append(deps, d...), append(mods, m...)
		if exact {
			deps = append(deps, o...)
		}
	}
	if e.Op != OpMulti && e.Op != OpMultiRead {
		add(e.Op, e.Path, e.Created, e.Mode)
		return deps, mods
	}
	for i, s := range e.Ops {
		created := ""
		if i < len(e.Results) {
			created = e.Results[i].Created
		}
		add(s.Op, s.Path, created, s.Mode)
	}
	return deps, mods
}

// ephemeralFootprint is what the end of e's session touches of the
// ephemerals e creates: the nodes (or, for a sequential one of unknown name,
// every name its prefix and a counter make) and their parents' children.
func ephemeralFootprint(e *Entry) (deps, mods []string) {
	add := func(op, path, created, mode string) {
		if op != OpCreate || !modeNames[mode].Ephemeral() {
			return
		}
		_, _, m := footprint(op, path, created, mode)
		deps, mods = append(deps, m...), append(mods, m...)
	}
	add(e.Op, e.Path, e.Created, e.Mode)
	for i, s := range e.Ops {
		created := ""
		if i < len(e.Results) {
			created = e.Results[i].Created
		}
		add(s.Op, s.Path, created, s.Mode)
	}
	return deps, mods
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
		next, why, left := stepStates(states, ops, i, salt)
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
	states, left := resolveAll(states, ops, slotInfinity, salt)
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
func stepStates(states []*pstate, ops []*tlOp, i int, salt uint64) (out []*pstate, why string, sampled bool) {
	op := ops[i]
	if len(states) == 1 && len(states[0].pending) == 0 {
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
		cands, left := resolve(st, ops, op, op.lo, budget, salt)
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
func resolve(st *pstate, ops []*tlOp, x *tlOp, slot int64, budget int, salt uint64) (out []*pstate, sampled bool) {
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
				ts := stepNondet(n.t, ops[k])
				applied := ts[len(ts)-1]
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
	deps, mods := map[string]bool{}, map[string]bool{}
	take := func(op *tlOp) {
		for _, k := range op.deps {
			deps[k] = true
		}
		for _, k := range op.mods {
			mods[k] = true
		}
	}
	take(x)
	in := make([]bool, len(st.pending))
	for grew := true; grew; {
		grew = false
		for j, k := range st.pending {
			if in[j] {
				continue
			}
			meets := slices.ContainsFunc(ops[k].mods, func(key string) bool { return deps[key] }) ||
				slices.ContainsFunc(ops[k].deps, func(key string) bool { return mods[key] })
			sentEarlier := false
			for r, kr := range st.pending {
				if in[r] && sentBefore(ops[k], ops[kr]) {
					sentEarlier = true
					break
				}
			}
			if !meets && !sentEarlier {
				continue
			}
			in[j], grew = true, true
			take(ops[k])
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
func resolveAll(states []*pstate, ops []*tlOp, slot int64, salt uint64) (out []*pstate, sampled bool) {
	var set stateSet
	budget := resolveBudget(len(states))
	for _, st := range states {
		cands, left := resolve(st, ops, nil, slot, budget, salt)
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
	for k := 0; k < i; k++ {
		if ops[k].uncertain() {
			for _, st := range states {
				st.pending = append(slices.Clip(st.pending), k)
			}
			continue
		}
		states, _, _ = stepStates(states, ops, k, 0)
	}
	budget := resolveBudget(len(states))
	var set stateSet
	for _, st := range states {
		cands, _ := resolve(st, ops, ops[i], ops[i].lo, budget, 0)
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
