package linearizability

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builder makes hand-written histories short: it numbers seqs per client
// and advances a clock by 10 per operation.
type builder struct {
	h   History
	now int64
	seq map[int]int64
}

func newBuilder() *builder { return &builder{seq: map[int]int64{}} }

func zx(v int64) *Hex64    { h := Hex64(v); return &h }
func str(s string) *string { return &s }
func ver(v int32) *int32   { return &v }

// node stat of a node with the given zxids, version and data length.
func st(czxid, mzxid, pzxid int64, version int32, data string) *Stat {
	return &Stat{Czxid: Hex64(czxid), Mzxid: Hex64(mzxid), Pzxid: Hex64(pzxid), Version: version, DataLength: int32(len(data))}
}

// op appends a completed operation; fill sets its specific fields.
func (b *builder) op(client int, session int64, name, path, err string, zxid int64, fill func(*Entry)) *Entry {
	b.now += 10
	call := b.now
	b.now += 10
	ret := b.now
	b.seq[client]++
	e := Entry{Kind: KindOp, Client: client, Session: Hex64(session), Seq: b.seq[client], Call: call, Return: &ret,
		Op: name, Path: path, Err: err, Xid: int32(b.seq[client])}
	if zxid != 0 {
		e.Zxid = zx(zxid)
	}
	if fill != nil {
		fill(&e)
	}
	b.h = append(b.h, e)
	return &b.h[len(b.h)-1]
}

// lost appends a write that never got a reply.
func (b *builder) lost(client int, session int64, name, path string, fill func(*Entry)) {
	b.now += 10
	b.seq[client]++
	e := Entry{Kind: KindOp, Client: client, Session: Hex64(session), Seq: b.seq[client], Call: b.now, Op: name, Path: path, Xid: int32(b.seq[client])}
	fill(&e)
	b.h = append(b.h, e)
}

func (b *builder) event(client int, session int64, typ, path string) {
	b.now += 10
	b.seq[client]++
	b.h = append(b.h, Entry{Kind: KindEvent, Client: client, Session: Hex64(session), Seq: b.seq[client], At: b.now, Type: typ, Path: path})
}

func (b *builder) connected(client int, session int64, timeoutMs int32) {
	b.now += 10
	b.seq[client]++
	b.h = append(b.h, Entry{Kind: KindEvent, Client: client, Session: Hex64(session), Seq: b.seq[client], At: b.now, Type: StateSyncConnected, Timeout: timeoutMs})
}

func createA(b *builder) {
	b.op(1, 0x1, OpCreate, "/a", ErrOK, 2, func(e *Entry) {
		e.Data, e.Mode, e.Created, e.Stat = str("v0"), "persistent", "/a", st(2, 2, 2, 0, "v0")
	})
}

func setA(b *builder, data string, version int32, zxid int64) {
	b.op(1, 0x1, OpSetData, "/a", ErrOK, zxid, func(e *Entry) {
		e.Data, e.Version, e.Stat = str(data), ver(version), st(2, zxid, 2, version+1, data)
	})
}

func getA(b *builder, client int, session int64, data string, version int32, mzxid, zxid int64, watch bool) {
	b.op(client, session, OpGetData, "/a", ErrOK, zxid, func(e *Entry) {
		e.Data, e.Stat, e.Watch = str(data), st(2, mzxid, 2, version, data), watch
	})
}

// cleanHistory exercises every guarantee and breaks none.
func cleanHistory() History {
	b := newBuilder()
	b.connected(1, 0x1, 4000)
	b.connected(2, 0x2, 4000)
	createA(b)
	getA(b, 2, 0x2, "v0", 0, 2, 2, true)
	setA(b, "v1", 0, 3)
	b.event(2, 0x2, "NodeDataChanged", "/a")
	getA(b, 2, 0x2, "v1", 1, 3, 3, false)
	b.op(1, 0x1, OpCreate, "/e", ErrOK, 4, func(e *Entry) {
		e.Data, e.Mode, e.Created = str("eph"), "ephemeral", "/e"
	})
	b.op(2, 0x2, OpExists, "/e", ErrOK, 4, func(e *Entry) {
		e.Stat = st(4, 4, 4, 0, "eph")
		e.Stat.EphemeralOwner = 0x1
	})
	b.op(1, 0x1, OpMulti, "", ErrOK, 5, func(e *Entry) {
		e.Ops = []SubOp{{Op: OpCheck, Path: "/a", Version: ver(1)}, {Op: OpCreate, Path: "/b", Data: str("x"), Mode: "persistent"}}
		e.Results = []SubResult{{Err: ErrOK}, {Err: ErrOK, Created: "/b"}}
	})
	b.op(1, 0x1, OpSetData, "/a", "BadVersion", 6, func(e *Entry) { e.Data, e.Version = str("nope"), ver(0) })
	b.op(2, 0x2, OpSync, "/a", ErrOK, 6, nil)
	getA(b, 2, 0x2, "v1", 1, 3, 6, false)
	b.op(1, 0x1, OpClose, "", ErrOK, 7, nil)
	b.op(2, 0x2, OpExists, "/e", "NoNode", 7, nil)
	getA(b, 2, 0x2, "v1", 1, 3, 7, false)
	b.op(2, 0x2, OpGetChildren, "/", ErrOK, 7, func(e *Entry) { e.Children = []string{"zookeeper", "a", "b"} })
	return b.h
}

