package linearizability

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/zabd/zabd/wire"
)

// pathWrite is one acknowledged, successful change of a path.
type pathWrite struct {
	e         *Entry
	zxid      int64
	op        string // create, delete, setData
	data      string
	deleted   bool
	ephemeral bool     // an ephemeral create
	reap      reapKind // a create of a container or TTL node
}

// successfulWrites indexes acknowledged successful writes by the path they
// change (multi sub-operations included, session closes not), in zxid order.
func successfulWrites(h History) map[string][]pathWrite {
	out := map[string][]pathWrite{}
	add := func(e *Entry, op, path, created, mode string, data *string) {
		if created != "" {
			path = created
		}
		w := pathWrite{e: e, zxid: int64(*e.Zxid), op: op, data: derefString(data), deleted: op == OpDelete}
		if op == OpCreate {
			w.ephemeral, w.reap = modeNames[mode].Ephemeral(), reapKindOf(modeNames[mode])
		}
		out[path] = append(out[path], w)
	}
	for i := range h {
		e := &h[i]
		if !e.IsWrite() || e.OutcomeUnknown() || e.Zxid == nil || e.Err != ErrOK {
			continue
		}
		switch e.Op {
		case OpCreate, OpDelete, OpSetData:
			add(e, e.Op, e.Path, e.Created, e.Mode, e.Data)
		case OpMulti:
			if len(e.Results) == len(e.Ops) && multiSucceeded(e) {
				for j, s := range e.Ops {
					if s.Op != OpCheck {
						add(e, s.Op, s.Path, e.Results[j].Created, s.Mode, s.Data)
					}
				}
			}
		}
	}
	for _, ws := range out {
		sort.SliceStable(ws, func(a, b int) bool { return ws[a].zxid < ws[b].zxid })
	}
	return out
}

// uncertainPaths are the paths that writes of unknown outcome may have
// deleted, or created ephemeral (and so left to their session's end), or
// created as a container or TTL node (and so left to the server's reaper).
type uncertainPaths struct {
	deleted map[string]bool
	// ephemeral and reapable: paths of such creates of unknown outcome; a
	// sequential create is kept by its prefix, the name being the prefix
	// and a 10-digit counter.
	ephemeral, reapable createdPaths
}

// createdPaths are the paths creates may have made: exact ones, and the
// prefixes of sequential ones.
type createdPaths struct{ exact, seq map[string]bool }

func (c createdPaths) add(path string, m wire.CreateMode) {
	if m.Sequential() {
		c.seq[path] = true
	} else {
		c.exact[path] = true
	}
}

// holds reports whether one of the creates may have made path.
func (c createdPaths) holds(path string) bool {
	if c.exact[path] {
		return true
	}
	const counterDigits = 10
	if len(path) <= counterDigits {
		return false
	}
	prefix, counter := path[:len(path)-counterDigits], path[len(path)-counterDigits:]
	return c.seq[prefix] && strings.Trim(counter, "0123456789") == ""
}

func uncertainWrites(h History) uncertainPaths {
	out := uncertainPaths{deleted: map[string]bool{},
		ephemeral: createdPaths{exact: map[string]bool{}, seq: map[string]bool{}},
		reapable:  createdPaths{exact: map[string]bool{}, seq: map[string]bool{}}}
	add := func(op, path, mode string) {
		switch m := modeNames[mode]; {
		case op == OpDelete:
			out.deleted[path] = true
		case op == OpCreate && m.Ephemeral():
			out.ephemeral.add(path, m)
		case op == OpCreate && reapKindOf(m) != reapNever:
			out.reapable.add(path, m)
		}
	}
	for i := range h {
		e := &h[i]
		if !e.OutcomeUnknown() {
			continue
		}
		add(e.Op, e.Path, e.Mode)
		for _, s := range e.Ops {
			add(s.Op, s.Path, s.Mode)
		}
	}
	return out
}

// mayBeEphemeral reports whether a create of unknown outcome may have made
// path as an ephemeral.
func (u uncertainPaths) mayBeEphemeral(path string) bool { return u.ephemeral.holds(path) }

// ephemeralAt reports whether the node at path as last written by ws up to
// last may be an ephemeral: its session's end may have removed it since.
// When no acknowledged create made it (the last create or delete before is
// a delete, or there is none), a create of unknown outcome did, which may
// have been an ephemeral one (u.mayBeEphemeral). So may it have when a
// delete of unknown outcome may have removed the node an acknowledged
// create made (hunt seed 66425: a persistent /a/x, deleted and made again
// as an ephemeral by two lost requests, then written to, went with the
// ephemeral's session).
func ephemeralAt(ws []pathWrite, last *pathWrite, path string, u uncertainPaths) bool {
	unknownEphemeral := u.mayBeEphemeral(path)
	for i := len(ws) - 1; i >= 0; i-- {
		if w := &ws[i]; w.zxid <= last.zxid && (w.op == OpCreate || w.deleted) {
			if w.deleted {
				return unknownEphemeral
			}
			return w.ephemeral || (unknownEphemeral && u.deleted[path])
		}
	}
	return unknownEphemeral
}

