package main

import (
	"github.com/zabd/zabd/datatree/testdata/record/trace"
	"github.com/zabd/zabd/wire"
)

func init() {
	scenarios = append(scenarios,
		scenario{name: "pipeline", desc: "requests sent in one write before any reply, so ZooKeeper prepares each against the changes still pending (outstandingChanges): creates under pending parents, sequential names, versions, ACLs, ephemerals, failed multis rolled back, closeSession collecting pending ephemerals", config: baseConfig, script: pipeline},
	)
}

func pOp(op wire.OpCode, req trace.Request) trace.SubOp {
	return trace.SubOp{Op: op.String(), Req: req}
}

func pipeline(r *run) {
	r.Connect("A")
	r.Connect("B")
	r.AddAuth("A", "digest", "owner:pw")
	r.Note("a subtree built, changed and read in one pipeline")
	r.Pipeline("A",
		opCreate("/p", "p", wire.ModePersistent),
		opCreate("/p/a", "a", wire.ModePersistent),
		opSetData("/p/a", "a1", 0),
		opSetData("/p/a", "a2", 0),
		opSetData("/p/a", "a3", 1),
		opCreate("/p/s-", "", wire.ModePersistentSequential),
		opCreate("/p/a", "", wire.ModePersistent),
		opCreate("/p/s-", "", wire.ModeEphemeralSequential),
		pOp(wire.OpGetChildren2, trace.Request{Path: "/p"}),
		opDelete("/p/a", 1),
		opDelete("/p/a", 2),
		opDelete("/p", -1),
		pOp(wire.OpExists, trace.Request{Path: "/p/a"}),
		pOp(wire.OpGetData, trace.Request{Path: "/p"}),
	)
	r.Note("a failed multi's pending changes are rolled back before the next request")
	r.Pipeline("A",
		opCreate("/q", "", wire.ModePersistent),
		trace.SubOp{Op: wire.OpMulti.String(), Req: trace.Request{Ops: []trace.SubOp{opCreate("/q/x", "", wire.ModePersistent), opSetData("/q", "m", -1), opCheck("/q", 99)}}},
		opCreate("/q/x", "", wire.ModePersistent),
		opSetData("/q", "after", 0),
		trace.SubOp{Op: wire.OpMulti.String(), Req: trace.Request{Ops: []trace.SubOp{opDelete("/q/x", -1), opCreate("/q/y", "", wire.ModePersistent)}}},
		opCreate("/q/x", "", wire.ModePersistent),
		pOp(wire.OpGetChildren2, trace.Request{Path: "/q"}),
	)
	r.Note("ephemeral pending: no children; deleted pending: NoNode")
	r.Pipeline("A",
		opCreate("/e", "", wire.ModeEphemeral),
		opCreate("/e/child", "", wire.ModePersistent),
		opDelete("/e", -1),
		opCreate("/e/child", "", wire.ModePersistent),
		opCreate("/e", "", wire.ModePersistent),
		opCreate("/e/child", "", wire.ModePersistent),
	)
	r.Note("ACL changed while pending: later requests are checked against the new ACL")
	r.Pipeline("A",
		opCreate("/acl", "", wire.ModePersistent),
		pOp(wire.OpSetACL, trace.Request{Path: "/acl", ACL: []wire.ACL{worldACL(wire.PermRead)}, Version: trace.Int32(0)}),
		opSetData("/acl", "x", -1),
		opCreate("/acl/k", "", wire.ModePersistent),
		pOp(wire.OpSetACL, trace.Request{Path: "/acl", ACL: open, Version: trace.Int32(1)}),
		pOp(wire.OpSetACL, trace.Request{Path: "/acl", ACL: []wire.ACL{digestACL(wire.PermAll, "owner", "pw")}, Version: trace.Int32(-1)}),
		opSetData("/acl", "y", -1),
		pOp(wire.OpSetACL, trace.Request{Path: "/acl", ACL: wire.CreatorAllACL, Version: trace.Int32(2)}),
		pOp(wire.OpGetACL, trace.Request{Path: "/acl"}),
	)
	r.Note("another session's requests between pipelines see only applied changes")
	r.Pipeline("B",
		opCreate("/acl/b", "", wire.ModePersistent),
		opSetData("/acl", "b", -1),
		opCreate("/b", "", wire.ModePersistent),
		opCreate("/b/c", "", wire.ModeEphemeral),
	)
	r.Note("a container filled and emptied while pending; a TTL created and deleted")
	r.Pipeline("A",
		opCreateContainer("/c", ""),
		opCreate("/c/k", "", wire.ModePersistent),
		opDelete("/c/k", -1),
		opCreateTTL("/t", "", wire.ModePersistentWithTTL, 100000),
		opDelete("/t", -1),
	)
	r.Note("closeSession collects ephemerals created and deleted while pending")
	r.Create("B", "/x", "", wire.ModePersistent)
	r.GetChildren("A", "/x", true)
	r.Pipeline("B",
		opCreate("/x/e1", "", wire.ModeEphemeral),
		opCreate("/x/e2", "", wire.ModeEphemeral),
		opDelete("/x/e1", -1),
		opCreate("/x/e3-", "", wire.ModeEphemeralSequential),
		pOp(wire.OpCloseSession, trace.Request{}),
	)
	r.GetChildren2("A", "/x", false)
	r.GetChildren2("A", "/", false)
}
