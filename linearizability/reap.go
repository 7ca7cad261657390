package linearizability

import (
	"slices"

	"github.com/zabd/zabd/wire"
)

// Server-made deletions: ZooKeeper's ContainerManager (zabd's
// datatree.ReapCandidates) deletes a container once it is childless after
// having had a child, and a TTL node once it is childless and its TTL has
// passed since its last change. No client asked for it, so no history line
// shows it; only its effects do (the node gone, its parent's cversion and
// pzxid moved, a NodeDeleted event).

// addReaps adds, for every create that made (or, of unknown outcome, may
// have made) a container or TTL node under a known name, the server's
// deletion of that node as an uncertain operation: from the create on, at
// any point, once the node is reapable in the model (node.reapable), or
// never. A sequential create of unknown outcome has no known name: it gets the
// deletion of every name the history shows that such a create could have
// made (its path and ten digits; see sequentialNamesSeen), from the
// earliest such create on — a deletion that finds no reapable node there
// changes nothing.
func (tl *timeline) addReaps(h History, observed map[string]bool) {
	var seen map[string][]string // built at the first sequential create of unknown name
	unnamedFrom := map[string]int64{}
	named := map[string]bool{}
	add := func(name string, lo int64) {
		_, _, mods := footprint(OpDelete, name, "", "")
		tl.ops = append(tl.ops, &tlOp{kind: tlReap, path: name, lo: lo, hi: slotInfinity,
			keys: pathKeys(OpDelete, name, "", "", observed),
			deps: []string{nodeKey(name), kidsKey(name)}, mods: mods})
	}
	// creates calls fn with every create of the history that may have taken
	// effect, the name it made ("" when unknown) and its operation.
	creates := func(fn func(op *tlOp, mode wire.CreateMode, path, name string)) {
		for _, op := range tl.ops {
			if op.e == nil || !op.e.IsWrite() || (op.kind == tlWrite && op.e.Err != ErrOK) {
				continue
			}
			e := op.e
			subs := []SubOp{{Op: e.Op, Path: e.Path, Mode: e.Mode}}
			created := []string{e.Created}
			if e.Op == OpMulti {
				subs, created = e.Ops, make([]string, len(e.Ops))
				for i := range e.Ops {
					if i < len(e.Results) {
						created[i] = e.Results[i].Created
					}
				}
			}
			for i, s := range subs {
				if s.Op != OpCreate {
					continue
				}
				mode := modeNames[s.Mode]
				name := created[i]
				if name == "" && !mode.Sequential() {
					name = s.Path
				}
				fn(op, mode, s.Path, name)
			}
		}
	}
	// A reap decided while a container or TTL node was applied may delete
	// any non-ephemeral node made at its name since (tree.reapable): such
	// creates get a possible deletion too, which the model allows only once
	// a reapable node was deleted there.
	reapNames := map[string]bool{}
	creates(func(_ *tlOp, mode wire.CreateMode, _, name string) {
		if name != "" && reapKindOf(mode) != reapNever {
			reapNames[name] = true
		}
	})
	creates(func(op *tlOp, mode wire.CreateMode, path, name string) {
		if reapKindOf(mode) == reapNever && (name == "" || mode.Ephemeral() || !reapNames[name]) {
			return
		}
		if name == "" {
			if seen == nil {
				seen = sequentialNamesSeen(h)
			}
			for _, n := range seen[path] {
				if lo, ok := unnamedFrom[n]; !ok || op.lo < lo {
					unnamedFrom[n] = op.lo
				}
			}
			return
		}
		lo := op.lo
		if op.kind == tlWrite {
			lo = op.lo + 1
		}
		named[name] = true
		add(name, lo)
	})
	names := make([]string, 0, len(unnamedFrom))
	for n := range unnamedFrom {
		if !named[n] {
			names = append(names, n)
		}
	}
	slices.Sort(names) // map order must not reach the timeline
	for _, n := range names {
		add(n, unnamedFrom[n])
	}
}

// sequentialNamesSeen maps each path a sequential create could have been
// given to the names the history shows with that path and ten digits after
// it: in paths, created names and children lists.
func sequentialNamesSeen(h History) map[string][]string {
	set := map[string]bool{}
	note := func(name string) {
		if len(name) > seqDigits && isDigits(name[len(name)-seqDigits:]) {
			set[name] = true
		}
	}
	kids := func(parent string, children []string) {
		for _, c := range children {
			if parent == "/" {
				note("/" + c)
			} else {
				note(parent + "/" + c)
			}
		}
	}
	for i := range h {
		e := &h[i]
		note(e.Path)
		note(e.Created)
		kids(e.Path, e.Children)
		for j, sub := range e.Ops {
			note(sub.Path)
			if j < len(e.Results) {
				note(e.Results[j].Created)
				kids(sub.Path, e.Results[j].Children)
			}
		}
	}
	out := map[string][]string{}
	for name := range set {
		prefix := name[:len(name)-seqDigits]
		out[prefix] = append(out[prefix], name)
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// seqDigits is the length of a sequential node's suffix (%010d).
const seqDigits = 10

func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