func violationsOf(t *testing.T, h History) map[string][]Violation {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, WriteHistory(&buf, h))
	back, err := ReadHistory(&buf, "test")
	require.NoError(t, err, "the history must survive the file format")
	return CheckAll(back, Options{}).Violations
}

func TestCleanHistoryPasses(t *testing.T) {
	for g, vs := range violationsOf(t, cleanHistory()) {
		assert.Empty(t, vs, "guarantee %s", g)
	}
}

// each anomaly must be caught by the checker of the guarantee it breaks.
func TestAnomaliesAreCaught(t *testing.T) {
	cases := []struct {
		name      string
		guarantee string
		want      string // a phrase of the explanation
		build     func(b *builder)
	}{
		{"stale read", GuaranteeReads, `returned data "v0"`, func(b *builder) {
			createA(b)
			setA(b, "v1", 0, 3)
			getA(b, 2, 0x2, "v0", 0, 2, 3, false)
		}},
		{"lost acknowledged write", GuaranteeDurability, "an acknowledged write was lost", func(b *builder) {
			createA(b)
			setA(b, "v1", 0, 3)
			// the server lost txn 3 in a crash: a new client reads the old state
			getA(b, 3, 0x3, "v0", 0, 2, 2, false)
		}},
		{"watch event after the data it announces", GuaranteeWatch, "arrived before the event", func(b *builder) {
			createA(b)
			getA(b, 2, 0x2, "v0", 0, 2, 2, true)
			setA(b, "v1", 0, 3)
			getA(b, 2, 0x2, "v1", 1, 3, 3, false)
			b.event(2, 0x2, "NodeDataChanged", "/a")
		}},
		{"ephemeral outliving its session", GuaranteeSession, "which was closed at zxid", func(b *builder) {
			createA(b)
			b.op(1, 0x1, OpCreate, "/e", ErrOK, 3, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "ephemeral", "/e" })
			b.op(1, 0x1, OpClose, "", ErrOK, 4, nil)
			b.op(2, 0x2, OpExists, "/e", ErrOK, 4, func(e *Entry) {
				e.Stat = st(3, 3, 3, 0, "")
				e.Stat.EphemeralOwner = 0x1
			})
		}},
		{"reordered session", GuaranteeReads, "yet its zxid is lower", func(b *builder) {
			createA(b)
			setA(b, "v1", 0, 3)
			getA(b, 2, 0x2, "v1", 1, 3, 3, false)
			getA(b, 2, 0x2, "v0", 0, 2, 2, false)
		}},
		{"sync then read", GuaranteeSyncRead, "yet its zxid is below", func(b *builder) {
			createA(b)
			setA(b, "v1", 0, 3)
			b.op(2, 0x2, OpSync, "/a", ErrOK, 2, nil)
			getA(b, 2, 0x2, "v0", 0, 2, 2, false)
		}},
		{"write not linearizable", GuaranteeWrites, "returned ok where the model says BadVersion", func(b *builder) {
			createA(b)
			setA(b, "v1", 0, 3)
			setA(b, "v2", 0, 4)
		}},
		{"write of unknown outcome cannot explain a read", GuaranteeReads, "no placement", func(b *builder) {
			createA(b)
			b.lost(1, 0x1, OpSetData, "/a", func(e *Entry) { e.Data, e.Version = str("v1"), ver(-1) })
			getA(b, 2, 0x2, "v9", 1, 3, 3, false)
		}},
		{"session expired while connected", GuaranteeSession, "never expired", func(b *builder) {
			b.connected(1, 0x1, 4000)
			createA(b)
			b.event(1, 0x1, StateExpired, "")
		}},
		{"op succeeds after its session expired", GuaranteeSession, "showed its session expired", func(b *builder) {
			createA(b)
			b.event(1, 0x1, StateDisconnected, "")
			b.event(1, 0x1, StateExpired, "")
			setA(b, "v1", 0, 3)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder()
			c.build(b)
			vs := violationsOf(t, b.h)
			require.NotEmpty(t, vs[c.guarantee], "the %s checker must catch it", c.guarantee)
			var texts []string
			for _, v := range vs[c.guarantee] {
				texts = append(texts, v.Explanation)
			}
			assert.Contains(t, strings.Join(texts, "\n"), c.want)
		})
	}
}

