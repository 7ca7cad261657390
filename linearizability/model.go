package linearizability

import (
	"fmt"
	"slices"
	"strings"
)

// This file holds the step of the znode-tree model: what one history entry
// does to a tree, and whether the reply it recorded is the one the model
// predicts. Both the zxid-ordered replay and the Porcupine models use it.

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefVersion(v *int32) int32 {
	if v == nil {
		return -1
	}
	return *v
}

func writeOpOf(op, path string, data *string, version *int32, mode string) writeOp {
	return writeOp{op: op, path: path, data: derefString(data), version: derefVersion(version), mode: modeNames[mode]}
}

// stepWrite applies the write e (with zxid; 0 if unknown) to t. If check is
// set, the recorded result must be the model's; why says how they differ.
// The returned overlay and dead session are applied by commitStep. An
// unsuccessful write changes nothing.
func stepWrite(t *tree, e *Entry, zxid int64, check bool) (x *txn, closes bool, why string) {
	x = &txn{base: t, changed: map[string]*node{}}
	if check && e.Err != ErrOK && !modeledErrs[e.Err] {
		return x, false, "" // not predictable from a history: accepted without effect
	}
	if t.dead[e.Session.int()] {
		if check && e.Err == ErrOK {
			return x, false, fmt.Sprintf("session %v was already closed or expired, yet the write succeeded", e.Session)
		}
		return x, false, ""
	}
	switch e.Op {
	case OpClose:
		if check && e.Err != ErrOK {
			return x, false, ""
		}
		return x, true, ""
	case OpMulti:
		return x, false, stepMulti(x, e, zxid, check)
	}
	r := applyOne(x, writeOpOf(e.Op, e.Path, e.Data, e.Version, e.Mode), zxid, e.Session.int())
	if r.err != ErrOK {
		x.changed, x.order = map[string]*node{}, nil
	}
	if !check {
		return x, false, ""
	}
	return x, false, compareResult(r, e.Err, e.Created, e.Stat)
}

// stepMulti applies a multi's sub-operations. The reply header of a failed
// multi says ok in ZooKeeper 3.8, but some clients report the first failing
// sub-operation's error instead: either is accepted, and the per-operation
// results decide.
func stepMulti(x *txn, e *Entry, zxid int64, check bool) string {
	failed := false
	var whys []string
	firstErr := ErrOK
	for i, s := range e.Ops {
		var r opResult
		if failed {
			r = opResult{err: errRuntime}
		} else {
			r = applyOne(x, writeOpOf(s.Op, s.Path, s.Data, s.Version, s.Mode), zxid, e.Session.int())
			if failed = r.err != ErrOK; failed {
				firstErr = r.err
			}
		}
		if check && i < len(e.Results) {
			res := e.Results[i]
			if why := compareResult(r, res.Err, res.Created, res.Stat); why != "" {
				whys = append(whys, fmt.Sprintf("sub-operation %d (%s %s): %s", i, s.Op, s.Path, why))
			}
		}
	}
	if check && e.Err != ErrOK && e.Err != firstErr {
		whys = append(whys, fmt.Sprintf("returned %s where the model says %s", e.Err, firstErr))
	}
	if failed {
		x.changed, x.order = map[string]*node{}, nil
	}
	return strings.Join(whys, "; ")
}

// compareResult explains how a recorded result differs from the model's.
func compareResult(r opResult, err, created string, stat *Stat) string {
	if r.err != err {
		return fmt.Sprintf("returned %s where the model says %s", err, r.err)
	}
	if err != ErrOK {
		return ""
	}
	if created != "" && r.created != created {
		return fmt.Sprintf("created %s where the model says %s", created, r.created)
	}
	if stat != nil && r.node != nil {
		if why := statMismatch(r.node, stat); why != "" {
			return "returned a stat with " + why
		}
	}
	return ""
}

// statMismatch compares the fields a model node knows with a returned stat.
func statMismatch(n *node, s *Stat) string {
	if n.opaque {
		return ""
	}
	var diffs []string
	zx := func(name string, model int64, got Hex64) {
		if model != 0 && int64(got) != model {
			diffs = append(diffs, fmt.Sprintf("%s %v (model: %v)", name, got, Hex64(model)))
		}
	}
	num := func(name string, model, got int64) {
		if model != got {
			diffs = append(diffs, fmt.Sprintf("%s %d (model: %d)", name, got, model))
		}
	}
	zx("czxid", n.czxid, s.Czxid)
	zx("mzxid", n.mzxid, s.Mzxid)
	zx("pzxid", n.pzxid, s.Pzxid)
	num("version", int64(n.version), int64(s.Version))
	num("cversion", int64(n.cversion), int64(s.Cversion))
	num("aversion", int64(n.aversion), int64(s.Aversion))
	num("dataLength", int64(len(n.data)), int64(s.DataLength))
	num("numChildren", int64(len(n.kids)), int64(s.NumChildren))
	if int64(s.EphemeralOwner) != n.owner {
		diffs = append(diffs, fmt.Sprintf("ephemeralOwner %v (model: %v)", s.EphemeralOwner, Hex64(n.owner)))
	}
	return strings.Join(diffs, ", ")
}

