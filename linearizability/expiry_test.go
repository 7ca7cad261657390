package linearizability

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExpiryHistoriesInTestdata: testdata/expiry holds one history each
// side of the rule that a sync called after a shown expiry, and the reads
// after it, are ordered after the session's close when one leader's term
// decided the expiry and answered the sync. NAME.fail.jsonl must fail the
// guarantees its README names, NAME.pass.jsonl must pass them all.
func TestExpiryHistoriesInTestdata(t *testing.T) {
	files, err := filepath.Glob("testdata/expiry/*.jsonl")
	require.NoError(t, err)
	require.Len(t, files, 2)
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			f, err := os.Open(name)
			require.NoError(t, err)
			defer f.Close()
			h, err := ReadHistory(f, name)
			require.NoError(t, err)
			r := CheckAll(h, Options{})
			var b strings.Builder
			require.NoError(t, r.Print(&b))
			if strings.HasSuffix(name, ".pass.jsonl") {
				assert.True(t, r.OK(), b.String())
				return
			}
			require.True(t, strings.HasSuffix(name, ".fail.jsonl"), "a file says which side it is on")
			assert.False(t, r.OK(), b.String())
			require.NotEmpty(t, r.Violations[GuaranteeSession], b.String())
			assert.Contains(t, r.Violations[GuaranteeSession][0].Explanation, "shows an ephemeral of session 0x100000d34b50001, although")
			assert.Contains(t, r.Violations[GuaranteeSession][0].Explanation, "sync /lin/e")
			assert.NotEmpty(t, r.Violations[GuaranteeReads], "the replay finds no place for the close before the sync's zxid")
		})
	}
}

// A sync called after a session was shown expired is answered once the
// session's closeSession, queued before the expiry was shown, is applied —
// by the server (an ensemble's leader) that decided the expiry, unless a
// restart or a leader change lost the close in between. So the sync's
// reply zxid, and every read at or past it, covers the close: such a read
// must not show the session's ephemeral. A plain read proves nothing (it
// may be answered before the close is applied), nor does a sync answered in
// another term, or one the history cannot tie to the expiry's term.
func TestSyncAfterShownExpiry(t *testing.T) {
	type conn struct{ server, term string }
	for _, c := range []struct {
		name string
		// told: the server and term of the Expired; before: client 2's
		// connection from before the expiry; after: its connection after
		// a reconnect (none when zero)
		told, before, after conn
		noSync              bool
		bySessionExpired    bool // shown by a SessionExpired reply instead
		violation           bool
	}{
		{name: "one server that stayed up", told: conn{"1", ""}, before: conn{"1", ""}, violation: true},
		{name: "one server that may have restarted", told: conn{"1", ""}, before: conn{"1", ""}, after: conn{"1", ""}},
		{name: "one server, no sync", told: conn{"1", ""}, before: conn{"1", ""}, noSync: true},
		{name: "one server's same run", told: conn{"1", "start 1"}, before: conn{"1", "start 1"}, after: conn{"1", "start 1"}, violation: true},
		{name: "one server restarted", told: conn{"1", "start 1"}, before: conn{"1", "start 1"}, after: conn{"1", "start 2"}},
		{name: "one server's same run, shown by SessionExpired", told: conn{"1", "start 1"}, before: conn{"1", "start 1"}, bySessionExpired: true, violation: true},
		{name: "one server restarted, shown by SessionExpired", told: conn{"1", "start 1"}, before: conn{"1", "start 1"}, after: conn{"1", "start 2"}, bySessionExpired: true},
		{name: "ensemble, same epoch on other members", told: conn{"1", "epoch 2"}, before: conn{"3", "epoch 2"}, after: conn{"2", "epoch 2"}, violation: true},
		{name: "ensemble, a new epoch", told: conn{"1", "epoch 2"}, before: conn{"3", "epoch 2"}, after: conn{"3", "epoch 3"}},
		{name: "ensemble, same epoch, no sync", told: conn{"1", "epoch 2"}, before: conn{"3", "epoch 2"}, noSync: true},
		{name: "ensemble without terms", told: conn{"1", ""}, before: conn{"3", ""}},
		{name: "ensemble without terms, the member that told it stayed in its role", told: conn{"3", ""}, before: conn{"3", ""}, violation: true},
		{name: "ensemble without terms, the member that told it reconnected", told: conn{"3", ""}, before: conn{"3", ""}, after: conn{"3", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder()
			event := func(client int, session int64, typ string, cn conn) {
				b.event(client, session, typ, "")
				e := &b.h[len(b.h)-1]
				e.Server, e.Term = cn.server, cn.term
				if typ == StateSyncConnected {
					e.Timeout = 4000
				}
			}
			event(1, 0x1, StateSyncConnected, c.told)
			event(2, 0x2, StateSyncConnected, c.before)
			b.op(1, 0x1, OpCreate, "/e", ErrOK, 2, func(e *Entry) { e.Data, e.Mode, e.Created = str("x"), "ephemeral", "/e" })
			b.now += 5_000_000_000 // past the 4 s timeout
			if c.bySessionExpired {
				// a paused client's write, answered once it resumes
				b.op(1, 0x1, OpSetData, "/e", ErrSessionExpired, 3, func(e *Entry) { e.Data, e.Version = str("y"), ver(-1) })
			} else {
				b.event(1, 0x1, StateDisconnected, "")
				event(1, 0x1, StateExpired, c.told)
			}
			if c.after != (conn{}) {
				b.event(2, 0x2, StateDisconnected, "")
				event(2, 0x2, StateSyncConnected, c.after)
			}
			z := int64(3) // the server never closed the session
			if !c.noSync {
				b.op(2, 0x2, OpSync, "/e", ErrOK, z, nil)
			}
			b.op(2, 0x2, OpExists, "/e", ErrOK, z, func(e *Entry) { e.Stat = &Stat{Czxid: 2, Mzxid: 2, Pzxid: 2, EphemeralOwner: 0x1, DataLength: 1} })
			vs := violationsOf(t, b.h)
			if !c.violation {
				for g, v := range vs {
					assert.Empty(t, v, "guarantee %s", g)
				}
				return
			}
			require.NotEmpty(t, vs[GuaranteeSession], "the ephemeral outlived its shown expiry past a sync ordered after it")
			assert.Contains(t, vs[GuaranteeSession][0].Explanation, "shows an ephemeral of session 0x1")
			assert.Contains(t, vs[GuaranteeSession][0].Explanation, "sync /e")
			assert.NotEmpty(t, vs[GuaranteeReads], "no place for the close at or before the sync's zxid")
		})
	}
}

// A history is from one server only if no Expired event names another: a
// client refused by another member shows an ensemble whose leader decides
// expiries, even if every SyncConnected names one member.
func TestSingleServerCountsTheServersOfExpired(t *testing.T) {
	h := History{
		{Kind: KindEvent, Client: 1, Session: 1, Seq: 1, At: 1, Type: StateSyncConnected, Timeout: 4000, Server: "1"},
		{Kind: KindEvent, Client: 1, Session: 1, Seq: 2, At: 2, Type: StateDisconnected},
		{Kind: KindEvent, Client: 1, Session: 1, Seq: 3, At: 3, Type: StateExpired},
	}
	assert.True(t, h.SingleServer(), "an Expired that names no server")
	h[2].Server = "1"
	assert.True(t, h.SingleServer(), "an Expired from the same server")
	h[2].Server = "2"
	assert.False(t, h.SingleServer(), "an Expired from another server")
}
