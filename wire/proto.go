package wire

// This file holds the records of ZooKeeper 3.8's client protocol
// (org.apache.zookeeper.proto), field for field in jute order.

// ConnectRequest opens or resumes a session. ReadOnly is an optional trailing
// byte that 3.4+ clients send; HasReadOnly says whether it was present.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

func (r *ConnectRequest) Encode(e *Encoder) {
	e.WriteInt(r.ProtocolVersion)
	e.WriteLong(r.LastZxidSeen)
	e.WriteInt(r.TimeOut)
	e.WriteLong(r.SessionID)
	e.WriteBuffer(r.Passwd)
	if r.HasReadOnly {
		e.WriteBool(r.ReadOnly)
	}
}

func (r *ConnectRequest) Decode(d *Decoder) {
	r.ProtocolVersion = d.ReadInt()
	r.LastZxidSeen = d.ReadLong()
	r.TimeOut = d.ReadInt()
	r.SessionID = d.ReadLong()
	r.Passwd = d.ReadBuffer()
	r.HasReadOnly = d.Err() == nil && d.Remaining() > 0
	if r.HasReadOnly {
		r.ReadOnly = d.ReadBool()
	}
}

// ConnectResponse answers a ConnectRequest; TimeOut 0 means the session is
// invalid (expired or wrong password).
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

func (r *ConnectResponse) Encode(e *Encoder) {
	e.WriteInt(r.ProtocolVersion)
	e.WriteInt(r.TimeOut)
	e.WriteLong(r.SessionID)
	e.WriteBuffer(r.Passwd)
	if r.HasReadOnly {
		e.WriteBool(r.ReadOnly)
	}
}

func (r *ConnectResponse) Decode(d *Decoder) {
	r.ProtocolVersion = d.ReadInt()
	r.TimeOut = d.ReadInt()
	r.SessionID = d.ReadLong()
	r.Passwd = d.ReadBuffer()
	r.HasReadOnly = d.Err() == nil && d.Remaining() > 0
	if r.HasReadOnly {
		r.ReadOnly = d.ReadBool()
	}
}

// RequestHeader precedes every request after the connect.
type RequestHeader struct {
	Xid  int32
	Type OpCode
}

func (r *RequestHeader) Encode(e *Encoder) { e.WriteInt(r.Xid); e.WriteInt(int32(r.Type)) }
func (r *RequestHeader) Decode(d *Decoder) { r.Xid = d.ReadInt(); r.Type = OpCode(d.ReadInt()) }

// ReplyHeader precedes every reply and notification.
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  ErrCode
}

func (r *ReplyHeader) Encode(e *Encoder) {
	e.WriteInt(r.Xid)
	e.WriteLong(r.Zxid)
	e.WriteInt(int32(r.Err))
}
func (r *ReplyHeader) Decode(d *Decoder) {
	r.Xid = d.ReadInt()
	r.Zxid = d.ReadLong()
	r.Err = ErrCode(d.ReadInt())
}

// MultiHeader precedes each op of a multi request and each result of its
// response; Done marks the end (type -1, err -1).
type MultiHeader struct {
	Type OpCode
	Done bool
	Err  ErrCode
}

func (r *MultiHeader) Encode(e *Encoder) {
	e.WriteInt(int32(r.Type))
	e.WriteBool(r.Done)
	e.WriteInt(int32(r.Err))
}
func (r *MultiHeader) Decode(d *Decoder) {
	r.Type = OpCode(d.ReadInt())
	r.Done = d.ReadBool()
	r.Err = ErrCode(d.ReadInt())
}

// AuthPacket is the body of an auth request (xid -4 from the Java client).
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

func (r *AuthPacket) Encode(e *Encoder) {
	e.WriteInt(r.Type)
	e.WriteString(r.Scheme)
	e.WriteBuffer(r.Auth)
}
func (r *AuthPacket) Decode(d *Decoder) {
	r.Type = d.ReadInt()
	r.Scheme = d.ReadString()
	r.Auth = d.ReadBuffer()
}

// PathRequest is the body shared by every request that names only a path:
// getACL, sync, getAllChildrenNumber, getEphemerals (whose path is a prefix).
type PathRequest struct{ Path string }

func (r *PathRequest) Encode(e *Encoder) { e.WriteString(r.Path) }
func (r *PathRequest) Decode(d *Decoder) { r.Path = d.ReadString() }

// PathWatchRequest is the body of exists, getData, getChildren and getChildren2.
type PathWatchRequest struct {
	Path  string
	Watch bool
}

func (r *PathWatchRequest) Encode(e *Encoder) { e.WriteString(r.Path); e.WriteBool(r.Watch) }
func (r *PathWatchRequest) Decode(d *Decoder) { r.Path = d.ReadString(); r.Watch = d.ReadBool() }

// PathVersionRequest is the body of delete and check.
type PathVersionRequest struct {
	Path    string
	Version int32
}

