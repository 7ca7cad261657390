package wire

import "fmt"

// MultiOp is one operation of a multi or multiRead request.
type MultiOp struct {
	// Type is create, create2, createContainer, createTTL, delete, setData or
	// check (in a multi) or getChildren or getData (in a multiRead).
	Type OpCode
	// NullPath says the op's path (the first field of every op's body) was
	// jute's null string, which ZooKeeper 3.8 cannot take in a multi or a
	// multiRead. Body's path is then "", and Encode writes the null string
	// in its place (a Body with another path is written as it is). It sits
	// beside Type, where it takes no room of its own: a frame of tiny ops
	// must not decode into more than five times its size.
	NullPath bool
	// Body is the op's request body, of the type NewMultiOpBody(Type) gives.
	Body Record
}

// MultiRequest is the body of multi and multiRead (MultiOperationRecord): per
// op a MultiHeader{type, done false, err -1} and its body, then the terminator
// MultiHeader{-1, true, -1}.
type MultiRequest struct{ Ops []MultiOp }

// multiEnd terminates the op list of a multi request and of its response.
var multiEnd = MultiHeader{Type: OpError, Done: true, Err: -1}

// NewMultiOpBody returns an empty request body for an op of type t inside a
// multi or multiRead (the body the same request has on its own), or nil if
// ZooKeeper refuses that type there.
func NewMultiOpBody(t OpCode) Record {
	switch t {
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete, OpCheck, OpSetData,
		OpGetChildren, OpGetData:
		body, _ := NewRequest(t)
		return body
	}
	return nil
}

func (r *MultiRequest) Encode(e *Encoder) {
	for i := range r.Ops {
		h := MultiHeader{Type: r.Ops[i].Type, Done: false, Err: -1}
		h.Encode(e)
		at := e.Len()
		r.Ops[i].Body.Encode(e)
		if r.Ops[i].NullPath {
			e.nullStringAt(at)
		}
	}
	multiEnd.Encode(e)
}

// Decode reads ops until a header with Done set; like ZooKeeper it ignores
// that header's type and err. An op type that has no place in a multi is an
// error; a null path is not (see MultiOp.NullPath).
func (r *MultiRequest) Decode(d *Decoder) {
	newBody := func(t OpCode) (Record, bool) {
		b := NewMultiOpBody(t)
		return b, b != nil
	}
	r.Ops = nil // an empty multi decodes as nil Ops
	if n := countMulti(d, newBody); n > 0 {
		r.Ops = make([]MultiOp, 0, n)
	}
	decodeMulti(d, newBody, "op", func(h MultiHeader, body Record, nullFirst bool) {
		r.Ops = append(r.Ops, MultiOp{Type: h.Type, Body: body, NullPath: nullFirst})
	})
}

// MultiResult is one op's result in a MultiResponse.
type MultiResult struct {
	// Type says which body follows: create (path only), create2 (path and
	// stat), delete and check (nothing), setData (stat), getChildren
	// (children), getData (data and stat), or error (an ErrorResponse).
	// ZooKeeper 3.8 answers a create2 op inside a multi with type create, and
	// createTTL and createContainer ops with type create2.
	Type OpCode
	// Err is the header's err: 0 except in error results, where it repeats
	// the ErrorResponse's code.
	Err ErrCode
	// Body is of the type NewMultiResultBody(Type) gives; nil for delete and check.
	Body Record
}

// MultiResponse is the body of a reply to multi and multiRead: per op a
// MultiHeader{type, done false, err} and its result body, then the
// terminator MultiHeader{-1, true, -1}.
type MultiResponse struct{ Results []MultiResult }

// NewMultiResultBody returns an empty result body for a multi result of type
// t, nil for results without a body (delete, check), and ok false for a type
// that never appears in a multi response.
func NewMultiResultBody(t OpCode) (body Record, ok bool) {
	switch t {
	case OpCreate:
		return &PathResponse{}, true
	case OpCreate2:
		return &Create2Response{}, true
	case OpDelete, OpCheck:
		return nil, true
	case OpSetData:
		return &StatResponse{}, true
	case OpGetChildren:
		return &StringsResponse{}, true
	case OpGetData:
		return &GetDataResponse{}, true
	case OpError:
		return &ErrorResponse{}, true
	}
	return nil, false
}

func (r *MultiResponse) Encode(e *Encoder) {
	for i := range r.Results {
		res := &r.Results[i]
		h := MultiHeader{Type: res.Type, Done: false, Err: res.Err}
		h.Encode(e)
		if res.Body != nil {
			res.Body.Encode(e)
		}
	}
	multiEnd.Encode(e)
}

// Decode reads results until a header with Done set.
func (r *MultiResponse) Decode(d *Decoder) {
	r.Results = nil
	if n := countMulti(d, NewMultiResultBody); n > 0 {
		r.Results = make([]MultiResult, 0, n)
	}
	decodeMulti(d, NewMultiResultBody, "result", func(h MultiHeader, body Record, _ bool) {
		r.Results = append(r.Results, MultiResult{Type: h.Type, Err: h.Err, Body: body})
	})
}

// decodeMulti reads the headers and bodies of a multi request or response
// up to its terminator, passing each to emit with whether the body began
// with jute's null string. newBody gives the body for a header's type (nil
// for none), or false for a type that has no place there.
func decodeMulti(d *Decoder, newBody func(OpCode) (Record, bool), what string, emit func(h MultiHeader, body Record, nullFirst bool)) {
	for {
		var h MultiHeader
		h.Decode(d)
		if d.Err() != nil || h.Done {
			return
		}
		body, ok := newBody(h.Type)
		if !ok {
			d.Fail("multi "+what, fmt.Errorf("%s type %s is not allowed in a multi", what, h.Type))
			return
		}
		nullFirst := startsWithNullString(d.Rest())
		if body != nil {
			body.Decode(d)
		}
		emit(h, body, nullFirst)
	}
}

// countMulti counts the entries of the multi at d without consuming d or
// allocating per entry, so that the decoder allocates its slice once: its
// length is known only at the terminator, and growing a slice of tiny
// entries costs several times the frame. The count stops at the first
// malformed entry, which the decoding pass then reports.
func countMulti(d *Decoder, newBody func(OpCode) (Record, bool)) int {
	scan := *d
	scan.discard = true
	scratch := map[OpCode]Record{}
	n := 0
	decodeMulti(&scan, func(t OpCode) (Record, bool) {
		if b, ok := scratch[t]; ok {
			return b, true
		}
		b, ok := newBody(t)
		scratch[t] = b
		return b, ok
	}, "", func(MultiHeader, Record, bool) { n++ })
	return n
}
