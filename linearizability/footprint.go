// Footprints: the keys an operation depends on, observes and modifies.
// They tie operations into components (timeline.components) that are
// replayed independently, and they let the replay search skip pending
// operations that cannot matter to the next one.

package linearizability

import "strings"

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
