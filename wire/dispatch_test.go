package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRequestByOpcode(t *testing.T) {
	want := map[OpCode]Record{
		OpCreate: &CreateRequest{}, OpCreate2: &CreateRequest{}, OpCreateContainer: &CreateRequest{},
		OpCreateTTL: &CreateRequest{HasTTL: true}, OpDelete: &PathVersionRequest{}, OpCheck: &PathVersionRequest{},
		OpDeleteContainer: &RawPathRequest{}, OpExists: &PathWatchRequest{}, OpGetData: &PathWatchRequest{},
		OpGetChildren: &PathWatchRequest{}, OpGetChildren2: &PathWatchRequest{}, OpSetData: &SetDataRequest{},
		OpGetACL: &PathRequest{}, OpSync: &PathRequest{}, OpGetAllChildrenNumber: &PathRequest{},
		OpGetEphemerals: &PathRequest{}, OpSetACL: &SetACLRequest{}, OpPing: &Empty{}, OpCloseSession: &Empty{},
		OpWhoAmI: &Empty{}, OpMulti: &MultiRequest{}, OpMultiRead: &MultiRequest{}, OpReconfig: &ReconfigRequest{},
		OpCheckWatches: &PathTypeRequest{}, OpRemoveWatches: &PathTypeRequest{}, OpAuth: &AuthPacket{},
		OpSetWatches: &SetWatchesRequest{}, OpSetWatches2: &SetWatchesRequest{Persistent: true},
		OpSASL: &SASLRequest{}, OpAddWatch: &AddWatchRequest{},
	}
	for op, w := range want {
		got, err := NewRequest(op)
		require.NoError(t, err, op)
		assert.Equal(t, w, got, op)
	}
	for _, op := range []OpCode{OpNotification, OpCreateSession, OpError, 10, 23, 99, 108, -3} {
		_, err := NewRequest(op)
		var ue *UnknownOpError
		require.ErrorAs(t, err, &ue, op)
		assert.Equal(t, op, ue.Op)
	}
}

func TestNewResponseByOpcode(t *testing.T) {
	want := map[OpCode]Record{
		OpCreate: &PathResponse{}, OpSync: &PathResponse{}, OpCreate2: &Create2Response{},
		OpCreateContainer: &Create2Response{}, OpCreateTTL: &Create2Response{}, OpExists: &StatResponse{},
		OpSetData: &StatResponse{}, OpSetACL: &StatResponse{}, OpCheck: &StatResponse{},
		OpGetData: &GetDataResponse{}, OpReconfig: &GetDataResponse{}, OpGetACL: &GetACLResponse{},
		OpGetChildren: &StringsResponse{}, OpGetEphemerals: &StringsResponse{},
		OpGetChildren2: &GetChildren2Response{}, OpGetAllChildrenNumber: &IntResponse{},
		OpMulti: &MultiResponse{}, OpMultiRead: &MultiResponse{}, OpAddWatch: &ErrorResponse{},
		OpWhoAmI: &WhoAmIResponse{}, OpSASL: &SASLRequest{}, OpDelete: &Empty{}, OpDeleteContainer: &Empty{},
		OpPing: &Empty{}, OpCloseSession: &Empty{}, OpCheckWatches: &Empty{}, OpRemoveWatches: &Empty{},
		OpSetWatches: &Empty{}, OpSetWatches2: &Empty{}, OpAuth: &Empty{},
	}
	for op, w := range want {
		got, err := NewResponse(op)
		require.NoError(t, err, op)
		assert.Equal(t, w, got, op)
	}
	_, err := NewResponse(OpCode(55))
	assert.EqualError(t, err, "wire: no response body for opcode OpCode(55)")
}

