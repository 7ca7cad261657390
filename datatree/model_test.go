package datatree

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/zabtest/rapidseed"
)

// A small reference model of the tree: a map from path to node, children
// found by scanning, every rule written out in ZooKeeper's order. It shares
// only path validation and ACL matching with the tree (pinned by their own
// tests and by the golden traces); stats, versions, sequential names, error
// precedence, multi, sessions and the container/TTL reaper are its own.
// Where zabd means to differ from ZooKeeper the model follows zabd and says
// so (staleReap).

type modelNode struct {
	data                              []byte
	acl                               []wire.ACL
	checkedACL                        []wire.ACL // the ACL checks use: as of the batch's start or the node's create
	czxid, mzxid, pzxid, ctime, mtime int64
	version, aversion                 int32
	created                           int32 // children ever created
	owner                             int64 // session of an ephemeral
	kind                              kind
	ttl                               int64
}

type model struct {
	cfg   Config
	nodes map[string]*modelNode
}

func newModel(cfg Config) *model {
	m := &model{cfg: cfg, nodes: map[string]*modelNode{}}
	for _, p := range []string{"/", zookeeperPath, quotaPath, configPath} {
		m.nodes[p] = &modelNode{data: []byte{}, acl: wire.OpenACLUnsafe, checkedACL: wire.OpenACLUnsafe}
	}
	m.nodes[configPath].acl = wire.ReadACLUnsafe
	m.nodes[configPath].checkedACL = wire.ReadACLUnsafe
	m.nodes[configPath].aversion = -1
	return m
}

func (m *model) clone() *model {
	c := &model{cfg: m.cfg, nodes: map[string]*modelNode{}}
	for p, n := range m.nodes {
		cp := *n
		c.nodes[p] = &cp
	}
	return c
}

func modelParent(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "/"
	}
	return path[:i]
}

func (m *model) children(path string) []string {
	var out []string
	for p := range m.nodes {
		if p != "/" && modelParent(p) == path {
			out = append(out, p[strings.LastIndexByte(p, '/')+1:])
		}
	}
	sort.Strings(out)
	return out
}

func (m *model) stat(path string) wire.Stat {
	n := m.nodes[path]
	kids := int32(len(m.children(path)))
	owner := n.owner
	if n.kind != kindEphemeral {
		owner = 0
	}
	return wire.Stat{Czxid: n.czxid, Mzxid: n.mzxid, Ctime: n.ctime, Mtime: n.mtime, Version: n.version,
		Cversion: 2*n.created - kids, Aversion: n.aversion, EphemeralOwner: owner,
		DataLength: int32(len(n.data)), NumChildren: kids, Pzxid: n.pzxid}
}

func fail(op wire.OpCode, code wire.ErrCode) Result { return Result{Op: wire.OpError, Err: code} }

// write applies one write request at zxid and time now.
func (m *model) write(req *Request, zxid, now int64) Result {
	switch req.Op {
	case wire.OpMulti:
		return m.multi(req, zxid, now)
	case wire.OpCloseSession:
		var eph []string
		for p, n := range m.nodes {
			if n.kind == kindEphemeral && n.owner == req.Session {
				eph = append(eph, p)
			}
		}
		sort.Strings(eph)
		for _, p := range eph {
			delete(m.nodes, p)
			if par := m.nodes[modelParent(p)]; par.pzxid < zxid {
				par.pzxid = zxid
			}
		}
		return Result{Op: wire.OpCloseSession}
	}
	r, _ := m.op(req.Op, req.Body, req, zxid, now)
	return r
}