func TestUnknownOutcomeWriteMayHaveHappened(t *testing.T) {
	for _, applied := range []bool{false, true} {
		b := newBuilder()
		createA(b)
		b.lost(1, 0x1, OpSetData, "/a", func(e *Entry) { e.Data, e.Version = str("v1"), ver(0) })
		if applied {
			getA(b, 2, 0x2, "v1", 1, 3, 3, false)
			b.op(2, 0x2, OpSetData, "/a", ErrOK, 4, func(e *Entry) { e.Data, e.Version, e.Stat = str("v2"), ver(1), st(2, 4, 2, 2, "v2") })
		} else {
			getA(b, 2, 0x2, "v0", 0, 2, 3, false)
			b.op(2, 0x2, OpSetData, "/a", ErrOK, 4, func(e *Entry) { e.Data, e.Version, e.Stat = str("v2"), ver(0), st(2, 4, 2, 1, "v2") })
		}
		for g, vs := range violationsOf(t, b.h) {
			assert.Empty(t, vs, "applied=%v guarantee %s", applied, g)
		}
	}
}

// A sequential create of unknown outcome may be what the final state
// shows under its prefix and some counter, but not under another prefix or
// with other data (found by zab/server/localens's SIGKILL-the-leader test).
func TestUnknownSequentialCreateExplainsTheFinalState(t *testing.T) {
	for _, tc := range []struct {
		name, read, data string
		ok               bool
	}{
		{"its name and data", "/q/n0000000007", "c1", true},
		{"other data", "/q/n0000000007", "c2", false},
		{"another prefix", "/q/m0000000007", "c1", false},
		{"a counter of 9 digits", "/q/n000000007", "c1", false},
	} {
		b := newBuilder()
		b.op(1, 0x1, OpCreate, "/q", ErrOK, 2, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/q" })
		b.lost(1, 0x1, OpCreate, "/q/n", func(e *Entry) { e.Data, e.Mode = str("c1"), "persistent_sequential" })
		b.op(2, 0x2, OpGetData, tc.read, ErrOK, 3, func(e *Entry) { e.Data, e.Stat = str(tc.data), st(3, 3, 3, 0, tc.data) })
		vs := CheckDurability(b.h, Options{})
		if tc.ok {
			assert.Empty(t, vs, tc.name)
		} else {
			assert.NotEmpty(t, vs, tc.name)
		}
	}
}

// A write of unknown outcome placed before the history's first acknowledged
// txn explains the final state too (hunt seed 127875: a create lost with
// its member's crash, committed all the same, then its session's close as
// the first txn a reply carries, gave the create the window [-1, -1],
// which the durability check took for one ending before "no acknowledged
// write" and so reported the node it made as a lost write).
func TestUnknownWriteBeforeTheFirstAcknowledgedTxnExplainsTheFinalState(t *testing.T) {
	for _, tc := range []struct {
		data string
		ok   bool
	}{{"c1", true}, {"c2", false}} {
		b := newBuilder()
		b.lost(1, 0x1, OpCreate, "/a", func(e *Entry) { e.Data, e.Mode = str("c1"), "persistent" })
		b.op(1, 0x1, OpClose, "", ErrOK, 3, nil)
		b.op(2, 0x2, OpGetData, "/a", ErrOK, 3, func(e *Entry) { e.Data, e.Stat = str(tc.data), st(2, 2, 2, 0, tc.data) })
		vs := CheckDurability(b.h, Options{})
		if tc.ok {
			assert.Empty(t, vs, "the lost create made /a with %q", tc.data)
		} else {
			assert.NotEmpty(t, vs, "no write made /a with %q", tc.data)
		}
	}
}

func TestCheckFileWritesVisualisation(t *testing.T) {
	b := newBuilder()
	createA(b)
	setA(b, "v1", 0, 3)
	setA(b, "v2", 0, 4)
	path := filepath.Join(t.TempDir(), "h.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, WriteHistory(f, b.h))
	require.NoError(t, f.Close())
	var out bytes.Buffer
	ok, err := CheckFile(path, Options{}, &out)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Contains(t, out.String(), "FAIL  linearizable writes")
	html, err := os.ReadFile(path + ".1.html")
	require.NoError(t, err, out.String())
	assert.Contains(t, string(html), "setData /a")
}

// onServer names the server of every SyncConnected event in h.
func onServer(h History, server string) {
	for i := range h {
		if h[i].Type == StateSyncConnected {
			h[i].Server = server
		}
	}
}

// An expiry shown by an Expired event must have taken effect before a write
// called after the event, when one server answered both and provably did
// not restart in between (another client stayed connected throughout), or
// when the history names the terms and the write was answered in the term
// that told the expiry (an ensemble's epoch). In an ensemble without terms
// (or with no proof that the server stayed up) the leader that decided the
// expiry may have lost its closeSession with a crash or its leadership, and
// ZooKeeper brings the session back: the ephemeral may outlive the Expired
// its client was told.
func TestExpiryRemovesEphemerals(t *testing.T) {
	for _, c := range []struct {
		name                     string
		gone, ensemble, lateConn bool
		toldIn, writeIn          string // the terms of the Expired and of the writer's connection
		violation                bool
	}{
		{name: "gone on one server", gone: true},
		{name: "kept on one server that stayed up", violation: true},
		{name: "kept in an ensemble", ensemble: true},
		{name: "kept on one server that may have restarted", lateConn: true},
		{name: "kept in an ensemble's same epoch", ensemble: true, lateConn: true, toldIn: "epoch 2", writeIn: "epoch 2", violation: true},
		{name: "kept in an ensemble's next epoch", ensemble: true, toldIn: "epoch 2", writeIn: "epoch 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder()
			b.connected(1, 0x1, 4000)
			if !c.lateConn {
				b.connected(2, 0x2, 4000)
			}
			b.op(1, 0x1, OpCreate, "/e", ErrOK, 2, func(e *Entry) { e.Data, e.Mode, e.Created = str("x"), "ephemeral", "/e" })
			b.event(1, 0x1, StateDisconnected, "")
			b.now += 5_000_000_000 // past the 4 s timeout
			b.event(1, 0x1, StateExpired, "")
			if c.lateConn {
				b.connected(2, 0x2, 4000)
			}
			if c.gone {
				b.op(2, 0x2, OpCreate, "/e", ErrOK, 4, func(e *Entry) { e.Data, e.Mode, e.Created = str("y"), "persistent", "/e" })
			} else {
				b.op(2, 0x2, OpCreate, "/e", "NodeExists", 4, func(e *Entry) { e.Data, e.Mode = str("y"), "persistent" })
				b.op(2, 0x2, OpExists, "/e", ErrOK, 4, func(e *Entry) { e.Stat = &Stat{Czxid: 2, Mzxid: 2, Pzxid: 2, EphemeralOwner: 0x1, DataLength: 1} })
			}
			onServer(b.h, "1")
			for i := range b.h {
				switch e := &b.h[i]; {
				case e.Type == StateExpired:
					e.Term = c.toldIn
				case e.Type == StateSyncConnected && e.Client == 2:
					e.Term = c.writeIn
					if c.ensemble {
						e.Server = "2"
					}
				}
			}
			vs := violationsOf(t, b.h)
			if !c.violation {
				for g, v := range vs {
					assert.Empty(t, v, "guarantee %s", g)
				}
				return
			}
			require.NotEmpty(t, vs[GuaranteeWrites], "the ephemeral outlived its shown expiry")
			assert.Contains(t, vs[GuaranteeWrites][0].Explanation, "returned NodeExists where the model says ok")
			require.NotEmpty(t, vs[GuaranteeSession])
			assert.Contains(t, vs[GuaranteeSession][0].Explanation, "shows an ephemeral of session 0x1")
		})
	}
}

// A write of unknown outcome may take effect after its session's later
// read only in an ensemble: its reply was lost with the connection, and the
// client may reconnect to a member that has not applied it yet (hunt seeds
// 38974, 27173, 64249, 69618). One server answers the read after the write.
// A later write of the session bounds it everywhere: the leader orders a
// session's writes as sent.
func TestUnknownWriteAfterItsSessionsLaterRead(t *testing.T) {
	for _, c := range []struct {
		name          string
		ensemble      bool
		laterWrite    bool
		violationWant bool
	}{
		{name: "ensemble", ensemble: true},
		{name: "one server", violationWant: true},
		{name: "ensemble, later write", ensemble: true, laterWrite: true, violationWant: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder()
			b.connected(1, 0x1, 4000)
			b.connected(2, 0x2, 4000)
			b.op(2, 0x2, OpCreate, "/a", ErrOK, 2, func(e *Entry) { e.Data, e.Mode, e.Created = str("a"), "persistent", "/a" })
			b.op(1, 0x1, OpCreate, "/a/x", ErrConnectionLoss, 0, func(e *Entry) { e.Data, e.Mode, e.Zxid = str("x"), "persistent", nil })
			b.event(1, 0x1, StateDisconnected, "")
			b.connected(1, 0x1, 4000)
			b.op(1, 0x1, OpExists, "/a/x", "NoNode", 2, nil)
			if c.laterWrite {
				b.op(1, 0x1, OpSetData, "/a", ErrOK, 3, func(e *Entry) {
					e.Data, e.Version = str("b"), ver(-1)
					e.Stat = &Stat{Czxid: 2, Mzxid: 3, Pzxid: 2, Version: 1, DataLength: 1}
				})
			}
			// /a/x appears at zxid 4: the lost create took effect there
			b.op(2, 0x2, OpExists, "/a/x", ErrOK, 4, func(e *Entry) { e.Stat = &Stat{Czxid: 4, Mzxid: 4, Pzxid: 4, DataLength: 1} })
			onServer(b.h, "1")
			if c.ensemble {
				for i := len(b.h) - 1; i >= 0; i-- {
					if e := &b.h[i]; e.Client == 1 && e.Type == StateSyncConnected {
						e.Server = "2" // client 1's reconnect went to another member
						break
					}
				}
			}
			vs := violationsOf(t, b.h)
			if !c.violationWant {
				for g, v := range vs {
					assert.Empty(t, v, "guarantee %s", g)
				}
				return
			}
			assert.NotEmpty(t, vs[GuaranteeReads], "the create took effect after its session's later reply")
		})
	}
}

