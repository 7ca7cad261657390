package main

import (
	"fmt"
	"time"

	"github.com/zabd/zabd/wire"
)

func init() {
	scenarios = append(scenarios,
		scenario{name: "expiry", desc: "a session that stops pinging expires (a server-issued closeSession deleting its ephemerals and firing the watches of others); a dropped connection alone keeps the session", config: baseConfig, script: expiry},
		scenario{name: "path_chars", desc: "characters ZooKeeper's path check refuses or accepts: controls, the BMP ranges, characters outside the BMP (surrogate pairs in Java), odd but valid names", config: baseConfig, script: pathChars},
		scenario{name: "acl_edges", desc: "ip ACL forms, digest ids and logins with extra colons, super and auth together, getACL masking by ADMIN, world with odd perms", config: baseConfig, script: aclEdges},
		scenario{name: "reaper_edges", desc: "TTL refreshed by setData, containers emptied by a multi, by closeSession of an ephemeral child, refilled before the reaper runs, deleted by a client", config: baseConfig, script: reaperEdges},
		scenario{name: "quota_edges", desc: "quota stats across subtree deletes, a quota'd node deleted and recreated, the old limits format, nested quotas written by hand", config: baseConfig, script: quotaEdges},
	)
}

func expiry(r *run) {
	r.Connect("A")
	r.Note("E asks for 1 s; the server raises it to its minimum, 2 ticks")
	r.ConnectTimeout("E", 1000)
	r.Create("A", "/x", "", wire.ModePersistent)
	r.Create("E", "/x/e1", "", wire.ModeEphemeral)
	r.Create("E", "/x/e2-", "", wire.ModeEphemeralSequential)
	r.Create("E", "/eph", "", wire.ModeEphemeral)
	r.GetChildren("A", "/x", true)
	r.Exists("A", "/x/e1", true)
	r.GetData("A", "/eph", true)
	r.Note("E's connection drops: its ephemerals stay until it expires")
	r.Disconnect("E")
	r.GetChildren2("A", "/x", false)
	r.Note("E expires: the server's closeSession fires A's watches")
	r.WaitEvents("A", 30*time.Second)
	r.GetChildren2("A", "/x", false)
	r.Exists("A", "/eph", false)
	r.GetEphemerals("A", "/")
}

func pathChars(r *run) {
	r.Connect("A")
	r.Create("A", "/c", "", wire.ModePersistent)
	names := []string{
		"\u0000x", "x\u0009", "\u001f", "\u0020", "\u007e", "\u007f", "\u0080", "\u009f", "\u00a0",
		"\u00ff", "\u0100", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uf8ff", "\uf900", "\ufeff",
		"\uffef", "\ufff0", "\ufffd", "\uffff", "\U00010000", "\U0001f600", "\U0010ffff",
		"日本語", "a.b", "...", ".x", "x.", " ", "a/b", "zookeeper", "-", "%",
	}
	for _, n := range names {
		p := "/c/" + n
		r.Note("name " + quoteForNote(n))
		r.Create2("A", p, n, wire.ModePersistent)
		r.GetData("A", p, false)
		r.SetData("A", p, "x", -1)
		r.Delete("A", p, -1)
	}
	r.Note("sequential names after invalid prefixes")
	r.Create("A", "/c/\u0001", "", wire.ModePersistentSequential)
	r.Create("A", "/c/\U0001f600", "", wire.ModePersistentSequential)
	r.GetChildren2("A", "/c", false)
}

