package linearizability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/zabd/zabd/wire"
)

// Kinds of history entries.
const (
	KindOp    = "op"
	KindEvent = "event"
)

// Operation names a history uses in the "op" field.
const (
	OpCreate        = "create"
	OpDelete        = "delete"
	OpSetData       = "setData"
	OpGetData       = "getData"
	OpExists        = "exists"
	OpGetChildren   = "getChildren"
	OpSync          = "sync"
	OpMulti         = "multi"
	OpMultiRead     = "multiRead"
	OpCheck         = "check"
	OpSetACL        = "setACL"
	OpGetACL        = "getACL"
	OpGetEphemerals = "getEphemerals"
	OpAddWatch      = "addWatch"
	OpRemoveWatches = "removeWatches"
	OpClose         = "close"
	// OpSetWatches is the re-registration a client sends by itself after
	// reconnecting; recorders that see it (linearizability/record) write it
	// so that CheckWatches knows when the server processed it.
	OpSetWatches = "setWatches"
)

// knownOps are the values "op" may take at top level; multi and multiRead
// sub-operations are restricted further (see subOpsOf).
var knownOps = map[string]bool{
	OpCreate: true, OpDelete: true, OpSetData: true, OpGetData: true, OpExists: true,
	OpGetChildren: true, OpSync: true, OpMulti: true, OpMultiRead: true, OpCheck: true,
	OpSetACL: true, OpGetACL: true, OpGetEphemerals: true, OpAddWatch: true,
	OpRemoveWatches: true, OpClose: true, OpSetWatches: true,
}

// subOpsOf lists which operations may appear inside a multi and a multiRead.
var subOpsOf = map[string]map[string]bool{
	OpMulti:     {OpCreate: true, OpDelete: true, OpSetData: true, OpCheck: true},
	OpMultiRead: {OpGetData: true, OpGetChildren: true},
}

// Session state names used as event types (wire.KeeperState spelling).
var (
	StateSyncConnected = wire.StateSyncConnected.String()
	StateDisconnected  = wire.StateDisconnected.String()
	StateExpired       = wire.StateExpired.String()
	StateClosed        = wire.StateClosed.String()
)

// Error names used by the checkers (wire.ErrCode spelling).
var (
	ErrOK             = wire.ErrOK.String()
	ErrConnectionLoss = wire.ErrConnectionLoss.String()
	ErrSessionExpired = wire.ErrSessionExpired.String()
)

// Hex64 is a zxid or session id; JSON spells it as a "0x…" string so that the
// epoch and counter halves stay readable.
type Hex64 int64

// MarshalJSON writes "0x…" (with a leading minus for negative values).
func (h Hex64) MarshalJSON() ([]byte, error) { return []byte(`"` + h.String() + `"`), nil }

// String gives the "0x…" spelling.
func (h Hex64) String() string {
	if h < 0 {
		return "-0x" + strconv.FormatUint(uint64(-h), 16)
	}
	return "0x" + strconv.FormatUint(uint64(h), 16)
}

// UnmarshalJSON accepts only the "0x…" spelling.
func (h *Hex64) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a hex string like \"0x100000002\"")
	}
	neg := strings.HasPrefix(s, "-")
	digits, ok := strings.CutPrefix(strings.TrimPrefix(s, "-"), "0x")
	if !ok || digits == "" {
		return fmt.Errorf("want a hex string like \"0x100000002\", got %q", s)
	}
	v, err := strconv.ParseUint(digits, 16, 64)
	if err != nil || v > 1<<63-1 {
		return fmt.Errorf("want a hex string like \"0x100000002\", got %q", s)
	}
	*h = Hex64(v)
	if neg {
		*h = -*h
	}
	return nil
}

// Stat is wire.Stat as a history spells it: zxids and the owner in hex.
type Stat struct {
	Czxid          Hex64 `json:"czxid"`
	Mzxid          Hex64 `json:"mzxid"`
	Ctime          int64 `json:"ctime"`
	Mtime          int64 `json:"mtime"`
	Version        int32 `json:"version"`
	Cversion       int32 `json:"cversion"`
	Aversion       int32 `json:"aversion"`
	EphemeralOwner Hex64 `json:"ephemeralOwner"`
	DataLength     int32 `json:"dataLength"`
	NumChildren    int32 `json:"numChildren"`
	Pzxid          Hex64 `json:"pzxid"`
}