func (m *model) multi(req *Request, zxid, now int64) Result {
	ops := req.Body.(*MultiRequest).Ops
	scratch := m.clone()
	res := Result{Op: wire.OpMulti, Multi: []Result{}}
	for i, op := range ops {
		typ := op.Op
		if b, ok := op.Body.(*wire.CreateRequest); ok {
			switch {
			case b.Flags.TTL() && !b.HasTTL:
				// Reached only while every op before it succeeded.
				return fail(wire.OpMulti, wire.ErrMarshallingError)
			case b.Flags.TTL():
				typ = wire.OpCreateTTL
			case b.Flags.Container():
				typ = wire.OpCreateContainer
			default:
				typ = wire.OpCreate
			}
		}
		r, ok := scratch.op(typ, op.Body, req, zxid, now)
		if !ok {
			out := Result{Op: wire.OpMulti}
			for j := range ops {
				code := wire.ErrRuntimeInconsistency
				switch {
				case j < i:
					code = wire.ErrOK
				case j == i:
					code = r.Err
				}
				out.Multi = append(out.Multi, Result{Op: wire.OpError, Err: code})
			}
			return out
		}
		switch r.Op {
		case wire.OpCreateTTL, wire.OpCreateContainer:
			r.Op = wire.OpCreate2
		}
		res.Multi = append(res.Multi, r)
	}
	m.nodes = scratch.nodes
	return res
}

// op applies one op; ok is false when it failed (r is then the error).
func (m *model) op(op wire.OpCode, body wire.Record, req *Request, zxid, now int64) (r Result, ok bool) {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		return m.create(op, body.(*wire.CreateRequest), req, zxid, now)
	case wire.OpDelete:
		b := body.(*wire.PathVersionRequest)
		return m.delete(b.Path, b.Version, req.Auth, false, zxid)
	case wire.OpDeleteContainer:
		path := body.(*wire.PathRequest).Path
		if n := m.nodes[path]; n != nil && req.ReapCzxid != 0 && staleReap(n, req) {
			return fail(op, wire.ErrBadVersion), false
		}
		return m.delete(path, -1, nil, true, zxid)
	case wire.OpSetData:
		b := body.(*wire.SetDataRequest)
		n, code := m.checked(b.Path, wire.PermWrite, req.Auth)
		if code == wire.ErrOK && b.Version != -1 && b.Version != n.version {
			code = wire.ErrBadVersion
		}
		if code != wire.ErrOK {
			return fail(op, code), false
		}
		n.data, n.version, n.mzxid, n.mtime = b.Data, n.version+1, zxid, now
		return Result{Op: op, Path: b.Path, Stat: m.stat(canonical(b.Path))}, true
	case wire.OpSetACL:
		b := body.(*wire.SetACLRequest)
		if !validPath(b.Path) {
			return fail(op, wire.ErrBadArguments), false
		}
		acl, valid := fixupACL(b.ACL, req.Auth, m.cfg)
		if !valid {
			return fail(op, wire.ErrInvalidACL), false
		}
		n, code := m.checked(b.Path, wire.PermAdmin, req.Auth)
		if code == wire.ErrOK && b.Version != -1 && b.Version != n.aversion {
			code = wire.ErrBadVersion
		}
		if code != wire.ErrOK {
			return fail(op, code), false
		}
		n.acl, n.aversion = acl, n.aversion+1
		return Result{Op: op, Path: b.Path, Stat: m.stat(canonical(b.Path))}, true
	case wire.OpCheck:
		b := body.(*wire.PathVersionRequest)
		n, code := m.checked(b.Path, wire.PermRead, req.Auth)
		if code == wire.ErrOK && b.Version != -1 && b.Version != n.version {
			code = wire.ErrBadVersion
		}
		if code != wire.ErrOK {
			return fail(op, code), false
		}
		return Result{Op: op, Path: b.Path, Stat: m.stat(canonical(b.Path))}, true
	}
	panic(fmt.Sprintf("model: op %v", op))
}

// endBatch makes every ACL set in the batch count for later checks: a
// setACL's new ACL is only checked against once applied, as in ZooKeeper,
// whose pending changes keep a node's old ACL.
func (m *model) endBatch() {
	for _, n := range m.nodes {
		n.checkedACL = n.acl
	}
}

// checked finds a node for setData/setACL/check: path valid, node present,
// permission granted.
func (m *model) checked(path string, perm int32, auth []wire.Id) (*modelNode, wire.ErrCode) {
	if !validPath(path) {
		return nil, wire.ErrBadArguments
	}
	n := m.nodes[path]
	if n == nil {
		return nil, wire.ErrNoNode
	}
	if !checkACL(n.checkedACL, perm, auth) {
		return nil, wire.ErrNoAuth
	}
	return n, wire.ErrOK
}

