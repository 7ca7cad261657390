package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/config"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

// The differential test runs the same random operations, in lock-step, on
// Debian's ZooKeeper 3.8 and on zabd, each used by nothing else, and
// compares what the clients see: error codes, reply bodies with stats,
// sequential names, multi results, and every session's watch events with
// their order relative to the acting session's reply.
//
// Differences it deliberately ignores (each normalized away below):
//   - ctime and mtime: wall-clock times differ between the two runs.
//   - zxids are compared by order of first appearance, not by value.
//   - session ids (ephemeralOwner) are compared by which session they
//     are; the ids themselves are time-derived.
//   - the order of children in getChildren/getChildren2 and of
//     getEphemerals: ZooKeeper returns its hash set's order, zabd sorts.
//   - plain check requests (opcode 13 outside a multi) are not sent:
//     ZooKeeper 3.8.0 never answers a successful one
//     (docs/compatibility.md, point 19).
//   - TTL and container nodes are not created: when the server reaps them
//     is timing, not semantics (they have their own tests). Both servers
//     run with extendedTypesEnabled off, ZooKeeper's default, and the
//     requests that could make such nodes are sent only in forms that
//     cannot (see randomCreate).
//   - sessions never expire during the run (when is timing); they are
//     closed with closeSession now and then, and a new one takes the slot.
//
// Besides well-formed requests it sends what only a careless or hostile
// client would: paths holding invalid UTF-8, characters beyond the BMP (as
// Java writes them, and raw as Go clients do), U+FFFD itself and control
// characters, in every request that carries a path or path list; malformed
// ops inside multi (TTL modes through the plain create opcodes, invalid
// flags, createTTL with odd TTLs, read ops, op types that have no place in
// a multi, null paths) and write ops and null paths inside multiRead; empty
// multis; setWatches and setWatches2 (null lists included), checkWatches,
// and deleteContainer.

// diffOps is the number of operations per run; ZABD_DIFF_OPS overrides it
// for a longer hunt.
const diffOps = 400

