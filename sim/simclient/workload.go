package simclient

import (
	"math/rand/v2"
	"strconv"

	"github.com/zabd/zabd/wire"
)

// Paths is the small path space every workload draws from: few enough names
// that clients collide on them all the time, nested so that child watches,
// NotEmpty and NoChildrenForEphemerals all happen.
var Paths = []string{"/a", "/b", "/a/x", "/a/y", "/b/x"}

// openACL is the ACL every created node gets: world:anyone with all perms.
var openACL = []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: "anyone"}}}

// workload draws operations. It remembers the versions it has seen so that
// conditional writes sometimes succeed, and the nodes it created so that it
// can address sequential ones.
type workload struct {
	r        *rand.Rand
	client   int
	written  int              // counter that makes every written value unique
	versions map[string]int32 // last data version seen per path
	created  []string         // sequential nodes this client made (bounded)
	lastPath string           // the path target chose last
}

func newWorkload(client int, r *rand.Rand) *workload {
	return &workload{r: r, client: client, versions: map[string]int32{}}
}

// opKinds weights the operations; every op of the client protocol that has a
// history name appears.
var opKinds = []struct {
	name   string
	weight int
}{
	{"create", 20}, {"delete", 10}, {"setData", 15}, {"getData", 12}, {"exists", 8},
	{"getChildren", 8}, {"sync", 4}, {"multi", 6}, {"multiRead", 3}, {"check", 2},
	{"setACL", 2}, {"getACL", 2}, {"getEphemerals", 2}, {"addWatch", 3}, {"removeWatches", 2},
}

var opWeightTotal = func() int {
	t := 0
	for _, k := range opKinds {
		t += k.weight
	}
	return t
}()

func (w *workload) pick() string {
	n := w.r.IntN(opWeightTotal)
	for _, k := range opKinds {
		if n < k.weight {
			return k.name
		}
		n -= k.weight
	}
	panic("simclient: op weights do not add up") // unreachable: n < opWeightTotal
}

// next draws the next operation: the random workload never waits.
func (w *workload) next() (Op, bool) { return w.draw(), true }

func (w *workload) notice(wire.EventType, wire.KeeperState, string) {}

func (w *workload) stop() {}

func (w *workload) pauses() bool { return true }

func (w *workload) finished() bool { return false }

// draw draws the next operation.
func (w *workload) draw() Op {
	switch name := w.pick(); name {
	case "create":
		return w.create()
	case "delete":
		return Op{Name: name, Code: wire.OpDelete, Path: w.target(), Version: w.version(w.lastPath)}
	case "setData":
		return w.setData()
	case "getData":
		return Op{Name: name, Code: wire.OpGetData, Path: w.target(), Watch: w.r.IntN(2) == 0}
	case "exists":
		return Op{Name: name, Code: wire.OpExists, Path: w.target(), Watch: w.r.IntN(2) == 0}
	case "getChildren":
		code := wire.OpGetChildren
		if w.r.IntN(2) == 0 {
			code = wire.OpGetChildren2
		}
		return Op{Name: name, Code: code, Path: w.parent(), Watch: w.r.IntN(2) == 0}
	case "sync":
		return Op{Name: name, Code: wire.OpSync, Path: w.target()}
	case "multi":
		return w.multi()
	case "multiRead":
		sub := make([]Op, 1+w.r.IntN(3))
		for i := range sub {
			if w.r.IntN(2) == 0 {
				sub[i] = Op{Name: "getData", Code: wire.OpGetData, Path: w.target()}
			} else {
				sub[i] = Op{Name: "getChildren", Code: wire.OpGetChildren, Path: w.parent()}
			}
		}
		return Op{Name: name, Code: wire.OpMultiRead, Sub: sub}
	case "check":
		return Op{Name: name, Code: wire.OpCheck, Path: w.target(), Version: w.version(w.lastPath)}
	case "setACL":
		return Op{Name: name, Code: wire.OpSetACL, Path: w.target(), Version: -1}
	case "getACL":
		return Op{Name: name, Code: wire.OpGetACL, Path: w.target()}
	case "getEphemerals":
		return Op{Name: name, Code: wire.OpGetEphemerals, Path: []string{"/", "/a", "/b"}[w.r.IntN(3)]}
	case "addWatch":
		mode := wire.AddWatchPersistent
		if w.r.IntN(2) == 0 {
			mode = wire.AddWatchPersistentRecursive
		}
		return Op{Name: name, Code: wire.OpAddWatch, Path: w.target(), AddMode: mode}
	case "removeWatches":
		wt := []wire.WatcherType{wire.WatcherChildren, wire.WatcherData, wire.WatcherAny}[w.r.IntN(3)]
		return Op{Name: name, Code: wire.OpRemoveWatches, Path: w.target(), WType: wt}
	}
	panic("simclient: op kind without a generator") // unreachable: every kind has a case
}

// target picks a path to operate on and remembers it in lastPath, for ops
// that pair a path with the version seen on it.
func (w *workload) target() string {
	if len(w.created) > 0 && w.r.IntN(5) == 0 {
		w.lastPath = w.created[w.r.IntN(len(w.created))]
	} else {
		w.lastPath = Paths[w.r.IntN(len(Paths))]
	}
	return w.lastPath
}