func (m *model) create(op wire.OpCode, b *wire.CreateRequest, req *Request, zxid, now int64) (Result, bool) {
	mode := b.Flags
	bad := func(code wire.ErrCode) (Result, bool) { return fail(op, code), false }
	if mode < 0 || mode > 6 {
		return bad(wire.ErrBadArguments)
	}
	ttl := int64(-1)
	if op == wire.OpCreateTTL {
		ttl = b.TTL
	}
	isTTL := mode == wire.ModePersistentWithTTL || mode == wire.ModePersistentSequentialWithTTL
	if isTTL && !m.cfg.ExtendedTypesEnabled {
		return bad(wire.ErrUnimplemented)
	}
	if isTTL && (ttl <= 0 || ttl > 1<<40-1) || !isTTL && (ttl >= 0 || op == wire.OpCreateTTL) {
		return bad(wire.ErrBadArguments)
	}
	slash := strings.LastIndexByte(b.Path, '/')
	if slash < 0 || strings.ContainsRune(b.Path, 0) {
		return bad(wire.ErrBadArguments)
	}
	acl, valid := fixupACL(b.ACL, req.Auth, m.cfg)
	if !valid {
		return bad(wire.ErrInvalidACL)
	}
	parentPath := b.Path[:slash]
	if parentPath == "" {
		parentPath = "/"
	}
	parent := m.nodes[parentPath]
	if parent == nil {
		return bad(wire.ErrNoNode)
	}
	if !checkACL(parent.checkedACL, wire.PermCreate, req.Auth) {
		return bad(wire.ErrNoAuth)
	}
	path := b.Path
	if mode == wire.ModePersistentSequential || mode == wire.ModeEphemeralSequential || mode == wire.ModePersistentSequentialWithTTL {
		path = fmt.Sprintf("%s%010d", path, parent.created)
	}
	if !validPath(path) {
		return bad(wire.ErrBadArguments)
	}
	if m.nodes[path] != nil {
		return bad(wire.ErrNodeExists)
	}
	if parent.kind == kindEphemeral {
		return bad(wire.ErrNoChildrenForEphemerals)
	}
	n := &modelNode{data: b.Data, acl: acl, checkedACL: acl, czxid: zxid, mzxid: zxid, pzxid: zxid, ctime: now, mtime: now}
	switch {
	case op == wire.OpCreateContainer:
		n.kind = kindContainer
	case op == wire.OpCreateTTL:
		n.kind, n.ttl = kindTTL, ttl
	case mode == wire.ModeEphemeral || mode == wire.ModeEphemeralSequential:
		n.kind, n.owner = kindEphemeral, req.Session
	}
	m.nodes[path] = n
	parent.created++
	parent.pzxid = zxid
	return Result{Op: op, Path: path, Stat: m.stat(path)}, true
}

func (m *model) delete(path string, version int32, auth []wire.Id, container bool, zxid int64) (Result, bool) {
	op := wire.OpDelete
	bad := func(code wire.ErrCode) (Result, bool) { return fail(op, code), false }
	slash := strings.LastIndexByte(path, '/')
	if slash < 0 || strings.ContainsRune(path, 0) || path == "/" || path == zookeeperPath || path == quotaPath || path == configPath {
		return bad(wire.ErrBadArguments)
	}
	parentPath := path[:slash]
	if parentPath == "" {
		parentPath = "/"
	}
	parent, n := m.nodes[parentPath], m.nodes[path]
	if container {
		switch {
		case n == nil:
			return bad(wire.ErrNoNode)
		case len(m.children(path)) > 0:
			return bad(wire.ErrNotEmpty)
		case n.kind == kindEphemeral:
			return bad(wire.ErrBadVersion)
		case parent == nil:
			return bad(wire.ErrNoNode)
		}
		op = wire.OpDeleteContainer
	} else {
		switch {
		case parent == nil:
			return bad(wire.ErrNoNode)
		case !checkACL(parent.checkedACL, wire.PermDelete, auth):
			return bad(wire.ErrNoAuth)
		case n == nil:
			return bad(wire.ErrNoNode)
		case version != -1 && version != n.version:
			return bad(wire.ErrBadVersion)
		case len(m.children(path)) > 0:
			return bad(wire.ErrNotEmpty)
		}
	}
	delete(m.nodes, path)
	parent.pzxid = zxid
	return Result{Op: op, Path: path}, true
}