func (r *PathVersionRequest) Encode(e *Encoder) { e.WriteString(r.Path); e.WriteInt(r.Version) }
func (r *PathVersionRequest) Decode(d *Decoder) { r.Path = d.ReadString(); r.Version = d.ReadInt() }

// SetDataRequest replaces a node's data if Version matches (-1 matches any).
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32
}

func (r *SetDataRequest) Encode(e *Encoder) {
	e.WriteString(r.Path)
	e.WriteBuffer(r.Data)
	e.WriteInt(r.Version)
}
func (r *SetDataRequest) Decode(d *Decoder) {
	r.Path = d.ReadString()
	r.Data = d.ReadBuffer()
	r.Version = d.ReadInt()
}

// CreateRequest is the body of create, create2 and createContainer; for
// createTTL the TTL field follows (HasTTL).
type CreateRequest struct {
	Path   string
	Data   []byte
	ACL    []ACL
	Flags  CreateMode
	TTL    int64
	HasTTL bool
}

func (r *CreateRequest) Encode(e *Encoder) {
	e.WriteString(r.Path)
	e.WriteBuffer(r.Data)
	e.WriteACLs(r.ACL)
	e.WriteInt(int32(r.Flags))
	if r.HasTTL {
		e.WriteLong(r.TTL)
	}
}

func (r *CreateRequest) Decode(d *Decoder) {
	r.Path = d.ReadString()
	r.Data = d.ReadBuffer()
	r.ACL = d.ReadACLs()
	r.Flags = CreateMode(d.ReadInt())
	if r.HasTTL {
		r.TTL = d.ReadLong()
	}
}

// SetACLRequest replaces a node's ACL if Version matches its aversion.
type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32
}

func (r *SetACLRequest) Encode(e *Encoder) {
	e.WriteString(r.Path)
	e.WriteACLs(r.ACL)
	e.WriteInt(r.Version)
}
func (r *SetACLRequest) Decode(d *Decoder) {
	r.Path = d.ReadString()
	r.ACL = d.ReadACLs()
	r.Version = d.ReadInt()
}

// ReconfigRequest asks for a membership change. ZooKeeper tells a null
// string from an empty one here: newMembers null means an incremental change
// (joining/leaving), and clients send null for the lists they leave out, so
// the *Null fields say which strings were jute's null on the wire.
type ReconfigRequest struct {
	JoiningServers string
	LeavingServers string
	NewMembers     string
	CurConfigID    int64

	JoiningNull    bool
	LeavingNull    bool
	NewMembersNull bool
}

func (r *ReconfigRequest) Encode(e *Encoder) {
	e.WriteNullableString(r.JoiningServers, r.JoiningNull)
	e.WriteNullableString(r.LeavingServers, r.LeavingNull)
	e.WriteNullableString(r.NewMembers, r.NewMembersNull)
	e.WriteLong(r.CurConfigID)
}

func (r *ReconfigRequest) Decode(d *Decoder) {
	r.JoiningServers, r.JoiningNull = d.ReadNullableString()
	r.LeavingServers, r.LeavingNull = d.ReadNullableString()
	r.NewMembers, r.NewMembersNull = d.ReadNullableString()
	r.CurConfigID = d.ReadLong()
}

// PathTypeRequest is the body of checkWatches and removeWatches.
type PathTypeRequest struct {
	Path string
	Type WatcherType
}

func (r *PathTypeRequest) Encode(e *Encoder) { e.WriteString(r.Path); e.WriteInt(int32(r.Type)) }
func (r *PathTypeRequest) Decode(d *Decoder) {
	r.Path = d.ReadString()
	r.Type = WatcherType(d.ReadInt())
}

// AddWatchRequest adds a persistent or persistent-recursive watch.
type AddWatchRequest struct {
	Path string
	Mode AddWatchMode
}

func (r *AddWatchRequest) Encode(e *Encoder) { e.WriteString(r.Path); e.WriteInt(int32(r.Mode)) }
func (r *AddWatchRequest) Decode(d *Decoder) {
	r.Path = d.ReadString()
	r.Mode = AddWatchMode(d.ReadInt())
}

// SetWatchesRequest re-registers a reconnecting client's watches (setWatches,
// see XidSetWatches); with Persistent set it is setWatches2 and carries the
// persistent lists.
type SetWatchesRequest struct {
	RelativeZxid               int64
	DataWatches                []string
	ExistWatches               []string
	ChildWatches               []string
	PersistentWatches          []string
	PersistentRecursiveWatches []string
	Persistent                 bool
}

func (r *SetWatchesRequest) Encode(e *Encoder) {
	e.WriteLong(r.RelativeZxid)
	e.WriteStrings(r.DataWatches)
	e.WriteStrings(r.ExistWatches)
	e.WriteStrings(r.ChildWatches)
	if r.Persistent {
		e.WriteStrings(r.PersistentWatches)
		e.WriteStrings(r.PersistentRecursiveWatches)
	}
}

