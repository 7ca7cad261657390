package main

import (
	"fmt"

	"github.com/zabd/zabd/datatree/testdata/record/trace"
	"github.com/zabd/zabd/wire"
)

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
