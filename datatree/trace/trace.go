package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/zabd/zabd/wire"
)

// Line is one reply received by one session, in the order the recorder saw
// the replies. Requests are issued one at a time, so the order of lines is the
// order in which the server applied them.
type Line struct {
	// Session names the client session ("A", "B", ...); its id is in the
	// Resp of the session's "connect" line. Session "server" marks a txn the
	// server issued itself (the container/TTL reaper's deleteContainer, a
	// session expiry), found in the log and placed before the first reply
	// that saw it.
	Session string `json:"session"`
	// Op is the wire opcode name (wire.OpCode.String), or "connect",
	// "addAuth", "ping" (a drain: the recorder pinged a session to collect
	// the notifications queued for it), "disconnect" (the recorder closed
	// the session's TCP connection without closing the session) or
	// "reconnect" (a new connection resuming the session: Resp.SessionID).
	Op  string   `json:"op"`
	Req *Request `json:"req,omitempty"`
	// Zxid is the reply header's zxid: for a write, the zxid of its txn
	// (failed writes take one too, as an error txn); for a read, the last
	// zxid the server had applied. Its txn's time is in the captured log.
	Zxid int64 `json:"zxid"`
	// Time is the txn's time (TxnHeader.time, ms since the epoch, from the
	// captured log) for lines whose zxid is a txn: writes, connects (their
	// createSession txn) and server lines.
	Time int64 `json:"time,omitempty"`
	// Err is the reply header's error code as wire.ErrCode.String spells it.
	Err  string    `json:"err"`
	Resp *Response `json:"resp,omitempty"`
	// Events are the notifications that arrived on this session's
	// connection after its previous reply and before this one.
	Events []Event `json:"events,omitempty"`
	// Batch, when not 0, numbers a pipeline: requests the session sent in
	// one write before reading any reply, so that the server prepared each
	// while the earlier ones were still pending. Their lines are
	// consecutive, in reply (= request) order.
	Batch int `json:"batch,omitempty"`
	// Note says what the line demonstrates, for a human reader.
	Note string `json:"note,omitempty"`
}

// Request holds the fields of a request; which ones matter depends on Op.
type Request struct {
	Path    string           `json:"path"`
	Data    *string          `json:"data,omitempty"`
	ACL     []wire.ACL       `json:"acl,omitempty"`
	Mode    *wire.CreateMode `json:"mode,omitempty"` // create flags
	TTL     int64            `json:"ttl,omitempty"`
	Version *int32           `json:"version,omitempty"`
	Watch   bool             `json:"watch,omitempty"`
	// AddWatchMode is addWatch's mode; WatcherType is removeWatches' and
	// checkWatches' type.
	AddWatchMode *wire.AddWatchMode `json:"addWatchMode,omitempty"`
	WatcherType  wire.WatcherType   `json:"watcherType,omitempty"`
	// Scheme and Auth are addAuth's.
	Scheme string `json:"scheme,omitempty"`
	Auth   string `json:"auth,omitempty"`
	// TimeOut is the session timeout a connect asks for.
	TimeOut int32 `json:"timeOut,omitempty"`
	// LastZxidSeen is what a reconnect reports in its ConnectRequest.
	LastZxidSeen int64 `json:"lastZxidSeen,omitempty"`
	// SetWatches is the body of setWatches and setWatches2.
	SetWatches *wire.SetWatchesRequest `json:"setWatches,omitempty"`
	// Ops are the sub-operations of multi and multiRead.
	Ops []SubOp `json:"ops,omitempty"`
}

// SubOp is one operation inside a multi or multiRead request.
type SubOp struct {
	Op  string  `json:"op"`
	Req Request `json:"req"`
}

// Response holds the decoded body of a reply; which fields are set depends
// on Op. Children are in the order the server sent them (ZooKeeper keeps
// children in a hash set, so the order carries no meaning).
type Response struct {
	Path     string            `json:"path,omitempty"`
	Data     *string           `json:"data,omitempty"`
	Stat     *wire.Stat        `json:"stat,omitempty"`
	Children []string          `json:"children,omitempty"`
	ACL      []wire.ACL        `json:"acl,omitempty"`
	Number   *int32            `json:"number,omitempty"` // getAllChildrenNumber
	Results  []SubResult       `json:"results,omitempty"`
	Identity []wire.ClientInfo `json:"identity,omitempty"` // whoAmI
	// SessionID and TimeOut come from a connect's ConnectResponse.
	SessionID int64 `json:"sessionId,omitempty"`
	TimeOut   int32 `json:"timeOut,omitempty"`
}

// SubResult is one result of a multi or multiRead reply: Op is the result
// header's type (wire.OpCode.String; "error" for a failed or aborted op) and
// Err its error code.
type SubResult struct {
	Op  string `json:"op"`
	Err string `json:"err"`
	Response
}

// Event is one watch notification.
type Event struct {
	Type  string `json:"type"`  // wire.EventType.String
	State string `json:"state"` // wire.KeeperState.String
	Path  string `json:"path"`
}

// Str returns a pointer to s, for the optional string fields.
func Str(s string) *string { return &s }

// DataString renders znode data as a trace holds it: nil for a null buffer.
func DataString(b []byte) *string {
	if b == nil {
		return nil
	}
	return Str(string(b))
}

// Int32 returns a pointer to v, for the optional version fields.
func Int32(v int32) *int32 { return &v }

// ReadFile reads a trace file: one Line per non-empty line.
func ReadFile(path string) ([]Line, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	defer f.Close()
	var lines []Line
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var l Line
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return lines, nil
}

// RespPath is the path of the reply, "" when there is none.
func (l *Line) RespPath() string {
	if l.Resp == nil {
		return ""
	}
	return l.Resp.Path
}

// RespChildren are the children of the reply, nil when there are none.
func (l *Line) RespChildren() []string {
	if l.Resp == nil {
		return nil
	}
	return l.Resp.Children
}
