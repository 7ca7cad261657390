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
//     ZooKeeper 3.8.0 never answers a successful one (see SPEC.md).
//   - TTL and container nodes are not created: when the server reaps them
//     is timing, not semantics (they have their own tests).
//   - sessions never expire during the run (when is timing); they are
//     closed with closeSession now and then, and a new one takes the slot.

const diffOps = 400

func TestDifferentialAgainstZooKeeper(t *testing.T) {
	zk := zkprocess.ForTest(t, map[string]string{"tickTime": "2000"})
	cfg := testConfig(t.TempDir())
	cfg.TickTime = 2 * time.Second
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 4*time.Second, 40*time.Second
	cfg.ContainerCheckInterval = config.DefaultContainerCheckInterval
	zabd := startServer(t, cfg)

	seed := uint64(time.Now().UnixNano())
	if env := os.Getenv("ZABD_DIFF_SEED"); env != "" {
		var err error
		seed, err = strconv.ParseUint(env, 10, 64)
		require.NoError(t, err, "ZABD_DIFF_SEED")
	}
	t.Logf("seed %d (replay: ZABD_DIFF_SEED=%d go test -run Differential ./zab/server)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 7))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const sessions = 3
	sides := []*diffSide{newDiffSide(t, ctx, "zookeeper", zk.Addr, sessions), newDiffSide(t, ctx, "zabd", zabd.addr, sessions)}
	t.Cleanup(func() {
		for _, side := range sides {
			for _, c := range side.conns {
				c.Close()
			}
		}
	})
	for step := range diffOps {
		s := rng.IntN(sessions)
		op, req := randomOp(rng)
		var got [2]string
		for i, side := range sides {
			got[i] = side.run(t, ctx, s, op, req)
		}
		if got[0] != got[1] {
			t.Fatalf("seed %d step %d: session %d %s %s\nZooKeeper: %s\nzabd:      %s", seed, step, s, op, describe(req), got[0], got[1])
		}
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
	if r.Header.Err == wire.ErrOK || op == wire.OpMulti {
		body, derr := wire.DecodeResponse(op, r.Body)
		require.NoError(t, derr, "%s: decode %s", d.name, op)
		fmt.Fprintf(&b, " %s", d.render(body))
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
		fmt.Fprintf(b, " | s%d event %s %s %s%s", i, ev.Type, ev.State, ev.Path, when)
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
		return r.Path
	case *wire.Create2Response:
		return r.Path + " " + d.stat(r.Stat)
	case *wire.StatResponse:
		return d.stat(r.Stat)
	case *wire.GetDataResponse:
		return fmt.Sprintf("%q %s", r.Data, d.stat(r.Stat))
	case *wire.StringsResponse:
		return fmt.Sprint(slices.Sorted(slices.Values(r.Strings)))
	case *wire.GetChildren2Response:
		return fmt.Sprint(slices.Sorted(slices.Values(r.Children))) + " " + d.stat(r.Stat)
	case *wire.GetACLResponse:
		return fmt.Sprintf("%v %s", r.ACL, d.stat(r.Stat))
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
		return fmt.Sprint(r.ClientInfo)
	}
	return fmt.Sprintf("%T%+v", rec, rec)
}

var diffPaths = []string{"/a", "/a/b", "/a/c", "/b", "/a/b/x", "/a/b/y", "/zookeeper/x", "/a/s-", "bad", "/a//b"}

func randomPath(rng *rand.Rand) string { return diffPaths[rng.IntN(len(diffPaths))] }

func randomVersion(rng *rand.Rand) int32 {
	if rng.IntN(3) == 0 {
		return int32(rng.IntN(3))
	}
	return -1
}

// diffACLs are the ACLs nodes get: open, the creator's digest identities
// (auth), alice's digest with all rights, everyone read-only.
var diffACLs = [][]wire.ACL{
	client.OpenACL,
	client.OpenACL,
	{{Perms: wire.PermAll, ID: wire.Id{Scheme: "auth"}}},
	{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: datatree.DigestID("alice:pw")}}},
	{{Perms: wire.PermRead, ID: wire.Id{Scheme: "world", ID: "anyone"}}},
}

