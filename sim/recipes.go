package sim

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zabd/zabd/sim/simclient"
	"github.com/zabd/zabd/wire"
)

// The recipe checkers judge what the recipe clients (Schedule.Recipe)
// believed and did against the promises the recipes make:
//
//   - fencing: the protected resource's writes carry the fencing tokens of
//     their holds (the czxid of the writer's lock or election node) in
//     increasing order, zxid order being the resource's own. A holder reads
//     the resource's token and writes its own with the version it read, so
//     a holder whose hold ended without its knowing cannot write over a
//     later holder's. This holds always.
//   - exclusion: no two clients believe they hold the lock (or lead) at
//     once — unless the earlier holder's session was closed (it expired)
//     before the later hold began. That exception is ZooKeeper's documented
//     caveat, not a defect: a client cut off from the ensemble learns of
//     its session's expiry only when it reconnects, and meanwhile another
//     may hold; only fencing protects the resource then. An excused overlap
//     is counted (Stats.RecipeCaveats) and traced, never failed.
//   - progress: a waiter is told when its predecessor goes, so every
//     client finishes its work in the liveness phase (world.finish's
//     liveness check; a recipe that waits for a notification never sent
//     fails there).
//   - the queue (queueViolations): no item taken twice, none lost.
//   - the double barrier (barrierFindings): none enters a round before all
//     began to join it, none leaves before all began to leave it, but for
//     a participant whose node went with its expired session (excused and
//     counted, as above).

// Failure kinds of the recipe checkers.
const (
	KindRecipeFencing   = "recipe: fencing"
	KindRecipeExclusion = "recipe: exclusion"
	KindRecipeQueue     = "recipe: queue"
	KindRecipeBarrier   = "recipe: barrier"
)

// hold is one client's belief that it holds, from a hold note to its
// release or loss (or the end of the run).
type hold struct {
	client      int
	session     int64
	token       int64
	from, until time.Duration
}

func (w *world) checkRecipes(queueLeft []string) {
	switch w.sched.Recipe {
	case "":
		return
	case simclient.RecipeQueue:
		for _, v := range queueViolations(w.history, queueLeft) {
			w.fail(KindRecipeQueue, "queue: %s", v)
		}
		return
	case simclient.RecipeBarrier:
		excused, violations := barrierFindings(w.notes, w.history, w.closedAt, w.sched.RecipeClients)
		for _, e := range excused {
			w.stats.RecipeCaveats++
			w.tr.logf("recipe barrier: %s (not promised: the participant's session had expired)", e)
		}
		for _, v := range violations {
			w.fail(KindRecipeBarrier, "barrier: %s", v)
		}
		return
	}
	w.checkFencing()
	excused, violations := overlaps(w.holds(), w.closedAt)
	for _, o := range excused {
		w.stats.RecipeCaveats++
		w.tr.logf("recipe %s: %s (not promised: only fencing protects the resource then)", w.sched.Recipe, o)
	}
	for _, v := range violations {
		w.fail(KindRecipeExclusion, "%s: %s", w.sched.Recipe, v)
	}
}

// overlaps finds the holds (sorted by start) of different clients that
// overlap: excused when the earlier holder's session was closed before the
// later hold began, violations otherwise.
func overlaps(holds []hold, closedAt map[int64]time.Duration) (excused, violations []string) {
	for i, a := range holds {
		for _, b := range holds[i+1:] {
			if b.from >= a.until {
				break // sorted by start: no later hold overlaps a
			}
			if a.client == b.client {
				continue
			}
			if closed, ok := closedAt[a.session]; ok && closed <= b.from {
				excused = append(excused, fmt.Sprintf("client %d held token 0x%x until %s, after its session %s expired at %s; client %d held token 0x%x from %s",
					a.client, a.token, fmtMono(a.until), wire.SessionString(a.session), fmtMono(closed), b.client, b.token, fmtMono(b.from)))
				continue
			}
			violations = append(violations, fmt.Sprintf("client %d held token 0x%x from %s to %s and client %d held token 0x%x from %s, while client %d's session %s was open",
				a.client, a.token, fmtMono(a.from), fmtMono(a.until), b.client, b.token, fmtMono(b.from), a.client, wire.SessionString(a.session)))
		}
	}
	return excused, violations
}

// holds pairs the hold notes with their ends, sorted by start.
func (w *world) holds() []hold {
	open := map[int]*hold{}
	var out []hold
	for _, n := range w.notes {
		at := time.Duration(n.At)
		switch n.Kind {
		case simclient.NoteHold:
			open[n.Client] = &hold{client: n.Client, session: n.Session, token: n.Token, from: at, until: w.clock.Mono()}
		case simclient.NoteRelease, simclient.NoteLost:
			if h := open[n.Client]; h != nil {
				h.until = at
				out = append(out, *h)
				delete(open, n.Client)
			}
		}
	}
	for _, c := range slices.Sorted(maps.Keys(open)) {
		out = append(out, *open[c])
	}
	slices.SortStableFunc(out, func(a, b hold) int { return cmp.Compare(a.from, b.from) })
	return out
}

// checkFencing fails the run for each write fencingViolations finds.
func (w *world) checkFencing() {
	for _, v := range fencingViolations(w.history) {
		w.fail(KindRecipeFencing, "%s: %s", w.sched.Recipe, v)
	}
}