// StatFromWire converts a reply's stat.
func StatFromWire(s *wire.Stat) *Stat {
	return &Stat{
		Czxid: Hex64(s.Czxid), Mzxid: Hex64(s.Mzxid), Ctime: s.Ctime, Mtime: s.Mtime,
		Version: s.Version, Cversion: s.Cversion, Aversion: s.Aversion,
		EphemeralOwner: Hex64(s.EphemeralOwner), DataLength: s.DataLength,
		NumChildren: s.NumChildren, Pzxid: Hex64(s.Pzxid),
	}
}

// SubOp is one operation inside a multi or multiRead.
type SubOp struct {
	Op      string  `json:"op"`
	Path    string  `json:"path"`
	Data    *string `json:"data,omitempty"`
	Version *int32  `json:"version,omitempty"`
	Mode    string  `json:"mode,omitempty"`
	TTL     int64   `json:"ttl,omitempty"`
}

// SubResult is the result of one SubOp, in the same position.
type SubResult struct {
	Err      string   `json:"err"`
	Created  string   `json:"created,omitempty"`
	Stat     *Stat    `json:"stat,omitempty"`
	Data     *string  `json:"data,omitempty"`
	Children []string `json:"children,omitempty"`
}

// Entry is one line of a history: a completed (or never completed) operation
// or an event the client received. Which fields are set depends on Kind and
// Op; docs/history-format.md lists them.
type Entry struct {
	Kind    string `json:"kind"`
	Client  int    `json:"client"`
	Session Hex64  `json:"session"`
	// Seq is the client's receive order of replies and events; an operation
	// that never returned has the seq it would have had when it was called.
	Seq int64 `json:"seq"`

	// Operation fields. Times are a monotonic clock in nanoseconds shared by
	// all clients of the history; Return is nil when no reply arrived.
	Call      int64       `json:"call,omitempty"`
	Return    *int64      `json:"return,omitempty"`
	Op        string      `json:"op,omitempty"`
	Path      string      `json:"path,omitempty"`
	Data      *string     `json:"data,omitempty"`
	Version   *int32      `json:"version,omitempty"`
	Mode      string      `json:"mode,omitempty"`
	TTL       int64       `json:"ttl,omitempty"`
	Watch     bool        `json:"watch,omitempty"`
	WatchMode string      `json:"watchMode,omitempty"`
	Ops       []SubOp     `json:"ops,omitempty"`
	Err       string      `json:"err,omitempty"`
	Zxid      *Hex64      `json:"zxid,omitempty"`
	Created   string      `json:"created,omitempty"`
	Stat      *Stat       `json:"stat,omitempty"`
	Children  []string    `json:"children,omitempty"`
	Results   []SubResult `json:"results,omitempty"`
	// Xid is the request's xid, when the recorder knows it: a witness
	// (Options.Witness) names the request a txn came from by session and
	// xid.
	Xid int32 `json:"xid,omitempty"`

	// Event fields. Type is a wire.EventType name for watch events and a
	// wire.KeeperState name for session state changes; Timeout is the
	// negotiated session timeout in ms, on SyncConnected.
	At      int64  `json:"at,omitempty"`
	Type    string `json:"type,omitempty"`
	Timeout int32  `json:"timeout,omitempty"`
	// Server names the server a SyncConnected event connected to, or that
	// refused the connection with Expired, when the recorder knows it (any
	// spelling, e.g. "1" or "10.0.0.1:2181"). A history whose every
	// SyncConnected names one and the same server, and no Expired another,
	// is judged as from one server (see SingleServer).
	Server string `json:"server,omitempty"`
	// Term names, on SyncConnected and Expired, the term the server
	// answered the connection in, when the recorder knows it (any
	// spelling): in an ensemble the epoch of the leader the member led or
	// followed, on a standalone server its run between two restarts. Every
	// reply on the connection comes from that term: a server leaves its
	// role, and so its term, only by closing every client connection.
	// Equal terms name one leader (one run of a standalone server), which
	// orders every write and sync after the expiries it decided before
	// (see expiryBounds).
	Term string `json:"term,omitempty"`
}

