package datatree

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

// TestPrepareMatchesZooKeeperLog re-prepares every write of the recorded
// golden traces and requires the txn ZooKeeper logged for it: the same
// header, the same body bytes (sequential names, versions, expanded ACLs,
// error codes, multi sub-txns) and the same digest. The log's own txn is
// then applied, so one mismatch does not cascade.
func TestPrepareMatchesZooKeeperLog(t *testing.T) {
	for _, sc := range goldenScenarios(t) {
		t.Run(sc, func(t *testing.T) {
			dir := filepath.Join(goldenDir, sc)
			cfg := goldenConfig(t, sc)
			lines, err := trace.ReadFile(filepath.Join(dir, "trace.jsonl"))
			require.NoError(t, err)
			entries, err := trace.ReadTxnLogs(dir)
			require.NoError(t, err)
			byZxid := map[int64]trace.Line{}
			// The session id each line ran under: a name is reused when a
			// scenario replaces a closed session.
			sessionAt := make([]int64, len(lines))
			current := map[string]int64{}
			for i, l := range lines {
				if l.Op == "connect" && l.Resp != nil {
					current[l.Session] = l.Resp.SessionID
				}
				sessionAt[i] = current[l.Session]
				if l.Time != 0 {
					byZxid[l.Zxid] = l
				}
			}
			// Auth as the connection had it when the write was sent: replay
			// addAuth lines in order up to the write's line.
			lineIndex := map[int64]int{}
			for i, l := range lines {
				if l.Time != 0 {
					lineIndex[l.Zxid] = i
				}
			}
			// A connection's ids when it sent line upTo: its addAuths since
			// it (re)connected; auth does not survive a reconnect.
			authAt := func(upTo int, session string) []wire.Id {
				ids := []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}}
				for _, l := range lines[:upTo] {
					switch {
					case l.Session != session:
					case l.Op == "connect" || l.Op == "reconnect":
						ids = ids[:1]
					case l.Op == "addAuth" && l.Err == "ok":
						got, code := Authenticate(cfg, l.Req.Scheme, []byte(l.Req.Auth), Client{Addr: "127.0.0.1"})
						if code == wire.ErrOK {
							ids = append(ids, got...)
						}
					}
				}
				return ids
			}
			tr := New(cfg)
			batches := lineBatches(t, filepath.Join(dir, "trace.jsonl"))
			batchOf := func(e trace.LogEntry) int {
				if l, ok := byZxid[e.Header.Zxid]; ok {
					return batches[lineIndex[l.Zxid]]
				}
				return 0
			}
			compared := 0
			for i := 0; i < len(entries); {
				// A pipeline (one batch of the trace) is prepared whole
				// before its first txn is applied, as ZooKeeper did.
				j := i + 1
				if b := batchOf(entries[i]); b != 0 {
					for j < len(entries) && batchOf(entries[j]) == b {
						j++
					}
				}
				for _, e := range entries[i:j] {
					l, ok := byZxid[e.Header.Zxid]
					op, isOp := trace.OpCode(l.Op)
					var req *Request
					switch {
					case ok && isOp && l.Req != nil && op != wire.OpCreateSession:
						body, err := l.Req.Body(op)
						require.NoError(t, err)
						req = &Request{Session: sessionAt[lineIndex[e.Header.Zxid]], Cxid: e.Header.Cxid, Op: op, Body: body,
							Auth: authAt(lineIndex[e.Header.Zxid], l.Session), Internal: l.Session == "server"}
						if l.Session == "server" {
							req.Session = e.Header.ClientID
						}
					case ok && l.Op == "closeSession":
						// A session expiry is the server's line; the log names the session.
						req = &Request{Session: e.Header.ClientID, Cxid: e.Header.Cxid, Op: wire.OpCloseSession}
					}
					if req != nil {
						compareTxn(t, e, tr.Prepare(req, e.Header.Zxid, e.Header.Time), l)
						compared++
					}
				}
				for _, e := range entries[i:j] {
					txn := logTxn(e)
					tr.Apply(&txn, nil)
				}
				i = j
			}
			t.Logf("%d txns of %d compared", compared, len(entries))
			require.NotZero(t, compared)
		})
	}
}

func compareTxn(t *testing.T, want trace.LogEntry, got Txn, l trace.Line) {
	t.Helper()
	what := l.Session + " " + l.Op + " " + pathOf(l) + " " + l.Note
	if !assert.Equal(t, want.Header, got.Header, "header: %s", what) {
		return
	}
	assert.Equal(t, wire.Marshal(want.Body), wire.Marshal(got.Body), "body %#v vs %#v: %s", want.Body, got.Body, what)
	if want.Digest == nil {
		assert.Zero(t, got.Digest.Version, "digest: %s", what)
	} else {
		assert.Equal(t, *want.Digest, got.Digest, "digest: %s", what)
	}
}

func pathOf(l trace.Line) string {
	if l.Req == nil {
		return ""
	}
	return l.Req.Path
}

// lineBatches reads each trace line's "batch" (0 when absent): lines with
// the same batch were sent as one pipeline.
func lineBatches(t *testing.T, path string) []int {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []int
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var l struct{ Batch int }
		require.NoError(t, json.Unmarshal(line, &l))
		out = append(out, l.Batch)
	}
	return out
}
