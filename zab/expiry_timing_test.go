package zab_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// TestExpiryTiming: sessions with random timeouts ping on random schedules
// and then fall silent, while the shell delivers a Tick at every Wakeup
// (and at the pings). A session is expired — its closeSession txn
// proposed — after its negotiated timeout has passed since its last ping
// or connect, never before, and at most one tick after (ZooKeeper's
// bucket granularity); a session that keeps pinging within its timeout is
// never expired.
func TestExpiryTiming(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tick := time.Duration(rapid.IntRange(1, 30).Draw(rt, "tick100ms")) * 100 * time.Millisecond
		h := zabtest.New(rt, zab.Config{ServerID: 1, Tick: tick}, 1)
		type sess struct {
			c         *zabtest.Client
			timeout   time.Duration
			lastTouch time.Duration
			pingsLeft int
			nextPing  time.Duration
			expired   bool
		}
		var all []*sess
		bySession := map[int64]*sess{}
		logged := len(h.Log)
		// checkExpiries: every closeSession logged since the last check is
		// an expiry at the current time; check it against the session's
		// last touch.
		checkExpiries := func() {
			for _, txn := range h.Log[logged:] {
				if txn.Header.Type != wire.OpCloseSession {
					continue
				}
				s := bySession[txn.Header.ClientID]
				require.NotNil(rt, s)
				require.False(rt, s.expired, "session 0x%x expired twice", txn.Header.ClientID)
				s.expired = true
				silent := h.Now.Mono - s.lastTouch
				require.GreaterOrEqual(rt, silent, s.timeout, "session 0x%x expired early", txn.Header.ClientID)
				require.LessOrEqual(rt, silent, s.timeout+tick, "session 0x%x expired late", txn.Header.ClientID)
			}
			logged = len(h.Log)
		}
		for i := range rapid.IntRange(1, 6).Draw(rt, "sessions") {
			c := h.Session(int32(rapid.IntRange(0, 60_000).Draw(rt, fmt.Sprint("timeout", i))))
			s := &sess{c: c, timeout: time.Duration(c.Timeout) * time.Millisecond, lastTouch: h.Now.Mono,
				pingsLeft: rapid.IntRange(0, 5).Draw(rt, fmt.Sprint("pings", i))}
			s.nextPing = h.Now.Mono + time.Duration(rapid.Int64Range(0, int64(s.timeout)).Draw(rt, fmt.Sprint("gap", i)))
			all = append(all, s)
			bySession[c.Session] = s
			checkExpiries()
			if rapid.Bool().Draw(rt, fmt.Sprint("advance", i)) {
				h.Advance(time.Duration(rapid.Int64Range(0, int64(tick)).Draw(rt, fmt.Sprint("stagger", i))))
				checkExpiries()
			}
		}
		for range 10_000 {
			// The next instant anything happens: a ping due, or the Wakeup.
			next := h.Wakeup
			var pinger *sess
			for _, s := range all {
				if !s.expired && s.pingsLeft > 0 && s.nextPing < next {
					next, pinger = s.nextPing, s
				}
			}
			if next > h.Now.Mono {
				h.Advance(next - h.Now.Mono)
			}
			checkExpiries()
			if pinger != nil && !pinger.expired && pinger.nextPing <= h.Now.Mono {
				pinger.c.Ping()
				pinger.lastTouch = h.Now.Mono
				pinger.pingsLeft--
				pinger.nextPing = h.Now.Mono + time.Duration(rapid.Int64Range(0, int64(pinger.timeout)).Draw(rt, "gap"))
			}
			done := true
			for _, s := range all {
				done = done && s.expired
			}
			if done {
				return
			}
		}
		rt.Fatalf("sessions still alive after 10000 steps: now %v wakeup %v table %v", h.Now.Mono, h.Wakeup, h.Peer.SessionTable())
	})
}
