package zab_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// arbitraryRun drives a Peer directly (no harness smoothing anything over)
// with whatever events a misbehaving client or shell could produce, and
// checks after every Step the promises that hold whatever the input:
//   - the tree never holds a txn the shell has not reported durable, even
//     when the shell Steps several events before it takes a Ready;
//   - appends are numbered one after another;
//   - no reply header carries a zxid beyond the durable log;
//   - messages go only to connections that are open, start with the
//     connect response (or a close), and stop at the Close;
//   - Wakeup lies after the Step's time, or at it while a snapshot runs.
//
// It returns every effect, encoded, for the determinism check.
type arbitraryRun struct {
	t    *rapid.T
	p    *zab.Peer
	now  zab.Time
	cfg  zab.Config
	out  bytes.Buffer
	log  []datatree.Txn
	snap []zab.SnapshotChunk // the chunks of the newest complete snapshot
	part []zab.SnapshotChunk

	durable  int64 // what the Peer may treat as durable: min(max reported, last appended)
	conns    map[zab.ConnID]*connSeen
	connIDs  []zab.ConnID  // every connection id used, in order
	awaiting []zab.ConnID  // opened, no ConnectRequest sent yet
	ids      []int64       // session ids handed out, for reconnects and touches
	latest   time.Duration // the latest monotonic time stepped
	batch    bool          // Step without taking a Ready
	unread   bool          // Steps since the last Ready
}

type connSeen struct {
	open, connected, closed bool
}

func newArbitraryRun(t *rapid.T, cfg zab.Config, seed uint64) *arbitraryRun {
	r := &arbitraryRun{t: t, cfg: cfg, now: zab.Time{Mono: time.Hour, Wall: zabtest.StartWall}, conns: map[zab.ConnID]*connSeen{}}
	p, err := zab.New(cfg, r.now, rand.New(rand.NewPCG(seed, seed)), zab.Restored{})
	require.NoError(t, err)
	r.p = p
	r.latest = r.now.Mono
	return r
}

func (r *arbitraryRun) lastAppended() int64 {
	if len(r.log) == 0 {
		return 0
	}
	return r.log[len(r.log)-1].Header.Zxid
}

func (r *arbitraryRun) step(ev zab.Event) {
	t := r.t
	switch ev.(type) {
	case zab.ConnOpened, zab.ConnClosed, zab.ConnectReceived:
		// The model follows connections in message order: take what is
		// batched before a connection changes.
		if r.unread {
			r.takeReady()
		}
	}
	if d, ok := ev.(zab.LogDurable); ok {
		r.durable = max(r.durable, min(d.Zxid, r.lastAppended()))
	}
	if o, ok := ev.(zab.ConnOpened); ok {
		if r.conns[o.Conn] == nil {
			r.connIDs = append(r.connIDs, o.Conn)
		}
		r.conns[o.Conn] = &connSeen{open: true}
		r.awaiting = append(r.awaiting, o.Conn)
	}
	if c, ok := ev.(zab.ConnectReceived); ok {
		r.awaiting = slices.DeleteFunc(r.awaiting, func(id zab.ConnID) bool { return id == c.Conn })
	}
	if c, ok := ev.(zab.ConnClosed); ok {
		if s := r.conns[c.Conn]; s != nil {
			s.open = false
		}
	}
	r.p.Step(r.now, ev)
	r.latest = max(r.latest, r.now.Mono) // a Step back in time changes nothing
	require.LessOrEqual(t, r.p.LastZxid(), r.durable, "the tree holds a txn not yet durable")
	fmt.Fprintf(&r.out, "%T %+v|", ev, ev)
	r.unread = true
	if !r.batch { // the shell may Step several events before it takes a Ready
		r.takeReady()
	}
}

