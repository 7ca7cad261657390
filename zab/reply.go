package zab

import (
	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

// responseBody builds the reply record ZooKeeper sends for a result, or nil
// when the reply is a header alone (every failed request but a multi or
// multiRead that failed after ZooKeeper had begun its response, which still
// sends the results so far; a multi whose ops fail says OK in its header).
func responseBody(r *datatree.Result) wire.Record {
	if r.Err != wire.ErrOK {
		if (r.Op == wire.OpMultiRead || r.Op == wire.OpMulti) && r.Multi != nil {
			return multiResponse(r.Multi)
		}
		return nil
	}
	switch r.Op {
	case wire.OpCreate, wire.OpSync:
		return &wire.PathResponse{Path: r.Path}
	case wire.OpCreate2, wire.OpCreateTTL, wire.OpCreateContainer:
		return &wire.Create2Response{Path: r.Path, Stat: r.Stat}
	case wire.OpSetData, wire.OpSetACL, wire.OpExists, wire.OpCheck:
		return &wire.StatResponse{Stat: r.Stat}
	case wire.OpGetData:
		return &wire.GetDataResponse{Data: r.Data, Stat: r.Stat}
	case wire.OpGetChildren, wire.OpGetEphemerals:
		return &wire.StringsResponse{Strings: nonNil(r.Children)}
	case wire.OpGetChildren2:
		return &wire.GetChildren2Response{Children: nonNil(r.Children), Stat: r.Stat}
	case wire.OpGetACL:
		return &wire.GetACLResponse{ACL: r.ACL, Stat: r.Stat}
	case wire.OpGetAllChildrenNumber:
		return &wire.IntResponse{Value: r.Count}
	case wire.OpAddWatch:
		return &wire.ErrorResponse{Err: wire.ErrOK} // ZooKeeper answers addWatch so
	case wire.OpMulti, wire.OpMultiRead:
		return multiResponse(r.Multi)
	}
	return nil
}

// multiResponse lays out a multi's per-op results: each op's result record,
// or an ErrorResponse whose header repeats the code.
func multiResponse(subs []datatree.Result) *wire.MultiResponse {
	out := &wire.MultiResponse{Results: make([]wire.MultiResult, len(subs))}
	for i := range subs {
		s := &subs[i]
		if s.Op == wire.OpError || s.Err != wire.ErrOK {
			out.Results[i] = wire.MultiResult{Type: wire.OpError, Err: s.Err, Body: &wire.ErrorResponse{Err: s.Err}}
			continue
		}
		var body wire.Record
		switch s.Op {
		case wire.OpCreate:
			body = &wire.PathResponse{Path: s.Path}
		case wire.OpCreate2:
			body = &wire.Create2Response{Path: s.Path, Stat: s.Stat}
		case wire.OpSetData:
			body = &wire.StatResponse{Stat: s.Stat}
		case wire.OpGetChildren:
			body = &wire.StringsResponse{Strings: nonNil(s.Children)}
		case wire.OpGetData:
			body = &wire.GetDataResponse{Data: s.Data, Stat: s.Stat}
		}
		out.Results[i] = wire.MultiResult{Type: s.Op, Body: body}
	}
	return out
}

// nonNil keeps an empty list from encoding as jute's null vector:
// ZooKeeper answers an empty child list with length 0.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
