package wire

import "fmt"

// OpCode is a request type (ZooDefs.OpCode), also used as the txn type.
type OpCode int32

// Opcodes as ZooKeeper 3.8 numbers them.
const (
	OpNotification         OpCode = 0
	OpCreate               OpCode = 1
	OpDelete               OpCode = 2
	OpExists               OpCode = 3
	OpGetData              OpCode = 4
	OpSetData              OpCode = 5
	OpGetACL               OpCode = 6
	OpSetACL               OpCode = 7
	OpGetChildren          OpCode = 8
	OpSync                 OpCode = 9
	OpPing                 OpCode = 11
	OpGetChildren2         OpCode = 12
	OpCheck                OpCode = 13
	OpMulti                OpCode = 14
	OpCreate2              OpCode = 15
	OpReconfig             OpCode = 16
	OpCheckWatches         OpCode = 17
	OpRemoveWatches        OpCode = 18
	OpCreateContainer      OpCode = 19
	OpDeleteContainer      OpCode = 20
	OpCreateTTL            OpCode = 21
	OpMultiRead            OpCode = 22
	OpAuth                 OpCode = 100
	OpSetWatches           OpCode = 101
	OpSASL                 OpCode = 102
	OpGetEphemerals        OpCode = 103
	OpGetAllChildrenNumber OpCode = 104
	OpSetWatches2          OpCode = 105
	OpAddWatch             OpCode = 106
	OpWhoAmI               OpCode = 107
	OpCreateSession        OpCode = -10
	OpCloseSession         OpCode = -11
	OpError                OpCode = -1
)

var opNames = map[OpCode]string{
	OpNotification: "notification", OpCreate: "create", OpDelete: "delete", OpExists: "exists",
	OpGetData: "getData", OpSetData: "setData", OpGetACL: "getACL", OpSetACL: "setACL",
	OpGetChildren: "getChildren", OpSync: "sync", OpPing: "ping", OpGetChildren2: "getChildren2",
	OpCheck: "check", OpMulti: "multi", OpCreate2: "create2", OpReconfig: "reconfig",
	OpCheckWatches: "checkWatches", OpRemoveWatches: "removeWatches",
	OpCreateContainer: "createContainer", OpDeleteContainer: "deleteContainer",
	OpCreateTTL: "createTTL", OpMultiRead: "multiRead", OpAuth: "auth", OpSetWatches: "setWatches",
	OpSASL: "sasl", OpGetEphemerals: "getEphemerals", OpGetAllChildrenNumber: "getAllChildrenNumber",
	OpSetWatches2: "setWatches2", OpAddWatch: "addWatch", OpWhoAmI: "whoAmI",
	OpCreateSession: "createSession", OpCloseSession: "closeSession", OpError: "error",
}

func (o OpCode) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("OpCode(%d)", int32(o))
}

// ParseOpCode returns the opcode whose String is s.
func ParseOpCode(s string) (OpCode, bool) {
	for o, n := range opNames {
		if n == s {
			return o, true
		}
	}
	return 0, false
}

// Known reports whether o is an opcode ZooKeeper 3.8 defines.
func (o OpCode) Known() bool { _, ok := opNames[o]; return ok }

// IsWrite reports whether a client request of type o becomes a txn (and
// takes a zxid, a failed one as an error txn), as opposed to a read
// answered from the applied tree.
func (o OpCode) IsWrite() bool {
	switch o {
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete, OpSetData, OpSetACL, OpCheck,
		OpMulti, OpCloseSession, OpDeleteContainer, OpReconfig:
		return true
	}
	return false
}

// ErrCode is a KeeperException.Code as carried in ReplyHeader.Err.
type ErrCode int32

// Error codes as ZooKeeper 3.8 numbers them.
const (
	ErrOK                       ErrCode = 0
	ErrSystemError              ErrCode = -1
	ErrRuntimeInconsistency     ErrCode = -2
	ErrDataInconsistency        ErrCode = -3
	ErrConnectionLoss           ErrCode = -4
	ErrMarshallingError         ErrCode = -5
	ErrUnimplemented            ErrCode = -6
	ErrOperationTimeout         ErrCode = -7
	ErrBadArguments             ErrCode = -8
	ErrUnknownSession           ErrCode = -12
	ErrNewConfigNoQuorum        ErrCode = -13
	ErrReconfigInProgress       ErrCode = -14
	ErrAPIError                 ErrCode = -100
	ErrNoNode                   ErrCode = -101
	ErrNoAuth                   ErrCode = -102
	ErrBadVersion               ErrCode = -103
	ErrNoChildrenForEphemerals  ErrCode = -108
	ErrNodeExists               ErrCode = -110
	ErrNotEmpty                 ErrCode = -111
	ErrSessionExpired           ErrCode = -112
	ErrInvalidCallback          ErrCode = -113
	ErrInvalidACL               ErrCode = -114
	ErrAuthFailed               ErrCode = -115
	ErrSessionMoved             ErrCode = -118
	ErrNotReadOnly              ErrCode = -119
	ErrEphemeralOnLocalSession  ErrCode = -120
	ErrNoWatcher                ErrCode = -121
	ErrRequestTimeout           ErrCode = -122
	ErrReconfigDisabled         ErrCode = -123
	ErrSessionClosedRequireSASL ErrCode = -124
	ErrQuotaExceeded            ErrCode = -125
	ErrThrottled                ErrCode = -127
)

