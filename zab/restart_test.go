package zab_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// TestRestartFromSnapshotAndLog: snapshots taken every few txns while
// writes go on (two nodes per step, so each spans many applies), then a
// crash; the restarted Peer, from the newest snapshot plus the log after
// it, has the same digest, zxid and session table, keeps the sessions
// (a reconnect works, a silent session expires after a fresh full timeout
// and takes its ephemeral with it), and continues the zxids.
func TestRestartFromSnapshotAndLog(t *testing.T) {
	h := zabtest.New(t, zab.Config{ServerID: 1, SnapCount: 10, SnapshotStepNodes: 2}, 7)
	a := h.Session(10000)
	b := h.Session(10000)
	b.Create("/b-eph", "", wire.ModeEphemeral)
	for i := range 40 {
		a.Create(fmt.Sprintf("/n%02d", i), "v", wire.ModePersistent)
		if i%3 == 0 {
			a.SetData(fmt.Sprintf("/n%02d", i/2), fmt.Sprint(i), -1)
		}
		if i%7 == 0 {
			a.Delete(fmt.Sprintf("/n%02d", i/3), -1)
		}
	}
	require.GreaterOrEqual(t, len(h.Snapshots), 3, "several snapshots taken")
	last := h.Snapshots[len(h.Snapshots)-1]
	require.Less(t, last.Zxid, last.Digest.Zxid, "the last snapshot overlapped applies (fuzzy)")
	require.Less(t, last.Digest.Zxid, h.Peer.LastZxid(), "txns follow the last snapshot in the log")

	digest, zxid, table := h.Peer.Digest(), h.Peer.LastZxid(), h.Peer.SessionTable()
	h.Take()
	require.NoError(t, h.Restart())
	require.Equal(t, digest, h.Peer.Digest())
	require.Equal(t, zxid, h.Peer.LastZxid())
	require.Equal(t, table, h.Peer.SessionTable())

	ra := a.Reopen()
	ra.Connect(10000, zxid)
	ra.Exists("/b-eph", false)
	got := h.Take()
	require.Len(t, got, 2)
	require.Equal(t, fmt.Sprintf("c3 connect session=0x%x timeout=10000", a.Session), got[0])
	require.Contains(t, got[1], " ok ")

	// b never comes back: a full timeout after the restart it expires.
	for range 6 {
		h.Advance(2 * time.Second)
		ra.Ping()
	}
	x := ra.Exists("/b-eph", false)
	got = h.Take()
	require.Equal(t, fmt.Sprintf("c3 reply xid=%d zxid=0x%x NoNode", x, zxid+1), got[len(got)-1])
}

// TestRestartLosesOnlyUnacknowledgedWrites: writes never made durable are
// never answered, and after a crash they are gone; the zxids continue after
// the durable ones.
func TestRestartLosesOnlyUnacknowledgedWrites(t *testing.T) {
	h := newHarness(t)
	a := h.Session(10000)
	a.Create("/kept", "", wire.ModePersistent) // 0x2
	h.Hold()
	a.Create("/lost", "", wire.ModePersistent) // 0x3, never durable
	h.Expect("c1 reply xid=1 zxid=0x2 ok /kept")
	require.NoError(t, h.Restart())
	require.Equal(t, int64(2), h.Peer.LastZxid())
	h.Release()
	r := a.Reopen()
	r.Connect(10000, 2)
	r.Exists("/lost", false)
	r.Create("/next", "", wire.ModePersistent)
	h.Expect(
		fmt.Sprintf("c2 connect session=0x%x timeout=10000", a.Session),
		"c2 reply xid=3 zxid=0x2 NoNode",
		"c2 reply xid=4 zxid=0x3 ok /next",
	)
}

// TestRestartRefusesADigestMismatch: a snapshot whose recorded digest the
// replayed tree does not reach is reported, not served.
func TestRestartRefusesADigestMismatch(t *testing.T) {
	h := zabtest.New(t, zab.Config{ServerID: 1, SnapCount: 4}, 3)
	a := h.Session(10000)
	for i := range 10 {
		a.Create(fmt.Sprintf("/d%d", i), "", wire.ModePersistent)
	}
	require.NotEmpty(t, h.Snapshots)
	h.Snapshots[len(h.Snapshots)-1].Digest.Digest++
	require.ErrorContains(t, h.Restart(), "differs from the snapshot")
}

// TestRestartFromASnapshotAheadOfItsDigest: ZooKeeper reads a snapshot's
// trailer while it applies txns, so the tree of a ZooKeeper snapshot named
// zxid Z may already hold txn Z+1 while its digest is the one at Z. Such a
// snapshot is served when txn Z+1's logged digest shows the snapshot held
// it, and refused when the log has nothing after Z to show it.
func TestRestartFromASnapshotAheadOfItsDigest(t *testing.T) {
	cfg := zab.Config{ServerID: 1}
	live := datatree.New(cfg.Tree)
	var log []datatree.Txn
	for i := range 3 {
		zxid := int64(i + 1)
		req := &datatree.Request{Session: 1, Cxid: int32(i), Op: wire.OpCreate,
			Body: &wire.CreateRequest{Path: fmt.Sprintf("/n%d", i), Data: []byte("d"), ACL: wire.OpenACLUnsafe}}
		txn := live.Prepare(req, zxid, 1_700_000_000_000+zxid)
		live.Apply(&txn, nil)
		log = append(log, txn)
	}
	const snapZxid = 2
	digestAtSnap := log[snapZxid-1].Digest.TreeDigest
	var e wire.Encoder
	live.WriteSnapshot(&e) // holds txn 3 too: the fuzzy case
	restore := func() *zab.Peer {
		tree, err := datatree.Load(cfg.Tree, wire.NewDecoder(e.Bytes()), snapZxid)
		require.NoError(t, err)
		p, err := zab.New(cfg, zab.Time{Wall: 1_700_000_000_000}, rand.New(rand.NewPCG(1, 1)),
			zab.Restored{Tree: tree, Digest: &zab.SnapshotDigest{Zxid: snapZxid, Version: datatree.DigestVersion, Digest: digestAtSnap}})
		require.NoError(t, err)
		return p
	}

	p := restore()
	require.NoError(t, p.Replay(log[2]), "txn 3's logged digest shows the snapshot held it")
	require.NoError(t, p.ReplayDone())
	require.Equal(t, live.Digest(), p.Digest())

	p = restore()
	require.ErrorContains(t, p.ReplayDone(), "differs from the snapshot", "nothing after the snapshot explains its digest")
}

