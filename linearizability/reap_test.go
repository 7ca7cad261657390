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
			var buf bytes.Buffer
			require.NoError(t, WriteHistory(&buf, b.h))
			h, err := ReadHistory(&buf, "test")
			require.NoError(t, err)
			r := CheckAll(h, Options{Reaping: c.reaping})
			var out strings.Builder
			require.NoError(t, r.Print(&out))
			require.Equal(t, c.ok, r.OK(), out.String())
			if !c.ok {
				assert.NotEmpty(t, r.Violations[GuaranteeReads], out.String())
			}
		})
	}
}