func (r *SetWatchesRequest) Decode(d *Decoder) {
	r.RelativeZxid = d.ReadLong()
	r.DataWatches = d.ReadStrings()
	r.ExistWatches = d.ReadStrings()
	r.ChildWatches = d.ReadStrings()
	if r.Persistent {
		r.PersistentWatches = d.ReadStrings()
		r.PersistentRecursiveWatches = d.ReadStrings()
	}
}

// SASLRequest carries a SASL token (sasl request and response alike).
type SASLRequest struct{ Token []byte }

func (r *SASLRequest) Encode(e *Encoder) { e.WriteBuffer(r.Token) }
func (r *SASLRequest) Decode(d *Decoder) { r.Token = d.ReadBuffer() }

// WatcherEvent is the body of a notification (xid -1).
type WatcherEvent struct {
	Type  EventType
	State KeeperState
	Path  string
}

func (r *WatcherEvent) Encode(e *Encoder) {
	e.WriteInt(int32(r.Type))
	e.WriteInt(int32(r.State))
	e.WriteString(r.Path)
}
func (r *WatcherEvent) Decode(d *Decoder) {
	r.Type = EventType(d.ReadInt())
	r.State = KeeperState(d.ReadInt())
	r.Path = d.ReadString()
}

// ErrorResponse is a failed op's result inside a multi response (and, with
// Err 0, ZooKeeper's whole answer to addWatch).
type ErrorResponse struct{ Err ErrCode }

func (r *ErrorResponse) Encode(e *Encoder) { e.WriteInt(int32(r.Err)) }
func (r *ErrorResponse) Decode(d *Decoder) { r.Err = ErrCode(d.ReadInt()) }

// PathResponse answers create and sync.
type PathResponse struct{ Path string }

func (r *PathResponse) Encode(e *Encoder) { e.WriteString(r.Path) }
func (r *PathResponse) Decode(d *Decoder) { r.Path = d.ReadString() }

// Create2Response answers create2, createContainer and createTTL.
type Create2Response struct {
	Path string
	Stat Stat
}

func (r *Create2Response) Encode(e *Encoder) { e.WriteString(r.Path); r.Stat.Encode(e) }
func (r *Create2Response) Decode(d *Decoder) { r.Path = d.ReadString(); r.Stat.Decode(d) }

// StatResponse answers exists, setData, setACL and check.
type StatResponse struct{ Stat Stat }

func (r *StatResponse) Encode(e *Encoder) { r.Stat.Encode(e) }
func (r *StatResponse) Decode(d *Decoder) { r.Stat.Decode(d) }

// GetDataResponse answers getData, and reconfig with the new config as data.
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

func (r *GetDataResponse) Encode(e *Encoder) { e.WriteBuffer(r.Data); r.Stat.Encode(e) }
func (r *GetDataResponse) Decode(d *Decoder) { r.Data = d.ReadBuffer(); r.Stat.Decode(d) }

// StringsResponse answers getChildren and getEphemerals.
type StringsResponse struct{ Strings []string }

func (r *StringsResponse) Encode(e *Encoder) { e.WriteStrings(r.Strings) }
func (r *StringsResponse) Decode(d *Decoder) { r.Strings = d.ReadStrings() }

// GetChildren2Response answers getChildren2.
type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

func (r *GetChildren2Response) Encode(e *Encoder) { e.WriteStrings(r.Children); r.Stat.Encode(e) }
func (r *GetChildren2Response) Decode(d *Decoder) { r.Children = d.ReadStrings(); r.Stat.Decode(d) }

// GetACLResponse answers getACL.
type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

func (r *GetACLResponse) Encode(e *Encoder) { e.WriteACLs(r.ACL); r.Stat.Encode(e) }
func (r *GetACLResponse) Decode(d *Decoder) { r.ACL = d.ReadACLs(); r.Stat.Decode(d) }

// IntResponse answers getAllChildrenNumber.
type IntResponse struct{ Value int32 }

func (r *IntResponse) Encode(e *Encoder) { e.WriteInt(r.Value) }
func (r *IntResponse) Decode(d *Decoder) { r.Value = d.ReadInt() }

// WhoAmIResponse answers whoAmI.
type WhoAmIResponse struct{ ClientInfo []ClientInfo }

func (r *WhoAmIResponse) Encode(e *Encoder) {
	e.WriteVectorLen(len(r.ClientInfo), r.ClientInfo == nil)
	for i := range r.ClientInfo {
		r.ClientInfo[i].Encode(e)
	}
}

func (r *WhoAmIResponse) Decode(d *Decoder) {
	r.ClientInfo = readVector(d, 8, func() (c ClientInfo) { c.Decode(d); return c })
}
