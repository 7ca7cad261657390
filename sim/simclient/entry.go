package simclient

import (
	"time"

	"github.com/zabd/zabd/wire"
)

// Entry is one line of a client's history: a completed operation (Kind "op")
// or a received event (Kind "event"), in the order the client observed them.
// The simulator turns entries into the linearizability package's history
// records.
type Entry struct {
	Kind    string // "op" or "event"
	Client  int
	Session int64
	Seq     int           // the client's receive order of replies and events
	Call    time.Duration // op: when the request was handed to the connection
	Return  time.Duration // op: when the reply (or the loss) arrived; event: when received
	Op      Op            // the request; zero for events
	Xid     int32         // op: the request's xid
	Result  Result        // the reply; zero for events

	// Events: Type is the watch event type (EventNone for a session state
	// change, then State says which).
	Type    wire.EventType
	State   wire.KeeperState
	Path    string
	Timeout int32 // SyncConnected: the negotiated session timeout in ms
	// SyncConnected and Expired: the connection it came on (Conn, from the
	// client); the server at its other end and the term it answered the
	// connection in (Server, Term: filled in by the simulator).
	Conn   ConnID
	Server int64
	Term   string
}

// Op is an operation as the client issued it.
type Op struct {
	Name    string // the history's op name: create, delete, setData, getData, …
	Code    wire.OpCode
	Path    string
	Data    string
	Version int32
	Mode    wire.CreateMode // create
	TTL     int64           // create with a TTL mode
	Watch   bool            // reads that set a watch
	AddMode wire.AddWatchMode
	WType   wire.WatcherType // removeWatches
	Sub     []Op             // multi, multiRead
}

// Result is what the server answered.
type Result struct {
	Err      wire.ErrCode
	Zxid     int64
	Created  string // create: the path the server made
	Data     string // getData
	HasStat  bool
	Stat     wire.Stat
	Children []string // getChildren, getEphemerals
	Sub      []Result // multi, multiRead: one per sub-op
	Unknown  bool     // no reply: the connection was lost first
}