func TestReusedZxidIsCaught(t *testing.T) {
	b := newBuilder()
	createA(b)
	setA(b, "v1", 0, 3)
	b.op(2, 0x2, OpCreate, "/b", ErrOK, 3, func(e *Entry) { e.Data, e.Mode, e.Created = str("x"), "persistent", "/b" })
	vs := CheckWrites(b.h, Options{})
	require.NotEmpty(t, vs)
	assert.Contains(t, vs[0].Explanation, "carry the same zxid 0x3")
}

// A watch fired while its client was disconnected is delivered in answer to
// SetWatches, which go-zookeeper sends alongside its queued requests: until
// the recorded setWatches reply, a reply may come first. Without a recorded
// setWatches the client is taken to send it first, as ZooKeeper's does.
func TestWatchFiredWhileDisconnectedMayTrailReplies(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		b := newBuilder()
		createA(b)
		getA(b, 2, 0x2, "v0", 0, 2, 2, true)
		b.event(2, 0x2, StateDisconnected, "")
		setA(b, "v1", 0, 3)
		b.connected(2, 0x2, 4000)
		getA(b, 2, 0x2, "v1", 1, 3, 3, false)
		b.event(2, 0x2, "NodeDataChanged", "/a")
		if recorded {
			b.op(2, 0x2, OpSetWatches, "", ErrOK, 3, nil)
			assert.Empty(t, CheckWatches(b.h, Options{}))
		} else {
			assert.NotEmpty(t, CheckWatches(b.h, Options{}))
		}
	}
}