// staleReap says whether a reaper's deleteContainer no longer names n, the
// node now at its path (after the writes accepted before it): n is another
// node (another czxid), or a TTL node modified since the reaper chose it
// (another mzxid: a setData refreshed it). This is zabd's rule, not
// ZooKeeper's: ZooKeeper 3.8's PrepRequestProcessor checks a deleteContainer
// only for children and for a plain (non-container, non-TTL) node, and so
// deletes whatever childless container, TTL or — once made there since —
// persistent node is at the path, refreshed or not. zabd answers such a reap
// BadVersion, an error txn (Request.ReapCzxid; docs/zabd.md), checked before
// anything else; a reap that still names its node is checked as ZooKeeper
// checks it (delete).
func staleReap(n *modelNode, req *Request) bool {
	return n.czxid != req.ReapCzxid || n.kind == kindTTL && n.mzxid != req.ReapMzxid
}

// reapChoice is a node the reaper chooses, as its deleteContainer names it.
type reapChoice struct {
	path         string
	czxid, mzxid int64
}

// reapable lists what the reaper should delete at now, by path.
func (m *model) reapable(now int64) []reapChoice {
	var out []reapChoice
	for p, n := range m.nodes {
		if len(m.children(p)) > 0 {
			continue
		}
		if n.kind == kindContainer && n.created > 0 || n.kind == kindTTL && now-n.mtime > n.ttl {
			out = append(out, reapChoice{p, n.czxid, n.mzxid})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// requireReapCandidates requires the tree's reaper to choose at now what the
// model's does — the same nodes, each named by its czxid and mzxid, so that
// a stale reap is judged (staleReap) against the node the model chose — and
// returns the tree's requests.
func requireReapCandidates(t *rapid.T, tr *Tree, m *model, now int64) []Request {
	reqs := tr.ReapCandidates(now, 0)
	var got []reapChoice
	for _, r := range reqs {
		got = append(got, reapChoice{r.Body.(*wire.PathRequest).Path, r.ReapCzxid, r.ReapMzxid})
	}
	require.Equal(t, fmt.Sprint(m.reapable(now)), fmt.Sprint(got), "reap candidates at %d", now)
	return reqs
}

// requireMatchesModel compares every node: the set of paths, visible stats,
// data, ACLs and children; and the digest against one computed afresh.
func requireMatchesModel(t *rapid.T, tr *Tree, m *model) {
	require.Equal(t, len(m.nodes), tr.NodeCount(), "node count")
	for p, n := range m.nodes {
		st, code := tr.Exists(p, false, 0)
		require.Equal(t, wire.ErrOK, code, "exists %s", p)
		require.Equal(t, m.stat(p), st, "stat of %s", p)
		tn := tr.nodes.get(p)
		require.Equal(t, string(n.data), string(tn.data()), "data of %s", p)
		require.Equal(t, n.data == nil, tn.data() == nil, "null data of %s", p)
		require.Equal(t, n.acl, tr.acls.list(tn.acl), "ACL of %s", p)
		kids, _, code := tr.GetChildren(p, []wire.Id{{Scheme: "super"}}, false, 0)
		require.Equal(t, wire.ErrOK, code)
		require.Equal(t, fmt.Sprint(m.children(p)), fmt.Sprint(kids), "children of %s", p)
	}
	for _, s := range genSessions {
		var want []string
		for p, n := range m.nodes {
			if n.kind == kindEphemeral && n.owner == s {
				want = append(want, p)
			}
		}
		sort.Strings(want)
		require.Equal(t, fmt.Sprint(want), fmt.Sprint(tr.Ephemerals(s)), "ephemerals of %d", s)
	}
	var sum int64
	for p, n := range allNodes(tr) {
		sum += int64(tr.digestOf(p, n))
	}
	require.Equal(t, sum, tr.Digest(), "incremental digest")
}

// modeKindMismatch is a create whose mode flags and opcode disagree on the
// node's kind: ZooKeeper logs a digest for it that is not its tree's (see
// Prepare), and later prepares see the mode's kind until it is applied.
func modeKindMismatch(req *Request) bool {
	b, ok := req.Body.(*wire.CreateRequest)
	if !ok {
		return false
	}
	switch req.Op {
	case wire.OpCreate, wire.OpCreate2:
		return b.Flags == wire.ModeContainer
	case wire.OpCreateContainer:
		return b.Flags != wire.ModeContainer
	}
	return false
}

// TestTreeAgainstModel drives random writes — every create mode, wrong
// versions, ACLs and identities, multi, sessions closing, the reaper — in
// batches prepared ahead of their applies, as a pipelining leader does,
// and requires the model's result for every request and its state after
// every batch.
func TestTreeAgainstModel(t *testing.T) {
	rapid.Check(t, treeAgainstModel)
}

// TestTreeAgainstModelSeeds replays the seeds at which TestTreeAgainstModel
// failed, each as the failing run drew it (rapidseed; a change to the draws
// of treeAgainstModel or opgen_test.go sends them elsewhere):
//
//   - 3432847370302613703: a TTL node /b past its TTL, a setData of /b and
//     then the reaper's deleteContainer of /b in one batch, all prepared
//     before the first apply. The tree answered the stale reap BadVersion,
//     as zabd means to; the model expected the delete ZooKeeper does
//     (staleReap).
func TestTreeAgainstModelSeeds(t *testing.T) {
	rapidseed.Check(t, treeAgainstModel,
		3432847370302613703,
	)
}

// treeAgainstModel is TestTreeAgainstModel's property.
func treeAgainstModel(rt *rapid.T) {
	cfg := Config{ExtendedTypesEnabled: rapid.Bool().Draw(rt, "extended"), X509Enabled: rapid.Bool().Draw(rt, "x509")}
	tr, m := New(cfg), newModel(cfg)
	zxid, now := int64(0), int64(1_000_000)
	steps := rapid.IntRange(1, 40).Draw(rt, "steps")
	for step := 0; step < steps; step++ {
		if rapid.IntRange(0, 9).Draw(rt, "reap") == 0 {
			now += rapid.Int64Range(0, 2000).Draw(rt, "wait")
			requireReapCandidates(rt, tr, m, now)
		}
		var batch []*Request
		for i, n := 0, rapid.IntRange(1, 4).Draw(rt, "batch"); i < n; i++ {
			batch = append(batch, genWrite(rt))
		}
		if rapid.IntRange(0, 4).Draw(rt, "withReap") == 0 {
			// Chosen from the applied tree and prepared after the
			// batch's writes: a write may have made the reap stale.
			for _, r := range requireReapCandidates(rt, tr, m, now) {
				batch = append(batch, &r)
			}
		}
		txns := make([]Txn, len(batch))
		for i, req := range batch {
			txns[i] = tr.Prepare(req, zxid+int64(i)+1, now+int64(i))
		}
		quirk := false
		for i, req := range batch {
			zxid++
			got, _ := tr.Apply(&txns[i], nil)
			want := m.write(req, zxid, now+int64(i))
			require.Equal(rt, want, got, "result of %v %+v", req.Op, req.Body)
			quirk = quirk || modeKindMismatch(req)
			if txns[i].Digest.Version != 0 && !quirk {
				require.Equal(rt, txns[i].Digest.TreeDigest, tr.Digest(), "prepared digest of zxid %d", zxid)
			}
		}
		now += int64(len(batch))
		m.endBatch()
		require.Zero(rt, tr.PendingCount())
		requireMatchesModel(rt, tr, m)
		require.Equal(rt, walkedDataSize(tr), tr.ApproximateDataSize(), "approximate_data_size kept as the tree changes")
	}
}
