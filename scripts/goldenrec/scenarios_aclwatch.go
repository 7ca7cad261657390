package main

import (
	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

func init() {
	scenarios = append(scenarios,
		scenario{name: "acl_watches", desc: "watches and ACLs together: which reads leave a watch when they answer NoAuth, events for nodes the watcher cannot read, addWatch and setWatches on unreadable nodes, multiRead per-op NoAuth", config: baseConfig, script: aclWatches},
	)
}

func aclWatches(r *run) {
	r.Connect("A")
	r.Connect("B")
	r.AddAuth("A", "digest", "owner:pw")
	private := []wire.ACL{digestACL(wire.PermAll, "owner", "pw")}
	r.CreateACL("A", "/s", "secret", private, wire.ModePersistent)
	r.Create("A", "/open", "", wire.ModePersistent)
	r.Note("reads refused with NoAuth: does a watch stay?")
	r.GetData("B", "/s", true)
	r.GetChildren("B", "/s", true)
	r.GetChildren2("B", "/s", true)
	r.Exists("B", "/s", true)
	r.SetData("A", "/s", "changed", -1)
	r.Create("A", "/s/kid", "", wire.ModePersistent)
	r.Note("recursive and persistent watches over unreadable nodes")
	r.AddWatch("B", "/s", wire.AddWatchPersistent)
	r.AddWatch("B", "/open", wire.AddWatchPersistentRecursive)
	r.CreateACL("A", "/open/hidden", "", private, wire.ModePersistent)
	r.SetData("A", "/open/hidden", "x", -1)
	r.CreateACL("A", "/open/hidden/deeper", "", private, wire.ModePersistent)
	r.Delete("A", "/open/hidden/deeper", -1)
	r.SetData("A", "/s", "again", -1)
	r.Create("A", "/s/kid2", "", wire.ModePersistent)
	r.Note("setWatches on unreadable nodes after a reconnect")
	seen := r.LastZxid("B")
	r.Disconnect("B")
	r.SetData("A", "/s", "while away", -1)
	r.Reconnect("B")
	r.Do("B", wire.OpSetWatches, setWatches(seen, []string{"/s"}, []string{"/s/kid"}, []string{"/s"}, nil, nil))
	r.SetData("A", "/s/kid", "x", -1)
	r.Create("A", "/s/kid3", "", wire.ModePersistent)
	r.Note("multiRead and getAllChildrenNumber, getEphemerals on unreadable nodes")
	r.MultiRead("B", opGetData("/s"), opGetChildren("/s"), opGetData("/open"))
	r.GetAllChildrenNumber("B", "/s")
	r.GetAllChildrenNumber("B", "/open")
	r.CreateACL("B", "/open/beph", "", private, wire.ModeEphemeral)
	r.GetEphemerals("B", "/open")
	r.Note("removeWatches and checkWatches on unreadable nodes")
	r.CheckWatches("B", "/s", wire.WatcherAny)
	r.RemoveWatches("B", "/s", wire.WatcherAny)
	r.Note("a one-shot data watch left by exists on an unreadable node, then the node deleted")
	r.Exists("B", "/s/kid", true)
	r.Do("A", wire.OpDelete, trace.Request{Path: "/s/kid", Version: trace.Int32(-1)})
}

func init() {
	scenarios = append(scenarios,
		scenario{name: "acl_watches_auth", desc: "watch events are filtered with the identities a connection has when the event is sent, not when the watch was set", config: baseConfig, script: aclWatchesAuth},
	)
}

func aclWatchesAuth(r *run) {
	r.Connect("A")
	r.Connect("B")
	r.AddAuth("A", "digest", "owner:pw")
	private := []wire.ACL{digestACL(wire.PermAll, "owner", "pw")}
	r.CreateACL("A", "/s", "", private, wire.ModePersistent)
	r.CreateACL("A", "/t", "", private, wire.ModePersistent)
	r.Note("B watches /s and /t without READ, then logs in as the owner")
	r.Exists("B", "/s", true)
	r.AddWatch("B", "/t", wire.AddWatchPersistentRecursive)
	r.AddAuth("B", "digest", "owner:pw")
	r.SetData("A", "/s", "x", -1)
	r.Create("A", "/t/k", "", wire.ModePersistent)
	r.Note("C logs in first, then watches; a login that adds nothing changes nothing")
	r.Connect("C")
	r.AddAuth("C", "digest", "owner:pw")
	r.GetData("C", "/s", true)
	r.AddAuth("C", "digest", "other:pw")
	r.SetData("A", "/s", "y", -1)
	r.Note("the ACL changes under a watch: the new ACL decides")
	r.Connect("D")
	r.Exists("D", "/s", true)
	r.AddWatch("D", "/t", wire.AddWatchPersistent)
	r.SetACL("A", "/s", wire.OpenACLUnsafe, -1)
	r.SetData("A", "/s", "z", -1)
	r.SetACL("A", "/t", wire.OpenACLUnsafe, -1)
	r.Create("A", "/t/k2", "", wire.ModePersistent)
	r.Delete("A", "/t/k2", -1)
}