// reapableAt reports whether the node at path, as the acknowledged write
// last (of ws, its path's writes) left it, may have been deleted by the
// server since (Options.Reaping; whether it had children is left to the
// replaying checkers): a container or TTL node, or any node other than an
// ephemeral where one was made before — the server picks what to reap from
// a tree that lags the txns it has accepted, and prepares a deleteContainer
// checking only children and that the node is not an ephemeral, so a reap
// decided for the old node deletes whatever non-ephemeral node was created
// at its path since (ZooKeeper's PrepRequestProcessor does the same; hunt
// seeds 35633, 43981). A container or TTL create of unknown outcome at the
// path counts as one made before; and when no acknowledged create made the
// node (the last create or delete before is a delete, or there is none), it
// may be what made it (hunt seed 37680: a createContainer lost to a
// ConnectionLoss made the node, reaped once its child went).
func reapableAt(ws []pathWrite, last *pathWrite, path string, u uncertainPaths) bool {
	unknownReapable := u.reapable.holds(path)
	newest := true // the newest create or delete up to last
	for i := len(ws) - 1; i >= 0; i-- {
		w := &ws[i]
		if w.zxid > last.zxid || (w.op != OpCreate && !w.deleted) {
			continue
		}
		if newest && !w.deleted && w.ephemeral {
			return false // the server never reaps an ephemeral
		}
		newest = false
		if unknownReapable || (!w.deleted && w.reap != reapNever) {
			return true
		}
	}
	return unknownReapable
}

func multiSucceeded(e *Entry) bool {
	for _, r := range e.Results {
		if r.Err != ErrOK {
			return false
		}
	}
	return true
}

// CheckSyncRead checks that a read issued after a sync returned sees every
// write acknowledged before the sync was called: its reply zxid is at least
// theirs, and it does not show its path older than the last of them. A
// violation whose sync was answered in an older epoch than the write it
// misses is reported as GuaranteeSyncLeaderChange: a sync is not a quorum
// operation, so a leader that has been replaced without knowing it may
// answer it (ZOOKEEPER-1675), which ZooKeeper does not promise against.
func CheckSyncRead(h History, opt Options) []Violation {
	writes := successfulWrites(h)
	acked := ackedByReturn(h, func(e *Entry) bool { return e.IsWrite() })
	lastByPath := map[string][]returnedWrite{}
	for p, ws := range writes {
		lastByPath[p] = byReturn(ws)
	}
	uncertain := uncertainWrites(h)
	var out []Violation
	lastSync := map[int64]*Entry{}
	for _, e := range bySeq(h) {
		if e.Kind != KindOp || !e.Returned() {
			continue
		}
		s := e.Session.int()
		if e.Op == OpSync && e.Err == ErrOK {
			lastSync[s] = e
			continue
		}
		sync := lastSync[s]
		if sync == nil || (e.Op != OpGetData && e.Op != OpExists && e.Op != OpGetChildren) || e.Zxid == nil {
			continue
		}
		if e.Err != ErrOK && e.Err != errNoNode {
			continue
		}
		if need := latestBefore(acked, sync.Call); need != nil && int64(*e.Zxid) < need.zxid {
			out = append(out, Violation{Guarantee: syncGuarantee(sync, need), Entries: []*Entry{e, sync, need.e},
				Explanation: fmt.Sprintf("%s follows %s, yet its zxid is below that of %s, acknowledged before the sync was called", e.describe(), sync.describe(), need.e.describe())})
			continue
		}
		last := latestBefore(lastByPath[e.Path], sync.Call)
		if why := staleAfter(writes[e.Path], last, e, uncertain, opt.Reaping); why != "" {
			out = append(out, Violation{Guarantee: syncGuarantee(sync, last), Entries: []*Entry{e, sync, last.e},
				Explanation: fmt.Sprintf("%s follows %s, yet %s", e.describe(), sync.describe(), why)})
		}
	}
	return out
}

// syncGuarantee names the guarantee a read after sync breaks by missing
// write w: sync then read, or, when the sync was answered in an epoch
// older than w's, sync across a leader change.
func syncGuarantee(sync *Entry, w *pathWrite) string {
	if epochOf(w.zxid) > epochOf(int64(*sync.Zxid)) {
		return GuaranteeSyncLeaderChange
	}
	return GuaranteeSyncRead
}

// epochOf is a zxid's epoch, its high 32 bits.
func epochOf(zxid int64) int64 { return zxid >> 32 }

// returnedWrite is an acknowledged write with the highest-zxid write among
// those returned no later than it.
type returnedWrite struct {
	ret    int64
	latest *pathWrite
}

// byReturn orders writes by return time with running maxima of zxid.
func byReturn(ws []pathWrite) []returnedWrite {
	out := make([]returnedWrite, len(ws))
	for i := range ws {
		out[i] = returnedWrite{ret: *ws[i].e.Return, latest: &ws[i]}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].ret < out[b].ret })
	for i := 1; i < len(out); i++ {
		if out[i-1].latest.zxid > out[i].latest.zxid {
			out[i].latest = out[i-1].latest
		}
	}
	return out
}

