package main

import (
	"fmt"

	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

// decodeBody decodes the body of a successful reply to op (wire's
// dispatch) into the trace's form.
func decodeBody(d *wire.Decoder, op wire.OpCode) (*trace.Response, error) {
	rec, err := wire.DecodeResponse(op, d.Rest())
	if err != nil {
		return nil, fmt.Errorf("%s reply body: %w", op, err)
	}
	return responseOf(rec), nil
}

// responseOf renders a reply record; nil for the bodiless replies.
func responseOf(rec wire.Record) *trace.Response {
	switch b := rec.(type) {
	case *wire.PathResponse:
		return &trace.Response{Path: b.Path}
	case *wire.Create2Response:
		return &trace.Response{Path: b.Path, Stat: &b.Stat}
	case *wire.StatResponse:
		return &trace.Response{Stat: &b.Stat}
	case *wire.GetDataResponse:
		return &trace.Response{Data: trace.DataString(b.Data), Stat: &b.Stat}
	case *wire.GetACLResponse:
		return &trace.Response{ACL: b.ACL, Stat: &b.Stat}
	case *wire.StringsResponse:
		return &trace.Response{Children: b.Strings}
	case *wire.GetChildren2Response:
		return &trace.Response{Children: b.Children, Stat: &b.Stat}
	case *wire.IntResponse:
		return &trace.Response{Number: &b.Value}
	case *wire.WhoAmIResponse:
		return &trace.Response{Identity: b.ClientInfo}
	case *wire.MultiResponse:
		out := &trace.Response{}
		for _, res := range b.Results {
			sub := trace.SubResult{Op: res.Type.String(), Err: res.Err.String()}
			if e, ok := res.Body.(*wire.ErrorResponse); ok {
				sub.Err = e.Err.String()
			} else if body := responseOf(res.Body); body != nil {
				sub.Response = *body
			}
			out.Results = append(out.Results, sub)
		}
		return out
	}
	return nil
}
