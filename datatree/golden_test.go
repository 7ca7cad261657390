package datatree_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

// The golden traces were recorded from Debian's ZooKeeper 3.8.0 by
// scripts/goldenrec (see testdata/golden/README.md). These tests replay them
// so that the tree is checked against the real server, not against a model
// that may share its misreadings.

const goldenDir = "testdata/golden"

// goldenClientAddr is the address every recorded session connected from.
const goldenClientAddr = "127.0.0.1"

// maxGoldenMismatches stops a trace's replay once it has diverged this much:
// later lines would mostly repeat the first differences.
const maxGoldenMismatches = 25

// goldenScenarios reads the manifest; the tests skip only when the recorded
// traces are absent altogether.
func goldenScenarios(t *testing.T) []trace.Scenario {
	path := filepath.Join(goldenDir, trace.ManifestFile)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		t.Skipf("no golden traces in %s: record them with `go run ./scripts/goldenrec`", goldenDir)
	}
	m, err := trace.ReadManifest(path)
	require.NoError(t, err)
	require.NotEmpty(t, m)
	return trace.Sorted(m)
}

// treeConfig derives the tree's settings from the scenario's zoo.cfg lines.
func treeConfig(s *trace.Scenario) datatree.Config {
	var cfg datatree.Config
	if v, ok := s.Setting("extendedTypesEnabled"); ok {
		cfg.ExtendedTypesEnabled = v == "true"
	}
	if v, ok := s.Setting("enforceQuota"); ok {
		cfg.EnforceQuota = v == "true"
	}
	cfg.SuperDigest, _ = s.Setting("DigestAuthenticationProvider.superDigest")
	return cfg
}

// TestGoldenTraces drives a fresh tree through Prepare/Apply and Read with
// each trace's requests, in the recorded order, with the recorded session
// ids, zxids and txn times (and the server's own reaper deletes where
// ZooKeeper issued them), and checks every reply (error code, path, data,
// full stat, children, ACLs, multi results) and every watch event with its
// position: the events a session received before each of its replies. The
// digests and txn bytes of the same recordings are checked by
// TestZooKeeperLogDigests and TestPrepareMatchesZooKeeperLog.
func TestGoldenTraces(t *testing.T) {
	for _, sc := range goldenScenarios(t) {
		t.Run(sc.Name, func(t *testing.T) {
			dir := filepath.Join(goldenDir, sc.Name)
			lines, err := trace.ReadFile(filepath.Join(dir, "trace.jsonl"))
			require.NoError(t, err)
			logged, err := trace.ReadTxnLogs(dir)
			require.NoError(t, err)
			r := newReplayer(t, treeConfig(&sc), logged)
			r.countReaps(lines)
			for i := 0; i < len(lines); {
				n := 1
				for b := lines[i].Batch; b != 0 && i+n < len(lines) && lines[i+n].Batch == b; n++ {
				}
				if n == 1 {
					r.line(i+1, &lines[i])
				} else {
					r.pipeline(i+1, lines[i:i+n])
				}
				if r.mismatches >= maxGoldenMismatches {
					t.Fatalf("stopped after %d mismatches", r.mismatches)
				}
				i += n
			}
			r.finish()
		})
	}
}

// goldenSession is one recorded client session as the replay tracks it.
type goldenSession struct {
	id      int64
	auth    []wire.Id
	watcher datatree.WatcherID
}

type replayer struct {
	t        *testing.T
	cfg      datatree.Config
	tree     *datatree.Tree
	logged   map[int64]trace.LogEntry
	sessions map[string]*goldenSession
	// pending holds, per watcher, the events fired since its session's
	// last recorded reply.
	pending     map[datatree.WatcherID][]trace.Event
	nextWatcher datatree.WatcherID
	// reapsAhead counts, per path, the reaper deletes still to come in the
	// trace: a reap candidate ZooKeeper never reaps is a mismatch.
	reapsAhead map[string]int
	mismatches int
	where      string // the line being replayed, for messages
}

func newReplayer(t *testing.T, cfg datatree.Config, logged []trace.LogEntry) *replayer {
	r := &replayer{t: t, cfg: cfg, tree: datatree.New(cfg), logged: map[int64]trace.LogEntry{},
		sessions: map[string]*goldenSession{}, pending: map[datatree.WatcherID][]trace.Event{}, nextWatcher: 1}
	for _, e := range logged {
		r.logged[e.Header.Zxid] = e
	}
	return r
}

// check records a mismatch unless ok; it reports ok.
func (r *replayer) check(ok bool) bool {
	if !ok {
		r.mismatches++
	}
	return ok
}