// TestSnapshotCompletesWhenWritesStop: a snapshot serialized a step at a
// time asks for the next Step at once (Wakeup now) while it runs, so that
// it completes from Ticks alone, with no time passing, when no client sends
// anything; once it is done, Wakeup is a timer in the future again.
func TestSnapshotCompletesWhenWritesStop(t *testing.T) {
	h := zabtest.New(t, zab.Config{ServerID: 1, SnapCount: 400, SnapshotStepNodes: 1}, 5)
	a := h.Session(40000)
	for i := 0; !h.SnapshotInProgress(); i++ {
		require.Less(t, i, 400, "a snapshot starts within SnapCount txns")
		a.Create(fmt.Sprintf("/n%03d", i), "", wire.ModePersistent)
	}
	require.Equal(t, h.Now.Mono, h.Wakeup, "a running snapshot wants a Step at once")
	start := h.Now.Mono
	for i := 0; h.SnapshotInProgress(); i++ {
		require.Less(t, i, 1000, "the snapshot completes")
		h.Advance(h.Wakeup - h.Now.Mono)
	}
	require.Len(t, h.Snapshots, 1)
	require.Equal(t, start, h.Now.Mono, "no time passed")
	require.Greater(t, h.Wakeup, h.Now.Mono, "no snapshot running: the next Wakeup is a timer")
}

// TestStraySnapshotWrittenIsIgnored: only the report for the snapshot
// handed over lets the next one start; a report naming another zxid (a
// confused shell) changes nothing, so two snapshot streams never overlap.
func TestStraySnapshotWrittenIsIgnored(t *testing.T) {
	now := zab.Time{Mono: time.Hour, Wall: zabtest.StartWall}
	p, err := zab.New(zab.Config{ServerID: 1, SnapCount: 2}, now, rand.New(rand.NewPCG(1, 1)), zab.Restored{})
	require.NoError(t, err)
	// write steps ev, makes everything durable, and returns the zxids of
	// the snapshots that began meanwhile.
	write := func(ev zab.Event) (began []int64) {
		p.Step(now, ev)
		for {
			rd := p.Ready()
			for _, c := range rd.Snapshots {
				if c.First {
					began = append(began, c.Zxid)
				}
			}
			if len(rd.Appends) == 0 {
				return began
			}
			p.Step(now, zab.LogDurable{Zxid: rd.Appends[len(rd.Appends)-1].Header.Zxid})
		}
	}
	create := func(path string) zab.Event {
		return zab.RequestReceived{Conn: 1, Xid: 1, Op: wire.OpCreate, Body: &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe}}
	}
	write(zab.ConnOpened{Conn: 1, Addr: "127.0.0.1"})
	began := write(zab.ConnectReceived{Conn: 1, Req: wire.ConnectRequest{TimeOut: 10000}})
	began = append(began, write(create("/a"))...)
	require.Len(t, began, 1, "a snapshot every 2 txns or so")
	handedOver := began[0]

	p.Step(now, zab.SnapshotWritten{Zxid: handedOver + 100})
	for _, path := range []string{"/b", "/c", "/d"} {
		require.Empty(t, write(create(path)), "no snapshot starts before %#x is written", handedOver)
	}
	p.Step(now, zab.SnapshotWritten{Zxid: handedOver})
	began = nil
	for _, path := range []string{"/e", "/f", "/g"} {
		began = append(began, write(create(path))...)
	}
	require.NotEmpty(t, began, "the next snapshot starts once it is")
}

// TestDurableBeyondHandedOverIsClamped: a LogDurable stepped before the
// Ready that hands the txn to the shell (or naming any zxid beyond it)
// applies nothing the shell has not been given; once the Ready has handed
// it over, the same report applies and answers it.
func TestDurableBeyondHandedOverIsClamped(t *testing.T) {
	now := zab.Time{Mono: time.Hour, Wall: zabtest.StartWall}
	p, err := zab.New(zab.Config{ServerID: 1}, now, rand.New(rand.NewPCG(1, 1)), zab.Restored{})
	require.NoError(t, err)
	p.Step(now, zab.ConnOpened{Conn: 1, Addr: "127.0.0.1"})
	p.Step(now, zab.ConnectReceived{Conn: 1, Req: wire.ConnectRequest{TimeOut: 10000}})
	p.Step(now, zab.LogDurable{Zxid: math.MaxInt64})
	require.Zero(t, p.LastZxid(), "createSession applied before the shell was given it")
	rd := p.Ready()
	require.Len(t, rd.Appends, 1)
	require.Empty(t, rd.Messages)
	p.Step(now, zab.LogDurable{Zxid: math.MaxInt64})
	require.Equal(t, int64(1), p.LastZxid())
	rd = p.Ready()
	require.Len(t, rd.Messages, 1)
	require.Equal(t, zab.Connect, rd.Messages[0].Kind)
}