// commitStep applies a step's overlay to next (t itself for an in-place
// replay, or a clone of it for a Porcupine state).
func commitStep(next *tree, x *txn, closes bool, session, zxid int64) *tree {
	if closes {
		return closeSessionInto(next, session, zxid)
	}
	x.commit(next)
	return next
}

// closeSessionInto deletes session's ephemerals in next (in path order, so
// that the outcome never depends on map order) and marks it dead.
func closeSessionInto(next *tree, session, zxid int64) *tree {
	var owned []string
	for p, n := range next.nodes {
		if n.owner == session {
			owned = append(owned, p)
		}
	}
	slices.Sort(owned)
	x := &txn{base: next, changed: map[string]*node{}}
	for _, p := range owned {
		x.put(p, nil)
		x.removeChild(p, zxid)
	}
	x.commit(next)
	next.markDead(session)
	return next
}

// checkRead explains how a read's recorded reply differs from t, or "".
func checkRead(t *tree, e *Entry) string {
	if e.Op == OpMultiRead {
		var whys []string
		for i, s := range e.Ops {
			if i >= len(e.Results) {
				break
			}
			r := e.Results[i]
			if why := readMismatch(t, s.Op, s.Path, r.Err, r.Data, r.Stat, r.Children); why != "" {
				whys = append(whys, fmt.Sprintf("sub-operation %d (%s %s): %s", i, s.Op, s.Path, why))
			}
		}
		return strings.Join(whys, "; ")
	}
	return readMismatch(t, e.Op, e.Path, e.Err, e.Data, e.Stat, e.Children)
}

func readMismatch(t *tree, op, path, err string, data *string, stat *Stat, children []string) string {
	if path == "" {
		path = "/"
	}
	n := t.nodes[path]
	switch err {
	case ErrOK:
		if n == nil {
			return fmt.Sprintf("found %s, which the model says does not exist", path)
		}
	case errNoNode:
		if n != nil {
			return fmt.Sprintf("returned NoNode, but the model has %s = %q (version %d)", path, n.data, n.version)
		}
		return ""
	default:
		return "" // no information about the tree
	}
	if n.opaque {
		return ""
	}
	if op == OpGetData && data != nil && *data != n.data {
		return fmt.Sprintf("returned data %q, the model has %q (version %d, mzxid %v)", *data, n.data, n.version, Hex64(n.mzxid))
	}
	if op == OpGetChildren {
		got := slices.Clone(children)
		slices.Sort(got)
		if want := n.sortedKids(); !slices.Equal(got, want) {
			return fmt.Sprintf("returned children %v, the model has %v", got, want)
		}
	}
	if stat != nil {
		if why := statMismatch(n, stat); why != "" {
			return "returned a stat with " + why
		}
	}
	return ""
}

// isRead reports whether e is a read the model can check.
func (e *Entry) isRead() bool {
	switch e.Op {
	case OpGetData, OpExists, OpGetChildren, OpMultiRead:
		return e.Kind == KindOp
	}
	return false
}

func (h Hex64) int() int64 { return int64(h) }

// describe names an entry for a violation message.
func (e *Entry) describe() string {
	var b strings.Builder
	if e.Kind == KindEvent {
		b.WriteString(e.Type)
		if e.Path != "" {
			b.WriteString(" " + e.Path)
		}
		fmt.Fprintf(&b, " event (client %d, session %v, seq %d)", e.Client, e.Session, e.Seq)
		return b.String()
	}
	b.WriteString(e.Op)
	if e.Path != "" {
		b.WriteString(" " + e.Path)
	}
	if e.Op == OpMulti || e.Op == OpMultiRead {
		parts := make([]string, len(e.Ops))
		for i, s := range e.Ops {
			parts[i] = s.Op + " " + s.Path
		}
		b.WriteString("[" + strings.Join(parts, ", ") + "]")
	}
	if e.Data != nil && e.IsWrite() {
		fmt.Fprintf(&b, " %q", *e.Data)
	}
	fmt.Fprintf(&b, " (client %d, session %v, seq %d", e.Client, e.Session, e.Seq)
	if e.Zxid != nil {
		fmt.Fprintf(&b, ", zxid %v", *e.Zxid)
	}
	if !e.Returned() {
		b.WriteString(", no reply")
	} else if e.Err != ErrOK {
		b.WriteString(", " + e.Err)
	}
	b.WriteString(")")
	return b.String()
}