func TestDifferentialAgainstZooKeeper(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if env := os.Getenv("ZABD_DIFF_SEED"); env != "" {
		var err error
		seed, err = strconv.ParseUint(env, 10, 64)
		require.NoError(t, err, "ZABD_DIFF_SEED")
	}
	ops := diffOps
	if env := os.Getenv("ZABD_DIFF_OPS"); env != "" {
		var err error
		ops, err = strconv.Atoi(env)
		require.NoError(t, err, "ZABD_DIFF_OPS")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const sessions = 3
	sides := startDiffSides(t, ctx, sessions)
	t.Logf("seed %d (replay: ZABD_DIFF_SEED=%d go test -run Differential ./zab/server)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	for step := range ops {
		s := rng.IntN(sessions)
		op, req := randomOp(rng)
		diffStep(t, ctx, sides, s, op, req, fmt.Sprintf("seed %d step %d", seed, step))
	}
}

// TestDifferentialKnownCases replays, on both servers, the requests that
// once told zabd and ZooKeeper apart, so that each stays covered whatever
// the random test draws: malformed multi ops before and after a failed one,
// paths that Java decodes (sync echoes them), a multiRead of writes, null
// setWatches lists, checkWatches on relative paths.
func TestDifferentialKnownCases(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sides := startDiffSides(t, ctx, 2)
	step := func(op wire.OpCode, req wire.Record) {
		t.Helper()
		diffStep(t, ctx, sides, 0, op, req, "known case")
	}
	open := client.OpenACL
	ttlByCreate := wire.MultiOp{Type: wire.OpCreate, Body: &wire.CreateRequest{Path: "/t", ACL: open, Flags: wire.ModePersistentWithTTL}}
	deleteMissing := wire.MultiOp{Type: wire.OpDelete, Body: &wire.PathVersionRequest{Path: "/missing", Version: -1}}
	createA := wire.MultiOp{Type: wire.OpCreate, Body: &wire.CreateRequest{Path: "/a", ACL: open}}
	for _, ops := range [][]wire.MultiOp{{deleteMissing, ttlByCreate}, {ttlByCreate}, {createA, ttlByCreate}, {deleteMissing, ttlByCreate, createA}, {}} {
		step(wire.OpMulti, &wire.MultiRequest{Ops: ops})
	}
	for _, p := range []string{"/a\xe2\x82", "/\xe2\x82A", "/\xc0\x80", "/\xe0\x80\x80", "/\xed\xa0\x80x", "/\xed\xa0", "/\xf0\x9f\x98",
		"/\xf0\x9fA", "/\xf4\x90\x80\x80", "/\xf5\x80", "/\xff\xfeA", "/\x80\xbf", "/a\x00b", "/日本語", "/\U0001f600", "bad\xff"} {
		step(wire.OpSync, &wire.PathRequest{Path: p})
		step(wire.OpSync, &rawPathRequest{Path: p})
	}
	step(wire.OpMultiRead, &wire.MultiRequest{Ops: []wire.MultiOp{deleteMissing}})
	step(wire.OpMultiRead, &wire.MultiRequest{Ops: []wire.MultiOp{{Type: wire.OpGetData, Body: &wire.PathWatchRequest{Path: "/a"}}, deleteMissing}})
	// Two spellings of one path once Java has decoded them.
	step(wire.OpExists, &wire.PathWatchRequest{Path: "/a\xff", Watch: true})
	step(wire.OpCheckWatches, &wire.PathTypeRequest{Path: "/a\xfe", Type: wire.WatcherData})
	step(wire.OpRemoveWatches, &wire.PathTypeRequest{Path: "/a\ufffd", Type: wire.WatcherData})
	step(wire.OpSetWatches, &wire.SetWatchesRequest{DataWatches: []string{"/missing"}, ExistWatches: nil, ChildWatches: []string{"/a"}})
	step(wire.OpCheckWatches, &wire.PathTypeRequest{Path: "bad", Type: wire.WatcherAny})
	step(wire.OpCheckWatches, &wire.PathTypeRequest{Path: "a/b", Type: wire.WatcherData})
	step(wire.OpAddWatch, &wire.AddWatchRequest{Path: "/a", Mode: wire.AddWatchPersistentRecursive})
	step(wire.OpCheckWatches, &wire.PathTypeRequest{Path: "a/b", Type: wire.WatcherData})
	step(wire.OpCreate, &wire.CreateRequest{Path: "/acl", ACL: []wire.ACL{{Perms: wire.PermAll, ID: wire.AnyoneID}, {Perms: wire.PermRead, ID: wire.Id{Scheme: "digest", ID: "\xffu\xed\xa0\x80:x"}}}})
	step(wire.OpGetACL, &wire.PathRequest{Path: "/acl"})
	// Every request whose body starts with a path, with jute's null string
	// for it.
	for _, r := range nullPathRequests() {
		step(r.op, r.body)
	}
	// A null path in each kind of op of a multi, alone, after an op that
	// succeeds or fails, and before a malformed op or a read op; in a
	// multiRead, alone and after an op of each kind and result.
	getRoot := wire.MultiOp{Type: wire.OpGetData, Body: &wire.PathWatchRequest{Path: "/"}}
	for _, null := range nullPathMultiOps() {
		for _, ops := range [][]wire.MultiOp{{null}, {createA, null}, {deleteMissing, null}, {null, ttlByCreate}, {null, getRoot}} {
			step(wire.OpMulti, &wire.MultiRequest{Ops: ops})
		}
		step(wire.OpMultiRead, &wire.MultiRequest{Ops: []wire.MultiOp{null}})
	}
	getChildrenMissing := wire.MultiOp{Type: wire.OpGetChildren, Body: &wire.PathWatchRequest{Path: "/missing"}}
	getChildrenNull := wire.MultiOp{Type: wire.OpGetChildren, Body: &wire.PathWatchRequest{Watch: true}, NullPath: true}
	getDataNull := wire.MultiOp{Type: wire.OpGetData, Body: &wire.PathWatchRequest{}, NullPath: true}
	for _, ops := range [][]wire.MultiOp{{getRoot, getDataNull, getRoot}, {getChildrenMissing, getChildrenNull}, {getRoot, getChildrenNull, deleteMissing}} {
		step(wire.OpMultiRead, &wire.MultiRequest{Ops: ops})
	}
}

// nullPathMultiOps is one multi op of each type a multi or multiRead holds,
// its path being jute's null string.
func nullPathMultiOps() []wire.MultiOp {
	open := client.OpenACL
	ops := []wire.MultiOp{
		{Type: wire.OpCreate, Body: &wire.CreateRequest{ACL: open}},
		{Type: wire.OpCreate, Body: &wire.CreateRequest{ACL: open, Flags: wire.ModeEphemeralSequential}},
		{Type: wire.OpCreate2, Body: &wire.CreateRequest{ACL: open}},
		{Type: wire.OpCreateContainer, Body: &wire.CreateRequest{ACL: open, Flags: wire.ModeContainer}},
		{Type: wire.OpCreateTTL, Body: &wire.CreateRequest{ACL: open, Flags: wire.ModePersistentWithTTL, TTL: 1000, HasTTL: true}},
		{Type: wire.OpDelete, Body: &wire.PathVersionRequest{Version: -1}},
		{Type: wire.OpSetData, Body: &wire.SetDataRequest{Data: []byte("x"), Version: -1}},
		{Type: wire.OpCheck, Body: &wire.PathVersionRequest{Version: -1}},
		{Type: wire.OpGetData, Body: &wire.PathWatchRequest{}},
		{Type: wire.OpGetChildren, Body: &wire.PathWatchRequest{}},
	}
	for i := range ops {
		ops[i].NullPath = true
	}
	return ops
}

// nullPathRequests is one request of each opcode whose body starts with a
// path, that path being jute's null string.
func nullPathRequests() []struct {
	op   wire.OpCode
	body wire.Record
} {
	create := &wire.CreateRequest{ACL: client.OpenACL}
	return []struct {
		op   wire.OpCode
		body wire.Record
	}{
		{wire.OpCreate, nullPath{create}}, {wire.OpCreate2, nullPath{create}}, {wire.OpCreateContainer, nullPath{create}},
		{wire.OpCreateTTL, nullPath{&wire.CreateRequest{ACL: client.OpenACL, TTL: 1000, HasTTL: true}}},
		{wire.OpDelete, nullPath{&wire.PathVersionRequest{Version: -1}}},
		{wire.OpDeleteContainer, nullPath{&wire.PathRequest{}}},
		{wire.OpSetData, nullPath{&wire.SetDataRequest{Version: -1}}},
		{wire.OpSetACL, nullPath{&wire.SetACLRequest{ACL: client.OpenACL, Version: -1}}},
		{wire.OpGetData, nullPath{&wire.PathWatchRequest{}}}, {wire.OpExists, nullPath{&wire.PathWatchRequest{}}},
		{wire.OpGetChildren, nullPath{&wire.PathWatchRequest{}}}, {wire.OpGetChildren2, nullPath{&wire.PathWatchRequest{}}},
		{wire.OpGetACL, nullPath{&wire.PathRequest{}}}, {wire.OpSync, nullPath{&wire.PathRequest{}}},
		{wire.OpGetEphemerals, nullPath{&wire.PathRequest{}}}, {wire.OpGetAllChildrenNumber, nullPath{&wire.PathRequest{}}},
		{wire.OpCheckWatches, nullPath{&wire.PathTypeRequest{Type: wire.WatcherAny}}},
		{wire.OpRemoveWatches, nullPath{&wire.PathTypeRequest{Type: wire.WatcherAny}}},
		{wire.OpAddWatch, nullPath{&wire.AddWatchRequest{Mode: wire.AddWatchPersistent}}},
	}
}

// nullPath sends body, whose path is "", with jute's null string (length
// -1) in the path's place.
type nullPath struct{ body wire.Record }

func (r nullPath) Encode(e *wire.Encoder) {
	b := wire.Marshal(r.body)
	b[0], b[1], b[2], b[3] = 0xff, 0xff, 0xff, 0xff // the empty path's length 0
	e.WriteRaw(b)
}
func (nullPath) Decode(*wire.Decoder) { panic("nullPath is only sent") }

// startDiffSides starts ZooKeeper and zabd configured alike, used by
// nothing else, and opens n sessions on each.
func startDiffSides(t *testing.T, ctx context.Context, n int) []*diffSide {
	zk := zkprocess.ForTest(t, map[string]string{"tickTime": "2000"})
	cfg := testConfig(t.TempDir())
	cfg.TickTime = 2 * time.Second
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 4*time.Second, 40*time.Second
	cfg.ContainerCheckInterval = config.DefaultContainerCheckInterval
	cfg.ExtendedTypesEnabled = false // ZooKeeper's default, which zk runs with
	zabd := startServer(t, cfg)
	sides := []*diffSide{newDiffSide(t, ctx, "zookeeper", zk.Addr, n), newDiffSide(t, ctx, "zabd", zabd.addr, n)}
	t.Cleanup(func() {
		for _, side := range sides {
			for _, c := range side.conns {
				c.Close()
			}
		}
	})
	return sides
}

// diffStep sends op on session s of every side and fails the test, naming
// the step, if what the clients see differs.
func diffStep(t *testing.T, ctx context.Context, sides []*diffSide, s int, op wire.OpCode, req wire.Record, step string) {
	t.Helper()
	var got [2]string
	for i, side := range sides {
		got[i] = side.run(t, ctx, s, op, req)
	}
	if got[0] != got[1] {
		t.Fatalf("%s: session %d %s %s\nZooKeeper: %s\nzabd:      %s", step, s, op, describe(req), got[0], got[1])
	}
}

// diffSide is one server with its sessions and its zxid and session
// numbering.
type diffSide struct {
	name     string
	addr     string
	conns    []*client.Conn
	gens     []int            // per slot: how many sessions it has had
	zxids    map[int64]int    // zxid -> order of first appearance
	sessions map[int64]string // session id -> "s<slot>.<generation>"
}

func newDiffSide(t *testing.T, ctx context.Context, name, addr string, n int) *diffSide {
	d := &diffSide{name: name, addr: addr, conns: make([]*client.Conn, n), gens: make([]int, n),
		zxids: map[int64]int{0: 0, -1: -1}, sessions: map[int64]string{0: "none"}}
	for i := range n {
		d.open(t, ctx, i)
	}
	return d
}

// open starts a new session in slot i.
func (d *diffSide) open(t *testing.T, ctx context.Context, i int) {
	c, err := client.Dial(ctx, d.addr, client.Session{Timeout: 30 * time.Second})
	require.NoError(t, err, "%s: connect", d.name)
	d.conns[i] = c
	d.sessions[c.SessionID()] = fmt.Sprintf("s%d.%d", i, d.gens[i])
	d.gens[i]++
}

// run sends op on session s, waits for its reply, then pings every session
// so that every event the op fired has arrived, and renders all of it. A
// closeSession ends the slot's session; a new one replaces it.
func (d *diffSide) run(t *testing.T, ctx context.Context, s int, op wire.OpCode, req wire.Record) string {
	r, err := d.conns[s].Do(ctx, op, req)
	require.NoError(t, err, "%s: %s", d.name, op)
	var b strings.Builder
	fmt.Fprintf(&b, "err=%s zxid=%s", r.Header.Err, d.zxid(r.Header.Zxid))
	switch {
	case r.Header.Err != wire.ErrOK && len(r.Body) == 0:
		// an error has no body (a multi whose ops fail answers err 0),
		// unless it came once the response was begun
	case r.Header.Err == wire.ErrOK || op == wire.OpMulti || op == wire.OpMultiRead:
		body, derr := wire.DecodeResponse(op, r.Body)
		require.NoError(t, derr, "%s: decode %s", d.name, op)
		fmt.Fprintf(&b, " %s", d.render(body))
	default:
		fmt.Fprintf(&b, " and a body %x", r.Body)
	}
	if op == wire.OpCloseSession {
		d.renderEvents(&b, s, s, r)
		d.conns[s].Close()
		d.open(t, ctx, s)
	}
	for i, c := range d.conns {
		require.NoError(t, c.Ping(ctx), "%s: ping", d.name)
		d.renderEvents(&b, i, s, r)
	}
	return b.String()
}

// renderEvents renders the events slot i has received, marking for the
// acting slot s whether each came before or after the reply r.
func (d *diffSide) renderEvents(b *strings.Builder, i, s int, r *client.Reply) {
	for _, ev := range d.conns[i].PendingEvents() {
		when := ""
		if i == s {
			when = " after-reply"
			if ev.Seq < r.Seq {
				when = " before-reply"
			}
		}
		fmt.Fprintf(b, " | s%d event %s %s %q%s", i, ev.Type, ev.State, ev.Path, when)
	}
}

func (d *diffSide) zxid(z int64) string {
	if _, ok := d.zxids[z]; !ok {
		d.zxids[z] = len(d.zxids)
	}
	return fmt.Sprintf("z%d", d.zxids[z])
}

func (d *diffSide) stat(st wire.Stat) string {
	owner, ok := d.sessions[st.EphemeralOwner]
	if !ok {
		owner = fmt.Sprint(st.EphemeralOwner)
	}
	return fmt.Sprintf("{c=%s m=%s p=%s v=%d cv=%d av=%d owner=%s len=%d kids=%d}",
		d.zxid(st.Czxid), d.zxid(st.Mzxid), d.zxid(st.Pzxid), st.Version, st.Cversion, st.Aversion, owner, st.DataLength, st.NumChildren)
}

func (d *diffSide) render(rec wire.Record) string {
	switch r := rec.(type) {
	case *wire.PathResponse:
		return strconv.Quote(r.Path)
	case *wire.Create2Response:
		return strconv.Quote(r.Path) + " " + d.stat(r.Stat)
	case *wire.StatResponse:
		return d.stat(r.Stat)
	case *wire.GetDataResponse:
		return fmt.Sprintf("%q %s", r.Data, d.stat(r.Stat))
	case *wire.StringsResponse:
		return fmt.Sprintf("%q", slices.Sorted(slices.Values(r.Strings)))
	case *wire.GetChildren2Response:
		return fmt.Sprintf("%q %s", slices.Sorted(slices.Values(r.Children)), d.stat(r.Stat))
	case *wire.GetACLResponse:
		var acl []string
		for _, a := range r.ACL {
			acl = append(acl, fmt.Sprintf("%q:%q:%s", a.ID.Scheme, a.ID.ID, wire.PermString(a.Perms)))
		}
		return fmt.Sprintf("%s %s", acl, d.stat(r.Stat))
	case *wire.IntResponse:
		return fmt.Sprint(r.Value)
	case *wire.ErrorResponse:
		return fmt.Sprintf("error(%s)", r.Err)
	case *wire.MultiResponse:
		var parts []string
		for _, res := range r.Results {
			body := ""
			if res.Body != nil {
				body = d.render(res.Body)
			}
			parts = append(parts, fmt.Sprintf("%s/%s %s", res.Type, res.Err, body))
		}
		return "[" + strings.Join(parts, "; ") + "]"
	case *wire.Empty:
		return ""
	case *wire.WhoAmIResponse:
		return fmt.Sprintf("%q", r.ClientInfo)
	}
	return fmt.Sprintf("%T%+v", rec, rec)
}

var diffPaths = []string{"/a", "/a/b", "/a/c", "/b", "/a/b/x", "/a/b/y", "/zookeeper/x", "/a/s-", "bad", "/a//b"}

// oddSequences are inserted into paths: malformed UTF-8 of each kind Java
// replaces differently (a stray byte, an overlong form, a truncated
// sequence, an encoded surrogate, a code point above U+10FFFF), a
// character beyond the BMP, U+FFFD itself (which some of them become, so
// that two spellings name one path), a valid two-byte character and
// control characters.
var oddSequences = []string{"\xff", "\xfe", "\x80", "\xc0\x80", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80",
	"\xf0\x9f\x98\x80", "\ufffd", "\u00e9", "\x00", "\x1f", "\u0085"}

// randomPath draws one of diffPaths, and one time in four puts an odd
// sequence into it (at its end, or before one of its slashes).
func randomPath(rng *rand.Rand) string {
	p := diffPaths[rng.IntN(len(diffPaths))]
	if rng.IntN(4) != 0 {
		return p
	}
	odd := oddSequences[rng.IntN(len(oddSequences))]
	at := len(p)
	if slashes := strings.Count(p, "/"); slashes > 1 && rng.IntN(2) == 0 {
		// before the second or a later slash: an odd parent
		at = strings.Index(p[1:], "/") + 1
	}
	return p[:at] + odd + p[at:]
}

// pathRequest is a body made of one path. A Go string goes out through
// jute's Java writer, which turns a character beyond the BMP into two
// surrogates; rawPathRequest sends the path's bytes as they are, as a Go
// client would.
func pathRequest(rng *rand.Rand) wire.Record {
	if rng.IntN(3) == 0 {
		return &rawPathRequest{Path: randomPath(rng)}
	}
	return &wire.PathRequest{Path: randomPath(rng)}
}

type rawPathRequest struct{ Path string }

func (r *rawPathRequest) Encode(e *wire.Encoder) {
	e.WriteInt(int32(len(r.Path)))
	e.WriteRaw([]byte(r.Path))
}
func (r *rawPathRequest) Decode(*wire.Decoder) { panic("rawPathRequest is only sent") }

func randomPaths(rng *rand.Rand) []string {
	var out []string
	for range rng.IntN(3) {
		out = append(out, randomPath(rng))
	}
	return out
}

func randomVersion(rng *rand.Rand) int32 {
	if rng.IntN(3) == 0 {
		return int32(rng.IntN(3))
	}
	return -1
}

// diffACLs are the ACLs nodes get: open, the creator's digest identities
// (auth), alice's digest with all rights, everyone read-only, and a digest
// id holding invalid UTF-8.
var diffACLs = [][]wire.ACL{
	client.OpenACL,
	client.OpenACL,
	{{Perms: wire.PermAll, ID: wire.Id{Scheme: "auth"}}},
	{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: datatree.DigestID("alice:pw")}}},
	{{Perms: wire.PermRead, ID: wire.Id{Scheme: "world", ID: "anyone"}}},
	{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: "anyone"}}, {Perms: wire.PermAdmin, ID: wire.Id{Scheme: "digest", ID: "\xffal\xe2\x82:x"}}},
}