// takeReady takes a Ready and checks it.
func (r *arbitraryRun) takeReady() {
	t := r.t
	r.unread = false
	rd := r.p.Ready()
	for i := range rd.Appends {
		a := &rd.Appends[i]
		require.Equal(t, r.lastAppended()+1, a.Header.Zxid, "appends numbered one after another")
		r.log = append(r.log, *a)
		r.out.Write(zab.EncodeTxnEntry(a))
	}
	require.LessOrEqual(t, r.p.LastZxid(), r.durable, "the tree holds a txn not yet durable")
	for i := range rd.Messages {
		m := &rd.Messages[i]
		fmt.Fprintf(&r.out, "%d:%d:", m.Conn, m.Kind)
		r.out.Write(m.AppendFrame(nil))
		s := r.conns[m.Conn]
		require.NotNil(t, s, "message to a connection never opened: %s", zabtest.Format(m))
		require.True(t, s.open && !s.closed, "message to a closed connection: %s", zabtest.Format(m))
		switch m.Kind {
		case zab.Close:
			s.closed = true
		case zab.Connect:
			require.False(t, s.connected, "a second connect response: %s", zabtest.Format(m))
			resp := m.Body.(*wire.ConnectResponse)
			s.connected = resp.TimeOut > 0
			if s.connected {
				r.ids = append(r.ids, resp.SessionID)
			}
		case zab.Reply:
			require.True(t, s.connected, "a reply before a valid connect response: %s", zabtest.Format(m))
			require.LessOrEqual(t, m.Header.Zxid, r.durable, "a reply beyond the durable log: %s", zabtest.Format(m))
		}
	}
	for _, c := range rd.Snapshots {
		if c.First {
			r.part = nil
		}
		r.part = append(r.part, c)
		if c.Last {
			r.snap = r.part
			r.part = nil
		}
	}
	if r.part == nil {
		require.Greater(t, rd.Wakeup, r.latest, "a wakeup in the past")
	} else {
		require.Equal(t, r.latest, rd.Wakeup, "a running snapshot wants a Step at once")
	}
}

// arbitraryPaths are few, so that requests collide on the same nodes.
var arbitraryPaths = []string{"/", "/a", "/a/b", "/c", "", "a", "/zookeeper", "/a/"}

func (r *arbitraryRun) drawEvent() zab.Event {
	t := r.t
	// Mostly connections in use; now and then a stray id.
	conn := zab.ConnID(len(r.connIDs) + 1)
	if len(r.connIDs) > 0 && rapid.IntRange(0, 9).Draw(t, "strayConn") > 0 {
		conn = rapid.SampledFrom(r.connIDs).Draw(t, "conn")
	}
	switch rapid.IntRange(0, 11).Draw(t, "event") {
	case 0:
		if rapid.IntRange(0, 4).Draw(t, "reopen") > 0 {
			conn = zab.ConnID(len(r.connIDs) + 1)
		}
		return zab.ConnOpened{Conn: conn, Addr: "127.0.0.1"}
	case 1, 10:
		if len(r.awaiting) > 0 && rapid.IntRange(0, 4).Draw(t, "connectStray") > 0 {
			conn = rapid.SampledFrom(r.awaiting).Draw(t, "awaiting")
		}
		req := wire.ConnectRequest{
			TimeOut:     rapid.SampledFrom([]int32{4000, 10000, 0, -1, math.MaxInt32}).Draw(t, "timeout"),
			HasReadOnly: rapid.Bool().Draw(t, "readOnly"),
		}
		switch rapid.IntRange(0, 3).Draw(t, "lastZxid") {
		case 1:
			req.LastZxidSeen = r.p.LastZxid()
		case 2:
			req.LastZxidSeen = r.p.LastZxid() + 1
		case 3:
			req.LastZxidSeen = rapid.Int64().Draw(t, "anyZxid")
		}
		if len(r.ids) > 0 && rapid.Bool().Draw(t, "reconnect") {
			req.SessionID = rapid.SampledFrom(r.ids).Draw(t, "session")
		} else if rapid.IntRange(0, 4).Draw(t, "randomSession") == 0 {
			req.SessionID = rapid.Int64().Draw(t, "anySession")
		}
		switch rapid.IntRange(0, 2).Draw(t, "passwd") {
		case 0:
			req.Passwd = sessions.Passwords{}.For(req.SessionID)
		case 1:
			req.Passwd = rapid.SliceOfN(rapid.Byte(), 0, 20).Draw(t, "anyPasswd")
		}
		return zab.ConnectReceived{Conn: conn, Req: req}
	case 2, 3, 4:
		var serving []zab.ConnID
		for _, id := range r.connIDs {
			if s := r.conns[id]; s.connected && !s.closed {
				serving = append(serving, id)
			}
		}
		if len(serving) > 0 && rapid.IntRange(0, 9).Draw(t, "requestStray") > 0 {
			conn = rapid.SampledFrom(serving).Draw(t, "serving")
		}
		return r.drawRequest(conn)
	case 5:
		return zab.ConnClosed{Conn: conn}
	case 6:
		step := int64(3 * time.Second)
		if rapid.IntRange(0, 9).Draw(t, "longPause") == 0 {
			step = int64(time.Minute)
		}
		r.now.Mono += time.Duration(rapid.Int64Range(-int64(time.Second), step).Draw(t, "mono"))
		r.now.Wall += rapid.Int64Range(-100_000, 100_000).Draw(t, "wall")
		return zab.Tick{}
	case 7, 11:
		last := r.lastAppended()
		return zab.LogDurable{Zxid: rapid.SampledFrom([]int64{last, last, last - 1, 0, -1, last + 1, math.MaxInt64, math.MinInt64}).Draw(t, "durable")}
	case 8:
		return zab.SnapshotWritten{Zxid: rapid.Int64Range(-1, r.lastAppended()+1).Draw(t, "snapZxid")}
	default:
		// A standalone member has no peers: whatever arrives from one is
		// reported and changes nothing.
		return zab.PeerPacket{From: rapid.Int64Range(1, 3).Draw(t, "from"), Packet: wire.QuorumPacket{
			Type: wire.PacketType(rapid.Int32Range(0, 20).Draw(t, "packetType")),
			Zxid: rapid.Int64().Draw(t, "packetZxid"),
			Data: rapid.SliceOfN(rapid.Byte(), 0, 16).Draw(t, "packetData"),
		}}
	}
}