var errNames = map[ErrCode]string{
	ErrOK: "ok", ErrSystemError: "SystemError", ErrRuntimeInconsistency: "RuntimeInconsistency",
	ErrDataInconsistency: "DataInconsistency", ErrConnectionLoss: "ConnectionLoss",
	ErrMarshallingError: "MarshallingError", ErrUnimplemented: "Unimplemented",
	ErrOperationTimeout: "OperationTimeout", ErrBadArguments: "BadArguments",
	ErrUnknownSession: "UnknownSession", ErrNewConfigNoQuorum: "NewConfigNoQuorum",
	ErrReconfigInProgress: "ReconfigInProgress", ErrAPIError: "APIError", ErrNoNode: "NoNode",
	ErrNoAuth: "NoAuth", ErrBadVersion: "BadVersion",
	ErrNoChildrenForEphemerals: "NoChildrenForEphemerals", ErrNodeExists: "NodeExists",
	ErrNotEmpty: "NotEmpty", ErrSessionExpired: "SessionExpired",
	ErrInvalidCallback: "InvalidCallback", ErrInvalidACL: "InvalidACL",
	ErrAuthFailed: "AuthFailed", ErrSessionMoved: "SessionMoved", ErrNotReadOnly: "NotReadOnly",
	ErrEphemeralOnLocalSession: "EphemeralOnLocalSession", ErrNoWatcher: "NoWatcher",
	ErrRequestTimeout: "RequestTimeout", ErrReconfigDisabled: "ReconfigDisabled",
	ErrSessionClosedRequireSASL: "SessionClosedRequireSaslAuth", ErrQuotaExceeded: "QuotaExceeded",
	ErrThrottled: "Throttled",
}

// String gives ZooKeeper's name for the code ("ok" for ErrOK), the spelling
// the history files use.
func (c ErrCode) String() string {
	if s, ok := errNames[c]; ok {
		return s
	}
	return fmt.Sprintf("ErrCode(%d)", int32(c))
}

// Error makes an ErrCode usable as a Go error.
func (c ErrCode) Error() string { return "zookeeper: " + c.String() }

// ParseErrCode returns the code whose String is s.
func ParseErrCode(s string) (ErrCode, bool) {
	for c, n := range errNames {
		if n == s {
			return c, true
		}
	}
	return 0, false
}

// EventType is a watch event type (Watcher.Event.EventType).
type EventType int32

// Watch event types.
const (
	EventNone                   EventType = -1
	EventNodeCreated            EventType = 1
	EventNodeDeleted            EventType = 2
	EventNodeDataChanged        EventType = 3
	EventNodeChildrenChanged    EventType = 4
	EventDataWatchRemoved       EventType = 5
	EventChildWatchRemoved      EventType = 6
	EventPersistentWatchRemoved EventType = 7
)

var eventNames = map[EventType]string{
	EventNone: "None", EventNodeCreated: "NodeCreated", EventNodeDeleted: "NodeDeleted",
	EventNodeDataChanged: "NodeDataChanged", EventNodeChildrenChanged: "NodeChildrenChanged",
	EventDataWatchRemoved: "DataWatchRemoved", EventChildWatchRemoved: "ChildWatchRemoved",
	EventPersistentWatchRemoved: "PersistentWatchRemoved",
}

func (t EventType) String() string {
	if s, ok := eventNames[t]; ok {
		return s
	}
	return fmt.Sprintf("EventType(%d)", int32(t))
}

// KeeperState is a client state carried in watch events (Watcher.Event.KeeperState).
type KeeperState int32

