package main

import (
	"fmt"

	"github.com/zabd/zabd/datatree/testdata/record/trace"
	"github.com/zabd/zabd/wire"
)

// opCodes maps the op names a trace uses to wire opcodes.
var opCodes = func() map[string]wire.OpCode {
	m := map[string]wire.OpCode{}
	for _, op := range []wire.OpCode{
		wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL, wire.OpDelete,
		wire.OpExists, wire.OpGetData, wire.OpSetData, wire.OpGetACL, wire.OpSetACL,
		wire.OpGetChildren, wire.OpGetChildren2, wire.OpSync, wire.OpCheck, wire.OpMulti,
		wire.OpMultiRead, wire.OpRemoveWatches, wire.OpCheckWatches, wire.OpAddWatch,
		wire.OpGetEphemerals, wire.OpGetAllChildrenNumber, wire.OpWhoAmI, wire.OpCloseSession,
		wire.OpDeleteContainer, wire.OpPing,
	} {
		m[op.String()] = op
	}
	return m
}()

func dataBytes(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

func version(v *int32) int32 {
	if v == nil {
		return -1
	}
	return *v
}

// encodeBody writes the body of a request (or of a multi sub-op).
func encodeBody(e *wire.Encoder, op wire.OpCode, r *trace.Request) error {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		var mode wire.CreateMode
		if r.Mode != nil {
			mode = *r.Mode
		}
		cr := wire.CreateRequest{Path: r.Path, Data: dataBytes(r.Data), ACL: r.ACL, Flags: mode,
			TTL: r.TTL, HasTTL: op == wire.OpCreateTTL}
		cr.Encode(e)
	case wire.OpDelete, wire.OpCheck, wire.OpDeleteContainer:
		if op == wire.OpDeleteContainer {
			(&wire.PathRequest{Path: r.Path}).Encode(e)
			return nil
		}
		(&wire.PathVersionRequest{Path: r.Path, Version: version(r.Version)}).Encode(e)
	case wire.OpExists, wire.OpGetData, wire.OpGetChildren, wire.OpGetChildren2:
		(&wire.PathWatchRequest{Path: r.Path, Watch: r.Watch}).Encode(e)
	case wire.OpSetData:
		(&wire.SetDataRequest{Path: r.Path, Data: dataBytes(r.Data), Version: version(r.Version)}).Encode(e)
	case wire.OpGetACL, wire.OpSync, wire.OpGetEphemerals, wire.OpGetAllChildrenNumber:
		(&wire.PathRequest{Path: r.Path}).Encode(e)
	case wire.OpSetACL:
		(&wire.SetACLRequest{Path: r.Path, ACL: r.ACL, Version: version(r.Version)}).Encode(e)
	case wire.OpRemoveWatches, wire.OpCheckWatches:
		(&wire.PathTypeRequest{Path: r.Path, Type: r.WatcherType}).Encode(e)
	case wire.OpAddWatch:
		(&wire.AddWatchRequest{Path: r.Path, Mode: *r.AddWatchMode}).Encode(e)
	case wire.OpMulti, wire.OpMultiRead:
		for i := range r.Ops {
			sub, ok := opCodes[r.Ops[i].Op]
			if !ok {
				return fmt.Errorf("multi: unknown sub-op %q", r.Ops[i].Op)
			}
			(&wire.MultiHeader{Type: sub, Err: -1}).Encode(e)
			if err := encodeBody(e, sub, &r.Ops[i].Req); err != nil {
				return err
			}
		}
		(&wire.MultiHeader{Type: -1, Done: true, Err: -1}).Encode(e)
	case wire.OpWhoAmI, wire.OpCloseSession, wire.OpPing:
		// no body
	default:
		return fmt.Errorf("no request encoding for %s", op)
	}
	return nil
}

func optString(b []byte) *string {
	if b == nil {
		return nil
	}
	return trace.Str(string(b))
}

func statPtr(s wire.Stat) *wire.Stat { return &s }

// decodeBody reads the body of a successful reply (or of one multi result).
func decodeBody(d *wire.Decoder, op wire.OpCode) (*trace.Response, error) {
	var r trace.Response
	switch op {
	case wire.OpCreate, wire.OpSync:
		var p wire.PathResponse
		p.Decode(d)
		r.Path = p.Path
	case wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		var p wire.Create2Response
		p.Decode(d)
		r.Path, r.Stat = p.Path, statPtr(p.Stat)
	case wire.OpExists, wire.OpSetData, wire.OpSetACL:
		var p wire.StatResponse
		p.Decode(d)
		r.Stat = statPtr(p.Stat)
	case wire.OpGetData:
		var p wire.GetDataResponse
		p.Decode(d)
		r.Data, r.Stat = optString(p.Data), statPtr(p.Stat)
	case wire.OpGetACL:
		var p wire.GetACLResponse
		p.Decode(d)
		r.ACL, r.Stat = p.ACL, statPtr(p.Stat)
	case wire.OpGetChildren, wire.OpGetEphemerals:
		var p wire.StringsResponse
		p.Decode(d)
		r.Children = p.Strings
	case wire.OpGetChildren2:
		var p wire.GetChildren2Response
		p.Decode(d)
		r.Children, r.Stat = p.Children, statPtr(p.Stat)
	case wire.OpGetAllChildrenNumber:
		var p wire.IntResponse
		p.Decode(d)
		r.Number = &p.Value
	case wire.OpWhoAmI:
		var p wire.WhoAmIResponse
		p.Decode(d)
		r.Identity = p.ClientInfo
	case wire.OpMulti, wire.OpMultiRead:
		for {
			var h wire.MultiHeader
			h.Decode(d)
			if d.Err() != nil || h.Done {
				break
			}
			sub := trace.SubResult{Op: h.Type.String(), Err: h.Err.String()}
			if h.Type == wire.OpError {
				var er wire.ErrorResponse
				er.Decode(d)
				sub.Err = er.Err.String()
			} else if body, err := decodeBody(d, h.Type); err != nil {
				return nil, err
			} else if body != nil {
				sub.Response = *body
			}
			r.Results = append(r.Results, sub)
		}
	default:
		// delete, check, addWatch, removeWatches, checkWatches, closeSession, ping: no body.
		return nil, d.Err()
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("%s reply body: %w", op, err)
	}
	return &r, nil
}
