// Package zabtest drives a zab.Peer directly, with a fake clock and a fake
// disk whose durability the test holds back and releases, and renders the
// Peer's effects as text lines that tests compare exactly. The core's tests
// and the simulator's build on it.
package zabtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// StartWall is the wall time a Harness starts at (ms since the epoch).
const StartWall = 1_700_000_000_000

// TB is the part of testing.TB a Harness uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Harness owns a Peer, its clock and its disk.
type Harness struct {
	t    TB
	Peer *zab.Peer
	Cfg  zab.Config
	Now  zab.Time
	seed uint64

	// Log is every txn the Peer appended, in order: the fake disk.
	Log []datatree.Txn
	// Durable is the last zxid reported durable to the Peer.
	Durable int64
	holding bool

	// Snapshots are the completed snapshots, oldest first.
	Snapshots []Snapshot
	partial   *Snapshot

	// Wakeup is the latest Ready's Wakeup: the monotonic time by which the
	// Peer wants a Tick.
	Wakeup time.Duration

	// ReleaseReadys makes the harness hand every Ready's slices back to the
	// Peer (Peer.Release) once it has copied them, as the simulator does.
	ReleaseReadys bool

	// Effects keeps every message ever emitted, for determinism checks.
	Effects  []zab.Message
	unread   int // index into Effects of the first message not yet Taken
	nextConn zab.ConnID
}

// Snapshot is a snapshot the Peer streamed, as the fake disk holds it.
type Snapshot struct {
	Zxid     int64
	Sessions []sessions.Session
	Tree     []byte
	Digest   zab.SnapshotDigest
}

// New starts a Peer on a fresh tree. seed feeds the Peer's Rand.
func New(t TB, cfg zab.Config, seed uint64) *Harness {
	t.Helper()
	h := &Harness{t: t, Cfg: cfg, Now: zab.Time{Mono: time.Hour, Wall: StartWall}, seed: seed}
	p, err := zab.New(cfg, h.Now, rand.New(rand.NewPCG(seed, seed)), zab.Restored{})
	if err != nil {
		t.Fatalf("zabtest: %v", err)
	}
	h.Peer = p
	return h
}

// Step feeds ev to the Peer and collects the effects. Unless durability is
// held, every append is made durable at once (and reported), until the
// Peer has nothing more to log.
func (h *Harness) Step(ev zab.Event) {
	h.t.Helper()
	h.Peer.Step(h.Now, ev)
	h.collect()
}

// collect takes a Ready and carries it out on the fake disk.
func (h *Harness) collect() {
	for {
		rd := h.Peer.Ready()
		h.Wakeup = rd.Wakeup
		h.Log = append(h.Log, rd.Appends...)
		h.Effects = append(h.Effects, rd.Messages...)
		done := h.storeSnapshots(rd.Snapshots)
		if h.ReleaseReadys {
			h.Peer.Release(&rd)
		}
		for _, z := range done {
			h.Peer.Step(h.Now, zab.SnapshotWritten{Zxid: z})
		}
		last := h.lastLogged()
		if (h.holding || last <= h.Durable) && len(done) == 0 {
			return
		}
		if !h.holding && last > h.Durable {
			h.Durable = last
			h.Peer.Step(h.Now, zab.LogDurable{Zxid: last})
		}
	}
}

func (h *Harness) storeSnapshots(chunks []zab.SnapshotChunk) (done []int64) {
	for _, c := range chunks {
		if c.First {
			h.partial = &Snapshot{Zxid: c.Zxid, Sessions: c.Sessions}
		}
		if h.partial == nil || h.partial.Zxid != c.Zxid {
			h.t.Fatalf("zabtest: snapshot chunk for 0x%x outside a snapshot", c.Zxid)
			return nil
		}
		h.partial.Tree = append(h.partial.Tree, c.Data...)
		if c.Last {
			h.partial.Digest = c.Digest
			h.Snapshots = append(h.Snapshots, *h.partial)
			h.partial = nil
			done = append(done, c.Zxid)
		}
	}
	return done
}

// SnapshotInProgress reports whether the Peer has begun streaming a
// snapshot it has not finished.
func (h *Harness) SnapshotInProgress() bool { return h.partial != nil }

func (h *Harness) lastLogged() int64 {
	if len(h.Log) == 0 {
		return h.Durable
	}
	return h.Log[len(h.Log)-1].Header.Zxid
}

// Hold stops making appends durable: txns stay Proposed until Release.
func (h *Harness) Hold() { h.holding = true }

// Release makes everything appended so far durable with one report (one
// fsync covering them all) and resumes automatic durability.
func (h *Harness) Release() {
	h.t.Helper()
	h.holding = false
	h.collect()
}