func aclEdges(r *run) {
	r.Connect("A")
	r.Connect("B")
	r.Connect("S")
	r.AddAuth("S", "digest", "super:"+superPassword)
	r.Create("A", "/a", "", wire.ModePersistent)
	r.Note("ip ACL forms")
	for i, ip := range []string{"127.0.0.1/32", "127.0.0.1/31", "127.0.0.0/24", "127.1", "0.0.0.0/0", "::1", "127.0.0.1/", "127.0.0.01", " 127.0.0.1", "127.0.0.1/-1", "10.0.0.0/8", "127.0.0.2/31"} {
		p := fmt.Sprintf("/a/ip%d", i)
		r.Note("ip ACL " + quoteForNote(ip))
		r.CreateACL("A", p, "", []wire.ACL{ipACL(wire.PermRead, ip)}, wire.ModePersistent)
		r.GetData("B", p, false)
	}
	r.GetChildren2("A", "/a", false)
	r.Note("digest logins and ids with extra colons or empty parts")
	r.AddAuth("B", "digest", "u:p:q")
	r.AddAuth("B", "digest", ":empty")
	r.AddAuth("B", "digest", "nouser:")
	r.WhoAmI("B")
	r.CreateACL("B", "/a/auth", "", wire.CreatorAllACL, wire.ModePersistent)
	r.GetACL("B", "/a/auth")
	r.GetACL("A", "/a/auth")
	r.CreateACL("A", "/a/d3", "", []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: "a:b:c"}}}, wire.ModePersistent)
	r.CreateACL("A", "/a/d0", "", []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: ":"}}}, wire.ModePersistent)
	r.GetACL("A", "/a/d3")
	r.Note("the super session's auth ACL")
	r.CreateACL("S", "/a/superauth", "", wire.CreatorAllACL, wire.ModePersistent)
	r.GetACL("S", "/a/superauth")
	r.GetACL("A", "/a/superauth")
	r.Note("masking: getACL with READ only vs with ADMIN")
	r.AddAuth("A", "digest", "alice:pw")
	r.CreateACL("A", "/a/mask", "", []wire.ACL{digestACL(wire.PermRead, "bob", "pw"), digestACL(wire.PermAdmin, "carol", "pw"), digestACL(wire.PermAll, "alice", "pw"), worldACL(wire.PermRead)}, wire.ModePersistent)
	r.GetACL("B", "/a/mask")
	r.GetACL("A", "/a/mask")
	r.GetACL("S", "/a/mask")
	r.Connect("C")
	r.AddAuth("C", "digest", "carol:pw")
	r.GetACL("C", "/a/mask")
	r.Note("auth ACL mixed with others and duplicates")
	r.CreateACL("A", "/a/mixed", "", []wire.ACL{worldACL(wire.PermRead), {Perms: wire.PermWrite, ID: wire.AuthIDs}, digestACL(wire.PermAll, "alice", "pw"), worldACL(wire.PermRead)}, wire.ModePersistent)
	r.GetACL("A", "/a/mixed")
	r.Note("world perms with unknown bits, and an empty world id")
	r.CreateACL("A", "/a/w", "", []wire.ACL{{Perms: -1, ID: wire.AnyoneID}}, wire.ModePersistent)
	r.GetACL("B", "/a/w")
	r.SetData("B", "/a/w", "x", -1)
	r.CreateACL("A", "/a/wempty", "", []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: ""}}}, wire.ModePersistent)
	r.Note("super writes everywhere, /zookeeper/config included")
	r.SetData("S", "/zookeeper/config", "x", -1)
	r.SetACL("S", "/zookeeper/config", open, -1)
	r.GetACL("S", "/zookeeper/config")
	r.Delete("S", "/zookeeper/config", -1)
}

func reaperEdges(r *run) {
	r.Connect("A")
	r.Connect("E")
	r.Connect("W")
	r.Note("TTL node kept alive by setData")
	r.CreateTTL("A", "/t", "", wire.ModePersistentWithTTL, 2000)
	r.CreateTTL("A", "/tshort", "", wire.ModePersistentWithTTL, 2000)
	r.Exists("W", "/t", true)
	r.Exists("W", "/tshort", true)
	time.Sleep(1200 * time.Millisecond)
	r.SetData("A", "/t", "touch", -1)
	r.WaitGone("W", "/tshort", 15*time.Second)
	r.Exists("W", "/t", false)
	r.WaitGone("W", "/t", 15*time.Second)
	r.Note("container emptied by a multi")
	r.CreateContainer("A", "/c1", "")
	r.Create("A", "/c1/k", "", wire.ModePersistent)
	r.Exists("W", "/c1", true)
	r.Multi("A", opDelete("/c1/k", -1), opCreate("/other", "", wire.ModePersistent))
	r.WaitGone("W", "/c1", 15*time.Second)
	r.Note("container emptied by closeSession of its ephemeral child")
	r.CreateContainer("A", "/c2", "")
	r.Create("E", "/c2/e", "", wire.ModeEphemeral)
	r.GetChildren("W", "/c2", true)
	r.CloseSession("E")
	r.WaitGone("W", "/c2", 15*time.Second)
	r.Note("a client deletes a container itself")
	r.CreateContainer("A", "/c3", "")
	r.Create("A", "/c3/k", "", wire.ModePersistent)
	r.Delete("A", "/c3/k", -1)
	r.Delete("A", "/c3", -1)
	r.Note("a container refilled at once keeps living")
	r.CreateContainer("A", "/c4", "")
	r.Create("A", "/c4/k", "", wire.ModePersistent)
	r.Multi("A", opDelete("/c4/k", -1), opCreate("/c4/k2", "", wire.ModePersistent))
	time.Sleep(1500 * time.Millisecond)
	r.GetChildren2("A", "/c4", false)
	r.Note("sequential TTL children of a container")
	r.CreateContainer("A", "/c5", "")
	r.CreateTTL("A", "/c5/t-", "", wire.ModePersistentSequentialWithTTL, 1000)
	r.Exists("W", "/c5", true)
	r.WaitGone("W", "/c5", 20*time.Second)
	r.GetChildren2("A", "/", false)
}