// fencingViolations: the resource's successful writes, in zxid order, must
// carry increasing tokens.
func fencingViolations(history []simclient.Entry) []string {
	type write struct {
		zxid, token int64
		client      int
	}
	var writes []write
	var out []string
	for i := range history {
		e := &history[i]
		if e.Kind != "op" || e.Op.Code != wire.OpSetData || e.Op.Path != simclient.ResourcePath || e.Result.Err != wire.ErrOK || e.Result.Unknown {
			continue
		}
		token, err := strconv.ParseInt(e.Op.Data, 10, 64)
		if err != nil {
			out = append(out, fmt.Sprintf("client %d wrote %q to the resource: not a token", e.Client, e.Op.Data))
			continue
		}
		writes = append(writes, write{e.Result.Zxid, token, e.Client})
	}
	slices.SortFunc(writes, func(a, b write) int { return cmp.Compare(a.zxid, b.zxid) })
	for i := 1; i < len(writes); i++ {
		if a, b := writes[i-1], writes[i]; b.token <= a.token {
			out = append(out, fmt.Sprintf("client %d's write of token 0x%x (zxid 0x%x) follows client %d's of token 0x%x (zxid 0x%x): a stale holder wrote over a later one",
				b.client, b.token, b.zxid, a.client, a.token, a.zxid))
		}
	}
	return out
}

// finalQueue lists the queue's items as the run leaves them, in the tree
// of the member up that applied the most (the members converged in the
// liveness phase); false when none is up.
func (w *world) finalQueue() ([]string, bool) {
	var best *server
	for _, s := range w.servers {
		if s.up && s.peer != nil && (best == nil || s.peer.LastZxid() > best.peer.LastZxid()) {
			best = s
		}
	}
	if best == nil {
		return nil, false
	}
	items, _, _ := best.peer.Tree().GetChildren(simclient.QueuePath, nil, false, 0)
	return items, true
}

// queueViolations judges the queue's promises from the history and what
// is left in the queue: no item taken twice (two successful deletes of
// one node), and none lost (an item whose create succeeded is taken — a
// successful delete, or one of unknown outcome — or still queued).
func queueViolations(history []simclient.Entry, left []string) []string {
	produced := map[string]int{} // item prefix -> the client whose create of it succeeded
	taken := map[string]int{}    // node name -> successful deletes
	maybe := map[string]bool{}   // item prefix -> taken, or perhaps
	for i := range history {
		e := &history[i]
		if e.Kind != "op" || !strings.HasPrefix(e.Op.Path, simclient.QueuePath+"/") {
			continue
		}
		name := e.Op.Path[len(simclient.QueuePath)+1:]
		switch {
		case e.Op.Code == wire.OpCreate && e.Result.Err == wire.ErrOK && !e.Result.Unknown:
			produced[name] = e.Client
		case e.Op.Code == wire.OpDelete && e.Result.Err == wire.ErrOK && !e.Result.Unknown:
			taken[name]++
			maybe[simclient.ItemOf(name)] = true
		case e.Op.Code == wire.OpDelete && e.Result.Unknown:
			maybe[simclient.ItemOf(name)] = true
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(taken)) {
		if n := taken[name]; n > 1 {
			out = append(out, fmt.Sprintf("item %s was taken %d times", name, n))
		}
	}
	for _, name := range left {
		maybe[simclient.ItemOf(name)] = true
	}
	for _, item := range slices.Sorted(maps.Keys(produced)) {
		if !maybe[item] {
			out = append(out, fmt.Sprintf("item %s, produced by client %d, was never taken and is not in the queue: lost", item, produced[item]))
		}
	}
	return out
}

// barrierFindings judges the double barrier's promises for each round:
// none enters before every participant has begun to join (has called its
// create of the round's node), and none leaves before every participant
// has begun to leave — unless that participant's session, one it joined
// the round with, was closed first (its node went with it: ZooKeeper's
// caveat again, excused).
func barrierFindings(notes []simclient.Note, history []simclient.Entry, closedAt map[int64]time.Duration, parties int) (excused, violations []string) {
	type key struct{ client, round int }
	joinCall := map[key]time.Duration{} // the first create of the round's node
	joinSessions := map[key][]int64{}   // the sessions that created it
	leaving := map[key]time.Duration{}  // when it began to leave
	for i := range history {
		e := &history[i]
		var round, client int
		if e.Kind != "op" || e.Op.Code != wire.OpCreate {
			continue
		}
		if n, _ := fmt.Sscanf(e.Op.Path, simclient.BarrierPath+"/r%d/c%d", &round, &client); n != 2 {
			continue
		}
		k := key{client, round}
		if t, ok := joinCall[k]; !ok || e.Call < t {
			joinCall[k] = e.Call
		}
		joinSessions[k] = append(joinSessions[k], e.Session)
	}
	for _, n := range notes {
		if n.Kind == simclient.NoteLeaving {
			k := key{n.Client, int(n.Token)}
			if _, ok := leaving[k]; !ok {
				leaving[k] = time.Duration(n.At)
			}
		}
	}
	for _, n := range notes {
		at, round := time.Duration(n.At), int(n.Token)
		for q := 1; q <= parties; q++ {
			k := key{q, round}
			switch n.Kind {
			case simclient.NoteEntered:
				if t, ok := joinCall[k]; !ok || t > at {
					violations = append(violations, fmt.Sprintf("client %d entered round %d at %s before client %d began to join it", n.Client, round, fmtMono(at), q))
				}
			case simclient.NoteLeft:
				if t, ok := leaving[k]; ok && t <= at {
					continue
				}
				closed := false
				for _, s := range joinSessions[k] {
					if c, ok := closedAt[s]; ok && c <= at {
						closed = true
					}
				}
				what := fmt.Sprintf("client %d left round %d at %s before client %d began to leave it", n.Client, round, fmtMono(at), q)
				if closed {
					excused = append(excused, what)
				} else {
					violations = append(violations, what)
				}
			}
		}
	}
	return excused, violations
}
