package linearizability

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
// never. A sequential TTL create of unknown outcome has no known name and
// gets none.
func (tl *timeline) addReaps(observed map[string]bool) {
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
			mode := modeNames[s.Mode]
			if s.Op != OpCreate || reapKindOf(mode) == reapNever {
				continue
			}
			name := created[i]
			if name == "" && !mode.Sequential() {
				name = s.Path
			}
			if name == "" {
				continue
			}
			lo := op.lo
			if op.kind == tlWrite {
				lo = op.lo + 1
			}
			_, _, mods := footprint(OpDelete, name, "", "")
			tl.ops = append(tl.ops, &tlOp{kind: tlReap, path: name, lo: lo, hi: slotInfinity,
				keys: pathKeys(OpDelete, name, "", "", observed),
				deps: []string{nodeKey(name), kidsKey(name)}, mods: mods})
		}
	}
}
