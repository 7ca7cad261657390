package trace

import (
	"fmt"

	"github.com/zabd/zabd/wire"
)

// OpCode returns the opcode a line's (or sub-op's) Op names; ok is false for
// the pseudo-ops connect, addAuth and ping.
func OpCode(name string) (wire.OpCode, bool) {
	op, ok := opCodes[name]
	return op, ok
}

var opCodes = func() map[string]wire.OpCode {
	m := map[string]wire.OpCode{}
	for _, op := range []wire.OpCode{
		wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL, wire.OpDelete,
		wire.OpExists, wire.OpGetData, wire.OpSetData, wire.OpGetACL, wire.OpSetACL,
		wire.OpGetChildren, wire.OpGetChildren2, wire.OpSync, wire.OpCheck, wire.OpMulti,
		wire.OpMultiRead, wire.OpRemoveWatches, wire.OpCheckWatches, wire.OpAddWatch,
		wire.OpGetEphemerals, wire.OpGetAllChildrenNumber, wire.OpWhoAmI, wire.OpCloseSession,
		wire.OpDeleteContainer, wire.OpPing, wire.OpCreateSession, wire.OpError,
		wire.OpSetWatches, wire.OpSetWatches2, wire.OpReconfig,
	} {
		m[op.String()] = op
	}
	return m
}()

// IsWrite reports whether requests of type op become txns (each takes a
// zxid, a failed one as an error txn), as opposed to reads answered from the
// applied tree.
func IsWrite(op wire.OpCode) bool { return op.IsWrite() }

// Bytes returns the request data as sent: nil when Data is absent.
func (r *Request) Bytes() []byte {
	if r.Data == nil {
		return nil
	}
	return []byte(*r.Data)
}

// VersionOrAny is the request's version, -1 when absent.
func (r *Request) VersionOrAny() int32 {
	if r.Version == nil {
		return -1
	}
	return *r.Version
}

// Body returns the wire record a request of type op carries, built from r;
// nil for the ops without a body (whoAmI, closeSession, ping). A multi or
// multiRead body is a *wire.MultiRequest.
func (r *Request) Body(op wire.OpCode) (wire.Record, error) {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		var mode wire.CreateMode
		if r.Mode != nil {
			mode = *r.Mode
		}
		return &wire.CreateRequest{Path: r.Path, Data: r.Bytes(), ACL: r.ACL, Flags: mode,
			TTL: r.TTL, HasTTL: op == wire.OpCreateTTL}, nil
	case wire.OpDelete, wire.OpCheck:
		return &wire.PathVersionRequest{Path: r.Path, Version: r.VersionOrAny()}, nil
	case wire.OpExists, wire.OpGetData, wire.OpGetChildren, wire.OpGetChildren2:
		return &wire.PathWatchRequest{Path: r.Path, Watch: r.Watch}, nil
	case wire.OpSetData:
		return &wire.SetDataRequest{Path: r.Path, Data: r.Bytes(), Version: r.VersionOrAny()}, nil
	case wire.OpGetACL, wire.OpSync, wire.OpGetEphemerals, wire.OpGetAllChildrenNumber, wire.OpDeleteContainer:
		return &wire.PathRequest{Path: r.Path}, nil
	case wire.OpSetACL:
		return &wire.SetACLRequest{Path: r.Path, ACL: r.ACL, Version: r.VersionOrAny()}, nil
	case wire.OpRemoveWatches, wire.OpCheckWatches:
		return &wire.PathTypeRequest{Path: r.Path, Type: r.WatcherType}, nil
	case wire.OpAddWatch:
		if r.AddWatchMode == nil {
			return nil, fmt.Errorf("addWatch without a mode")
		}
		return &wire.AddWatchRequest{Path: r.Path, Mode: *r.AddWatchMode}, nil
	case wire.OpMulti, wire.OpMultiRead:
		m := &wire.MultiRequest{}
		for i := range r.Ops {
			sub, ok := OpCode(r.Ops[i].Op)
			if !ok {
				return nil, fmt.Errorf("multi: unknown sub-op %q", r.Ops[i].Op)
			}
			body, err := r.Ops[i].Req.Body(sub)
			if err != nil {
				return nil, err
			}
			m.Ops = append(m.Ops, wire.MultiOp{Type: sub, Body: body})
		}
		return m, nil
	case wire.OpSetWatches, wire.OpSetWatches2:
		if r.SetWatches == nil {
			return nil, fmt.Errorf("%s without watch lists", op)
		}
		body := *r.SetWatches
		body.Persistent = op == wire.OpSetWatches2
		return &body, nil
	case wire.OpReconfig:
		// An empty reconfig: no joining, leaving or new members, config id -1.
		return &wire.ReconfigRequest{CurConfigID: -1}, nil
	case wire.OpWhoAmI, wire.OpCloseSession, wire.OpPing:
		return nil, nil
	}
	return nil, fmt.Errorf("no request body for %s", op)
}