// MarshalJSON writes call for an operation and at for an event even when
// they are 0 (the reader demands them), and neither elsewhere.
func (e Entry) MarshalJSON() ([]byte, error) {
	type plain Entry // the same fields without this method
	out := struct {
		plain
		Call *int64 `json:"call,omitempty"`
		At   *int64 `json:"at,omitempty"`
	}{plain: plain(e)}
	switch e.Kind {
	case KindOp:
		out.Call = &e.Call
	case KindEvent:
		out.At = &e.At
	}
	return json.Marshal(out)
}

// History is a whole history file, in file order.
type History []Entry

// Returned reports whether a reply arrived.
func (e *Entry) Returned() bool { return e.Return != nil }

// OutcomeUnknown reports whether e is a write that may or may not have
// taken effect: no reply, or ConnectionLoss / OperationTimeout.
func (e *Entry) OutcomeUnknown() bool {
	if e.Kind != KindOp || !isWriteOp(e.Op) {
		return false
	}
	return !e.Returned() || lostWithConnection(e.Err)
}

// lostWithConnection reports whether err says the request's reply was lost,
// so that nothing is known of its outcome.
func lostWithConnection(err string) bool {
	return err == ErrConnectionLoss || err == wire.ErrOperationTimeout.String()
}

// SingleServer reports whether h comes from one server: every SyncConnected
// event names its server, all name the same one, and no Expired event names
// another. Some checks are stricter then, because one server answers every
// request in one order; an ensemble's members answer reads from their own
// trees, which may lag.
func (h History) SingleServer() bool {
	return h.singleServerName() != ""
}

// singleServerName is the server a history from one server names, or "".
func (h History) singleServerName() string {
	server := ""
	for i := range h {
		e := &h[i]
		if e.Kind != KindEvent || e.Type != StateSyncConnected {
			continue
		}
		if e.Server == "" || (server != "" && e.Server != server) {
			return ""
		}
		server = e.Server
	}
	for i := range h {
		if e := &h[i]; e.Kind == KindEvent && e.Type == StateExpired && e.Server != "" && e.Server != server {
			return ""
		}
	}
	return server
}

// IsWrite reports whether e is an operation that changes the tree when it
// succeeds (create, delete, setData, setACL, multi, close).
func (e *Entry) IsWrite() bool { return e.Kind == KindOp && isWriteOp(e.Op) }

func isWriteOp(op string) bool {
	switch op {
	case OpCreate, OpDelete, OpSetData, OpSetACL, OpMulti, OpClose:
		return true
	}
	return false
}

// IsStateEvent reports whether e is a session state change rather than a
// watch event.
func (e *Entry) IsStateEvent() bool {
	return e.Kind == KindEvent && (e.Type == StateSyncConnected || e.Type == StateDisconnected ||
		e.Type == StateExpired || e.Type == StateClosed ||
		e.Type == wire.StateAuthFailed.String() || e.Type == wire.StateConnectedReadOnly.String() ||
		e.Type == wire.StateSaslAuthenticated.String())
}

// Writer appends entries to a history file, one JSON object per line.
type Writer struct {
	w   *bufio.Writer
	err error
}

// NewWriter writes to w; call Flush at the end.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriter(w)} }

// Write appends one entry. The first error sticks and is returned by every
// later call.
func (w *Writer) Write(e *Entry) error {
	if w.err != nil {
		return w.err
	}
	b, err := json.Marshal(e)
	if err != nil {
		w.err = fmt.Errorf("history: encode entry seq %d of client %d: %w", e.Seq, e.Client, err)
		return w.err
	}
	b = append(b, '\n')
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("history: write: %w", err)
	}
	return w.err
}

// Flush writes buffered entries out.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.w.Flush(); err != nil {
		w.err = fmt.Errorf("history: flush: %w", err)
	}
	return w.err
}

// WriteHistory writes all of h to w.
func WriteHistory(w io.Writer, h History) error {
	hw := NewWriter(w)
	for i := range h {
		if err := hw.Write(&h[i]); err != nil {
			return err
		}
	}
	return hw.Flush()
}

// ParseError names the line (1-based) and, when known, the field of a bad
// history line.
type ParseError struct {
	Name  string // file name, if known
	Line  int
	Field string
	Err   error
}