func randomACL(rng *rand.Rand) []wire.ACL { return diffACLs[rng.IntN(len(diffACLs))] }

func randomCreate(rng *rand.Rand) *wire.CreateRequest {
	modes := []wire.CreateMode{wire.ModePersistent, wire.ModeEphemeral, wire.ModePersistentSequential, wire.ModeEphemeralSequential}
	return &wire.CreateRequest{Path: randomPath(rng), Data: []byte(fmt.Sprint(rng.IntN(100))), ACL: randomACL(rng), Flags: modes[rng.IntN(len(modes))]}
}

// randomOp draws an operation and its request body.
func randomOp(rng *rand.Rand) (wire.OpCode, wire.Record) {
	switch rng.IntN(21) {
	case 0, 1, 2:
		return wire.OpCreate, randomCreate(rng)
	case 3:
		return wire.OpCreate2, randomCreate(rng)
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
		for range 1 + rng.IntN(3) {
			switch rng.IntN(4) {
			case 0:
				req.Ops = append(req.Ops, wire.MultiOp{Type: wire.OpCreate, Body: randomCreate(rng)})
			case 1:
				req.Ops = append(req.Ops, wire.MultiOp{Type: wire.OpDelete, Body: &wire.PathVersionRequest{Path: randomPath(rng), Version: randomVersion(rng)}})
			case 2:
				req.Ops = append(req.Ops, wire.MultiOp{Type: wire.OpSetData, Body: &wire.SetDataRequest{Path: randomPath(rng), Data: []byte("m"), Version: randomVersion(rng)}})
			case 3:
				req.Ops = append(req.Ops, wire.MultiOp{Type: wire.OpCheck, Body: &wire.PathVersionRequest{Path: randomPath(rng), Version: randomVersion(rng)}})
			}
		}
		return wire.OpMulti, req
	case 13:
		req := &wire.MultiRequest{}
		for range 1 + rng.IntN(3) {
			op := wire.OpGetData
			if rng.IntN(2) == 0 {
				op = wire.OpGetChildren
			}
			req.Ops = append(req.Ops, wire.MultiOp{Type: op, Body: &wire.PathWatchRequest{Path: randomPath(rng)}})
		}
		return wire.OpMultiRead, req
	case 14:
		return wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: randomPath(rng)}
	case 15:
		return wire.OpGetEphemerals, &wire.PathRequest{Path: randomPath(rng)}
	case 17:
		return wire.OpGetACL, &wire.PathRequest{Path: randomPath(rng)}
	case 18:
		return wire.OpSetACL, &wire.SetACLRequest{Path: randomPath(rng), ACL: randomACL(rng), Version: randomVersion(rng)}
	case 19:
		return wire.OpSync, &wire.PathRequest{Path: randomPath(rng)}
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
		return wire.OpSync, &wire.PathRequest{Path: randomPath(rng)}
	case 16:
		if rng.IntN(2) == 0 {
			return wire.OpAddWatch, &wire.AddWatchRequest{Path: randomPath(rng), Mode: wire.AddWatchMode(rng.IntN(2))}
		}
		return wire.OpRemoveWatches, &wire.PathTypeRequest{Path: randomPath(rng), Type: wire.WatcherType(1 + rng.IntN(3))}
	}
	panic("unreachable")
}

func describe(rec wire.Record) string {
	if m, ok := rec.(*wire.MultiRequest); ok {
		var parts []string
		for _, op := range m.Ops {
			parts = append(parts, fmt.Sprintf("%s%+v", op.Type, op.Body))
		}
		return "[" + strings.Join(parts, "; ") + "]"
	}
	return fmt.Sprintf("%+v", rec)
}
