package wire

import "fmt"

// TxnHeader precedes every txn in the log and in proposals.
type TxnHeader struct {
	ClientID int64 // session id
	Cxid     int32
	Zxid     int64
	Time     int64 // wall-clock milliseconds at the leader
	Type     OpCode
}

func (r *TxnHeader) Encode(e *Encoder) {
	e.WriteLong(r.ClientID)
	e.WriteInt(r.Cxid)
	e.WriteLong(r.Zxid)
	e.WriteLong(r.Time)
	e.WriteInt(int32(r.Type))
}

func (r *TxnHeader) Decode(d *Decoder) {
	r.ClientID = d.ReadLong()
	r.Cxid = d.ReadInt()
	r.Zxid = d.ReadLong()
	r.Time = d.ReadLong()
	r.Type = OpCode(d.ReadInt())
}

// TxnDigest is the tree digest ZooKeeper appends to a logged txn.
type TxnDigest struct {
	Version    int32
	TreeDigest int64
}

func (r *TxnDigest) Encode(e *Encoder) { e.WriteInt(r.Version); e.WriteLong(r.TreeDigest) }
func (r *TxnDigest) Decode(d *Decoder) { r.Version = d.ReadInt(); r.TreeDigest = d.ReadLong() }

// CreateTxn creates a persistent, ephemeral or sequential node (txn types
// create and create2 share it).
type CreateTxn struct {
	Path           string
	Data           []byte
	ACL            []ACL
	Ephemeral      bool
	ParentCVersion int32
}

func (r *CreateTxn) Encode(e *Encoder) {
	e.WriteString(r.Path)
	e.WriteBuffer(r.Data)
	e.WriteACLs(r.ACL)
	e.WriteBool(r.Ephemeral)
	e.WriteInt(r.ParentCVersion)
}

func (r *CreateTxn) Decode(d *Decoder) {
	r.Path = d.ReadString()
	r.Data = d.ReadBuffer()
	r.ACL = d.ReadACLs()
	r.Ephemeral = d.ReadBool()
	r.ParentCVersion = d.ReadInt()
}

// CreateTTLTxn creates a TTL node.
type CreateTTLTxn struct {
	Path           string
	Data           []byte
	ACL            []ACL
	ParentCVersion int32
	TTL            int64
}

func (r *CreateTTLTxn) Encode(e *Encoder) {
	e.WriteString(r.Path)
	e.WriteBuffer(r.Data)
	e.WriteACLs(r.ACL)
	e.WriteInt(r.ParentCVersion)
	e.WriteLong(r.TTL)
}

func (r *CreateTTLTxn) Decode(d *Decoder) {
	r.Path = d.ReadString()
	r.Data = d.ReadBuffer()
	r.ACL = d.ReadACLs()
	r.ParentCVersion = d.ReadInt()
	r.TTL = d.ReadLong()
}

// CreateContainerTxn creates a container node.
type CreateContainerTxn struct {
	Path           string
	Data           []byte
	ACL            []ACL
	ParentCVersion int32
}

func (r *CreateContainerTxn) Encode(e *Encoder) {
	e.WriteString(r.Path)
	e.WriteBuffer(r.Data)
	e.WriteACLs(r.ACL)
	e.WriteInt(r.ParentCVersion)
}

func (r *CreateContainerTxn) Decode(d *Decoder) {
	r.Path = d.ReadString()
	r.Data = d.ReadBuffer()
	r.ACL = d.ReadACLs()
	r.ParentCVersion = d.ReadInt()
}

// DeleteTxn deletes a node (txn types delete and deleteContainer).
type DeleteTxn struct{ Path string }

func (r *DeleteTxn) Encode(e *Encoder) { e.WriteString(r.Path) }
func (r *DeleteTxn) Decode(d *Decoder) { r.Path = d.ReadString() }

// SetDataTxn replaces a node's data; Version is the node's new version.
type SetDataTxn struct {
	Path    string
	Data    []byte
	Version int32
}

func (r *SetDataTxn) Encode(e *Encoder) {
	e.WriteString(r.Path)
	e.WriteBuffer(r.Data)
	e.WriteInt(r.Version)
}
func (r *SetDataTxn) Decode(d *Decoder) {
	r.Path = d.ReadString()
	r.Data = d.ReadBuffer()
	r.Version = d.ReadInt()
}

// CheckVersionTxn is a check inside a multi.
type CheckVersionTxn struct {
	Path    string
	Version int32
}

