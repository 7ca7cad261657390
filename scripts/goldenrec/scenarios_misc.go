package main

import (
	"fmt"
	"strings"

	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

func init() {
	scenarios = append(scenarios,
		scenario{name: "misc", desc: "odd arguments: getEphemerals prefixes with blanks, invalid watcher types and addWatch modes, reconfig on a standalone server, unchanged setData/setACL, long names, writes to /zookeeper nodes inside multis", config: baseConfig, script: misc},
	)
}

func misc(r *run) {
	r.Connect("A")
	r.Create("A", "/e", "", wire.ModePersistent)
	r.Create("A", "/e/x", "", wire.ModeEphemeral)
	r.Create("A", "/ex", "", wire.ModeEphemeral)
	r.Note("getEphemerals: blank prefixes and \"/\" with blanks mean all; otherwise a plain string prefix")
	for _, p := range []string{" ", "  /  ", "\t", "/ ", " /e", "/e", "/e/", "e", "/ex/", "/ex"} {
		r.GetEphemerals("A", p)
	}
	r.Note("invalid watcher types and addWatch modes")
	r.GetData("A", "/e", true)
	for _, t := range []wire.WatcherType{0, 4, -1} {
		r.CheckWatches("A", "/e", t)
		r.RemoveWatches("A", "/e", t)
	}
	for _, m := range []wire.AddWatchMode{2, -1} {
		r.AddWatch("A", "/e", m)
	}
	r.SetData("A", "/e", "fires?", -1)
	r.Note("reconfig on a standalone server")
	r.Do("A", wire.OpReconfig, trace.Request{})
	r.Note("unchanged data and ACL still bump versions")
	r.SetData("A", "/e", "same", -1)
	r.SetData("A", "/e", "same", -1)
	r.SetACL("A", "/e", open, -1)
	r.SetACL("A", "/e", open, -1)
	r.Note("a long name")
	long := "/" + strings.Repeat("n", 2000)
	r.Create2("A", long, "", wire.ModePersistent)
	r.Create("A", long+"/s-", "", wire.ModePersistentSequential)
	r.GetChildren2("A", long, false)
	r.Note("/zookeeper nodes inside multis")
	r.Multi("A", opSetData("/zookeeper/config", "x", -1))
	r.Multi("A", opDelete("/zookeeper/quota", -1))
	r.Multi("A", opCreate("/zookeeper/m", "", wire.ModePersistent), opCheck("/zookeeper/config", -1), opDelete("/zookeeper/m", -1))
	r.Multi("A", opCheck("/zookeeper", 0), opCheck("/", -1))
	r.GetChildren2("A", "/zookeeper", false)
}

func init() {
	scenarios = append(scenarios,
		scenario{name: "root_alias", desc: "the empty path as the root's alias: watches set through \"\" by reads, addWatch and setWatches, and which of them root changes fire", config: baseConfig, script: rootAlias},
	)
}

func rootAlias(r *run) {
	r.Connect("A")
	r.Connect("B")
	r.Note("reads through \"\" with watches")
	r.GetData("B", "", true)
	r.Exists("B", "", true)
	r.GetChildren("B", "", true)
	r.CheckWatches("B", "", wire.WatcherData)
	r.CheckWatches("B", "", wire.WatcherChildren)
	r.CheckWatches("B", "/", wire.WatcherAny)
	r.SetData("A", "/", "root", -1)
	r.Create("A", "/x", "", wire.ModePersistent)
	r.CheckWatches("B", "", wire.WatcherAny)
	r.RemoveWatches("B", "", wire.WatcherAny)
	r.CheckWatches("B", "", wire.WatcherAny)
	r.Note("addWatch through \"\"")
	r.AddWatch("B", "", wire.AddWatchPersistentRecursive)
	r.Create("A", "/y", "", wire.ModePersistent)
	r.SetData("A", "/", "root2", -1)
	r.RemoveWatches("B", "", wire.WatcherAny)
	r.AddWatch("B", "", wire.AddWatchPersistent)
	r.Create("A", "/z", "", wire.ModePersistent)
	r.SetData("A", "/", "root3", -1)
	r.RemoveWatches("B", "", wire.WatcherAny)
	r.Note("setWatches through \"\"")
	seen := r.LastZxid("B")
	r.Disconnect("B")
	r.SetData("A", "/", "root4", -1)
	r.Reconnect("B")
	r.Do("B", wire.OpSetWatches, setWatches(seen, []string{""}, []string{""}, []string{""}, nil, nil))
	r.SetData("A", "/", "root5", -1)
	r.Create("A", "/w", "", wire.ModePersistent)
	r.CheckWatches("B", "", wire.WatcherAny)
}

func init() {
	scenarios = append(scenarios,
		scenario{name: "auth_edges", desc: "addAuth corner cases: an empty digest login, ip with another address, unknown and differently-cased schemes, the same login twice", config: baseConfig, script: authEdges},
	)
}

func authEdges(r *run) {
	r.Connect("A")
	r.AddAuth("A", "digest", "")
	r.AddAuth("A", "digest", "x:y")
	r.AddAuth("A", "digest", "x:y")
	r.Note("ip ignores the address given and adds the connection's own")
	r.AddAuth("A", "ip", "10.1.2.3")
	r.WhoAmI("A")
	r.CreateACL("A", "/auth", "", wire.CreatorAllACL, wire.ModePersistent)
	r.GetACL("A", "/auth")
	for i, scheme := range []string{"DIGEST", "x509", "sasl", "super", "auth", ""} {
		s := fmt.Sprintf("S%d", i)
		r.Connect(s)
		r.AddAuth(s, scheme, "u:p")
	}
}

func init() {
	scenarios = append(scenarios,
		scenario{name: "digest_paths", desc: "nodes whose names start like /zookeeper (which the tree digest leaves out) and nodes under it, for the digests logged after each txn", config: baseConfig, script: digestPaths},
	)
}

func digestPaths(r *run) {
	r.Connect("A")
	for _, p := range []string{"/zookeeperx", "/zookeeper2", "/zookeeper2/a", "/zookeepe", "/zookeeper/x", "/zookeeper/quota/x", "/zookeeper/x/y"} {
		r.Create("A", p, "d", wire.ModePersistent)
		r.SetData("A", p, "dd", -1)
	}
	r.SetData("A", "/zookeeper", "z", -1)
	r.SetData("A", "/", "root", -1)
	r.SetACL("A", "/zookeeper/x", wire.ReadACLUnsafe, -1)
	r.Delete("A", "/zookeeper/x/y", -1)
	r.Delete("A", "/zookeeperx", -1)
	r.GetData("A", "/zookeeper", false)
}

func init() {
	scenarios = append(scenarios,
		scenario{name: "create_ops", desc: "every create opcode (create, create2, createContainer, createTTL) with every create mode, alone and inside a multi", config: baseConfig, script: createOps},
	)
}

func createOps(r *run) {
	r.Connect("A")
	r.Create("A", "/c", "", wire.ModePersistent)
	ops := []wire.OpCode{wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL}
	for _, op := range ops {
		for m := wire.CreateMode(0); m <= 6; m++ {
			req := createReq(fmt.Sprintf("/c/%s-%d-", op, m), "", open, m)
			if op == wire.OpCreateTTL {
				req.TTL = 100000
			}
			r.Do("A", op, req)
		}
	}
	r.GetChildren2("A", "/c", false)
	for _, op := range ops {
		for m := wire.CreateMode(0); m <= 6; m++ {
			req := createReq(fmt.Sprintf("/c/m-%s-%d-", op, m), "", open, m)
			if op == wire.OpCreateTTL {
				req.TTL = 100000
			}
			r.Multi("A", trace.SubOp{Op: op.String(), Req: req})
		}
	}
	r.GetChildren2("A", "/c", false)
}
