package zab_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// TestSessionLifecycles runs random session lives — ephemerals, hangups,
// reconnects with the right or a wrong password, explicit closes, silence
// long enough to expire, held and released durability — and checks that a
// reconnect resumes the session exactly when the password is right and no
// closeSession has been logged for it (a refusal closes only the new
// connection), and that an ephemeral never outlives its session: every
// owner of an ephemeral is in the session table once the log is durable,
// and when every client falls silent, expiry empties both.
func TestSessionLifecycles(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := zabtest.New(rt, zab.Config{ServerID: 1}, rapid.Uint64().Draw(rt, "seed"))
		var clients []*zabtest.Client
		for i := range 3 {
			c := h.Session(int32(rapid.IntRange(4000, 12000).Draw(rt, fmt.Sprint("timeout", i))))
			clients = append(clients, c)
		}
		for step := range rapid.IntRange(1, 60).Draw(rt, "steps") {
			i := rapid.IntRange(0, len(clients)-1).Draw(rt, "client")
			c := clients[i]
			switch rapid.IntRange(0, 7).Draw(rt, "op") {
			case 0:
				c.Create(fmt.Sprintf("/e%d-%d", i, step), "", wire.ModeEphemeral)
			case 1:
				c.Ping()
			case 2:
				c.Hangup()
			case 3: // reconnect, maybe with a wrong password
				n := c.Reopen()
				if rapid.Bool().Draw(rt, "wrongPassword") {
					n.Passwd = append([]byte(nil), c.Passwd...)
					n.Passwd[0] ^= 1
				}
				h.Take()
				closed := closeLogged(h, c.Session)
				n.Connect(c.Timeout, 0)
				got := h.Take()
				switch {
				case !slices.Equal(n.Passwd, c.Passwd) || closed:
					// Refused, and only the new connection is closed.
					require.Equal(rt, []string{fmt.Sprintf("c%d connect refused", n.Conn), fmt.Sprintf("c%d close", n.Conn)}, got)
				default:
					want := fmt.Sprintf("c%d connect session=0x%x timeout=%d", n.Conn, c.Session, c.Timeout)
					require.Contains(rt, got, want, "a live session resumes")
					require.NotContains(rt, got, fmt.Sprintf("c%d connect refused", n.Conn))
				}
				if slices.Equal(n.Passwd, c.Passwd) {
					clients[i] = n
				}
			case 4:
				c.Close()
			case 5:
				h.Advance(time.Duration(rapid.IntRange(0, 7000).Draw(rt, "ms")) * time.Millisecond)
			case 6:
				h.Hold()
			case 7:
				h.Release()
			}
			h.Take()
		}
		h.Release()
		owners := func() []int64 { return h.Peer.Tree().Sessions() }
		live := func() []int64 {
			var ids []int64
			for _, s := range h.Peer.SessionTable() {
				ids = append(ids, s.ID)
			}
			return ids
		}
		for _, o := range owners() {
			require.Contains(rt, live(), o, "ephemerals of session 0x%x outlive it", o)
		}
		h.Advance(30 * time.Second) // past every timeout, nobody pinging
		h.Advance(2 * time.Second)
		require.Empty(rt, live(), "every silent session expired")
		require.Empty(rt, owners(), "and took its ephemerals with it")
	})
}

// closeLogged reports whether a closeSession txn for session has been
// proposed.
func closeLogged(h *zabtest.Harness, session int64) bool {
	for i := range h.Log {
		if t := &h.Log[i]; t.Header.Type == wire.OpCloseSession && t.Header.ClientID == session {
			return true
		}
	}
	return false
}
