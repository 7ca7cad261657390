package peerlink

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

func TestLeaderDialBacksOffThenGivesUp(t *testing.T) {
	d := StartLeaderDial(time.Second, 0)
	var waits []time.Duration
	now := time.Second
	for {
		wait, again := d.Failed(now)
		if !again {
			break
		}
		waits = append(waits, wait)
		now += wait + 5*time.Millisecond // the dial itself takes a little
	}
	require.Equal(t, []time.Duration{10, 20, 40, 80, 160, 200, 200}, ms(waits[:7]))
	require.Greater(t, now, time.Second+DefaultLeaderDialWindow, "it gave up only once the window had passed")
	require.LessOrEqual(t, now, time.Second+DefaultLeaderDialWindow+maxLeaderBackoff+5*time.Millisecond)

	// A dial that timed out past the window is the last one.
	d = StartLeaderDial(0, time.Second)
	_, again := d.Failed(DefaultDialTimeout)
	require.False(t, again)
}

func ms(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / time.Millisecond
	}
	return out
}

func msg(typ wire.PacketType, size int) *zab.PeerMessage {
	return &zab.PeerMessage{Packet: wire.QuorumPacket{Type: typ, Data: make([]byte, size)}}
}

func TestBacklogOverflow(t *testing.T) {
	var b Backlog
	big := msg(wire.PacketProposal, 1000)
	require.False(t, b.Overflows(big, 100), "a message alone may exceed the bound")
	b.Add(big)
	require.True(t, b.Overflows(msg(wire.PacketCommit, 0), 100))
	part := &zab.PeerMessage{Kind: zab.PeerSnapshotPart, Snapshot: make([]byte, 1000)}
	require.False(t, b.Overflows(part, 100), "a SNAP's stream continues its SNAP")
	b.Remove(big)
	require.Equal(t, Backlog{}, b)

	// A synchronization is never cut short, however large.
	b.Add(msg(wire.PacketLeaderInfo, 0))
	for range 10 {
		require.False(t, b.Overflows(big, 100))
		b.Add(big)
	}
	b.Add(msg(wire.PacketUpToDate, 0))
	require.True(t, b.Overflows(msg(wire.PacketProposal, 0), 100), "in broadcast the bound holds again")
	b.Reset()
	require.Equal(t, Backlog{}, b)
}

// TestBacklogCounts: whatever is added and removed, the counts are those of
// the messages still queued (the Backlog invariant), and a message that
// overflows is one that would pass the bound outside a synchronization.
func TestBacklogCounts(t *testing.T) {
	types := []wire.PacketType{wire.PacketProposal, wire.PacketCommit, wire.PacketLeaderInfo, wire.PacketUpToDate, wire.PacketPing}
	rapid.Check(t, func(t *rapid.T) {
		var b Backlog
		var queued []*zab.PeerMessage
		syncing := false
		bound := rapid.IntRange(1, 4096).Draw(t, "bound")
		for range rapid.IntRange(0, 60).Draw(t, "steps") {
			if len(queued) > 0 && rapid.Bool().Draw(t, "send") {
				b.Remove(queued[0])
				queued = queued[1:]
			} else {
				m := msg(rapid.SampledFrom(types).Draw(t, "type"), rapid.IntRange(0, 2048).Draw(t, "size"))
				bytes := 0
				for _, q := range queued {
					bytes += MessageSize(q)
				}
				want := !syncing && len(queued) > 0 && bytes+MessageSize(m) > bound
				if got := b.Overflows(m, bound); got != want {
					t.Fatalf("Overflows = %v, want %v (queued %d bytes in %d, syncing %v)", got, want, bytes, len(queued), syncing)
				}
				if want {
					b.Reset()
					queued, syncing = nil, false
				}
				b.Add(m)
				queued = append(queued, m)
				switch m.Packet.Type {
				case wire.PacketLeaderInfo:
					syncing = true
				case wire.PacketUpToDate:
					syncing = false
				}
			}
			bytes := 0
			for _, q := range queued {
				bytes += MessageSize(q)
			}
			if b.Bytes != bytes || b.Count != len(queued) || b.Syncing != syncing {
				t.Fatalf("backlog %+v, queued %d bytes in %d, syncing %v", b, bytes, len(queued), syncing)
			}
		}
	})
}

type conn struct{ id int }

func TestElectionSlotAndResend(t *testing.T) {
	e := NewElection[*conn, int](3, 1)
	require.True(t, e.DialSurvives())
	step, _, _ := e.Next()
	require.Equal(t, Idle, step)
	e.Send(1)
	e.Send(2) // replaces 1, not yet written
	step, _, _ = e.Next()
	require.Equal(t, Dial, step)
	require.Equal(t, 20*time.Millisecond, e.DialFailed())
	require.Equal(t, 40*time.Millisecond, e.DialFailed())
	c1 := &conn{1}
	_, replaced := e.Installed(c1)
	require.False(t, replaced)
	step, n, c := e.Next()
	require.Equal(t, Write, step)
	require.Equal(t, 2, n, "only the newest notification goes")
	require.Same(t, c1, c)
	require.Equal(t, 20*time.Millisecond, e.DialFailed(), "a connection resets the backoff")

	// A new connection carries the last notification again.
	c2 := &conn{2}
	old, replaced := e.Installed(c2)
	require.True(t, replaced)
	require.Same(t, c1, old)
	step, n, _ = e.Next()
	require.Equal(t, Write, step)
	require.Equal(t, 2, n)

	// A connection that never carried the peer's notifications is not
	// redialled when it ends; one that did, closed by the peer, is.
	require.True(t, e.Dropped(c2, true))
	step, _, _ = e.Next()
	require.Equal(t, Idle, step)
	c3 := &conn{3}
	e.Installed(c3)
	e.Next()
	e.Heard(c3)
	require.False(t, e.Dropped(c2, true), "c2 is no longer the link's")
	require.True(t, e.Dropped(c3, false))
	step, _, _ = e.Next()
	require.Equal(t, Idle, step, "a timeout does not redial")
	c4 := &conn{4}
	e.Installed(c4)
	e.Next()
	e.Heard(c4)
	require.True(t, e.Dropped(c4, true))
	step, n, _ = e.Next()
	require.Equal(t, Dial, step, "the peer closed a working link: the last notification goes again")
	require.Equal(t, 0, n)

	// A failed write is retried on the next connection unless a newer one waits.
	e.Installed(&conn{5})
	_, n, _ = e.Next()
	e.Unsent(n)
	e.Send(7)
	e.Unsent(n)
	_, n, _ = e.Next()
	require.Equal(t, 7, n)
}

func TestElectionCallBack(t *testing.T) {
	small := NewElection[*conn, int](1, 3)
	require.False(t, small.DialSurvives(), "a smaller id's dial only asks to be called back")
	big := NewElection[*conn, int](3, 1)
	stale := &conn{1}
	big.Installed(stale)
	old, had := big.CallBackAsked()
	require.True(t, had)
	require.Same(t, stale, old)
	step, _, _ := big.Next()
	require.Equal(t, Dial, step, "called back with nothing to send")
	c := &conn{2}
	big.Installed(c)
	step, _, _ = big.Next()
	require.Equal(t, Idle, step)
}
