package main

import (
	"github.com/zabd/zabd/datatree/trace"
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

func init() {
	scenarios = append(scenarios,
		scenario{name: "pipeline_quota", desc: "pipelines against hard quotas (enforceQuota=true: does the check see pending creates?), versions through a failed multi's rollback, sequential names with pending deletes", config: append(append([]string{}, baseConfig...), "enforceQuota=true"), script: pipelineQuota},
	)
}

func pipelineQuota(r *run) {
	r.Connect("A")
	r.Create("A", "/q", "", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/q", "", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/q/zookeeper_limits", "count=-1,bytes=-1=;byteHardLimit=10;countHardLimit=3", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/q/zookeeper_stats", "count=0,bytes=0", wire.ModePersistent)
	r.Note("count limit 3 (/q and two children): four creates in one pipeline")
	r.Pipeline("A",
		opCreate("/q/a", "", wire.ModePersistent),
		opCreate("/q/b", "", wire.ModePersistent),
		opCreate("/q/c", "", wire.ModePersistent),
		opCreate("/q/d", "", wire.ModePersistent),
	)
	r.GetChildren2("A", "/q", false)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.Note("byte limit 10: setData in one pipeline")
	r.Pipeline("A",
		opSetData("/q/a", "123456", -1),
		opSetData("/q/b", "123456", -1),
		opSetData("/q/a", "1234567890", -1),
	)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.Note("versions through a failed multi's rollback")
	r.Create("A", "/v", "", wire.ModePersistent)
	r.Pipeline("A",
		opSetData("/v", "1", 0),
		trace.SubOp{Op: wire.OpMulti.String(), Req: trace.Request{Ops: []trace.SubOp{opSetData("/v", "2", 1), opCheck("/v", 2), opCheck("/v", 99)}}},
		opSetData("/v", "3", 1),
		trace.SubOp{Op: wire.OpMulti.String(), Req: trace.Request{Ops: []trace.SubOp{opCheck("/v", 2), opSetData("/v", "4", 2), opCheck("/v", 3)}}},
		pOp(wire.OpGetData, trace.Request{Path: "/v"}),
	)
	r.Note("sequential names with pending deletes and pending failed creates")
	r.Create("A", "/s", "", wire.ModePersistent)
	r.Pipeline("A",
		opCreate("/s/n-", "", wire.ModePersistentSequential),
		opDelete("/s/n-0000000000", -1),
		opCreate("/s/n-", "", wire.ModePersistentSequential),
		opCreate("/s/n-0000000002", "", wire.ModePersistent),
		opCreate("/s/n-", "", wire.ModePersistentSequential),
		opCreate("/s/n-", "", wire.ModePersistentSequential),
		pOp(wire.OpGetChildren2, trace.Request{Path: "/s"}),
	)
}
