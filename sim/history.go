package sim

import (
	"strconv"

	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/sim/simclient"
	"github.com/zabd/zabd/wire"
)

// historyEntry turns a client's record into a line of the history format
// that the linearizability package reads and checks.
func historyEntry(e *simclient.Entry) linearizability.Entry {
	h := linearizability.Entry{Kind: e.Kind, Client: e.Client, Session: linearizability.Hex64(e.Session), Seq: int64(e.Seq)}
	if e.Kind == linearizability.KindEvent {
		h.At = int64(e.Return)
		h.Path = e.Path
		if e.Type == wire.EventNone {
			h.Type = e.State.String()
			h.Timeout = e.Timeout
			if e.Server != 0 {
				h.Server = strconv.FormatInt(e.Server, 10)
			}
			h.Term = e.Term
		} else {
			h.Type = e.Type.String()
		}
		return h
	}
	op := &e.Op
	h.Call = int64(e.Call)
	ret := int64(e.Return)
	h.Return = &ret
	h.Op = op.Name
	h.Path = op.Path
	h.Watch = op.Watch
	h.Xid = e.Xid
	setOpFields(op, &h.Data, &h.Version, &h.Mode, &h.TTL)
	switch op.Code {
	case wire.OpAddWatch:
		h.WatchMode = op.AddMode.String()
	case wire.OpRemoveWatches:
		h.WatchMode = op.WType.String()
	}
	res := &e.Result
	h.Err = res.Err.String()
	zxid := linearizability.Hex64(res.Zxid)
	if !res.Unknown {
		h.Zxid = &zxid
	}
	h.Created = res.Created
	if res.HasStat {
		h.Stat = linearizability.StatFromWire(&res.Stat)
	}
	if op.Code == wire.OpGetData && res.Err == wire.ErrOK {
		d := res.Data
		h.Data = &d
	}
	h.Children = res.Children
	for i := range op.Sub {
		s := &op.Sub[i]
		sub := linearizability.SubOp{Op: s.Name, Path: s.Path}
		setOpFields(s, &sub.Data, &sub.Version, &sub.Mode, &sub.TTL)
		h.Ops = append(h.Ops, sub)
	}
	for i := range res.Sub {
		r := &res.Sub[i]
		sr := linearizability.SubResult{Err: r.Err.String(), Created: r.Created, Children: r.Children}
		if r.HasStat {
			sr.Stat = linearizability.StatFromWire(&r.Stat)
		}
		if i < len(op.Sub) && op.Sub[i].Code == wire.OpGetData && r.Err == wire.ErrOK {
			d := r.Data
			sr.Data = &d
		}
		h.Results = append(h.Results, sr)
	}
	return h
}

// setOpFields fills the request fields an operation carries: data for
// writes, version for conditional ops, mode and TTL for creates.
func setOpFields(op *simclient.Op, data **string, version **int32, mode *string, ttl *int64) {
	switch op.Code {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		d := op.Data
		*data = &d
		*mode = op.Mode.String()
		*ttl = op.TTL
	case wire.OpSetData:
		d, v := op.Data, op.Version
		*data, *version = &d, &v
	case wire.OpDelete, wire.OpCheck, wire.OpSetACL:
		v := op.Version
		*version = &v
	}
}