func (r *replayer) at(n int, l *trace.Line) {
	r.where = fmt.Sprintf("trace.jsonl:%d (%s %s", n, l.Session, l.Op)
	if l.Req != nil && l.Req.Path != "" {
		r.where += fmt.Sprintf(" %q", l.Req.Path)
	}
	r.where += ")"
}

// pipeline replays a batch of one session's requests that ZooKeeper read in
// one go: as its PrepRequestProcessor runs ahead of the apply, every write
// is prepared (against the ones still pending) before the first is
// applied; then the txns are applied and the reads answered in order.
func (r *replayer) pipeline(first int, lines []trace.Line) {
	s := r.sessions[lines[0].Session]
	require.NotNil(r.t, s, "trace.jsonl:%d: session %s not connected", first, lines[0].Session)
	txns := make([]datatree.Txn, len(lines))
	for i := range lines {
		l := &lines[i]
		r.at(first+i, l)
		if op, ok := trace.OpCode(l.Op); ok && trace.IsWrite(op) {
			txns[i] = r.tree.Prepare(r.writeRequest(s, op, l), l.Zxid, l.Time)
		}
	}
	for i := range lines {
		l := &lines[i]
		r.at(first+i, l)
		op, ok := trace.OpCode(l.Op)
		require.True(r.t, ok, "%s: no such op in a pipeline", r.where)
		if trace.IsWrite(op) {
			r.applyWrite(s, op, l, txns[i])
		} else {
			r.read(s, op, l)
		}
		r.checkEvents(l)
	}
}

func (r *replayer) line(n int, l *trace.Line) {
	r.at(n, l)
	if l.Session == "server" {
		r.serverTxn(l)
		return
	}
	if l.Op == "connect" {
		r.connect(l)
		r.checkEvents(l)
		return
	}
	s := r.sessions[l.Session]
	require.NotNil(r.t, s, "%s: session not connected", r.where)
	switch l.Op {
	case "ping":
	case "disconnect":
		// The server drops a closed connection's watches; the session lives on.
		r.tree.RemoveWatcher(s.watcher)
	case "reconnect":
		// A new connection: new watcher, and only the address as identity
		// (auth is per connection).
		s.watcher = r.nextWatcher
		r.nextWatcher++
		s.auth = []wire.Id{{Scheme: "ip", ID: goldenClientAddr}}
	case "addAuth":
		r.addAuth(s, l)
	case wire.OpWhoAmI.String():
		r.whoAmI(s, l)
	default:
		op, ok := trace.OpCode(l.Op)
		require.True(r.t, ok, "%s: unknown op", r.where)
		if trace.IsWrite(op) {
			r.write(s, op, l)
		} else {
			r.read(s, op, l)
		}
	}
	r.checkEvents(l)
}

func (r *replayer) connect(l *trace.Line) {
	s := &goldenSession{id: l.Resp.SessionID, auth: []wire.Id{{Scheme: "ip", ID: goldenClientAddr}}, watcher: r.nextWatcher}
	r.nextWatcher++
	r.sessions[l.Session] = s
	req := &datatree.Request{Session: s.id, Op: wire.OpCreateSession, Body: &wire.CreateSessionTxn{TimeOut: l.Resp.TimeOut}}
	r.prepareAndApply(req, l)
}

// addAuth follows ZooKeeper's connection: the ids Authenticate gives are
// added unless already present, and the tree learns the watcher's new
// identities; a failed addAuth closes the connection.
func (r *replayer) addAuth(s *goldenSession, l *trace.Line) {
	ids, code := datatree.Authenticate(r.cfg, l.Req.Scheme, []byte(l.Req.Auth), datatree.Client{Addr: goldenClientAddr})
	r.check(assert.Equal(r.t, l.Err, code.String(), "%s: addAuth result", r.where))
	if code != wire.ErrOK {
		r.tree.RemoveWatcher(s.watcher)
		return
	}
	auth := append([]wire.Id(nil), s.auth...)
	for _, id := range ids {
		if !containsID(auth, id) {
			auth = append(auth, id)
		}
	}
	// The connection's identities changed: its watches' events are now
	// filtered with the new ones, as ZooKeeper checks at delivery.
	s.auth = auth
	r.tree.SetWatcherAuth(s.watcher, auth)
}