func (e *ParseError) Error() string {
	where := fmt.Sprintf("line %d", e.Line)
	if e.Name != "" {
		where = e.Name + ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("history %s: field %q: %v", where, e.Field, e.Err)
	}
	return fmt.Sprintf("history %s: %v", where, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// maxLine bounds one history line (data is at most 1 MiB, escaped up to 6×).
const maxLine = 8 << 20

// readLines calls each with every line of r that is not blank (numbered from
// 1, trimmed), stopping at its first error; a line r cannot give (too long,
// a read error) is reported through readErr with the number it would have.
func readLines(r io.Reader, each func(line int, b []byte) error, readErr func(line int, err error) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 {
			if err := each(line, b); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return readErr(line+1, err)
	}
	return nil
}

// ReadHistory reads a whole history strictly: unknown fields, missing
// required fields, misspelt names and impossible combinations are errors that
// name the line and the field. name is used in error messages only.
func ReadHistory(r io.Reader, name string) (History, error) {
	var h History
	err := readLines(r, func(line int, b []byte) error {
		e, field, err := parseEntry(b)
		if err != nil {
			return &ParseError{Name: name, Line: line, Field: field, Err: err}
		}
		h = append(h, e)
		return nil
	}, func(line int, err error) error { return &ParseError{Name: name, Line: line, Err: err} })
	if err != nil {
		return nil, err
	}
	if err := validateSeqs(h); err != nil {
		return nil, fmt.Errorf("history %s: %w", name, err)
	}
	return h, nil
}

// fieldsOf maps every JSON field an Entry may carry to its destination.
func fieldsOf(e *Entry) map[string]any {
	return map[string]any{
		"kind": &e.Kind, "client": &e.Client, "session": &e.Session, "seq": &e.Seq,
		"call": &e.Call, "return": &e.Return, "op": &e.Op, "path": &e.Path, "data": &e.Data,
		"version": &e.Version, "mode": &e.Mode, "ttl": &e.TTL, "watch": &e.Watch,
		"watchMode": &e.WatchMode, "ops": &e.Ops, "err": &e.Err, "zxid": &e.Zxid,
		"created": &e.Created, "stat": &e.Stat, "children": &e.Children, "results": &e.Results,
		"at": &e.At, "type": &e.Type, "timeout": &e.Timeout, "server": &e.Server, "term": &e.Term,
	}
}

// fields allowed per kind, beyond kind/client/session/seq.
var (
	opFields    = set("call", "return", "op", "path", "data", "version", "mode", "ttl", "watch", "watchMode", "ops", "err", "zxid", "created", "stat", "children", "results")
	eventFields = set("at", "type", "path", "timeout", "server", "term")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// parseEntry decodes one line. The fast path decodes straight into an Entry;
// whenever it has any doubt (a decoding error, a required key it cannot see,
// a key that does not belong to the kind) the slow path decodes field by
// field, which names the offending field.
func parseEntry(b []byte) (Entry, string, error) {
	var e Entry
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if d.Decode(&e) != nil || d.More() || !keysAsExpected(b, e.Kind) {
		return parseEntrySlow(b)
	}
	var field string
	var err error
	if e.Kind == KindEvent {
		field, err = validateEvent(&e)
	} else {
		field, err = validateOp(&e)
	}
	return e, field, err
}

// Top-level keys that never appear inside nested objects, so that finding
// `"key":` in a line (a JSON string cannot hold an unescaped quote) proves
// the key is there.
var (
	requiredKeys = map[string][]string{
		KindOp:    {"client", "session", "seq", "call", "op"},
		KindEvent: {"client", "session", "seq", "at"},
	}
	foreignKeys = map[string][]string{
		KindOp:    {"at", "type", "timeout", "server", "term"},
		KindEvent: {"call", "return", "op", "xid", "ops", "results", "err", "zxid", "stat", "mode", "watch", "watchMode", "created", "children", "data", "version", "ttl"},
	}
)

func keysAsExpected(b []byte, kind string) bool {
	req, ok := requiredKeys[kind]
	if !ok {
		return false
	}
	for _, k := range req {
		if !bytes.Contains(b, []byte(`"`+k+`":`)) {
			return false
		}
	}
	for _, k := range foreignKeys[kind] {
		if bytes.Contains(b, []byte(`"`+k+`"`)) {
			return false
		}
	}
	return true
}

func parseEntrySlow(b []byte) (Entry, string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Entry{}, "", fmt.Errorf("not a JSON object: %w", err)
	}
	var e Entry
	dst := fieldsOf(&e)
	for _, name := range sortedKeys(raw) {
		p, ok := dst[name]
		if !ok {
			return e, name, fmt.Errorf("unknown field")
		}
		if err := strictUnmarshal(raw[name], p); err != nil {
			return e, name, err
		}
	}
	for _, req := range []string{"kind", "client", "session", "seq"} {
		if _, ok := raw[req]; !ok {
			return e, req, fmt.Errorf("missing")
		}
	}
	var allowed map[string]bool
	switch e.Kind {
	case KindOp:
		allowed = opFields
	case KindEvent:
		allowed = eventFields
	default:
		return e, "kind", fmt.Errorf("want %q or %q, got %q", KindOp, KindEvent, e.Kind)
	}
	for name := range raw {
		if name != "kind" && name != "client" && name != "session" && name != "seq" && !allowed[name] {
			return e, name, fmt.Errorf("not a field of a %q entry", e.Kind)
		}
	}
	if e.Kind == KindEvent {
		if _, ok := raw["at"]; !ok {
			return e, "at", fmt.Errorf("missing")
		}
		field, err := validateEvent(&e)
		return e, field, err
	}
	for _, req := range []string{"call", "op"} {
		if _, ok := raw[req]; !ok {
			return e, req, fmt.Errorf("missing")
		}
	}
	field, err := validateOp(&e)
	return e, field, err
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func strictUnmarshal(b []byte, p any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(p); err != nil {
		return err
	}
	return nil
}

var (
	eventTypeNames = set(
		wire.EventNone.String(), wire.EventNodeCreated.String(), wire.EventNodeDeleted.String(),
		wire.EventNodeDataChanged.String(), wire.EventNodeChildrenChanged.String(),
		wire.EventDataWatchRemoved.String(), wire.EventChildWatchRemoved.String(),
		wire.EventPersistentWatchRemoved.String())
	modeNames  = map[string]wire.CreateMode{}
	watchModes = set(wire.AddWatchPersistent.String(), wire.AddWatchPersistentRecursive.String(),
		wire.WatcherChildren.String(), wire.WatcherData.String(), wire.WatcherAny.String())
)

func init() {
	for m := wire.ModePersistent; m.Valid(); m++ {
		modeNames[m.String()] = m
	}
}

func validateEvent(e *Entry) (string, error) {
	if !eventTypeNames[e.Type] && !e.IsStateEvent() {
		return "type", fmt.Errorf("%q is neither a watch event type nor a session state", e.Type)
	}
	if !e.IsStateEvent() && e.Path == "" {
		return "path", fmt.Errorf("a watch event needs a path")
	}
	if e.Server != "" && e.Type != StateSyncConnected && e.Type != StateExpired {
		return "server", fmt.Errorf("only a SyncConnected or Expired event names its server")
	}
	if e.Term != "" && e.Type != StateSyncConnected && e.Type != StateExpired {
		return "term", fmt.Errorf("only a SyncConnected or Expired event names its term")
	}
	return "", nil
}

func validateErr(name string) error {
	if _, ok := wire.ParseErrCode(name); !ok {
		return fmt.Errorf("%q is not a ZooKeeper error name (\"ok\", \"NoNode\", …)", name)
	}
	return nil
}

func validateOp(e *Entry) (string, error) {
	if !knownOps[e.Op] {
		return "op", fmt.Errorf("unknown operation %q", e.Op)
	}
	if e.Return != nil && *e.Return < e.Call {
		return "return", fmt.Errorf("return %d is before call %d", *e.Return, e.Call)
	}
	// A recorder may write a request lost with its connection as
	// ConnectionLoss (or OperationTimeout) without a return time: it is an
	// operation of unknown outcome like one that never returned.
	if e.Return == nil && (e.Zxid != nil || (e.Err != "" && !lostWithConnection(e.Err))) {
		return "err", fmt.Errorf("an operation without a return has no result (but ConnectionLoss or OperationTimeout)")
	}
	if e.Return != nil && e.Err == "" {
		return "err", fmt.Errorf("missing on a returned operation")
	}
	if e.Return != nil && e.Zxid == nil && !lostWithConnection(e.Err) {
		return "zxid", fmt.Errorf("missing: a reply from the server carries its header's zxid")
	}
	if e.Err != "" {
		if err := validateErr(e.Err); err != nil {
			return "err", err
		}
	}
	if e.Op != OpClose && e.Op != OpMulti && e.Op != OpMultiRead && e.Op != OpSetWatches && e.Path == "" {
		return "path", fmt.Errorf("missing")
	}
	if e.Mode != "" {
		if _, ok := modeNames[e.Mode]; !ok {
			return "mode", fmt.Errorf("unknown create mode %q", e.Mode)
		}
	}
	if e.Op == OpCreate && e.Mode == "" {
		return "mode", fmt.Errorf("missing on create")
	}
	if e.WatchMode != "" && !watchModes[e.WatchMode] {
		return "watchMode", fmt.Errorf("unknown watch mode %q", e.WatchMode)
	}
	if (e.Op == OpSetData || e.Op == OpDelete || e.Op == OpCheck || e.Op == OpSetACL) && e.Version == nil {
		return "version", fmt.Errorf("missing on %s", e.Op)
	}
	if e.Op == OpSetData && e.Data == nil {
		return "data", fmt.Errorf("missing on setData")
	}
	allowedSubs, isMulti := subOpsOf[e.Op]
	if !isMulti {
		if len(e.Ops) > 0 || len(e.Results) > 0 {
			return "ops", fmt.Errorf("only multi and multiRead have sub-operations")
		}
		return "", nil
	}
	for i, s := range e.Ops {
		field := fmt.Sprintf("ops[%d]", i)
		if !allowedSubs[s.Op] {
			return field, fmt.Errorf("%q cannot appear inside %s", s.Op, e.Op)
		}
		if s.Path == "" {
			return field + ".path", fmt.Errorf("missing")
		}
		if s.Op == OpCreate {
			if _, ok := modeNames[s.Mode]; !ok {
				return field + ".mode", fmt.Errorf("unknown create mode %q", s.Mode)
			}
		}
		if (s.Op == OpSetData || s.Op == OpDelete || s.Op == OpCheck) && s.Version == nil {
			return field + ".version", fmt.Errorf("missing on %s", s.Op)
		}
		if s.Op == OpSetData && s.Data == nil {
			return field + ".data", fmt.Errorf("missing on setData")
		}
	}
	if e.Returned() && e.Err == ErrOK && len(e.Results) != len(e.Ops) {
		return "results", fmt.Errorf("%d results for %d operations", len(e.Results), len(e.Ops))
	}
	for i, r := range e.Results {
		if err := validateErr(r.Err); err != nil {
			return fmt.Sprintf("results[%d].err", i), err
		}
	}
	return "", nil
}

// Validate applies the reader's checks to a history built in memory (the
// simulator hands its histories to the checkers without a file); the error
// names the entry (0-based) and the field.
func (h History) Validate() error {
	for i := range h {
		e := &h[i]
		var field string
		var err error
		switch e.Kind {
		case KindOp:
			field, err = validateOp(e)
		case KindEvent:
			field, err = validateEvent(e)
		default:
			field, err = "kind", fmt.Errorf("want %q or %q, got %q", KindOp, KindEvent, e.Kind)
		}
		if err != nil {
			return fmt.Errorf("history entry %d: field %q: %w", i, field, err)
		}
	}
	return validateSeqs(h)
}

// validateSeqs demands that each client's seqs are distinct: the checkers
// order a client's replies and events by them.
func validateSeqs(h History) error {
	type key struct {
		client int
		seq    int64
	}
	seen := make(map[key]int, len(h))
	for i := range h {
		k := key{h[i].Client, h[i].Seq}
		if j, dup := seen[k]; dup {
			return fmt.Errorf("entries %d and %d (0-based, blank lines not counted) of client %d share seq %d", j, i, k.client, k.seq)
		}
		seen[k] = i
	}
	return nil
}
