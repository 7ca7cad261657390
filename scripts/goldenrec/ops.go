package main

import (
	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

// Shorthands for the scenarios: each sends one request through run.Do.

var open = wire.OpenACLUnsafe

func mode(m wire.CreateMode) *wire.CreateMode { return &m }

// createReq builds a create request; data "" is sent as an empty buffer.
func createReq(path, data string, acl []wire.ACL, m wire.CreateMode) trace.Request {
	return trace.Request{Path: path, Data: trace.Str(data), ACL: acl, Mode: mode(m)}
}

func (r *run) Create(s, path, data string, m wire.CreateMode) trace.Line {
	return r.Do(s, wire.OpCreate, createReq(path, data, open, m))
}

func (r *run) CreateACL(s, path, data string, acl []wire.ACL, m wire.CreateMode) trace.Line {
	return r.Do(s, wire.OpCreate, createReq(path, data, acl, m))
}

func (r *run) Create2(s, path, data string, m wire.CreateMode) trace.Line {
	return r.Do(s, wire.OpCreate2, createReq(path, data, open, m))
}

func (r *run) CreateContainer(s, path, data string) trace.Line {
	return r.Do(s, wire.OpCreateContainer, createReq(path, data, open, wire.ModeContainer))
}

func (r *run) CreateTTL(s, path, data string, m wire.CreateMode, ttl int64) trace.Line {
	req := createReq(path, data, open, m)
	req.TTL = ttl
	return r.Do(s, wire.OpCreateTTL, req)
}

func (r *run) Delete(s, path string, version int32) trace.Line {
	return r.Do(s, wire.OpDelete, trace.Request{Path: path, Version: trace.Int32(version)})
}

func (r *run) SetData(s, path, data string, version int32) trace.Line {
	return r.Do(s, wire.OpSetData, trace.Request{Path: path, Data: trace.Str(data), Version: trace.Int32(version)})
}

func (r *run) SetACL(s, path string, acl []wire.ACL, version int32) trace.Line {
	return r.Do(s, wire.OpSetACL, trace.Request{Path: path, ACL: acl, Version: trace.Int32(version)})
}

func (r *run) GetData(s, path string, watch bool) trace.Line {
	return r.Do(s, wire.OpGetData, trace.Request{Path: path, Watch: watch})
}

func (r *run) Exists(s, path string, watch bool) trace.Line {
	return r.Do(s, wire.OpExists, trace.Request{Path: path, Watch: watch})
}

func (r *run) GetChildren(s, path string, watch bool) trace.Line {
	return r.Do(s, wire.OpGetChildren, trace.Request{Path: path, Watch: watch})
}

func (r *run) GetChildren2(s, path string, watch bool) trace.Line {
	return r.Do(s, wire.OpGetChildren2, trace.Request{Path: path, Watch: watch})
}

func (r *run) GetACL(s, path string) trace.Line {
	return r.Do(s, wire.OpGetACL, trace.Request{Path: path})
}

func (r *run) Sync(s, path string) trace.Line {
	return r.Do(s, wire.OpSync, trace.Request{Path: path})
}

func (r *run) GetEphemerals(s, prefix string) trace.Line {
	return r.Do(s, wire.OpGetEphemerals, trace.Request{Path: prefix})
}

func (r *run) GetAllChildrenNumber(s, path string) trace.Line {
	return r.Do(s, wire.OpGetAllChildrenNumber, trace.Request{Path: path})
}

func (r *run) WhoAmI(s string) trace.Line { return r.Do(s, wire.OpWhoAmI, trace.Request{}) }

func (r *run) AddWatch(s, path string, m wire.AddWatchMode) trace.Line {
	return r.Do(s, wire.OpAddWatch, trace.Request{Path: path, AddWatchMode: &m})
}

func (r *run) RemoveWatches(s, path string, t wire.WatcherType) trace.Line {
	return r.Do(s, wire.OpRemoveWatches, trace.Request{Path: path, WatcherType: t})
}

func (r *run) CheckWatches(s, path string, t wire.WatcherType) trace.Line {
	return r.Do(s, wire.OpCheckWatches, trace.Request{Path: path, WatcherType: t})
}

func (r *run) CloseSession(s string) trace.Line {
	return r.Do(s, wire.OpCloseSession, trace.Request{})
}

func (r *run) Multi(s string, ops ...trace.SubOp) trace.Line {
	return r.Do(s, wire.OpMulti, trace.Request{Ops: ops})
}

func (r *run) MultiRead(s string, ops ...trace.SubOp) trace.Line {
	return r.Do(s, wire.OpMultiRead, trace.Request{Ops: ops})
}

// Sub-op constructors for Multi and MultiRead.

func opCreate(path, data string, m wire.CreateMode) trace.SubOp {
	return trace.SubOp{Op: wire.OpCreate.String(), Req: createReq(path, data, open, m)}
}

func opCreate2(path, data string, m wire.CreateMode) trace.SubOp {
	return trace.SubOp{Op: wire.OpCreate2.String(), Req: createReq(path, data, open, m)}
}

func opCreateTTL(path, data string, m wire.CreateMode, ttl int64) trace.SubOp {
	req := createReq(path, data, open, m)
	req.TTL = ttl
	return trace.SubOp{Op: wire.OpCreateTTL.String(), Req: req}
}

func opCreateContainer(path, data string) trace.SubOp {
	return trace.SubOp{Op: wire.OpCreateContainer.String(), Req: createReq(path, data, open, wire.ModeContainer)}
}

func opDelete(path string, version int32) trace.SubOp {
	return trace.SubOp{Op: wire.OpDelete.String(), Req: trace.Request{Path: path, Version: trace.Int32(version)}}
}

func opSetData(path, data string, version int32) trace.SubOp {
	return trace.SubOp{Op: wire.OpSetData.String(), Req: trace.Request{Path: path, Data: trace.Str(data), Version: trace.Int32(version)}}
}

func opCheck(path string, version int32) trace.SubOp {
	return trace.SubOp{Op: wire.OpCheck.String(), Req: trace.Request{Path: path, Version: trace.Int32(version)}}
}

func opGetData(path string) trace.SubOp {
	return trace.SubOp{Op: wire.OpGetData.String(), Req: trace.Request{Path: path}}
}

func opGetChildren(path string) trace.SubOp {
	return trace.SubOp{Op: wire.OpGetChildren.String(), Req: trace.Request{Path: path}}
}