func containsID(ids []wire.Id, id wire.Id) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// whoAmI is answered by the connection, not the tree: comparing it checks
// the identities Authenticate gave and AuthOrder's order (ZooKeeper shows a
// digest id's user name).
func (r *replayer) whoAmI(s *goldenSession, l *trace.Line) {
	var got []wire.ClientInfo
	for _, id := range datatree.AuthOrder(s.auth) {
		user := id.ID
		if id.Scheme == "digest" {
			user, _, _ = strings.Cut(user, ":")
		}
		got = append(got, wire.ClientInfo{AuthScheme: id.Scheme, User: user})
	}
	r.check(assert.Equal(r.t, l.Resp.Identity, got, "%s: identities", r.where))
}

// write prepares the request at the recorded zxid and time, compares the
// txn with ZooKeeper's, applies it and compares the reply.
func (r *replayer) write(s *goldenSession, op wire.OpCode, l *trace.Line) {
	r.applyWrite(s, op, l, r.tree.Prepare(r.writeRequest(s, op, l), l.Zxid, l.Time))
}

func (r *replayer) writeRequest(s *goldenSession, op wire.OpCode, l *trace.Line) *datatree.Request {
	return &datatree.Request{Session: s.id, Op: op, Body: r.body(op, l.Req), Auth: s.auth}
}

// applyWrite applies a prepared write and compares the reply.
func (r *replayer) applyWrite(s *goldenSession, op wire.OpCode, l *trace.Line, txn datatree.Txn) {
	r.compareResult(op, l, r.apply(op, l, txn))
	if op == wire.OpCloseSession {
		r.tree.RemoveWatcher(s.watcher)
	}
}

// prepareAndApply runs req through Prepare at the line's zxid and time and
// applies the txn. (TestPrepareMatchesZooKeeperLog compares prepared txns
// with the logged ones byte for byte.) A closeSession applies ZooKeeper's
// own txn instead: its list of ephemerals is in hash-set order, which
// decides the order of the events it fires, and its paths as a set are
// what TestPrepareMatchesZooKeeperLog checks.
func (r *replayer) prepareAndApply(req *datatree.Request, l *trace.Line) datatree.Result {
	return r.apply(req.Op, l, r.tree.Prepare(req, l.Zxid, l.Time))
}

// apply applies a prepared txn and queues the events it fires.
func (r *replayer) apply(op wire.OpCode, l *trace.Line, txn datatree.Txn) datatree.Result {
	if op == wire.OpCloseSession {
		txn = r.loggedTxn(l.Zxid)
	}
	res, events := r.tree.Apply(&txn, nil)
	r.deliver(events)
	return res
}

// loggedTxn is the txn ZooKeeper logged with zxid.
func (r *replayer) loggedTxn(zxid int64) datatree.Txn {
	e, ok := r.logged[zxid]
	require.True(r.t, ok, "%s: no txn with zxid %#x in the captured log", r.where, zxid)
	txn := datatree.Txn{Header: e.Header, Body: e.Body}
	if e.Digest != nil {
		txn.Digest = *e.Digest
	}
	return txn
}

func (r *replayer) read(s *goldenSession, op wire.OpCode, l *trace.Line) {
	req := &datatree.Request{Session: s.id, Op: op, Body: r.body(op, l.Req), Auth: s.auth}
	res, events := r.tree.Read(req, s.watcher, nil)
	r.deliver(events)
	r.compareResult(op, l, res)
}

// body builds the request record the tree takes for op.
func (r *replayer) body(op wire.OpCode, req *trace.Request) wire.Record {
	if req == nil {
		return nil
	}
	b, err := req.Body(op)
	require.NoError(r.t, err, "%s", r.where)
	m, ok := b.(*wire.MultiRequest)
	if !ok {
		return b
	}
	out := &datatree.MultiRequest{}
	for _, o := range m.Ops {
		out.Ops = append(out.Ops, datatree.MultiOp{Op: o.Type, Body: o.Body})
	}
	return out
}

func (r *replayer) countReaps(lines []trace.Line) {
	r.reapsAhead = map[string]int{}
	for _, l := range lines {
		if l.Session == "server" && l.Op == wire.OpDeleteContainer.String() {
			r.reapsAhead[l.Req.Path]++
		}
	}
}