// drawRequest makes a request frame: a well-formed one of a known opcode,
// the same truncated, or random bytes; it goes through DecodeRequest as
// the shell's frames do.
func (r *arbitraryRun) drawRequest(conn zab.ConnID) zab.Event {
	t := r.t
	path := rapid.SampledFrom(arbitraryPaths).Draw(t, "path")
	mode := wire.CreateMode(rapid.IntRange(-1, 7).Draw(t, "mode"))
	version := int32(rapid.IntRange(-2, 2).Draw(t, "version"))
	watch := rapid.Bool().Draw(t, "watch")
	bodies := []struct {
		op   wire.OpCode
		body wire.Record
	}{
		{wire.OpCreate, &wire.CreateRequest{Path: path, Data: []byte("d"), ACL: wire.OpenACLUnsafe, Flags: mode}},
		{wire.OpCreate2, &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe, Flags: mode}},
		{wire.OpCreateContainer, &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe, Flags: wire.ModeContainer}},
		{wire.OpCreateTTL, &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe, Flags: mode, TTL: int64(version) * 1000, HasTTL: true}},
		{wire.OpDelete, &wire.PathVersionRequest{Path: path, Version: version}},
		{wire.OpDeleteContainer, &wire.PathRequest{Path: path}},
		{wire.OpSetData, &wire.SetDataRequest{Path: path, Data: []byte("x"), Version: version}},
		{wire.OpCheck, &wire.PathVersionRequest{Path: path, Version: version}},
		{wire.OpGetData, &wire.PathWatchRequest{Path: path, Watch: watch}},
		{wire.OpExists, &wire.PathWatchRequest{Path: path, Watch: watch}},
		{wire.OpGetChildren2, &wire.PathWatchRequest{Path: path, Watch: watch}},
		{wire.OpSync, &wire.PathRequest{Path: path}},
		{wire.OpPing, &wire.Empty{}},
		{wire.OpCloseSession, &wire.Empty{}},
		{wire.OpWhoAmI, &wire.Empty{}},
		{wire.OpAuth, &wire.AuthPacket{Scheme: rapid.SampledFrom([]string{"digest", "world", "ip", "x"}).Draw(t, "scheme"), Auth: []byte("u:p")}},
		{wire.OpSetWatches2, &wire.SetWatchesRequest{RelativeZxid: rapid.Int64Range(-1, r.p.LastZxid()+1).Draw(t, "relZxid"), DataWatches: []string{path}, ExistWatches: []string{path}, ChildWatches: []string{path}, PersistentWatches: []string{path}}},
		{wire.OpAddWatch, &wire.AddWatchRequest{Path: path, Mode: wire.AddWatchMode(rapid.IntRange(-1, 2).Draw(t, "addWatchMode"))}},
		{wire.OpRemoveWatches, &wire.PathTypeRequest{Path: path, Type: wire.WatcherType(rapid.IntRange(0, 4).Draw(t, "watcherType"))}},
		{wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
			{Type: wire.OpCreate, Body: &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe, Flags: mode}},
			{Type: wire.OpCheck, Body: &wire.PathVersionRequest{Path: path, Version: version}},
			{Type: wire.OpDelete, Body: &wire.PathVersionRequest{Path: path, Version: -1}},
		}}},
		{wire.OpSASL, &wire.SASLRequest{Token: []byte("t")}},
		{wire.OpCode(rapid.Int32().Draw(t, "anyOp")), &wire.Empty{}},
	}
	b := rapid.SampledFrom(bodies).Draw(t, "request")
	xid := rapid.SampledFrom([]int32{1, 2, 3, wire.XidPing, wire.XidAuth, wire.XidSetWatches, -1}).Draw(t, "xid")
	hdr := wire.RequestHeader{Xid: xid, Type: b.op}
	frame := append(wire.Marshal(&hdr), wire.Marshal(b.body)...)
	switch rapid.IntRange(0, 5).Draw(t, "damage") {
	case 0:
		frame = frame[:rapid.IntRange(0, len(frame)).Draw(t, "cut")]
	case 1:
		frame = rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "randomFrame")
	}
	ev, ok := zab.DecodeRequest(conn, frame)
	if !ok {
		return zab.ConnClosed{Conn: conn} // the shell closes a frame too short for a header
	}
	return ev
}