func (w *workload) parent() string { return []string{"/", "/a", "/b", "/a/x"}[w.r.IntN(4)] }

// version is -1 half the time, the last version seen on path a third of the
// time, and a small guess otherwise.
func (w *workload) version(path string) int32 {
	switch n := w.r.IntN(6); {
	case n < 3:
		return -1
	case n < 5:
		return w.versions[path]
	default:
		return int32(w.r.IntN(4))
	}
}

func (w *workload) value() string {
	w.written++
	return "c" + strconv.Itoa(w.client) + "." + strconv.Itoa(w.written)
}

var modes = []struct {
	mode   wire.CreateMode
	weight int
}{
	{wire.ModePersistent, 8}, {wire.ModeEphemeral, 5}, {wire.ModePersistentSequential, 2},
	{wire.ModeEphemeralSequential, 2}, {wire.ModeContainer, 1}, {wire.ModePersistentWithTTL, 1},
	{wire.ModePersistentSequentialWithTTL, 1},
}

func (w *workload) create() Op {
	n := w.r.IntN(20)
	mode := wire.ModePersistent
	for _, m := range modes {
		if n < m.weight {
			mode = m.mode
			break
		}
		n -= m.weight
	}
	op := Op{Name: "create", Path: w.target(), Data: w.value(), Mode: mode}
	switch {
	case mode.TTL():
		op.Code, op.TTL = wire.OpCreateTTL, 1+w.r.Int64N(5000)
	case mode.Container():
		op.Code = wire.OpCreateContainer
	case w.r.IntN(2) == 0:
		op.Code = wire.OpCreate2
	default:
		op.Code = wire.OpCreate
	}
	return op
}

func (w *workload) setData() Op {
	p := w.target()
	return Op{Name: "setData", Code: wire.OpSetData, Path: p, Data: w.value(), Version: w.version(p)}
}

func (w *workload) multi() Op {
	sub := make([]Op, 1+w.r.IntN(3))
	for i := range sub {
		switch w.r.IntN(4) {
		case 0:
			c := w.create()
			if c.Code != wire.OpCreate2 { // keep multis to the plain sub-op kinds
				c.Code, c.Mode, c.TTL = wire.OpCreate, wire.ModePersistent, 0
			}
			sub[i] = c
		case 1:
			p := w.target()
			sub[i] = Op{Name: "delete", Code: wire.OpDelete, Path: p, Version: w.version(p)}
		case 2:
			sub[i] = w.setData()
		default:
			p := w.target()
			sub[i] = Op{Name: "check", Code: wire.OpCheck, Path: p, Version: w.version(p)}
		}
	}
	return Op{Name: "multi", Code: wire.OpMulti, Sub: sub}
}

// learn remembers what a successful result tells about versions and
// sequential names.
func (w *workload) learn(op Op, res Result) {
	if res.Err != wire.ErrOK {
		return
	}
	if res.HasStat {
		w.versions[op.Path] = res.Stat.Version
	}
	if op.Mode.Sequential() && res.Created != "" && len(w.created) < 16 {
		w.created = append(w.created, res.Created)
	}
	for i := range op.Sub {
		if i < len(res.Sub) {
			w.learn(op.Sub[i], res.Sub[i])
		}
	}
}

// request builds the body a client sends for op.
func (op *Op) request() wire.Record {
	switch op.Code {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		return &wire.CreateRequest{Path: op.Path, Data: []byte(op.Data), ACL: openACL, Flags: op.Mode,
			TTL: op.TTL, HasTTL: op.Code == wire.OpCreateTTL}
	case wire.OpDelete, wire.OpCheck:
		return &wire.PathVersionRequest{Path: op.Path, Version: op.Version}
	case wire.OpSetData:
		return &wire.SetDataRequest{Path: op.Path, Data: []byte(op.Data), Version: op.Version}
	case wire.OpGetData, wire.OpExists, wire.OpGetChildren, wire.OpGetChildren2:
		return &wire.PathWatchRequest{Path: op.Path, Watch: op.Watch}
	case wire.OpSync, wire.OpGetACL, wire.OpGetEphemerals:
		return &wire.PathRequest{Path: op.Path}
	case wire.OpSetACL:
		return &wire.SetACLRequest{Path: op.Path, ACL: openACL, Version: op.Version}
	case wire.OpAddWatch:
		return &wire.AddWatchRequest{Path: op.Path, Mode: op.AddMode}
	case wire.OpRemoveWatches:
		return &wire.PathTypeRequest{Path: op.Path, Type: op.WType}
	case wire.OpMulti, wire.OpMultiRead:
		m := &wire.MultiRequest{Ops: make([]wire.MultiOp, len(op.Sub))}
		for i := range op.Sub {
			m.Ops[i] = wire.MultiOp{Type: op.Sub[i].Code, Body: op.Sub[i].request()}
		}
		return m
	}
	return &wire.Empty{} // closeSession
}
