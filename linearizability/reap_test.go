package linearizability

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReapedSequentialOfUnknownName: a sequential create of unknown outcome
// has no known name, yet a later read shows the node it made, and a still
// later read shows it gone — the reaper took it (simulator seed 1115 with
// reaping on: a persistent_sequential_with_ttl create lost to a
// ConnectionLoss). With reaping in the model that passes when the create
// made a TTL node, and fails when it made a persistent one, or without
// reaping.
func TestReapedSequentialOfUnknownName(t *testing.T) {
	for _, c := range []struct {
		name    string
		mode    string
		reaping bool
		ok      bool
	}{
		{name: "sequential TTL node", mode: "persistent_sequential_with_ttl", reaping: true, ok: true},
		{name: "sequential TTL node, no reaping", mode: "persistent_sequential_with_ttl"},
		{name: "persistent sequential node", mode: "persistent_sequential", reaping: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder()
			createA(b)
			b.op(1, 0x1, OpCreate, "/a/x", ErrConnectionLoss, 0, func(e *Entry) {
				e.Data, e.Mode, e.Zxid = str("x"), c.mode, nil
				if strings.Contains(c.mode, "ttl") {
					e.TTL = 10
				}
			})
			b.op(2, 0x2, OpGetChildren, "/a", ErrOK, 3, func(e *Entry) { e.Children = []string{"x0000000000"} })
			b.op(2, 0x2, OpGetChildren, "/a", ErrOK, 4, func(e *Entry) { e.Children = []string{} })
			// a later write, so that the reads are not final ones
			b.op(2, 0x2, OpCreate, "/d", ErrOK, 5, func(e *Entry) { e.Data, e.Mode, e.Created = str("d"), "persistent", "/d" })
			r, out := checkReaping(t, b.h, c.reaping, c.ok)
			if !c.ok {
				assert.NotEmpty(t, r.Violations[GuaranteeReads], out)
			}
		})
	}
}

// TestStaleReapTakesWhatWasMadeSince: the server decides what to reap from
// a tree that lags the txns it has accepted, and prepares a deleteContainer
// checking only that the node has no children and is no ephemeral (as
// ZooKeeper does). A reap decided while an empty container or a TTL node
// was still applied therefore deletes whatever non-ephemeral node was
// created at its path since (hunt seeds 38940, 35633). That passes with
// reaping; a node vanishing where nothing reapable was deleted before, or
// an ephemeral, is still a violation.
func TestStaleReapTakesWhatWasMadeSince(t *testing.T) {
	for _, c := range []struct {
		name        string
		first, then string // the modes of the two creates of /a/c
		reaping     bool
		ok          bool
	}{
		{name: "container, then a never used container", first: "container", then: "container", reaping: true, ok: true},
		{name: "TTL node, then a persistent node", first: "persistent_with_ttl", then: "persistent", reaping: true, ok: true},
		{name: "persistent, then a never used container", first: "persistent", then: "container", reaping: true},
		{name: "container, then an ephemeral", first: "container", then: "ephemeral", reaping: true},
		{name: "container, then a persistent node, no reaping", first: "container", then: "persistent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder()
			createA(b)
			create := func(zxid int64, mode string) {
				b.op(1, 0x1, OpCreate, "/a/c", ErrOK, zxid, func(e *Entry) {
					e.Data, e.Mode, e.Created = str(""), mode, "/a/c"
					if strings.Contains(mode, "ttl") {
						e.TTL = 10
					}
				})
			}
			create(3, c.first)
			// a child comes and goes, so that a container is reapable
			b.op(1, 0x1, OpCreate, "/a/c/k", ErrOK, 4, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/a/c/k" })
			b.op(1, 0x1, OpDelete, "/a/c/k", ErrOK, 5, func(e *Entry) { e.Version = ver(-1) })
			if c.first != "persistent" {
				b.op(2, 0x2, OpExists, "/a/c", "NoNode", 6, nil) // reaped at 6
			} else {
				b.op(1, 0x1, OpDelete, "/a/c", ErrOK, 6, func(e *Entry) { e.Version = ver(-1) })
			}
			create(7, c.then)
			b.op(2, 0x2, OpExists, "/a/c", ErrOK, 7, func(e *Entry) { e.Stat = st(7, 7, 7, 0, "") })
			b.op(2, 0x2, OpExists, "/a/c", "NoNode", 8, nil) // reaped again at 8
			b.op(2, 0x2, OpCreate, "/d", ErrOK, 9, func(e *Entry) { e.Data, e.Mode, e.Created = str("d"), "persistent", "/d" })
			checkReaping(t, b.h, c.reaping, c.ok)
		})
	}
}

// checkReaping writes h as a history file, reads it back, checks it with
// or without reaping and requires the verdict ok; it returns the report
// and its printout.
func checkReaping(t *testing.T, h History, reaping, ok bool) (Report, string) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, WriteHistory(&buf, h))
	back, err := ReadHistory(&buf, "test")
	require.NoError(t, err)
	r := CheckAll(back, Options{Reaping: reaping})
	var out strings.Builder
	require.NoError(t, r.Print(&out))
	require.Equal(t, ok, r.OK(), out.String())
	return r, out.String()
}