// ackedByReturn indexes h's acknowledged operations that keep by return.
func ackedByReturn(h History, keep func(*Entry) bool) []returnedWrite {
	var ws []pathWrite
	for i := range h {
		if e := &h[i]; keep(e) && e.Returned() && !e.OutcomeUnknown() && e.Zxid != nil && e.Err != ErrSessionExpired {
			ws = append(ws, pathWrite{e: e, zxid: int64(*e.Zxid)})
		}
	}
	return byReturn(ws)
}

// latestBefore is the highest-zxid write returned before t, or nil.
func latestBefore(idx []returnedWrite, t int64) *pathWrite {
	i := sort.Search(len(idx), func(i int) bool { return idx[i].ret >= t })
	if i == 0 {
		return nil
	}
	return idx[i-1].latest
}

// staleAfter explains how read r shows its path older than last, the last
// write to it acknowledged before the sync, or "". With reaping, a
// container or TTL node may have been deleted by the server since.
func staleAfter(ws []pathWrite, last *pathWrite, r *Entry, uncertain uncertainPaths, reaping bool) string {
	if last == nil {
		return ""
	}
	switch {
	case r.Err == errNoNode && !last.deleted:
		if ephemeralAt(ws, last, r.Path, uncertain) || uncertain.deleted[r.Path] || (reaping && reapableAt(ws, last, r.Path, uncertain)) {
			return "" // its session may have ended since, or a delete of unknown outcome took effect
		}
		for _, w := range ws {
			if w.deleted && w.zxid > last.zxid {
				return ""
			}
		}
		return fmt.Sprintf("it found no %s although %s was acknowledged before and nothing deleted it after", r.Path, last.e.describe())
	case r.Err == ErrOK && r.Stat != nil && !last.deleted && int64(r.Stat.Mzxid) < last.zxid:
		return fmt.Sprintf("it shows %s with mzxid %v, older than %s acknowledged before", r.Path, r.Stat.Mzxid, last.e.describe())
	case r.Err == ErrOK && r.Stat != nil && last.deleted && int64(r.Stat.Czxid) < last.zxid:
		return fmt.Sprintf("it shows %s created at %v, although %s deleted it", r.Path, r.Stat.Czxid, last.e.describe())
	}
	return ""
}

// watch is a one-shot watch a session holds.
type watch struct {
	path  string
	child bool
	exist bool // set by exists on a missing node: waits for NodeCreated
	set   *Entry
	fire  *pathWrite // the first write after it that fires it; nil: none
}