func randomACL(rng *rand.Rand) []wire.ACL { return diffACLs[rng.IntN(len(diffACLs))] }

// randomCreate draws a create request for opcode op, alone (inMulti false)
// or inside a multi, in the forms that cannot make a container or TTL node
// with extendedTypesEnabled off: outside a multi the container flag on
// create and create2 makes a plain node, createContainer is not sent, and
// createTTL only with a TTL mode (Unimplemented) or a TTL that a non-TTL
// mode refuses (BadArguments); inside a multi a create's kind follows its
// flags whatever its opcode, so the container flag is left out and
// createTTL with another mode is a plain create.
func randomCreate(rng *rand.Rand, op wire.OpCode, inMulti bool) *wire.CreateRequest {
	modes := []wire.CreateMode{wire.ModePersistent, wire.ModeEphemeral, wire.ModePersistentSequential, wire.ModeEphemeralSequential}
	b := &wire.CreateRequest{Path: randomPath(rng), Data: []byte(fmt.Sprint(rng.IntN(100))), ACL: randomACL(rng), Flags: modes[rng.IntN(len(modes))]}
	odd := []wire.CreateMode{wire.ModePersistentWithTTL, wire.ModePersistentSequentialWithTTL, 7, -1}
	if !inMulti {
		odd = append(odd, wire.ModeContainer)
	}
	if rng.IntN(5) == 0 {
		b.Flags = odd[rng.IntN(len(odd))]
	}
	if op == wire.OpCreateTTL {
		b.HasTTL = true
		ttls := []int64{-1, 0, 1, 1000, 1<<40 - 1, 1 << 40}
		b.TTL = ttls[rng.IntN(len(ttls))]
		if !inMulti && !b.Flags.TTL() && b.TTL < 0 {
			// ZooKeeper would log a CreateTTLTxn it cannot apply.
			b.TTL = 1000
		}
	}
	return b
}