// TestArbitraryEvents feeds random events — frames of every kind, broken
// ones included, connects with any id, password and last zxid, hangups,
// clock steps both ways, durability reports with any zxid, stray snapshot
// and touch reports — and checks the promises above after every Step.
// Then, with the whole log durable: no ephemeral outlives its session, a
// restart from the log (and from the newest snapshot plus the log) gives
// the same digest, and the same events replayed give the same bytes.
func TestArbitraryEvents(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := zab.Config{ServerID: 1, SnapCount: 8, SnapshotStepNodes: 1, ContainerCheckInterval: 5 * time.Second,
			Tree: datatree.Config{ExtendedTypesEnabled: true}}
		seed := rapid.Uint64().Draw(t, "seed")
		r := newArbitraryRun(t, cfg, seed)
		var events []zab.Event
		var times []zab.Time
		var batched []bool
		for range rapid.IntRange(1, 300).Draw(t, "steps") {
			ev := r.drawEvent()
			r.batch = rapid.IntRange(0, 3).Draw(t, "batch") == 0
			events, times, batched = append(events, ev), append(times, r.now), append(batched, r.batch)
			r.step(ev)
		}
		r.batch = false
		events, times = append(events, zab.LogDurable{Zxid: r.lastAppended()}), append(times, r.now)
		r.step(events[len(events)-1])
		for r.p.LastZxid() < r.lastAppended() { // applying may propose more (held requests)
			events, times = append(events, zab.LogDurable{Zxid: r.lastAppended()}), append(times, r.now)
			r.step(events[len(events)-1])
		}

		var live []int64
		for _, s := range r.p.SessionTable() {
			live = append(live, s.ID)
		}
		for _, owner := range r.p.Tree().Sessions() {
			require.True(t, slices.Contains(live, owner), "ephemerals of session 0x%x outlive it", owner)
		}

		// Restart from the log alone.
		fresh, err := zab.New(cfg, r.now, rand.New(rand.NewPCG(seed, seed)), zab.Restored{})
		require.NoError(t, err)
		for _, txn := range r.log {
			again, err := zab.DecodeTxnEntry(zab.EncodeTxnEntry(&txn))
			require.NoError(t, err)
			require.NoError(t, fresh.Replay(again))
		}
		require.Equal(t, r.p.Digest(), fresh.Digest(), "restart from the log")
		require.Equal(t, r.p.SessionTable(), fresh.SessionTable(), "restart from the log: sessions")

		// Restart from the newest snapshot and the log after it.
		if len(r.snap) > 0 {
			var data []byte
			for _, c := range r.snap {
				data = append(data, c.Data...)
			}
			first, last := r.snap[0], r.snap[len(r.snap)-1]
			tree, err := datatree.Load(cfg.Tree, wire.NewDecoder(data), first.Zxid)
			require.NoError(t, err)
			p, err := zab.New(cfg, r.now, rand.New(rand.NewPCG(seed, seed)), zab.Restored{Tree: tree, Sessions: first.Sessions, Digest: &last.Digest})
			require.NoError(t, err)
			for _, txn := range r.log {
				if txn.Header.Zxid > first.Zxid {
					require.NoError(t, p.Replay(txn))
				}
			}
			require.Equal(t, r.p.Digest(), p.Digest(), "restart from snapshot 0x%x", first.Zxid)
			require.Equal(t, r.p.SessionTable(), p.SessionTable(), "restart from snapshot 0x%x: sessions", first.Zxid)
		}

		// The same events at the same times give the same bytes.
		again := newArbitraryRun(t, cfg, seed)
		for i, ev := range events {
			again.now, again.batch = times[i], i < len(batched) && batched[i]
			again.step(ev)
		}
		require.Equal(t, r.out.Bytes(), again.out.Bytes(), "same input, different output")
	})
}