// CheckWatches checks watch before data: once a session holds a watch, no
// reply it receives with a zxid at or past the first write that fires the
// watch comes before the watch's event. Persistent watches (addWatch) are
// not checked, but end the standard watches they replace.
//
// A client that reconnects re-registers its watches with SetWatches, and
// the server answers it with the events of the writes it missed. A client
// that sends SetWatches first (ZooKeeper's Java client, the simulator's)
// keeps the guarantee as is. go-zookeeper sends it concurrently with its
// queued requests, so replies to those may overtake the events SetWatches
// brings; a history that records the setWatches reply (op "setWatches")
// exempts, until that reply, the watches held across the disconnection
// whose firing write is not past the setWatches' zxid.
func CheckWatches(h History, opt Options) []Violation {
	writes := successfulWrites(h)
	uncertain := uncertainWrites(h)
	childWrites := map[string][]pathWrite{}
	for p, ws := range writes {
		parent, _ := parentOf(p)
		for _, w := range ws {
			if w.op == OpCreate || w.deleted {
				childWrites[parent] = append(childWrites[parent], w)
			}
		}
	}
	for _, ws := range childWrites {
		sort.SliceStable(ws, func(a, b int) bool { return ws[a].zxid < ws[b].zxid })
	}
	firstAfter := func(ws []pathWrite, z int64) *pathWrite {
		i := sort.Search(len(ws), func(i int) bool { return ws[i].zxid > z })
		if i == len(ws) {
			return nil
		}
		return &ws[i]
	}
	entries := bySeq(h)
	rereg, firstReply := reregistrations(entries)
	lastZxid := map[int]int64{}
	var out []Violation
	held := map[int][]*watch{} // by client
	// per client, between reconnecting and its setWatches reply: that reply
	// and the watches held across the disconnection
	type reconnect struct {
		setWatches *Entry
		across     map[*watch]bool
	}
	away := map[int]*reconnect{}
	across := map[int]map[*watch]bool{}     // watches held at the last disconnection
	persistent := map[int]map[string]bool{} // paths with an addWatch registration, by client
	for _, e := range entries {
		c := e.Client
		if e.Kind == KindEvent {
			switch e.Type {
			case StateExpired, StateClosed:
				held[c], away[c], across[c], persistent[c] = nil, nil, nil, nil
			case StateDisconnected:
				across[c] = map[*watch]bool{}
				for _, w := range held[c] {
					across[c][w] = true
				}
			case StateSyncConnected:
				// A reconnecting client re-registers everything it believes
				// it holds, persistent watches last, so that on a path with
				// both the persistent one wins.
				held[c] = slices.DeleteFunc(held[c], func(w *watch) bool { return persistent[c][w.path] })
				// SetWatches fires an exists watch only if the node exists
				// when it is processed: one created and deleted meanwhile
				// (by an acknowledged delete, or by what no reply shows: a
				// delete of unknown outcome, its owner's end, the server's
				// reaping) goes unnoticed and the watch waits for the next
				// create.
				at, ok := firstReply[e]
				if sw := rereg[e]; sw != nil {
					at, ok = int64(*sw.Zxid), true // known exactly
				}
				if ok {
					for _, w := range held[c] {
						if w.exist && across[c][w] && w.fire != nil && w.fire.zxid > lastZxid[c] && w.fire.zxid <= at &&
							mayBeGoneAt(writes[w.path], w.path, at, uncertain, opt.Reaping) {
							w.fire = firstAfter(writes[w.path], at)
						}
					}
				}
				if sw := rereg[e]; sw != nil {
					away[c] = &reconnect{setWatches: sw, across: across[c]}
				}
			case wire.EventPersistentWatchRemoved.String():
				delete(persistent[c], e.Path)
			case wire.EventDataWatchRemoved.String():
				held[c] = dropWatches(held[c], e.Path, true, false)
			case wire.EventChildWatchRemoved.String():
				held[c] = dropWatches(held[c], e.Path, false, true)
			default:
				held[c] = removeFired(held[c], e)
			}
			continue
		}
		if !e.Returned() || e.Zxid == nil || e.OutcomeUnknown() || e.Err == ErrConnectionLoss || e.Err == ErrSessionExpired {
			continue
		}
		z := int64(*e.Zxid)
		lastZxid[c] = max(lastZxid[c], z)
		r := away[c]
		if r != nil && r.setWatches == e {
			away[c], r = nil, nil // re-registered: the guarantee holds again, for this reply too
		}
		for _, w := range held[c] {
			if w.fire != nil && r != nil && r.across[w] && w.fire.zxid <= int64(*r.setWatches.Zxid) {
				continue // its event comes with the setWatches reply, which may trail this one
			}
			if w.fire != nil && z >= w.fire.zxid && w.set.Session == e.Session {
				out = append(out, Violation{Guarantee: GuaranteeWatch, Entries: []*Entry{e, w.set, w.fire.e},
					Explanation: fmt.Sprintf("%s arrived before the event for the watch that %s set on %s, although %s fired that watch at a zxid not above the reply's", e.describe(), w.set.describe(), w.path, w.fire.e.describe())})
				w.fire = nil // report once
			}
		}
		switch {
		case e.Op == OpRemoveWatches && e.Err == ErrOK:
			held[c] = dropWatches(held[c], e.Path, e.WatchMode != wire.WatcherChildren.String(), e.WatchMode != wire.WatcherData.String())
			if e.WatchMode == wire.WatcherAny.String() {
				delete(persistent[c], e.Path)
			}
		case e.Op == OpAddWatch && e.Err == ErrOK:
			// one registration per watcher and path: a persistent watch
			// replaces the standard ones (which a recursive one never
			// answers with NodeChildrenChanged), and the other way round
			held[c] = dropWatches(held[c], e.Path, true, true)
			if persistent[c] == nil {
				persistent[c] = map[string]bool{}
			}
			persistent[c][e.Path] = true
		}
		if e.Watch && (e.Err == ErrOK || (e.Op == OpExists && e.Err == errNoNode)) {
			w := &watch{path: e.Path, child: e.Op == OpGetChildren, exist: e.Err == errNoNode, set: e}
			if w.child {
				w.fire = earliest(firstAfter(childWrites[e.Path], z), firstDelete(writes[e.Path], z))
			} else {
				w.fire = firstAfter(writes[e.Path], z)
			}
			held[c] = append(held[c], w)
		}
	}
	return out
}

// reregistrations maps each SyncConnected event to the setWatches reply its
// client records next, and to the zxid of the first reply it receives next
// (an upper bound of when the server processed its SetWatches), before any
// other connection state change.
func reregistrations(entries []*Entry) (setWatches map[*Entry]*Entry, firstReply map[*Entry]int64) {
	setWatches, firstReply = map[*Entry]*Entry{}, map[*Entry]int64{}
	lastSW, lastFirst := map[int]*Entry{}, map[int]*Entry{}
	for _, e := range entries {
		c := e.Client
		switch {
		case e.Kind == KindEvent && e.Type == StateSyncConnected:
			lastSW[c], lastFirst[c] = e, e
		case e.IsStateEvent():
			lastSW[c], lastFirst[c] = nil, nil
		case e.Kind != KindOp || !e.Returned() || e.Zxid == nil || e.OutcomeUnknown():
		default:
			if sc := lastFirst[c]; sc != nil {
				firstReply[sc], lastFirst[c] = int64(*e.Zxid), nil
			}
			if sc := lastSW[c]; sc != nil && e.Op == OpSetWatches {
				setWatches[sc], lastSW[c] = e, nil
			}
		}
	}
	return setWatches, firstReply
}