// ReleaseTo reports durability up to zxid only, keeping the hold.
func (h *Harness) ReleaseTo(zxid int64) {
	h.t.Helper()
	h.Durable = zxid
	h.Peer.Step(h.Now, zab.LogDurable{Zxid: zxid})
	h.collect()
}

// Pending returns the zxids appended but not yet reported durable.
func (h *Harness) Pending() []int64 {
	var out []int64
	for _, t := range h.Log {
		if t.Header.Zxid > h.Durable {
			out = append(out, t.Header.Zxid)
		}
	}
	return out
}

// Advance moves both clocks forward by d and delivers a Tick.
func (h *Harness) Advance(d time.Duration) {
	h.t.Helper()
	h.Now.Mono += d
	h.Now.Wall += d.Milliseconds()
	h.Step(zab.Tick{})
}

// JumpWall moves the wall clock alone (an NTP step) and delivers a Tick.
func (h *Harness) JumpWall(d time.Duration) {
	h.t.Helper()
	h.Now.Wall += d.Milliseconds()
	h.Step(zab.Tick{})
}

// Take returns the messages emitted since the last Take, rendered by Format.
func (h *Harness) Take() []string {
	msgs := h.Effects[h.unread:]
	h.unread = len(h.Effects)
	out := make([]string, len(msgs))
	for i := range msgs {
		out[i] = Format(&msgs[i])
	}
	return out
}

// Expect fails unless the messages since the last Take are exactly want.
func (h *Harness) Expect(want ...string) {
	h.t.Helper()
	got := h.Take()
	if !slices.Equal(got, want) {
		h.t.Fatalf("zabtest: effects differ\n got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// Bytes encodes every message, every logged txn and every snapshot so
// far, in order: two runs of the same input must give equal Bytes.
func (h *Harness) Bytes() []byte {
	var buf []byte
	for i := range h.Effects {
		m := &h.Effects[i]
		buf = fmt.Appendf(buf, "%d:%d:", m.Conn, m.Kind)
		buf = m.AppendFrame(buf)
	}
	for i := range h.Log {
		buf = append(buf, zab.EncodeTxnEntry(&h.Log[i])...)
	}
	for _, s := range h.Snapshots {
		buf = fmt.Appendf(buf, "snapshot %x %v %+v:", s.Zxid, s.Sessions, s.Digest)
		buf = append(buf, s.Tree...)
	}
	return buf
}

// Format renders a message as one line: the connection, then what is
// written. Replies show the header and a summary of the body.
func Format(m *zab.Message) string {
	switch m.Kind {
	case zab.Close:
		return fmt.Sprintf("c%d close", m.Conn)
	case zab.Connect:
		r := m.Body.(*wire.ConnectResponse)
		if r.TimeOut == 0 {
			return fmt.Sprintf("c%d connect refused", m.Conn)
		}
		return fmt.Sprintf("c%d connect session=0x%x timeout=%d", m.Conn, r.SessionID, r.TimeOut)
	}
	if ev, ok := m.Body.(*wire.WatcherEvent); ok && m.Header.Xid == wire.XidNotification {
		return fmt.Sprintf("c%d event %s %s", m.Conn, ev.Type, ev.Path)
	}
	s := fmt.Sprintf("c%d reply xid=%d zxid=0x%x %s", m.Conn, m.Header.Xid, m.Header.Zxid, m.Header.Err.String())
	if b := summary(m.Body); b != "" {
		s += " " + b
	}
	return s
}

func summary(body wire.Record) string {
	switch b := body.(type) {
	case nil:
		return ""
	case *wire.PathResponse:
		return b.Path
	case *wire.Create2Response:
		return fmt.Sprintf("%s %s", b.Path, stat(&b.Stat))
	case *wire.StatResponse:
		return stat(&b.Stat)
	case *wire.GetDataResponse:
		return fmt.Sprintf("%q %s", b.Data, stat(&b.Stat))
	case *wire.StringsResponse:
		return fmt.Sprint(b.Strings)
	case *wire.GetChildren2Response:
		return fmt.Sprintf("%v %s", b.Children, stat(&b.Stat))
	case *wire.IntResponse:
		return fmt.Sprint(b.Value)
	case *wire.WhoAmIResponse:
		parts := make([]string, len(b.ClientInfo))
		for i, c := range b.ClientInfo {
			parts[i] = c.AuthScheme + ":" + c.User
		}
		return "[" + strings.Join(parts, " ") + "]"
	case *wire.MultiResponse:
		parts := make([]string, len(b.Results))
		for i, r := range b.Results {
			parts[i] = r.Type.String() + "/" + r.Err.String()
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%T", body)
}

func stat(s *wire.Stat) string {
	return fmt.Sprintf("{c=0x%x m=0x%x p=0x%x v=%d cv=%d eph=0x%x n=%d}", s.Czxid, s.Mzxid, s.Pzxid, s.Version, s.Cversion, s.EphemeralOwner, s.NumChildren)
}