// On reconnecting, a client re-registers its standard and persistent watches
// and, on a path with both, the persistent one wins: the standard watch is
// gone (a recursive watch never answers NodeChildrenChanged).
func TestPersistentWatchWinsAtReconnect(t *testing.T) {
	b := newBuilder()
	createA(b)
	b.op(2, 0x2, OpAddWatch, "/a", ErrOK, 2, func(e *Entry) { e.WatchMode = "PERSISTENT_RECURSIVE" })
	b.op(2, 0x2, OpGetChildren, "/a", ErrOK, 2, func(e *Entry) { e.Watch, e.Children = true, []string{} })
	b.event(2, 0x2, StateDisconnected, "")
	b.connected(2, 0x2, 4000)
	getA(b, 2, 0x2, "v0", 0, 2, 2, false)
	b.op(1, 0x1, OpCreate, "/a/c", ErrOK, 3, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/a/c" })
	b.event(2, 0x2, "NodeCreated", "/a/c")
	b.op(2, 0x2, OpExists, "/a/c", ErrOK, 3, func(e *Entry) { e.Stat = st(3, 3, 3, 0, "") })
	assert.Empty(t, CheckWatches(b.h, Options{}))
}

// SetWatches fires an exists watch only if the node exists when it is
// processed: a create and delete while the client was away go unnoticed,
// and the watch waits for the next create.
func TestExistsWatchMissesCreateDeleteWhileAway(t *testing.T) {
	b := newBuilder()
	b.op(2, 0x2, OpExists, "/e", "NoNode", 1, func(e *Entry) { e.Watch = true })
	b.event(2, 0x2, StateDisconnected, "")
	b.op(1, 0x1, OpCreate, "/e", ErrOK, 2, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/e" })
	b.op(1, 0x1, OpDelete, "/e", ErrOK, 3, func(e *Entry) { e.Version = ver(-1) })
	b.connected(2, 0x2, 4000)
	b.op(2, 0x2, OpGetData, "/a", "NoNode", 3, nil)
	b.op(1, 0x1, OpCreate, "/e", ErrOK, 4, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/e" })
	b.event(2, 0x2, "NodeCreated", "/e")
	assert.Empty(t, CheckWatches(b.h, Options{}))
	// the same without the delete: the node exists at reconnection, so
	// SetWatches fires the watch before the first reply
	b = newBuilder()
	b.op(2, 0x2, OpExists, "/e", "NoNode", 1, func(e *Entry) { e.Watch = true })
	b.event(2, 0x2, StateDisconnected, "")
	b.op(1, 0x1, OpCreate, "/e", ErrOK, 2, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/e" })
	b.connected(2, 0x2, 4000)
	b.op(2, 0x2, OpGetData, "/a", "NoNode", 2, nil)
	b.event(2, 0x2, "NodeCreated", "/e")
	assert.NotEmpty(t, CheckWatches(b.h, Options{}))
}

// The delete that removed the node while the client was away need not be
// acknowledged: one of unknown outcome (seed 11594: the client's own, its
// reply lost with the connection), the end of the session that owned an
// ephemeral, or the server reaping a container may have removed it, and
// SetWatches then fires nothing.
func TestExistsWatchMissesCreateAndUnseenDeleteWhileAway(t *testing.T) {
	for _, c := range []struct {
		name    string
		mode    string
		delete  bool // a delete of unknown outcome
		reaping bool
		missed  bool // the watch may have missed the create
	}{
		{"lost delete", "persistent", true, false, true},
		{"ephemeral", "ephemeral", false, false, true},
		{"reaped container", "container", false, true, true},
		{"container, no reaping", "container", false, false, false},
		{"persistent", "persistent", false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder()
			b.op(2, 0x2, OpExists, "/e", "NoNode", 1, func(e *Entry) { e.Watch = true })
			b.event(2, 0x2, StateDisconnected, "")
			b.op(1, 0x1, OpCreate, "/e", ErrOK, 2, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), c.mode, "/e" })
			if c.delete {
				b.lost(2, 0x2, OpDelete, "/e", func(e *Entry) { e.Version = ver(-1) })
			}
			b.connected(2, 0x2, 4000)
			b.op(2, 0x2, OpGetData, "/a", "NoNode", 3, nil)
			opt := Options{Reaping: c.reaping}
			if c.missed {
				assert.Empty(t, CheckWatches(b.h, opt))
			} else {
				assert.NotEmpty(t, CheckWatches(b.h, opt))
			}
		})
	}
}

// TestDeadlineRunOutIsAFailure: a replay whose deadline runs out is
// undecided, and undecided is a failure in every checker that replays —
// never a pass, whatever operation the replay stopped at.
func TestDeadlineRunOutIsAFailure(t *testing.T) {
	b := newBuilder()
	createA(b)
	b.lost(1, 0x1, OpSetData, "/a", func(e *Entry) { e.Data, e.Version = str("v1"), ver(0) })
	getA(b, 2, 0x2, "v1", 1, 3, 3, false)
	checkers := map[string]func(History, Options) []Violation{GuaranteeWrites: CheckWrites, GuaranteeReads: CheckReads}
	for g, check := range checkers {
		require.Empty(t, check(b.h, Options{}), "%s: decided with time to spare, the history is fine", g)
		vs := check(b.h, Options{Timeout: time.Nanosecond})
		require.Len(t, vs, 1, "%s: a deadline that ran out must be reported", g)
		assert.Contains(t, vs[0].Explanation, "undecided", g)
	}
}

// TestUnknownEphemeralCreateEndsWithItsSession (seed 1003): a create of
// unknown outcome that made an ephemeral, written after, and gone with its
// session's close; the same with a persistent create is a lost node.
func TestUnknownEphemeralCreateEndsWithItsSession(t *testing.T) {
	for _, mode := range []string{"ephemeral", "persistent"} {
		b := newBuilder()
		createA(b)
		b.lost(3, 0x3, OpCreate, "/a/x", func(e *Entry) { e.Data, e.Mode = str("c3"), mode })
		b.op(2, 0x2, OpSetData, "/a/x", ErrOK, 4, func(e *Entry) { e.Data, e.Version = str("c2"), ver(-1) })
		b.op(3, 0x3, OpClose, "", ErrOK, 5, nil)
		b.op(2, 0x2, OpSync, "/a/x", ErrOK, 5, nil)
		b.op(2, 0x2, OpGetChildren, "/a/x", errNoNode, 5, nil)
		b.op(2, 0x2, OpExists, "/a/x", errNoNode, 5, nil)
		vs := violationsOf(t, b.h)
		if mode == "ephemeral" {
			for g, v := range vs {
				assert.Empty(t, v, "guarantee %s", g)
			}
			continue
		}
		assert.NotEmpty(t, vs[GuaranteeSyncRead], "a persistent node does not go with its session")
		assert.NotEmpty(t, vs[GuaranteeDurability], "a persistent node does not go with its session")
	}
}

// TestLostDeleteAndEphemeralCreateReplaceANode (hunt seed 66425): an
// acknowledged persistent /a/x, then a delete and an ephemeral create of
// it, both of unknown outcome, may have made /a/x an ephemeral; written
// to and gone with that session's close, it is no lost write. Without the
// lost delete the persistent node could not have been replaced.
func TestLostDeleteAndEphemeralCreateReplaceANode(t *testing.T) {
	for _, lostDelete := range []bool{true, false} {
		b := newBuilder()
		createA(b)
		b.op(1, 0x1, OpCreate, "/a/x", ErrOK, 3, func(e *Entry) { e.Data, e.Mode, e.Created = str("p"), "persistent", "/a/x" })
		if lostDelete {
			b.lost(3, 0x3, OpDelete, "/a/x", func(e *Entry) { e.Version = ver(-1) })
		}
		b.lost(3, 0x3, OpCreate, "/a/x", func(e *Entry) { e.Data, e.Mode = str("c3"), "ephemeral" })
		b.op(2, 0x2, OpSetData, "/a/x", ErrOK, 6, func(e *Entry) { e.Data, e.Version = str("c2"), ver(-1) })
		b.op(3, 0x3, OpClose, "", ErrOK, 7, nil)
		b.op(2, 0x2, OpExists, "/a/x", errNoNode, 7, nil)
		vs := CheckDurability(b.h, Options{})
		if lostDelete {
			assert.Empty(t, vs)
		} else {
			assert.NotEmpty(t, vs, "a persistent node does not go with another session")
		}
	}
}

// TestSessionEndsOnce: a session that held an ephemeral and whose close got
// ConnectionLoss may have ended by that close or by its expiry, whichever
// came first; once it has ended, the other changes nothing. Nine such
// sessions are 2^9 possible states, not more (seed 308 gave up when each
// order of close and expiry counted as its own state).
func TestSessionEndsOnce(t *testing.T) {
	const sessions = 9
	for _, gone := range []bool{false, true} {
		b := newBuilder()
		b.op(10, 0x10, OpCreate, "/e", ErrOK, 1, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/e" })
		var kids []string
		for s := int64(1); s <= sessions; s++ {
			name := fmt.Sprintf("s%d", s)
			b.op(int(s), s, OpCreate, "/e/"+name, ErrOK, 1+s, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "ephemeral", "/e/"+name })
			kids = append(kids, name)
		}
		for s := int64(1); s <= sessions; s++ {
			b.op(int(s), s, OpClose, "", ErrConnectionLoss, 0, nil)
		}
		if gone {
			kids = []string{}
		}
		b.op(10, 0x10, OpGetChildren, "/e", ErrOK, 1+sessions, func(e *Entry) { e.Children = kids })
		for g, vs := range violationsOf(t, b.h) {
			assert.Empty(t, vs, "ephemerals gone: %v, guarantee %s", gone, g)
		}
	}
}

// TestReadsAfterSessionEndsAreDecided: sessions that each hold scores of
// ephemerals under one parent and whose close got ConnectionLoss, and a
// reader going over the final state (the parent's children, then each
// child) after their expiries' windows opened: one session is gone by
// then, the others are not. Every read settles the pending expiries anew,
// so a read must cost about a lookup of their effects: closing each
// session again at every read, copying the parent once per ephemeral,
// costs tens of seconds here, past the deadline.
func TestReadsAfterSessionEndsAreDecided(t *testing.T) {
	const sessions, ephemerals, rounds = 3, 150, 3
	b := newBuilder()
	b.op(10, 0x10, OpCreate, "/q", ErrOK, 1, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/q" })
	z := int64(1)
	var alive, all []string
	for i := range sessions * ephemerals {
		s := int64(1 + i%sessions)
		z++
		name := fmt.Sprintf("n%010d", i)
		b.op(int(s), s, OpCreate, "/q/n", ErrOK, z, func(e *Entry) {
			e.Data, e.Mode, e.Created = str(""), "ephemeral_sequential", "/q/"+name
		})
		all = append(all, name)
		if s != 1 {
			alive = append(alive, name)
		}
	}
	z++ // session 1's expiry
	for range rounds {
		b.op(10, 0x10, OpGetChildren, "/q", ErrOK, z, func(e *Entry) { e.Children = alive })
		for i, name := range all {
			if i%sessions == 0 {
				b.op(10, 0x10, OpGetData, "/q/"+name, errNoNode, z, nil)
				continue
			}
			b.op(10, 0x10, OpGetData, "/q/"+name, ErrOK, z, func(e *Entry) { e.Data = str("") })
		}
	}
	for s := int64(1); s <= sessions; s++ {
		b.op(int(s), s, OpClose, "", ErrConnectionLoss, 0, nil)
	}
	require.NoError(t, b.h.Validate())
	r := CheckAll(b.h, Options{Timeout: 10 * time.Second})
	var out strings.Builder
	require.NoError(t, r.Print(&out))
	assert.True(t, r.OK(), out.String())
}

// TestChildOfUnknownSequentialNode: a sequential create of unknown outcome
// made /q0000000000 (its name decided where it took effect), and a child of
// it was created after: the replay must settle the sequential create first.
// Without a parent, the child's create is still caught.
func TestChildOfUnknownSequentialNode(t *testing.T) {
	for _, parentMade := range []bool{true, false} {
		b := newBuilder()
		if parentMade {
			b.lost(1, 0x1, OpCreate, "/q", func(e *Entry) { e.Data, e.Mode = str(""), "persistent_sequential" })
		}
		b.op(2, 0x2, OpCreate, "/q0000000000/x", ErrOK, 2, func(e *Entry) {
			e.Data, e.Mode, e.Created = str(""), "persistent", "/q0000000000/x"
		})
		vs := violationsOf(t, b.h)
		if parentMade {
			assert.Empty(t, vs[GuaranteeWrites])
		} else {
			assert.NotEmpty(t, vs[GuaranteeWrites], "a child of a node nothing made")
		}
	}
}

// A read after a sync that misses a write acknowledged before the sync was
// called breaks sync-then-read under one leader; when the sync was answered
// in an older epoch than the write (a replaced leader that did not know
// it), the violation is reported as a sync across a leader change, which
// ZooKeeper does not promise (ZOOKEEPER-1675): it does not fail the report.
func TestSyncAcrossALeaderChangeIsReportedApart(t *testing.T) {
	for _, acrossEpochs := range []bool{false, true} {
		b := newBuilder()
		write := int64(0x100000003)
		if acrossEpochs {
			write = 0x200000001
		}
		b.op(1, 0x1, OpCreate, "/a", ErrOK, 0x100000002, func(e *Entry) { e.Data, e.Mode, e.Created = str("a"), "persistent", "/a" })
		b.op(1, 0x1, OpSetData, "/a", ErrOK, write, func(e *Entry) {
			e.Data, e.Version = str("b"), ver(-1)
			e.Stat = &Stat{Czxid: 0x100000002, Mzxid: Hex64(write), Pzxid: 0x100000002, Version: 1, DataLength: 1}
		})
		b.op(2, 0x2, OpSync, "/a", ErrOK, 0x100000002, nil)
		b.op(2, 0x2, OpGetData, "/a", ErrOK, 0x100000002, func(e *Entry) {
			e.Data = str("a")
			e.Stat = &Stat{Czxid: 0x100000002, Mzxid: 0x100000002, Pzxid: 0x100000002, DataLength: 1}
		})
		// a later write, so that the read is not a final one (durability)
		b.op(1, 0x1, OpSetData, "/a", ErrOK, write+1, func(e *Entry) {
			e.Data, e.Version = str("c"), ver(-1)
			e.Stat = &Stat{Czxid: 0x100000002, Mzxid: Hex64(write + 1), Pzxid: 0x100000002, Version: 2, DataLength: 1}
		})
		var buf bytes.Buffer
		require.NoError(t, WriteHistory(&buf, b.h))
		h, err := ReadHistory(&buf, "test")
		require.NoError(t, err)
		r := CheckAll(h, Options{})
		var out strings.Builder
		require.NoError(t, r.Print(&out))
		if !acrossEpochs {
			assert.NotEmpty(t, r.Violations[GuaranteeSyncRead], out.String())
			assert.Empty(t, r.Violations[GuaranteeSyncLeaderChange])
			assert.False(t, r.OK())
			continue
		}
		assert.Empty(t, r.Violations[GuaranteeSyncRead], out.String())
		assert.NotEmpty(t, r.Violations[GuaranteeSyncLeaderChange], out.String())
		assert.True(t, r.OK(), "a sync across a leader change is not promised\n%s", out.String())
		assert.Contains(t, out.String(), "note  sync across a leader change (not promised by ZooKeeper): 1")
	}
}

// With Options.Reaping the server may delete a childless container that had
// a child, or a childless TTL node, at any point; nothing else may vanish
// unasked, and without the option nothing may.
func TestReapedNodesMayVanish(t *testing.T) {
	for _, c := range []struct {
		name    string
		mode    string
		child   bool // a child created (and, unless keepChild, deleted) before the read
		keep    bool // the child stays
		reaping bool
		ok      bool
	}{
		{name: "emptied container", mode: "container", child: true, reaping: true, ok: true},
		{name: "emptied container, no reaping", mode: "container", child: true},
		{name: "container never used", mode: "container", reaping: true},
		{name: "container with a child", mode: "container", child: true, keep: true, reaping: true},
		{name: "childless TTL node", mode: "persistent_with_ttl", reaping: true, ok: true},
		{name: "TTL node with a child", mode: "persistent_with_ttl", child: true, keep: true, reaping: true},
		{name: "persistent node", mode: "persistent", child: true, reaping: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder()
			b.op(1, 0x1, OpCreate, "/c", ErrOK, 2, func(e *Entry) {
				e.Data, e.Mode, e.Created = str("c"), c.mode, "/c"
				if c.mode == "persistent_with_ttl" {
					e.TTL = 1000
				}
			})
			zxid := int64(2)
			if c.child {
				b.op(1, 0x1, OpCreate, "/c/x", ErrOK, 3, func(e *Entry) { e.Data, e.Mode, e.Created = str("x"), "persistent", "/c/x" })
				zxid = 3
				if !c.keep {
					b.op(1, 0x1, OpDelete, "/c/x", ErrOK, 4, func(e *Entry) { e.Version = ver(-1) })
					zxid = 4
				}
			}
			b.op(2, 0x2, OpExists, "/c", "NoNode", zxid+1, nil)
			// a later write, so that the read is not a final one
			b.op(1, 0x1, OpCreate, "/d", ErrOK, zxid+2, func(e *Entry) { e.Data, e.Mode, e.Created = str("d"), "persistent", "/d" })
			r, out := checkReaping(t, b.h, c.reaping, c.ok)
			if !c.ok {
				assert.NotEmpty(t, r.Violations[GuaranteeReads], out)
			}
		})
	}
}