// existsAt reports whether the path whose writes are ws exists after every
// write up to zxid.
// mayBeGoneAt reports whether path may not exist at zxid, given its
// acknowledged writes ws: none leaves it there, or it may have gone since
// without a reply to show it — by a delete of unknown outcome, with the
// session that owned it, or (reaping) by the server's own deletion.
func mayBeGoneAt(ws []pathWrite, path string, zxid int64, u uncertainPaths, reaping bool) bool {
	i := sort.Search(len(ws), func(i int) bool { return ws[i].zxid > zxid })
	if i == 0 || ws[i-1].deleted {
		return true
	}
	last := &ws[i-1]
	return u.deleted[path] || last.ephemeral || (reaping && reapableAt(ws, last, path, u))
}

func firstDelete(ws []pathWrite, z int64) *pathWrite {
	for i := range ws {
		if ws[i].zxid > z && ws[i].deleted {
			return &ws[i]
		}
	}
	return nil
}

func earliest(a, b *pathWrite) *pathWrite {
	if a == nil || (b != nil && b.zxid < a.zxid) {
		return b
	}
	return a
}

// dropWatches removes the data and/or child watches held on path.
func dropWatches(ws []*watch, path string, data, child bool) []*watch {
	return slices.DeleteFunc(ws, func(w *watch) bool {
		return w.path == path && ((w.child && child) || (!w.child && data))
	})
}

// removeFired drops the watches event e delivers.
func removeFired(ws []*watch, e *Entry) []*watch {
	out := ws[:0]
	for _, w := range ws {
		fired := w.path == e.Path && (e.Type == "NodeDeleted" ||
			(w.child && e.Type == "NodeChildrenChanged") ||
			(!w.child && (e.Type == "NodeDataChanged" || e.Type == "NodeCreated")))
		if !fired {
			out = append(out, w)
		}
	}
	return out
}

// sessionFacts gathers what a history shows about each session's end.
type sessionFacts struct {
	closeZxid map[int64]int64 // acknowledged close
	expiredAt map[int64]int64 // first sign of expiry (event or reply time)
	expiredBy map[int64]*Entry
	// closedBefore: for a session shown expired, the acknowledged
	// operation with the lowest zxid that its closeSession txn must
	// precede (a write) or be applied by (a sync), and the sign of the
	// expiry it was called after; see expiryBounds. Absent when nothing
	// bounds it.
	closedBefore map[int64]expiryBound
}

// expiryBound is an operation ordered after a session's close, called
// after sign showed the session expired.
type expiryBound struct{ op, sign *Entry }

func gatherSessions(h History) sessionFacts {
	f := sessionFacts{closeZxid: map[int64]int64{}, expiredAt: map[int64]int64{}, expiredBy: map[int64]*Entry{}}
	for i := range h {
		e := &h[i]
		s := e.Session.int()
		if e.Kind == KindOp && e.Op == OpClose && e.Returned() && e.Err == ErrOK && e.Zxid != nil {
			f.closeZxid[s] = int64(*e.Zxid)
		}
		if t, ok := expiryObservedAt(e); ok {
			if old, seen := f.expiredAt[s]; !seen || t < old {
				f.expiredAt[s], f.expiredBy[s] = t, e
			}
		}
	}
	f.closedBefore = expiryBounds(h)
	return f
}

// expiryBounds finds, for each session shown expired, the first
// acknowledged operation ordered after its closeSession txn. A client is
// told Expired as soon as the server (an ensemble's leader) decides the
// expiry — ZooKeeper marks the session closing and queues the
// closeSession — before that txn is durable, let alone applied. So:
//
//   - Plain reads called later prove nothing: in an ensemble a lagging
//     member answers them from its own tree, and zabd answers them at once.
//   - A write or a sync called later is ordered after the closeSession by
//     the server that decided both (a sync is answered once everything
//     proposed before it is applied: the sync's reply zxid covers the
//     close, and so does every read at or past it) — unless that server
//     lost the txn first: a crash before it was durable, or, in an
//     ensemble, a lost leadership. ZooKeeper then brings the session back
//     from the log and expires it again later.
//
// Hence an operation bounds the expiry only where the history shows that
// one term of one leader decided the expiry and ordered the operation.
// When the sign of the expiry names its term (Entry.Term), an operation
// answered on a connection of that same term does. Without terms, the
// history must show that the server that told the expiry stayed up and in
// its role: the operation was answered by that server (every server, in a
// history from one server: History.SingleServer) while some client's
// connection to it, opened before the expiry was shown, was still up (a
// restart, and a member's change of leader, close every connection).
func expiryBounds(h History) map[int64]expiryBound {
	out := map[int64]expiryBound{}
	var signs []*Entry
	for i := range h {
		if _, ok := expiryObservedAt(&h[i]); ok {
			signs = append(signs, &h[i])
		}
	}
	if len(signs) == 0 {
		return out
	}
	conns := connectionsOf(h)
	var ops []*Entry // what may bound an expiry: acknowledged writes and syncs
	for i := range h {
		if o := &h[i]; orderedAfterExpiry(o) {
			ops = append(ops, o)
		}
	}
	single := h.singleServerName()
	var spans map[string][][2]int64
	for _, x := range signs {
		s := x.Session.int()
		t, _ := expiryObservedAt(x)
		told := conns[x]
		keep := func(o *Entry) bool { return told.term != "" && conns[o].term == told.term }
		if told.term == "" {
			server := told.server
			if server == "" {
				server = single
			}
			if server == "" {
				continue // nothing says which server told it
			}
			if spans == nil {
				spans = connectionSpans(h, conns)
			}
			until := t // the server was up, in one role, from t to until
			for _, sp := range spans[server] {
				if sp[0] < t && sp[1] > until {
					until = sp[1]
				}
			}
			keep = func(o *Entry) bool { return conns[o].server == server && *o.Return <= until }
		}
		for _, o := range ops {
			if o.Call > t && keep(o) && (out[s].op == nil || boundsBefore(o, out[s].op)) {
				out[s] = expiryBound{op: o, sign: x}
			}
		}
	}
	return out
}