func (r *CheckVersionTxn) Encode(e *Encoder) { e.WriteString(r.Path); e.WriteInt(r.Version) }
func (r *CheckVersionTxn) Decode(d *Decoder) { r.Path = d.ReadString(); r.Version = d.ReadInt() }

// SetACLTxn replaces a node's ACL; Version is the node's new aversion.
type SetACLTxn struct {
	Path    string
	ACL     []ACL
	Version int32
}

func (r *SetACLTxn) Encode(e *Encoder) {
	e.WriteString(r.Path)
	e.WriteACLs(r.ACL)
	e.WriteInt(r.Version)
}
func (r *SetACLTxn) Decode(d *Decoder) {
	r.Path = d.ReadString()
	r.ACL = d.ReadACLs()
	r.Version = d.ReadInt()
}

// CreateSessionTxn opens a session with a negotiated timeout (ms).
type CreateSessionTxn struct{ TimeOut int32 }

func (r *CreateSessionTxn) Encode(e *Encoder) { e.WriteInt(r.TimeOut) }
func (r *CreateSessionTxn) Decode(d *Decoder) { r.TimeOut = d.ReadInt() }

// CloseSessionTxn closes a session and lists the ephemerals it deletes.
// ZooKeeper 3.8 writes the list; older logs have an empty body, which
// DecodeTxn accepts (Paths2Delete is then nil and the tree finds them itself).
type CloseSessionTxn struct{ Paths2Delete []string }

func (r *CloseSessionTxn) Encode(e *Encoder) { e.WriteStrings(r.Paths2Delete) }
func (r *CloseSessionTxn) Decode(d *Decoder) { r.Paths2Delete = d.ReadStrings() }

// ErrorTxn records a write that failed in preparation (and each failed op of a multi).
type ErrorTxn struct{ Err ErrCode }

func (r *ErrorTxn) Encode(e *Encoder) { e.WriteInt(int32(r.Err)) }
func (r *ErrorTxn) Decode(d *Decoder) { r.Err = ErrCode(d.ReadInt()) }

// Txn is one sub-txn of a MultiTxn: its type and its encoded body.
type Txn struct {
	Type OpCode
	Data []byte
}

func (r *Txn) Encode(e *Encoder) { e.WriteInt(int32(r.Type)); e.WriteBuffer(r.Data) }
func (r *Txn) Decode(d *Decoder) { r.Type = OpCode(d.ReadInt()); r.Data = d.ReadBuffer() }

// MultiTxn is the txn of a multi request.
type MultiTxn struct{ Txns []Txn }

func (r *MultiTxn) Encode(e *Encoder) {
	e.WriteVectorLen(len(r.Txns), r.Txns == nil)
	for i := range r.Txns {
		r.Txns[i].Encode(e)
	}
}

func (r *MultiTxn) Decode(d *Decoder) {
	r.Txns = readVector(d, 8, func() (t Txn) { t.Decode(d); return t })
}

// NewTxnBody returns an empty record of the body type that txns of type t
// carry, or nil when t has no txn body.
func NewTxnBody(t OpCode) Record {
	switch t {
	case OpCreate, OpCreate2:
		return &CreateTxn{}
	case OpCreateTTL:
		return &CreateTTLTxn{}
	case OpCreateContainer:
		return &CreateContainerTxn{}
	case OpDelete, OpDeleteContainer:
		return &DeleteTxn{}
	case OpSetData, OpReconfig:
		// A reconfig txn stores the new config as the data of /zookeeper/config.
		return &SetDataTxn{}
	case OpSetACL:
		return &SetACLTxn{}
	case OpCheck:
		return &CheckVersionTxn{}
	case OpCreateSession:
		return &CreateSessionTxn{}
	case OpCloseSession:
		return &CloseSessionTxn{}
	case OpError:
		return &ErrorTxn{}
	case OpMulti:
		return &MultiTxn{}
	}
	return nil
}

// DecodeTxnBody decodes the body of a txn of type t from d. A closeSession
// with no body (as ZooKeeper before 3.6 wrote it) decodes to an empty
// CloseSessionTxn.
func DecodeTxnBody(t OpCode, d *Decoder) (Record, error) {
	body := NewTxnBody(t)
	if body == nil {
		return nil, &DecodeError{Offset: d.Offset(), What: "txn", Err: fmt.Errorf("unknown txn type %d", int32(t))}
	}
	if t == OpCloseSession && d.Remaining() == 0 {
		return body, nil
	}
	body.Decode(d)
	return body, d.Err()
}