func TestDecodeRequestIgnoresTrailingBytes(t *testing.T) {
	b := append(Marshal(&PathWatchRequest{Path: "/x", Watch: true}), 9, 9)
	r, err := DecodeRequest(OpGetData, b)
	require.NoError(t, err)
	assert.Equal(t, &PathWatchRequest{Path: "/x", Watch: true}, r)

	// A setWatches2 body read as setWatches stops after the three lists.
	sw := &SetWatchesRequest{RelativeZxid: 5, DataWatches: []string{"/d"}, ExistWatches: []string{},
		ChildWatches: []string{}, PersistentWatches: []string{"/p"}, PersistentRecursiveWatches: []string{}, Persistent: true}
	r, err = DecodeRequest(OpSetWatches, Marshal(sw))
	require.NoError(t, err)
	assert.Equal(t, &SetWatchesRequest{RelativeZxid: 5, DataWatches: []string{"/d"}, ExistWatches: []string{},
		ChildWatches: []string{}}, r)
}

func TestDecodeRequestErrors(t *testing.T) {
	_, err := DecodeRequest(OpSetData, []byte{0, 0, 0, 5, 'a'})
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, ErrShort)
	assert.EqualError(t, err, "wire: setData request: jute: string length at offset 4: "+
		"length 5 exceeds the 1 bytes left: jute: input ends inside a record")
	_, err = DecodeResponse(OpGetData, nil)
	assert.Error(t, err, "empty getData response")
}

func TestMultiRejectsForeignTypes(t *testing.T) {
	// A getData op inside a multi is legal on the wire (multiRead uses the
	// same record); ping is not.
	var e Encoder
	(&MultiHeader{Type: OpPing, Err: -1}).Encode(&e)
	assert.Error(t, Unmarshal(e.Bytes(), &MultiRequest{}), "ping op in a multi")
	e.Reset()
	(&MultiHeader{Type: OpExists}).Encode(&e)
	assert.Error(t, Unmarshal(e.Bytes(), &MultiResponse{}), "exists result in a multi response")

	// The terminator is recognised by Done alone, as ZooKeeper does, and
	// re-encoded canonically.
	e.Reset()
	(&MultiHeader{Type: 77, Done: true, Err: 5}).Encode(&e)
	var m MultiRequest
	require.NoError(t, Unmarshal(e.Bytes(), &m))
	assert.Nil(t, m.Ops)
	assert.Equal(t, Marshal(&multiEnd), Marshal(&m))
}

func TestDecoderAliasRetainsInputOnlyWhenAsked(t *testing.T) {
	in := Marshal(&GetDataResponse{Data: []byte("payload"), Stat: Stat{Version: 3}})
	var copied, aliased GetDataResponse
	require.NoError(t, Unmarshal(in, &copied))
	d := NewDecoder(in)
	d.Alias = true
	aliased.Decode(d)
	require.NoError(t, d.Err())

	// Strings are copied even by an aliasing decoder.
	pathIn := Marshal(&PathResponse{Path: "/node"})
	s := &PathResponse{}
	d = NewDecoder(pathIn)
	d.Alias = true
	s.Decode(d)

	rawIn := []byte("rawbytes")
	copiedRaw := NewDecoder(rawIn).ReadRaw(3)
	d = NewDecoder(rawIn)
	d.Alias = true
	aliasedRaw := d.ReadRaw(3)

	for _, b := range [][]byte{in, pathIn, rawIn} {
		for i := range b {
			b[i] = 'X'
		}
	}
	assert.Equal(t, "payload", string(copied.Data), "a default decoder retained its input")
	assert.Equal(t, "XXXXXXX", string(aliased.Data), "an aliasing decoder copied")
	assert.Equal(t, "/node", s.Path, "a string changed with its input")
	assert.Equal(t, "raw", string(copiedRaw))
	assert.Equal(t, "XXX", string(aliasedRaw))
}