// orderedAfterExpiry reports whether o may bound an expiry shown before it
// was called: an acknowledged write with its txn's zxid (a SessionExpired
// reply is not ordered after the close that caused it: it is the close's
// sign), or a successful sync.
func orderedAfterExpiry(o *Entry) bool {
	if o.Kind != KindOp || !o.Returned() || o.OutcomeUnknown() || o.Zxid == nil {
		return false
	}
	return (o.IsWrite() && o.Err != ErrSessionExpired) || (o.Op == OpSync && o.Err == ErrOK)
}

// boundsBefore reports whether bound a is tighter than b: the closeSession
// precedes a write's zxid, and is at or before a sync's.
func boundsBefore(a, b *Entry) bool {
	key := func(o *Entry) int64 {
		if o.Op == OpSync {
			return 2*int64(*o.Zxid) + 1
		}
		return 2 * int64(*o.Zxid)
	}
	return key(a) < key(b)
}

// connection is what a history says of the connection an entry's reply or
// event came on: its server and term, when the recorder named them.
type connection struct{ server, term string }

// connectionsOf maps every entry to its connection: an operation's is its
// client's connection when the reply came (the last SyncConnected before
// it, unless another state change came between), an Expired event's the
// one it refused, and a SyncConnected's its own.
func connectionsOf(h History) map[*Entry]connection {
	out := make(map[*Entry]connection, len(h))
	cur := map[int]connection{}
	for _, e := range bySeq(h) {
		switch {
		case e.Kind == KindEvent && (e.Type == StateSyncConnected || e.Type == StateExpired):
			c := connection{server: e.Server, term: e.Term}
			out[e] = c
			if e.Type == StateSyncConnected {
				cur[e.Client] = c
			} else {
				delete(cur, e.Client)
			}
		case e.IsStateEvent():
			delete(cur, e.Client)
		default:
			out[e] = cur[e.Client]
		}
	}
	return out
}

// connectionSpans are the times each server's client connections were
// up, by server: from a SyncConnected event to its client's next state
// change (or for ever).
func connectionSpans(h History, conns map[*Entry]connection) map[string][][2]int64 {
	out := map[string][][2]int64{}
	type opened struct {
		at     int64
		server string
	}
	open := map[int]opened{}
	for _, e := range bySeq(h) {
		if !e.IsStateEvent() {
			continue
		}
		if o, ok := open[e.Client]; ok {
			out[o.server] = append(out[o.server], [2]int64{o.at, e.At})
			delete(open, e.Client)
		}
		if e.Type == StateSyncConnected && conns[e].server != "" {
			open[e.Client] = opened{e.At, conns[e].server}
		}
	}
	for _, o := range open {
		out[o.server] = append(out[o.server], [2]int64{o.at, math.MaxInt64})
	}
	return out
}