// Keeper states.
const (
	StateDisconnected      KeeperState = 0
	StateSyncConnected     KeeperState = 3
	StateAuthFailed        KeeperState = 4
	StateConnectedReadOnly KeeperState = 5
	StateSaslAuthenticated KeeperState = 6
	StateClosed            KeeperState = 7
	StateExpired           KeeperState = -112
)

var stateNames = map[KeeperState]string{
	StateDisconnected: "Disconnected", StateSyncConnected: "SyncConnected",
	StateAuthFailed: "AuthFailed", StateConnectedReadOnly: "ConnectedReadOnly",
	StateSaslAuthenticated: "SaslAuthenticated", StateClosed: "Closed", StateExpired: "Expired",
}

func (s KeeperState) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("KeeperState(%d)", int32(s))
}

// CreateMode is the flags field of a create request.
type CreateMode int32

// Create modes as numbered on the wire.
const (
	ModePersistent                  CreateMode = 0
	ModeEphemeral                   CreateMode = 1
	ModePersistentSequential        CreateMode = 2
	ModeEphemeralSequential         CreateMode = 3
	ModeContainer                   CreateMode = 4
	ModePersistentWithTTL           CreateMode = 5
	ModePersistentSequentialWithTTL CreateMode = 6
)

var modeNames = map[CreateMode]string{
	ModePersistent: "persistent", ModeEphemeral: "ephemeral",
	ModePersistentSequential: "persistent_sequential", ModeEphemeralSequential: "ephemeral_sequential",
	ModeContainer: "container", ModePersistentWithTTL: "persistent_with_ttl",
	ModePersistentSequentialWithTTL: "persistent_sequential_with_ttl",
}

// String gives the lower-case name the history format uses.
func (m CreateMode) String() string {
	if s, ok := modeNames[m]; ok {
		return s
	}
	return fmt.Sprintf("CreateMode(%d)", int32(m))
}

// Valid reports whether m is one of the seven modes.
func (m CreateMode) Valid() bool { return m >= ModePersistent && m <= ModePersistentSequentialWithTTL }

// Ephemeral reports whether nodes of this mode die with their session.
func (m CreateMode) Ephemeral() bool { return m == ModeEphemeral || m == ModeEphemeralSequential }

// Sequential reports whether the server appends a sequence suffix.
func (m CreateMode) Sequential() bool {
	return m == ModePersistentSequential || m == ModeEphemeralSequential || m == ModePersistentSequentialWithTTL
}

// TTL reports whether the mode carries a time to live.
func (m CreateMode) TTL() bool {
	return m == ModePersistentWithTTL || m == ModePersistentSequentialWithTTL
}

// Container reports whether the mode is a container.
func (m CreateMode) Container() bool { return m == ModeContainer }

// Permission bits of an ACL entry (ZooDefs.Perms).
const (
	PermRead   int32 = 1 << 0
	PermWrite  int32 = 1 << 1
	PermCreate int32 = 1 << 2
	PermDelete int32 = 1 << 3
	PermAdmin  int32 = 1 << 4
	PermAll    int32 = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// Xids with a fixed meaning. Clients do not all use them: go-zookeeper
// numbers auth and setWatches requests like any other, and the Java client
// builds setWatches with xid -8 but renumbers it on send (both captured), so
// a server tells requests apart by opcode and echoes whatever xid came.
const (
	XidNotification int32 = -1
	XidPing         int32 = -2
	XidAuth         int32 = -4
	XidSetWatches   int32 = -8
)

// AddWatchMode is the mode of an addWatch request.
type AddWatchMode int32

// addWatch modes.
const (
	AddWatchPersistent          AddWatchMode = 0
	AddWatchPersistentRecursive AddWatchMode = 1
)

func (m AddWatchMode) String() string {
	switch m {
	case AddWatchPersistent:
		return "PERSISTENT"
	case AddWatchPersistentRecursive:
		return "PERSISTENT_RECURSIVE"
	}
	return fmt.Sprintf("AddWatchMode(%d)", int32(m))
}

// WatcherType selects watches in checkWatches and removeWatches.
type WatcherType int32

// Watcher types.
const (
	WatcherChildren WatcherType = 1
	WatcherData     WatcherType = 2
	WatcherAny      WatcherType = 3
)

func (t WatcherType) String() string {
	switch t {
	case WatcherChildren:
		return "Children"
	case WatcherData:
		return "Data"
	case WatcherAny:
		return "Any"
	}
	return fmt.Sprintf("WatcherType(%d)", int32(t))
}

// DefaultMaxBuffer is ZooKeeper's default jute.maxbuffer: the largest request
// frame a server accepts.
const DefaultMaxBuffer = 0xfffff