// serverTxn replays a txn the server issued itself: a reaper's
// deleteContainer must be among the tree's reap candidates at its time, and
// every candidate then must be one ZooKeeper reaps (now or later); it
// prepares to ZooKeeper's txn. Anything else applies as logged.
func (r *replayer) serverTxn(l *trace.Line) {
	if l.Op != wire.OpDeleteContainer.String() {
		txn := r.loggedTxn(l.Zxid)
		_, events := r.tree.Apply(&txn, nil)
		r.deliver(events)
		return
	}
	var candidates []string
	for _, c := range r.tree.ReapCandidates(l.Time, 0) {
		p := c.Body.(*wire.PathRequest).Path
		candidates = append(candidates, p)
		r.check(assert.Positive(r.t, r.reapsAhead[p], "%s: %s is a reap candidate ZooKeeper never reaps", r.where, p))
	}
	r.check(assert.Contains(r.t, candidates, l.Req.Path, "%s: reap candidates at the reaper's time", r.where))
	r.reapsAhead[l.Req.Path]--
	req := &datatree.Request{Op: wire.OpDeleteContainer, Body: &wire.PathRequest{Path: l.Req.Path}, Internal: true}
	res := r.prepareAndApply(req, l)
	r.check(assert.Equal(r.t, l.Err, res.Err.String(), "%s: result", r.where))
}

func (r *replayer) deliver(events []datatree.WatchEvent) {
	for _, ev := range events {
		r.pending[ev.Watcher] = append(r.pending[ev.Watcher], trace.Event{
			Type: ev.Event.Type.String(), State: ev.Event.State.String(), Path: ev.Event.Path})
	}
}

// checkEvents compares the events fired for the line's session since its
// previous reply with those ZooKeeper delivered before this reply.
func (r *replayer) checkEvents(l *trace.Line) {
	s := r.sessions[l.Session]
	got := r.pending[s.watcher]
	delete(r.pending, s.watcher)
	r.check(assert.Equal(r.t, nonEmpty(l.Events), nonEmpty(got), "%s: watch events delivered before this reply", r.where))
}

func nonEmpty(evs []trace.Event) []trace.Event {
	if len(evs) == 0 {
		return nil
	}
	return evs
}

// finish checks that no event fired that ZooKeeper never delivered (the
// recorder drained every session at the end).
func (r *replayer) finish() {
	names := make([]string, 0, len(r.sessions))
	for n := range r.sessions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		assert.Empty(r.t, r.pending[r.sessions[n].watcher], "session %s: events ZooKeeper never delivered", n)
	}
}

func (r *replayer) compareResult(op wire.OpCode, l *trace.Line, res datatree.Result) {
	if !r.check(assert.Equal(r.t, l.Err, res.Err.String(), "%s: error code", r.where)) || res.Err != wire.ErrOK {
		return
	}
	r.check(assert.Equal(r.t, render(normalize(l.Resp)), render(normalize(response(op, res))), "%s: reply", r.where))
}

// render shows a reply as indented JSON, so a difference reads field by field.
func render(r *trace.Response) string {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// response renders a tree result as the recorder decoded ZooKeeper's reply
// to op: only the fields that reply carries.
func response(op wire.OpCode, res datatree.Result) *trace.Response {
	stat := func() *wire.Stat { s := res.Stat; return &s }
	switch op {
	case wire.OpCreate, wire.OpSync:
		return &trace.Response{Path: res.Path}
	case wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		return &trace.Response{Path: res.Path, Stat: stat()}
	case wire.OpExists, wire.OpSetData, wire.OpSetACL:
		return &trace.Response{Stat: stat()}
	case wire.OpGetData:
		return &trace.Response{Data: trace.DataString(res.Data), Stat: stat()}
	case wire.OpGetACL:
		return &trace.Response{ACL: res.ACL, Stat: stat()}
	case wire.OpGetChildren, wire.OpGetEphemerals:
		return &trace.Response{Children: res.Children}
	case wire.OpGetChildren2:
		return &trace.Response{Children: res.Children, Stat: stat()}
	case wire.OpGetAllChildrenNumber:
		n := res.Count
		return &trace.Response{Number: &n}
	case wire.OpMulti, wire.OpMultiRead:
		out := &trace.Response{}
		for _, sub := range res.Multi {
			sr := trace.SubResult{Op: sub.Op.String(), Err: sub.Err.String()}
			if sub.Op != wire.OpError {
				if body := response(sub.Op, sub); body != nil {
					sr.Response = *body
				}
			}
			out.Results = append(out.Results, sr)
		}
		return out
	}
	return nil
}

// normalize sorts children (ZooKeeper sends them in hash-set order) and
// makes empty lists nil, as the JSON traces hold them.
func normalize(r *trace.Response) *trace.Response {
	if r == nil {
		return nil
	}
	c := *r
	c.Children = sortedOrNil(c.Children)
	if len(c.ACL) == 0 {
		c.ACL = nil
	}
	if len(c.Results) == 0 {
		c.Results = nil
	}
	for i := range c.Results {
		c.Results[i].Response = *normalize(&c.Results[i].Response)
	}
	return &c
}

func sortedOrNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