// randomMultiOp draws one op of a multi: mostly well-formed writes, and one
// time in six something malformed.
func randomMultiOp(rng *rand.Rand) wire.MultiOp {
	if rng.IntN(6) == 0 {
		switch rng.IntN(5) {
		case 0:
			// a create with a TTL mode or invalid flags through any create opcode
			op := []wire.OpCode{wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL}[rng.IntN(4)]
			b := randomCreate(rng, op, true)
			b.Flags = []wire.CreateMode{wire.ModePersistentWithTTL, wire.ModePersistentSequentialWithTTL, 7, -1}[rng.IntN(4)]
			return wire.MultiOp{Type: op, Body: b}
		case 1:
			// a read op: ZooKeeper cannot decode a multi mixing kinds
			op := []wire.OpCode{wire.OpGetData, wire.OpGetChildren}[rng.IntN(2)]
			return wire.MultiOp{Type: op, Body: &wire.PathWatchRequest{Path: randomPath(rng)}}
		case 2:
			// an op type that has no place in a multi
			op := []wire.OpCode{wire.OpExists, wire.OpSync, wire.OpSetACL, wire.OpCreateSession}[rng.IntN(4)]
			return wire.MultiOp{Type: op, Body: &wire.PathWatchRequest{Path: randomPath(rng)}}
		case 3:
			// a null path, in an op of any type
			ops := nullPathMultiOps()
			return ops[rng.IntN(len(ops))]
		}
		return wire.MultiOp{Type: wire.OpCreateTTL, Body: randomCreate(rng, wire.OpCreateTTL, true)}
	}
	switch rng.IntN(5) {
	case 0:
		op := []wire.OpCode{wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer}[rng.IntN(3)]
		return wire.MultiOp{Type: op, Body: randomCreate(rng, op, true)}
	case 1:
		return wire.MultiOp{Type: wire.OpDelete, Body: &wire.PathVersionRequest{Path: randomPath(rng), Version: randomVersion(rng)}}
	case 2:
		return wire.MultiOp{Type: wire.OpSetData, Body: &wire.SetDataRequest{Path: randomPath(rng), Data: []byte("m"), Version: randomVersion(rng)}}
	case 3:
		return wire.MultiOp{Type: wire.OpCheck, Body: &wire.PathVersionRequest{Path: randomPath(rng), Version: randomVersion(rng)}}
	}
	return wire.MultiOp{Type: wire.OpCreate, Body: randomCreate(rng, wire.OpCreate, true)}
}

