package wire

import (
	"encoding/binary"
	"fmt"
)

// Empty is the body of requests and replies that carry nothing after their
// header: ping, closeSession and whoAmI requests; delete, checkWatches,
// removeWatches, setWatches, auth, ping and closeSession replies.
type Empty struct{}

func (*Empty) Encode(*Encoder) {}
func (*Empty) Decode(*Decoder) {}

// RawPathRequest is the body of deleteContainer, which ZooKeeper's container
// reaper builds inside the server: the path's UTF-8 bytes with no length
// prefix, filling the rest of the request. No client sends it on purpose.
type RawPathRequest struct{ Path string }

func (r *RawPathRequest) Encode(e *Encoder) { e.WriteRaw([]byte(r.Path)) }
func (r *RawPathRequest) Decode(d *Decoder) {
	r.Path = string(d.take(d.Remaining(), "raw path"))
}

// UnknownOpError says that a request or reply of an opcode has no body
// format in ZooKeeper 3.8's client protocol; a server answers such a request
// with Unimplemented and closes the connection.
type UnknownOpError struct {
	Op   OpCode
	What string // "request" or "response"
}

func (e *UnknownOpError) Error() string {
	return fmt.Sprintf("wire: no %s body for opcode %s", e.What, e.Op)
}

// NewRequest returns an empty request body of the type a client sends after
// a RequestHeader of type op. Bodies that share a layout share a type; the
// returned value is configured for op (HasTTL for createTTL, Persistent for
// setWatches2), so decoding into it reads exactly what ZooKeeper reads.
func NewRequest(op OpCode) (Record, error) {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}, nil
	case OpCreateTTL:
		return &CreateRequest{HasTTL: true}, nil
	case OpDelete, OpCheck:
		return &PathVersionRequest{}, nil
	case OpDeleteContainer:
		return &RawPathRequest{}, nil
	case OpExists, OpGetData, OpGetChildren, OpGetChildren2:
		return &PathWatchRequest{}, nil
	case OpSetData:
		return &SetDataRequest{}, nil
	case OpGetACL, OpSync, OpGetAllChildrenNumber, OpGetEphemerals:
		return &PathRequest{}, nil
	case OpSetACL:
		return &SetACLRequest{}, nil
	case OpPing, OpCloseSession, OpWhoAmI:
		return &Empty{}, nil
	case OpMulti, OpMultiRead:
		return &MultiRequest{}, nil
	case OpReconfig:
		return &ReconfigRequest{}, nil
	case OpCheckWatches, OpRemoveWatches:
		return &PathTypeRequest{}, nil
	case OpAuth:
		return &AuthPacket{}, nil
	case OpSetWatches:
		return &SetWatchesRequest{}, nil
	case OpSetWatches2:
		return &SetWatchesRequest{Persistent: true}, nil
	case OpSASL:
		return &SASLRequest{}, nil
	case OpAddWatch:
		return &AddWatchRequest{}, nil
	}
	return nil, &UnknownOpError{Op: op, What: "request"}
}

// NewResponse returns an empty body of the type ZooKeeper 3.8 sends after a
// ReplyHeader with Err 0 answering a request of type op. A reply whose header
// carries an error has no body at all.
func NewResponse(op OpCode) (Record, error) {
	switch op {
	case OpCreate, OpSync:
		return &PathResponse{}, nil
	case OpCreate2, OpCreateContainer, OpCreateTTL:
		return &Create2Response{}, nil
	case OpExists, OpSetData, OpSetACL, OpCheck:
		return &StatResponse{}, nil
	case OpGetData, OpReconfig:
		return &GetDataResponse{}, nil
	case OpGetACL:
		return &GetACLResponse{}, nil
	case OpGetChildren, OpGetEphemerals:
		return &StringsResponse{}, nil
	case OpGetChildren2:
		return &GetChildren2Response{}, nil
	case OpGetAllChildrenNumber:
		return &IntResponse{}, nil
	case OpMulti, OpMultiRead:
		return &MultiResponse{}, nil
	case OpAddWatch:
		// ZooKeeper answers addWatch with an ErrorResponse holding 0.
		return &ErrorResponse{}, nil
	case OpWhoAmI:
		return &WhoAmIResponse{}, nil
	case OpSASL:
		return &SASLRequest{}, nil
	case OpDelete, OpDeleteContainer, OpPing, OpCloseSession, OpCheckWatches,
		OpRemoveWatches, OpSetWatches, OpSetWatches2, OpAuth:
		return &Empty{}, nil
	}
	return nil, &UnknownOpError{Op: op, What: "response"}
}

// DecodeRequest decodes the body of a request of type op from b, the rest of
// the frame after its RequestHeader. Like ZooKeeper it ignores bytes after the
// body. A null path where ZooKeeper 3.8 cannot take one is a *NullPathError.
func DecodeRequest(op OpCode, b []byte) (Record, error) {
	body, err := NewRequest(op)
	if err != nil {
		return nil, err
	}
	if nullPathFails[op] && startsWithNullString(b) {
		return body, &NullPathError{Op: op}
	}
	return body, decodeBody(body, b, op, "request")
}

// nullPathFails lists the requests whose body starts with a path that
// ZooKeeper 3.8 answers with MarshallingError when the path is jute's null
// string (its request processors dereference the path; the failure is
// answered as a marshalling error). The others (setData, setACL, sync,
// getEphemerals, removeWatches, addWatch, createTTL, deleteContainer) read
// it as ZooKeeper does, as the empty path. A null path inside a multi or
// multiRead decodes, marked on its op (MultiOp.NullPath): what it fails
// depends on the other ops (datatree.FailsBeforeTxn). Checked against
// ZooKeeper 3.8.0 by the server's differential test
// (TestDifferentialKnownCases).
var nullPathFails = map[OpCode]bool{
	OpCreate: true, OpCreate2: true, OpCreateContainer: true, OpDelete: true,
	OpGetData: true, OpExists: true, OpGetChildren: true, OpGetChildren2: true,
	OpGetACL: true, OpGetAllChildrenNumber: true, OpCheckWatches: true,
}

// startsWithNullString reports whether b begins with jute's null string
// (length -1): how a body whose first field is its path carries a null
// path, alone or as an op of a multi (see MultiOp.NullPath).
func startsWithNullString(b []byte) bool {
	return len(b) >= 4 && int32(binary.BigEndian.Uint32(b)) == -1
}

// NullPathError is a request whose path is jute's null string where
// ZooKeeper 3.8 fails on one: answered with MarshallingError, a write
// still taking a zxid (an error txn), as ZooKeeper's does.
type NullPathError struct{ Op OpCode }

func (e *NullPathError) Error() string {
	return fmt.Sprintf("wire: %s request with a null path", e.Op)
}

// DecodeResponse decodes the body of a successful reply to a request of type
// op from b, the rest of the frame after its ReplyHeader.
func DecodeResponse(op OpCode, b []byte) (Record, error) {
	body, err := NewResponse(op)
	if err != nil {
		return nil, err
	}
	return body, decodeBody(body, b, op, "response")
}

func decodeBody(body Record, b []byte, op OpCode, what string) error {
	d := NewDecoder(b)
	body.Decode(d)
	if err := d.Err(); err != nil {
		return fmt.Errorf("wire: %s %s: %w", op, what, err)
	}
	return nil
}