// A null path is refused exactly where ZooKeeper 3.8 fails on one, and read
// as the empty path elsewhere.
func TestDecodeRequestNullPath(t *testing.T) {
	null := []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}
	for _, op := range []OpCode{OpCreate, OpCreate2, OpCreateContainer, OpDelete, OpGetData, OpExists,
		OpGetChildren, OpGetChildren2, OpGetACL, OpGetAllChildrenNumber, OpCheckWatches} {
		_, err := DecodeRequest(op, null)
		var nullErr *NullPathError
		require.ErrorAs(t, err, &nullErr, "%s", op)
		require.Equal(t, op, nullErr.Op)
	}
	for _, op := range []OpCode{OpSetData, OpSync, OpGetEphemerals, OpRemoveWatches, OpAddWatch} {
		body, err := DecodeRequest(op, null)
		require.NoError(t, err, "%s", op)
		require.NotNil(t, body)
	}
	_, err := DecodeRequest(OpGetData, []byte{0, 0, 0, 0, 0})
	require.NoError(t, err, "the empty path is not null")
}

// Inside a multi or multiRead a null path is no decoding error: the op
// says so (MultiOp.NullPath, its Body's path ""), in any place and op
// type, and encoding writes the null string back.
func TestDecodeMultiNullPath(t *testing.T) {
	ops := []MultiOp{
		{Type: OpCreate, Body: &CreateRequest{Path: "/a", ACL: []ACL{}}},
		{Type: OpCreate2, Body: &CreateRequest{ACL: []ACL{}}, NullPath: true},
		{Type: OpCreateTTL, Body: &CreateRequest{ACL: []ACL{}, HasTTL: true, TTL: 5}, NullPath: true},
		{Type: OpDelete, Body: &PathVersionRequest{Version: -1}, NullPath: true},
		{Type: OpSetData, Body: &SetDataRequest{Data: []byte("x"), Version: -1}, NullPath: true},
		{Type: OpCheck, Body: &PathVersionRequest{Version: 3}, NullPath: true},
		{Type: OpGetData, Body: &PathWatchRequest{}, NullPath: true},
		{Type: OpGetChildren, Body: &PathWatchRequest{}},
	}
	b := Marshal(&MultiRequest{Ops: ops})
	for _, i := range []int{1, 2, 3, 4, 5, 6} {
		at := 0
		for _, op := range ops[:i] {
			at += 9 + len(Marshal(op.Body))
		}
		require.Equal(t, []byte{0xff, 0xff, 0xff, 0xff}, b[at+9:at+13], "op %d's path", i)
	}
	for _, op := range []OpCode{OpMulti, OpMultiRead} {
		body, err := DecodeRequest(op, b)
		require.NoError(t, err, "%s", op)
		require.Equal(t, &MultiRequest{Ops: ops}, body, "%s", op)
		require.Equal(t, b, Marshal(body), "%s re-encoded", op)
	}

	// The empty path is not null, and NullPath does not hide a path that
	// is there.
	empty := &MultiRequest{Ops: []MultiOp{{Type: OpDelete, Body: &PathVersionRequest{Version: -1}}}}
	body, err := DecodeRequest(OpMulti, Marshal(empty))
	require.NoError(t, err)
	require.Equal(t, empty, body)
	named := &MultiRequest{Ops: []MultiOp{{Type: OpDelete, Body: &PathVersionRequest{Path: "/x", Version: -1}, NullPath: true}}}
	body, err = DecodeRequest(OpMulti, Marshal(named))
	require.NoError(t, err)
	require.Equal(t, &MultiRequest{Ops: []MultiOp{{Type: OpDelete, Body: &PathVersionRequest{Path: "/x", Version: -1}}}}, body)

	// A multi response's bodies do not start with paths: nothing is marked.
	resp := &MultiResponse{Results: []MultiResult{{Type: OpError, Err: -1, Body: &ErrorResponse{Err: -1}}}}
	decoded, err := DecodeResponse(OpMulti, Marshal(resp))
	require.NoError(t, err)
	require.Equal(t, resp, decoded)
}