func quotaEdges(r *run) {
	r.Connect("A")
	r.Create("A", "/q", "", wire.ModePersistent)
	r.Create("A", "/q/a", "12345", wire.ModePersistent)
	r.Create("A", "/q/a/b", "123", wire.ModePersistent)
	r.Note("the old limits format, no hard limits")
	r.Create("A", "/zookeeper/quota/q", "", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/q/zookeeper_limits", "count=10,bytes=100", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/q/zookeeper_stats", "count=0,bytes=0", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.Note("subtree delete, ephemeral and sequential children, multi")
	r.Delete("A", "/q/a/b", -1)
	r.Create("A", "/q/e", "eph", wire.ModeEphemeral)
	r.Create("A", "/q/s-", "seq", wire.ModePersistentSequential)
	r.Multi("A", opCreate("/q/m", "multi", wire.ModePersistent), opSetData("/q/a", "", -1), opDelete("/q/m", -1))
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.Note("a quota node written before its path exists, and the path deleted and recreated")
	r.Create("A", "/zookeeper/quota/later", "", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/later/zookeeper_limits", "count=5,bytes=50", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/later/zookeeper_stats", "count=0,bytes=0", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/later/zookeeper_stats", false)
	r.Create("A", "/later", "abc", wire.ModePersistent)
	r.Create("A", "/later/x", "de", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/later/zookeeper_stats", false)
	r.Delete("A", "/later/x", -1)
	r.Delete("A", "/later", -1)
	r.GetData("A", "/zookeeper/quota/later/zookeeper_stats", false)
	r.Create("A", "/later", "abcdef", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/later/zookeeper_stats", false)
	r.Note("nested quotas written by hand (zkCli refuses them)")
	r.Create("A", "/zookeeper/quota/q/a", "", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/q/a/zookeeper_limits", "count=2,bytes=10", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/q/a/zookeeper_stats", "count=0,bytes=0", wire.ModePersistent)
	r.Create("A", "/q/a/c", "xyz", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/q/a/zookeeper_stats", false)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.Note("stats node rewritten by a client, limits node changed")
	r.SetData("A", "/zookeeper/quota/q/zookeeper_stats", "count=99,bytes=99", -1)
	r.Create("A", "/q/z", "", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.SetData("A", "/zookeeper/quota/q/zookeeper_limits", "count=1,bytes=1", -1)
	r.Create("A", "/q/y", "", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.Note("deleting the quota nodes")
	r.Delete("A", "/zookeeper/quota/q/a/zookeeper_stats", -1)
	r.Create("A", "/q/a/d", "", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.GetAllChildrenNumber("A", "/zookeeper/quota")
}

func init() {
	scenarios = append(scenarios,
		scenario{name: "quota_odd", desc: "quota nodes with limits data that is not a StatsTrack, and a stats node without a limits node, with enforceQuota=true", config: append(append([]string{}, baseConfig...), "enforceQuota=true"), script: quotaOdd},
	)
}

// quotaOdd leaves out a quota on the root: creating
// /zookeeper/quota/zookeeper_limits kills ZooKeeper 3.8.0 (PathTrie.addPath("")
// throws in the sync thread, a "severe unrecoverable error").
func quotaOdd(r *run) {
	r.Connect("A")
	r.Note("limits data that does not parse")
	r.Create("A", "/g", "", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/g", "", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/g/zookeeper_limits", "garbage", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/g/zookeeper_stats", "count=0,bytes=0", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/g/zookeeper_stats", false)
	r.Create("A", "/g/x", "12345", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/g/zookeeper_stats", false)
	r.Note("a stats node without a limits node")
	r.Create("A", "/h", "", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/h", "", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/h/zookeeper_stats", "count=0,bytes=0", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/h/zookeeper_stats", false)
	r.Create("A", "/h/x", "12345", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/h/zookeeper_stats", false)
	r.GetAllChildrenNumber("A", "/")
}