// CheckSessions checks session expiry: no operation of a session succeeds
// after its close or expiry; an ephemeral is seen only while its owner
// lives, and is not missing while its owner demonstrably lives; and a
// session is expired only after its client stopped talking for at least
// the session timeout (a client that keeps its session alive is never
// expired); with opt.TouchLag, requests answered less than that before the
// expiry was observed are not counted as talking.
func CheckSessions(h History, opt Options) []Violation {
	f := gatherSessions(h)
	var out []Violation
	ephemeralOf := map[string]*Entry{} // created path -> acknowledged ephemeral create
	lastAlive := map[int64]int64{}     // session -> highest zxid of a successful reply
	for i := range h {
		e := &h[i]
		if e.Kind != KindOp || !e.Returned() || e.Err != ErrOK || e.Zxid == nil {
			continue
		}
		lastAlive[e.Session.int()] = max(lastAlive[e.Session.int()], int64(*e.Zxid))
		if e.Op == OpCreate && modeNames[e.Mode].Ephemeral() && e.Created != "" {
			ephemeralOf[e.Created] = e
		}
	}
	deleted := map[string]bool{}
	for i := range h {
		e := &h[i]
		if e.Kind == KindOp && e.Op == OpDelete {
			deleted[e.Path] = true
		}
		for _, s := range e.Ops {
			if s.Op == OpDelete {
				deleted[s.Path] = true
			}
		}
	}
	for i := range h {
		e := &h[i]
		if e.Kind != KindOp || !e.Returned() || e.Err != ErrOK || e.Zxid == nil {
			continue
		}
		s, z := e.Session.int(), int64(*e.Zxid)
		if cz, ok := f.closeZxid[s]; ok && z > cz && e.Op != OpClose {
			out = append(out, Violation{Guarantee: GuaranteeSession, Entries: []*Entry{e},
				Explanation: fmt.Sprintf("%s succeeded after its session was closed at zxid %v", e.describe(), Hex64(cz))})
		}
		if t, ok := f.expiredAt[s]; ok && e.Call > t {
			out = append(out, Violation{Guarantee: GuaranteeSession, Entries: []*Entry{e, f.expiredBy[s]},
				Explanation: fmt.Sprintf("%s succeeded although it was called after %s showed its session expired", e.describe(), f.expiredBy[s].describe())})
		}
		out = append(out, ephemeralSeen(e, f)...)
	}
	for i := range h {
		e := &h[i]
		if e.Kind != KindOp || !e.Returned() || e.Err != errNoNode || e.Zxid == nil || (e.Op != OpGetData && e.Op != OpExists) {
			continue
		}
		c := ephemeralOf[e.Path]
		if c == nil || deleted[e.Path] || int64(*c.Zxid) >= int64(*e.Zxid) {
			continue
		}
		owner := c.Session.int()
		if _, closed := f.closeZxid[owner]; closed {
			continue
		}
		if _, expired := f.expiredAt[owner]; expired {
			continue
		}
		if lastAlive[owner] > int64(*e.Zxid) {
			out = append(out, Violation{Guarantee: GuaranteeSession, Entries: []*Entry{e, c},
				Explanation: fmt.Sprintf("%s found no %s, although %s made it, nothing deleted it, and its owner session %v was still served at zxid %v", e.describe(), e.Path, c.describe(), c.Session, Hex64(lastAlive[owner]))})
		}
	}
	return append(out, keptAliveExpired(h, f, int64(opt.TouchLag))...)
}

// ephemeralSeen reports a read showing an ephemeral of a session that had
// already ended.
func ephemeralSeen(e *Entry, f sessionFacts) []Violation {
	var stats []*Stat
	if e.isRead() && e.Stat != nil {
		stats = append(stats, e.Stat)
	}
	var out []Violation
	for _, st := range stats {
		owner := st.EphemeralOwner.int()
		if owner == 0 {
			continue
		}
		if cz, ok := f.closeZxid[owner]; ok && int64(*e.Zxid) >= cz {
			out = append(out, Violation{Guarantee: GuaranteeSession, Entries: []*Entry{e},
				Explanation: fmt.Sprintf("%s shows an ephemeral of session %v, which was closed at zxid %v", e.describe(), st.EphemeralOwner, Hex64(cz))})
		}
		if b := f.closedBefore[owner]; b.op != nil && *e.Zxid >= *b.op.Zxid {
			out = append(out, Violation{Guarantee: GuaranteeSession, Entries: []*Entry{e, b.sign, b.op},
				Explanation: fmt.Sprintf("%s shows an ephemeral of session %v, although %s showed that session expired before %s was called, which the server that decided the expiry answered with no restart or leader change in between, so after the session's close", e.describe(), st.EphemeralOwner, b.sign.describe(), b.op.describe())})
		}
	}
	return out
}

// keptAliveExpired reports sessions expired sooner than their timeout after
// the client's last request (one called at least lag before the expiry was
// observed), or while the client stayed connected.
func keptAliveExpired(h History, f sessionFacts, lag int64) []Violation {
	var out []Violation
	timeout := map[int64]int64{}
	calls := map[int64][]int64{} // per session, the calls of answered requests
	connected := map[int]bool{}
	for _, e := range bySeq(h) {
		s := e.Session.int()
		if e.Kind == KindEvent {
			switch e.Type {
			case StateSyncConnected:
				connected[e.Client] = true
				if e.Timeout > 0 {
					timeout[s] = int64(e.Timeout) * int64(time.Millisecond)
				}
			case StateDisconnected:
				connected[e.Client] = false
			case StateExpired:
				if connected[e.Client] {
					out = append(out, Violation{Guarantee: GuaranteeSession, Entries: []*Entry{e},
						Explanation: fmt.Sprintf("client %d saw its session %v expire while its connection stayed up (no Disconnected since SyncConnected): a client that keeps its session alive is never expired", e.Client, e.Session)})
				}
			}
		}
		if e.Kind == KindOp && e.Returned() && e.Err != ErrConnectionLoss && e.Err != ErrSessionExpired {
			calls[s] = append(calls[s], e.Call)
		}
		if by := f.expiredBy[s]; by == e && timeout[s] > 0 {
			at, _ := expiryObservedAt(e)
			if lc, ok := lastCallBefore(calls[s], at-lag); ok && at-lc < timeout[s] {
				out = append(out, Violation{Guarantee: GuaranteeSession, Entries: []*Entry{e},
					Explanation: fmt.Sprintf("session %v was reported expired %v after its client's last answered request, less than its timeout %v", e.Session, time.Duration(at-lc), time.Duration(timeout[s]))})
			}
		}
	}
	return out
}