// randomOp draws an operation and its request body.
func randomOp(rng *rand.Rand) (wire.OpCode, wire.Record) {
	switch rng.IntN(23) {
	case 0, 1, 2:
		op := wire.OpCreate
		if rng.IntN(8) == 0 {
			op = wire.OpCreateTTL
		}
		return op, randomCreate(rng, op, false)
	case 3:
		return wire.OpCreate2, randomCreate(rng, wire.OpCreate2, false)
	case 4, 5:
		return wire.OpDelete, &wire.PathVersionRequest{Path: randomPath(rng), Version: randomVersion(rng)}
	case 6, 7:
		return wire.OpSetData, &wire.SetDataRequest{Path: randomPath(rng), Data: []byte(fmt.Sprint(rng.IntN(100))), Version: randomVersion(rng)}
	case 8:
		return wire.OpExists, &wire.PathWatchRequest{Path: randomPath(rng), Watch: rng.IntN(2) == 0}
	case 9:
		return wire.OpGetData, &wire.PathWatchRequest{Path: randomPath(rng), Watch: rng.IntN(2) == 0}
	case 10:
		return wire.OpGetChildren2, &wire.PathWatchRequest{Path: randomPath(rng), Watch: rng.IntN(2) == 0}
	case 11:
		return wire.OpGetChildren, &wire.PathWatchRequest{Path: randomPath(rng), Watch: rng.IntN(2) == 0}
	case 12:
		req := &wire.MultiRequest{}
		for range rng.IntN(4) {
			req.Ops = append(req.Ops, randomMultiOp(rng))
		}
		return wire.OpMulti, req
	case 13:
		req := &wire.MultiRequest{}
		for range 1 + rng.IntN(3) {
			if rng.IntN(8) == 0 {
				req.Ops = append(req.Ops, randomMultiOp(rng)) // a write op, or worse
				continue
			}
			op := wire.OpGetData
			if rng.IntN(2) == 0 {
				op = wire.OpGetChildren
			}
			if rng.IntN(12) == 0 {
				req.Ops = append(req.Ops, wire.MultiOp{Type: op, Body: &wire.PathWatchRequest{}, NullPath: true})
				continue
			}
			req.Ops = append(req.Ops, wire.MultiOp{Type: op, Body: &wire.PathWatchRequest{Path: randomPath(rng)}})
		}
		return wire.OpMultiRead, req
	case 14:
		return wire.OpGetAllChildrenNumber, pathRequest(rng)
	case 15:
		return wire.OpGetEphemerals, pathRequest(rng)
	case 17:
		return wire.OpGetACL, pathRequest(rng)
	case 18:
		return wire.OpSetACL, &wire.SetACLRequest{Path: randomPath(rng), ACL: randomACL(rng), Version: randomVersion(rng)}
	case 19:
		return wire.OpSync, pathRequest(rng)
	case 20:
		switch rng.IntN(4) {
		case 0:
			return wire.OpCloseSession, nil
		case 1:
			users := []string{"alice:pw", "bob:pw", "alice:wrong"}
			return wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte(users[rng.IntN(len(users))])}
		case 2:
			return wire.OpWhoAmI, nil
		}
		return wire.OpSync, pathRequest(rng)
	case 16:
		if rng.IntN(2) == 0 {
			return wire.OpAddWatch, &wire.AddWatchRequest{Path: randomPath(rng), Mode: wire.AddWatchMode(rng.IntN(2))}
		}
		return wire.OpRemoveWatches, &wire.PathTypeRequest{Path: randomPath(rng), Type: wire.WatcherType(1 + rng.IntN(3))}
	case 21:
		if rng.IntN(4) == 0 {
			// only the container reaper may send it: BadArguments
			return wire.OpDeleteContainer, &wire.RawPathRequest{Path: randomPath(rng)}
		}
		return wire.OpCheckWatches, &wire.PathTypeRequest{Path: randomPath(rng), Type: wire.WatcherType(1 + rng.IntN(3))}
	case 22:
		// Relative zxid 0 fires every change at once (all are newer); the
		// largest fires only what does not depend on zxids.
		req := &wire.SetWatchesRequest{RelativeZxid: []int64{0, 1<<63 - 1}[rng.IntN(2)],
			DataWatches: randomPaths(rng), ExistWatches: randomPaths(rng), ChildWatches: randomPaths(rng)}
		if rng.IntN(2) == 0 {
			return wire.OpSetWatches, req
		}
		req.Persistent = true
		req.PersistentWatches, req.PersistentRecursiveWatches = randomPaths(rng), randomPaths(rng)
		return wire.OpSetWatches2, req
	}
	panic("unreachable")
}

func describe(rec wire.Record) string {
	if r, ok := rec.(*rawPathRequest); ok {
		return fmt.Sprintf("%q (raw bytes)", r.Path)
	}
	return wire.Describe(rec)
}
