package wire

import (
	"errors"
	"reflect"
	"testing"
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
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Errorf("NewRequest(%s) = %#v, %v; want %#v", op, got, err, w)
		}
	}
	for _, op := range []OpCode{OpNotification, OpCreateSession, OpError, 10, 23, 99, 108, -3} {
		_, err := NewRequest(op)
		var ue *UnknownOpError
		if !errors.As(err, &ue) || ue.Op != op {
			t.Errorf("NewRequest(%s): %v", op, err)
		}
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
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Errorf("NewResponse(%s) = %#v, %v; want %#v", op, got, err, w)
		}
	}
	if _, err := NewResponse(OpCode(55)); err == nil || err.Error() != "wire: no response body for opcode OpCode(55)" {
		t.Errorf("unknown opcode: %v", err)
	}
}

func TestDecodeRequestIgnoresTrailingBytes(t *testing.T) {
	b := append(Marshal(&PathWatchRequest{Path: "/x", Watch: true}), 9, 9)
	r, err := DecodeRequest(OpGetData, b)
	if err != nil || !reflect.DeepEqual(r, &PathWatchRequest{Path: "/x", Watch: true}) {
		t.Fatalf("got %#v, %v", r, err)
	}
	// A setWatches2 body read as setWatches stops after the three lists.
	sw := &SetWatchesRequest{RelativeZxid: 5, DataWatches: []string{"/d"}, ExistWatches: []string{},
		ChildWatches: []string{}, PersistentWatches: []string{"/p"}, PersistentRecursiveWatches: []string{}, Persistent: true}
	r, err = DecodeRequest(OpSetWatches, Marshal(sw))
	if err != nil || !reflect.DeepEqual(r, &SetWatchesRequest{RelativeZxid: 5, DataWatches: []string{"/d"},
		ExistWatches: []string{}, ChildWatches: []string{}}) {
		t.Fatalf("got %#v, %v", r, err)
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	_, err := DecodeRequest(OpSetData, []byte{0, 0, 0, 5, 'a'})
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrShort) {
		t.Fatalf("truncated setData: %v", err)
	}
	if want := "wire: setData request: jute: string length at offset 4: length 5 exceeds the 1 bytes left: jute: input ends inside a record"; err.Error() != want {
		t.Errorf("message %q", err.Error())
	}
	if _, err := DecodeResponse(OpGetData, nil); err == nil {
		t.Error("empty getData response decoded")
	}
}

func TestMultiRejectsForeignTypes(t *testing.T) {
	// A getData op inside a multi is legal on the wire (multiRead uses the
	// same record); ping is not.
	var e Encoder
	(&MultiHeader{Type: OpPing, Err: -1}).Encode(&e)
	if err := Unmarshal(e.Bytes(), &MultiRequest{}); err == nil {
		t.Error("ping op accepted in a multi")
	}
	e.Reset()
	(&MultiHeader{Type: OpExists}).Encode(&e)
	if err := Unmarshal(e.Bytes(), &MultiResponse{}); err == nil {
		t.Error("exists result accepted in a multi response")
	}
	// The terminator is recognised by Done alone, as ZooKeeper does, and
	// re-encoded canonically.
	e.Reset()
	(&MultiHeader{Type: 77, Done: true, Err: 5}).Encode(&e)
	var m MultiRequest
	if err := Unmarshal(e.Bytes(), &m); err != nil || m.Ops != nil {
		t.Fatalf("empty multi: %+v %v", m, err)
	}
	if got := Marshal(&m); string(got) != string(Marshal(&multiEnd)) {
		t.Errorf("empty multi encodes as %x", got)
	}
}

func TestDecoderAliasRetainsInputOnlyWhenAsked(t *testing.T) {
	in := Marshal(&GetDataResponse{Data: []byte("payload"), Stat: Stat{Version: 3}})
	var copied, aliased GetDataResponse
	if err := Unmarshal(in, &copied); err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(in)
	d.Alias = true
	aliased.Decode(d)
	if d.Err() != nil {
		t.Fatal(d.Err())
	}
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
	if string(copied.Data) != "payload" {
		t.Errorf("a default decoder retained its input: %q", copied.Data)
	}
	if string(aliased.Data) != "XXXXXXX" {
		t.Errorf("an aliasing decoder copied: %q", aliased.Data)
	}
	if s.Path != "/node" {
		t.Errorf("string changed with its input: %q", s.Path)
	}
	if string(copiedRaw) != "raw" || string(aliasedRaw) != "XXX" {
		t.Errorf("ReadRaw: copied %q, aliased %q", copiedRaw, aliasedRaw)
	}
}