// lastCallBefore is the latest call in calls at or before limit.
func lastCallBefore(calls []int64, limit int64) (int64, bool) {
	last, ok := int64(0), false
	for _, c := range calls {
		if c <= limit && (!ok || c > last) {
			last, ok = c, true
		}
	}
	return last, ok
}

// CheckDurability checks that the final state — what reads called after
// every write was issued and every answered write had returned show —
// equals the acknowledged writes in zxid order plus some of those whose
// outcome is unknown: no acknowledged write is lost.
func CheckDurability(h History, opt Options) []Violation {
	var lastWrite int64 // session closes after the final reads do not count
	for i := range h {
		if e := &h[i]; e.IsWrite() && e.Op != OpClose {
			lastWrite = max(lastWrite, e.Call)
			if e.Returned() {
				lastWrite = max(lastWrite, *e.Return)
			}
		}
	}
	writes := successfulWrites(h)
	uncertain := uncertainWrites(h)
	tl := buildTimeline(h, false, opt.Reaping)
	var out []Violation
	for i := range h {
		e := &h[i]
		if e.Kind != KindOp || e.Call <= lastWrite || !e.Returned() || (e.Op != OpGetData && e.Op != OpExists) ||
			(e.Err != ErrOK && e.Err != errNoNode) {
			continue
		}
		ws := writes[e.Path]
		var last *pathWrite
		if len(ws) > 0 {
			last = &ws[len(ws)-1]
		}
		exists := e.Err == ErrOK
		if finalMatches(last, exists, e) || unknownExplains(tl, e.Path, last, exists, e) {
			continue
		}
		if last != nil && !exists && ephemeralAt(ws, last, e.Path, uncertain) {
			continue // its session may have ended (closed, expired) since
		}
		if last != nil && !exists && opt.Reaping && reapableAt(ws, last, e.Path, uncertain) {
			continue // the server may have reaped it
		}
		if last == nil && !exists {
			continue
		}
		what := "no acknowledged write"
		if last != nil {
			what = "the last acknowledged write " + last.e.describe()
		}
		out = append(out, Violation{Guarantee: GuaranteeDurability, Entries: []*Entry{e},
			Explanation: fmt.Sprintf("the final read %s does not show %s (nor any write of unknown outcome): an acknowledged write was lost", e.describe(), what)})
	}
	return out
}

// madeBySequentialCreate reports whether s is a sequential create that may
// have made path: its prefix and a 10-digit counter (the name is unknown
// when the outcome is).
func madeBySequentialCreate(s SubOp, path string) bool {
	if s.Op != OpCreate || !modeNames[s.Mode].Sequential() {
		return false
	}
	prefixes := counterPrefixes(path)
	return len(prefixes) > 0 && prefixes[0] == s.Path && len(path) == len(s.Path)+sequentialCounterDigits
}

func finalMatches(last *pathWrite, exists bool, r *Entry) bool {
	if last == nil {
		return !exists
	}
	if last.deleted {
		return !exists
	}
	return exists && (r.Data == nil || r.Op != OpGetData || *r.Data == last.data)
}

// unknownExplains reports whether a write of unknown outcome that may have
// taken effect after the last acknowledged one leaves path as r shows it
// (an expiry that may have removed an ephemeral is CheckDurability's
// ephemeralAt).
func unknownExplains(tl *timeline, path string, last *pathWrite, exists bool, r *Entry) bool {
	// With no acknowledged write to path, every window counts. Slot -1 is
	// a window's place before the first zxid a reply carries (lowerBound,
	// sessionWindow), so the bound lies below it: a create whose session's
	// next reply was the first ranked zxid has the window [-1, -1] (hunt
	// seed 127875: a create lost with its member's crash, then its session's
	// close, the history's first acknowledged txn).
	lastSlot := int64(math.MinInt64)
	if last != nil {
		lastSlot = 4 * tl.rank[last.zxid]
	}
	for _, op := range tl.ops {
		if op.hi <= lastSlot {
			continue
		}
		if op.kind != tlUnknown {
			continue
		}
		e := op.e
		subs := []SubOp{{Op: e.Op, Path: e.Path, Data: e.Data, Mode: e.Mode}}
		if e.Op == OpMulti {
			subs = e.Ops
		}
		for _, s := range subs {
			if s.Path != path && !madeBySequentialCreate(s, path) {
				continue
			}
			switch s.Op {
			case OpDelete:
				if !exists {
					return true
				}
			case OpCreate, OpSetData:
				if exists && (r.Data == nil || r.Op != OpGetData || derefString(s.Data) == *r.Data) {
					return true
				}
			}
		}
	}
	return false
}
