package main

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

// digestID is the id of a digest ACL: user:base64(sha1("user:password")).
func digestID(user, password string) string {
	sum := sha1.Sum([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

func digestACL(perms int32, user, password string) wire.ACL {
	return wire.ACL{Perms: perms, ID: wire.Id{Scheme: "digest", ID: digestID(user, password)}}
}

func ipACL(perms int32, ip string) wire.ACL {
	return wire.ACL{Perms: perms, ID: wire.Id{Scheme: "ip", ID: ip}}
}

func worldACL(perms int32) wire.ACL {
	return wire.ACL{Perms: perms, ID: wire.AnyoneID}
}

var scenarios = []scenario{
	{name: "create_modes", desc: "every create mode, create2/createContainer/createTTL replies, sequential naming after deletes, failed creates and hand-made names, `create -s /p/`, recreated parents", config: baseConfig, script: createModes},
	{name: "ephemerals", desc: "ephemeral owners, NoChildrenForEphemerals, getEphemerals, closeSession deleting ephemerals and firing watches of both sessions", config: baseConfig, script: ephemerals},
	{name: "versions", desc: "version conflicts on setData/delete/setACL/check, NotEmpty, stat fields after each change, error precedence", config: baseConfig, script: versions},
	{name: "paths", desc: "invalid paths on every op (BadArguments vs NoNode), the empty path, special paths /, /zookeeper, /zookeeper/config, /zookeeper/quota", config: baseConfig, script: paths},
	{name: "multi", desc: "multi success and failure with per-op results, empty multi, read op inside multi, create2/TTL/container sub-ops, watches fired by a multi, multiRead", config: baseConfig, script: multi},
	{name: "acl", desc: "ACL matrix: world, digest with addAuth, auth scheme, ip, super, wrong password, getACL masking, InvalidACL, error precedence, whoAmI", config: baseConfig, script: acl},
	{name: "watches", desc: "watch trigger table across two sessions: data/exist/child watches, exists on a missing node, one event per watcher on delete, node event before parent's NodeChildrenChanged, persistent and recursive watches, removeWatches/checkWatches", config: baseConfig, script: watches},
	{name: "reaper", desc: "containers and TTL nodes reaped by the server (deleteContainer txns), nested containers, never-filled container kept, TTL refreshed by setData", config: baseConfig, script: reaper},
	{name: "no_extended_types", desc: "TTL creates and container nodes with extendedTypesEnabled=false", config: nil, script: noExtendedTypes},
	{name: "quota", desc: "quota nodes under /zookeeper/quota written as zkCli setquota writes them, and the zookeeper_stats ZooKeeper keeps up to date", config: baseConfig, script: quota},
}

func createModes(r *run) {
	r.Connect("A")
	r.Connect("B")
	r.Note("persistent")
	r.Create("A", "/p", "root-data", wire.ModePersistent)
	r.Create2("A", "/p/persistent", "x", wire.ModePersistent)
	r.Create2("A", "/p/eph", "e", wire.ModeEphemeral)
	r.Create2("A", "/p/seq-", "s", wire.ModePersistentSequential)
	r.Create2("A", "/p/ephseq-", "es", wire.ModeEphemeralSequential)
	r.CreateContainer("A", "/p/container", "c")
	r.CreateTTL("A", "/p/ttl", "t", wire.ModePersistentWithTTL, 100000)
	r.CreateTTL("A", "/p/seqttl-", "st", wire.ModePersistentSequentialWithTTL, 100000)
	r.GetChildren2("A", "/p", false)
	for _, p := range []string{"/p", "/p/persistent", "/p/eph", "/p/container", "/p/ttl"} {
		r.Exists("B", p, false)
	}
	r.Note("create2 with the container flag makes a plain node")
	r.Create2("A", "/p/c2container", "", wire.ModeContainer)
	r.Note("TTL flag outside createTTL")
	r.Create2("A", "/p/ttl-in-create2", "", wire.ModePersistentWithTTL)
	r.Note("TTL out of range")
	r.CreateTTL("A", "/p/ttl0", "", wire.ModePersistentWithTTL, 0)
	r.CreateTTL("A", "/p/ttlneg", "", wire.ModePersistentWithTTL, -5)
	r.CreateTTL("A", "/p/ttlbig", "", wire.ModePersistentWithTTL, 1<<40)
	r.CreateTTL("A", "/p/ttlmax", "", wire.ModePersistentWithTTL, 1<<40-1)
	r.Note("createTTL with a non-TTL mode")
	r.CreateTTL("A", "/p/ttlplain", "", wire.ModePersistent, 1000)
	r.Note("unknown create mode")
	r.Create("A", "/p/badmode", "", wire.CreateMode(7))
	r.Create("A", "/p/negmode", "", wire.CreateMode(-1))
	r.Note("client-sent deleteContainer")
	r.Do("A", wire.OpDeleteContainer, createReq("/p/container", "", nil, 0))

	r.Note("sequential naming: counts children ever created; deletes count, failed creates do not")
	r.Create("A", "/s", "", wire.ModePersistent)
	r.Create("A", "/s/a-", "", wire.ModePersistentSequential)
	r.Create("A", "/s/plain", "", wire.ModePersistent)
	r.Create("A", "/s/a-", "", wire.ModePersistentSequential)
	r.Delete("A", "/s/a-0000000000", -1)
	r.Create("A", "/s/a-", "", wire.ModePersistentSequential)
	r.Note("failed create (exists) does not count")
	r.Create("A", "/s/plain", "", wire.ModePersistent)
	r.Create("A", "/s/b-", "", wire.ModeEphemeralSequential)
	r.Note("failed create (no parent) of a sequential under /s/missing")
	r.Create("A", "/s/missing/x-", "", wire.ModePersistentSequential)
	r.GetChildren2("A", "/s", false)
	r.Note("hand-made node with the next sequential name")
	r.Create("A", "/s/c-0000000006", "", wire.ModePersistent)
	r.Create("A", "/s/c-", "", wire.ModePersistentSequential)
	r.Create("A", "/s/c-", "", wire.ModePersistentSequential)
	r.Note("create -s /p/ : empty last component with sequential")
	r.Create("A", "/s/", "", wire.ModePersistentSequential)
	r.Create2("A", "/s/", "", wire.ModeEphemeralSequential)
	r.Note("trailing slash without sequential")
	r.Create("A", "/s/", "", wire.ModePersistent)
	r.Note("sequential at the root")
	r.Create("A", "/", "", wire.ModePersistentSequential)
	r.Create("A", "/rootseq-", "", wire.ModePersistentSequential)
	r.GetChildren2("A", "/s", false)
	r.Note("delete all children and the parent, recreate: counter restarts")
	kids := r.GetChildren("A", "/s", false)
	for _, l := range kids.RespChildren() {
		r.Delete("A", "/s/"+l, -1)
	}
	r.Delete("A", "/s", -1)
	r.Create("A", "/s", "", wire.ModePersistent)
	r.Create2("A", "/s/a-", "", wire.ModePersistentSequential)
	r.Note("sequential counter past many creates")
	for i := 0; i < 12; i++ {
		r.Create("B", "/s/q-", "", wire.ModeEphemeralSequential)
	}
	r.GetChildren2("B", "/s", false)
	r.Note("null data")
	r.Do("A", wire.OpCreate2, trace.Request{Path: "/nulldata", ACL: open, Mode: mode(wire.ModePersistent)})
	r.GetData("A", "/nulldata", false)
	r.GetData("A", "/p", false)
	r.GetAllChildrenNumber("A", "/")
	r.GetAllChildrenNumber("A", "/s")
	r.GetAllChildrenNumber("A", "/missing")
	r.GetData("A", "/", false)
	r.GetChildren2("A", "/", false)
}

func ephemerals(r *run) {
	r.Connect("A")
	r.Connect("B")
	r.Create("A", "/e", "", wire.ModePersistent)
	r.Create2("A", "/e/a1", "1", wire.ModeEphemeral)
	r.Create2("A", "/e/a2-", "2", wire.ModeEphemeralSequential)
	r.Create2("B", "/e/b1", "3", wire.ModeEphemeral)
	r.Create("A", "/e/sub", "", wire.ModePersistent)
	r.Create("A", "/e/sub/a3", "", wire.ModeEphemeral)
	r.Create("A", "/eph-top", "", wire.ModeEphemeral)
	r.Note("children of an ephemeral")
	r.Create("A", "/e/a1/child", "", wire.ModePersistent)
	r.Create("B", "/e/a1/child", "", wire.ModeEphemeral)
	r.Note("NoNode beats NoChildrenForEphemerals? the grandparent is missing")
	r.Create("A", "/e/a1/child/x", "", wire.ModePersistent)
	r.Create("A", "/e/a1/", "", wire.ModePersistentSequential)
	r.Note("getEphemerals by prefix: own nodes only")
	r.GetEphemerals("A", "/")
	r.GetEphemerals("A", "/e")
	r.GetEphemerals("A", "/e/a")
	r.GetEphemerals("A", "/e/sub/")
	r.GetEphemerals("A", "/nothing")
	r.GetEphemerals("A", "")
	r.GetEphemerals("B", "/")
	r.Exists("B", "/e/a1", true)
	r.GetData("B", "/e/a2-0000000001", true)
	r.GetChildren("B", "/e", true)
	r.GetChildren("B", "/e/sub", true)
	r.Exists("A", "/e/a1", true)
	r.GetChildren("A", "/e", true)
	r.Note("closeSession deletes A's ephemerals and fires A's and B's watches")
	r.CloseSession("A")
	r.GetChildren2("B", "/e", false)
	r.GetChildren2("B", "/e/sub", false)
	r.GetChildren2("B", "/", false)
	r.Exists("B", "/eph-top", false)
	r.Note("a third session sees B's ephemeral owner")
	r.Connect("C")
	r.Exists("C", "/e/b1", false)
	r.GetEphemerals("C", "/")
	r.Note("delete another session's ephemeral")
	r.Delete("C", "/e/b1", -1)
	r.GetEphemerals("B", "/")
	r.CloseSession("B")
	r.GetChildren2("C", "/e", false)
}

func versions(r *run) {
	r.Connect("A")
	r.Create2("A", "/v", "v0", wire.ModePersistent)
	r.SetData("A", "/v", "v1", 0)
	r.SetData("A", "/v", "v2", 0)
	r.SetData("A", "/v", "v3", -1)
	r.SetData("A", "/v", "v4", 2)
	r.SetData("A", "/v", "v5", 7)
	r.SetData("A", "/v", "", -1)
	r.GetData("A", "/v", false)
	r.SetData("A", "/v", "back", -2)
	r.Note("setData on a missing node")
	r.SetData("A", "/v/missing", "", -1)
	r.Note("setACL aversion")
	r.SetACL("A", "/v", open, 1)
	r.SetACL("A", "/v", open, 0)
	r.SetACL("A", "/v", []wire.ACL{worldACL(wire.PermAll)}, 0)
	r.SetACL("A", "/v", []wire.ACL{worldACL(wire.PermAll)}, 1)
	r.SetACL("A", "/v", open, -1)
	r.GetACL("A", "/v")
	r.Note("children and cversion")
	r.Create("A", "/v/c1", "", wire.ModePersistent)
	r.Create("A", "/v/c2", "", wire.ModePersistent)
	r.GetChildren2("A", "/v", false)
	r.Note("NotEmpty and version precedence on delete")
	r.Delete("A", "/v", -1)
	r.Delete("A", "/v", 99)
	r.Delete("A", "/v", 4)
	r.Delete("A", "/v/c1", 1)
	r.Delete("A", "/v/c1", 0)
	r.GetChildren2("A", "/v", false)
	r.Delete("A", "/v/c1", -1)
	r.Delete("A", "/v/c2", -1)
	r.GetChildren2("A", "/v", false)
	r.Create2("A", "/v/c1", "again", wire.ModePersistent)
	r.GetChildren2("A", "/v", false)
	r.Note("check in multi (plain check is left out: 3.8.0 never replies to a successful one)")
	r.Multi("A", opCheck("/v", 4))
	r.Multi("A", opCheck("/v", 5))
	r.Multi("A", opCheck("/v", -1))
	r.Multi("A", opCheck("/v/none", -1))
	r.Note("stat of root after changes")
	r.Exists("A", "/", false)
	r.Delete("A", "/v/c1", -1)
	r.Delete("A", "/v", -1)
	r.Exists("A", "/v", false)
	r.Delete("A", "/v", -1)
	r.Exists("A", "/", false)
}

func paths(r *run) {
	r.Connect("A")
	r.Create("A", "/a", "a", wire.ModePersistent)
	bad := []string{"", "a", "/a/", "//", "/a//b", "/a/./b", "/a/../b", "/.", "/..", "/a/.", "/a/..",
		"/a\x00b", "/a\x01b", "/a\x1fb", "/a\u007fb", "/a\u009fb", "/a\ud7ffb", "/a\ue000b", "/a\ufff0b", "/a\uffffb",
		"/.a", "/a..", "/a b", "/a/\u00e9"}
	for _, p := range bad {
		r.Note("path " + quoteForNote(p))
		r.Create("A", p, "", wire.ModePersistent)
		r.Create("A", p, "", wire.ModePersistentSequential)
		r.SetData("A", p, "", -1)
		r.SetACL("A", p, open, -1)
		r.Delete("A", p, -1)
		r.Exists("A", p, false)
		r.GetData("A", p, false)
		r.GetChildren("A", p, false)
		r.GetChildren2("A", p, false)
		r.GetACL("A", p)
		r.Sync("A", p)
		r.GetAllChildrenNumber("A", p)
	}
	r.Note("special paths")
	for _, p := range []string{"/", "/zookeeper", "/zookeeper/config", "/zookeeper/quota"} {
		r.GetData("A", p, false)
		r.GetChildren2("A", p, false)
		r.GetACL("A", p)
		r.Create("A", p, "", wire.ModePersistent)
		r.SetData("A", p, "x", -1)
		r.Delete("A", p, -1)
		r.GetData("A", p, false)
	}
	r.Create2("A", "/zookeeper/x", "", wire.ModePersistent)
	r.Create2("A", "/zookeeper/quota/y", "", wire.ModePersistent)
	r.Delete("A", "/zookeeper/x", -1)
	r.Delete("A", "/zookeeper/quota/y", -1)
	r.SetACL("A", "/zookeeper", []wire.ACL{worldACL(wire.PermAll)}, -1)
	r.GetACL("A", "/zookeeper")
	r.Exists("A", "/", false)
}

func quoteForNote(p string) string {
	b := []byte{'"'}
	for _, c := range p {
		if c < 0x20 || (c >= 0x7f && c <= 0x9f) || c >= 0xd800 {
			b = append(b, []byte("\\u"+hex4(c))...)
			continue
		}
		b = append(b, string(c)...)
	}
	return string(append(b, '"'))
}

func hex4(c rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>12&15], digits[c>>8&15], digits[c>>4&15], digits[c&15]})
}

func multi(r *run) {
	r.Connect("A")
	r.Connect("B")
	r.Create("A", "/m", "", wire.ModePersistent)
	r.GetChildren("B", "/m", true)
	r.Exists("B", "/m/a", true)
	r.Note("success: every sub-op kind")
	r.Multi("A",
		opCreate("/m/a", "1", wire.ModePersistent),
		opCreate("/m/s-", "2", wire.ModePersistentSequential),
		opCreate2("/m/b", "3", wire.ModePersistent),
		opCreateTTL("/m/t", "4", wire.ModePersistentWithTTL, 100000),
		opCreateContainer("/m/c", "5"),
		opSetData("/m/a", "11", 0),
		opCheck("/m/a", 1),
		opCreate("/m/e", "", wire.ModeEphemeral),
		opDelete("/m/e", -1),
	)
	r.GetChildren2("A", "/m", false)
	r.GetData("B", "/m/a", true)
	r.GetChildren("B", "/m", true)
	r.Note("failure in the middle: ops before 0, first failure its code, after it RuntimeInconsistency")
	r.Multi("A",
		opSetData("/m/a", "12", 1),
		opCreate("/m/new", "", wire.ModePersistent),
		opCheck("/m/a", 0),
		opDelete("/m/b", -1),
		opCreate("/m/a", "", wire.ModePersistent),
	)
	r.GetChildren2("A", "/m", false)
	r.GetData("A", "/m/a", false)
	r.Note("failure at the first op")
	r.Multi("A", opDelete("/m/none", -1), opSetData("/m/a", "x", -1))
	r.Note("failure at the last op")
	r.Multi("A", opSetData("/m/a", "x", -1), opDelete("/m", -1))
	r.Note("a later op depends on an earlier one")
	r.Multi("A", opCreate("/m/d", "", wire.ModePersistent), opCreate("/m/d/e", "", wire.ModePersistent), opSetData("/m/d/e", "z", 0), opDelete("/m/d/e", 1), opDelete("/m/d", -1))
	r.Multi("A", opDelete("/m/b", -1), opCreate("/m/b", "again", wire.ModePersistent), opCheck("/m/b", 0))
	r.Note("empty multi")
	r.Multi("A")
	r.Note("read op inside a write multi")
	r.Multi("A", opCreate("/m/r", "", wire.ModePersistent), opGetData("/m/a"))
	r.Exists("A", "/m/r", false)
	r.Note("invalid path and bad args inside multi")
	r.Multi("A", opCreate("/m/ok", "", wire.ModePersistent), opCreate("/m/bad/", "", wire.ModePersistent))
	r.Multi("A", opCreate("/m/ok", "", wire.ModePersistent), opCreateTTL("/m/t2", "", wire.ModePersistentWithTTL, 0))
	r.Multi("A", opCreate("/m/ok", "", wire.ModePersistent), opCreate("/m/ok/eph", "", wire.ModeEphemeral), opCreate("/m/ok/eph/x", "", wire.ModePersistent))
	r.Note("multiRead reports per-op errors without aborting")
	r.MultiRead("A", opGetData("/m/a"), opGetChildren("/m"), opGetData("/m/none"), opGetChildren("/m/none"), opGetData("/m/b"), opGetChildren("/bad/"))
	r.Note("write op inside multiRead")
	r.MultiRead("A", opGetData("/m/a"), opCreate("/m/w", "", wire.ModePersistent))
	r.Exists("A", "/m/w", false)
	r.MultiRead("A")
	r.GetChildren2("A", "/m", false)
}

func acl(r *run) {
	r.Connect("A")
	r.Connect("B")
	r.Connect("C")
	r.WhoAmI("A")
	r.AddAuth("A", "digest", "alice:pw")
	r.AddAuth("A", "digest", "alice2:pw2")
	r.AddAuth("B", "digest", "bob:pw")
	r.Note("wrong password: accepted as a different identity")
	r.AddAuth("C", "digest", "alice:wrong")
	r.WhoAmI("A")
	r.WhoAmI("C")
	r.Create("A", "/acl", "", wire.ModePersistent)
	r.Note("auth scheme expands to the creator's digest ids")
	r.CreateACL("A", "/acl/auth", "secret", wire.CreatorAllACL, wire.ModePersistent)
	r.GetACL("A", "/acl/auth")
	r.GetACL("B", "/acl/auth")
	r.GetData("B", "/acl/auth", false)
	r.GetData("C", "/acl/auth", false)
	r.Note("auth scheme without an authenticated id")
	r.Connect("D")
	r.CreateACL("D", "/acl/noauth", "", wire.CreatorAllACL, wire.ModePersistent)
	r.Note("digest ACL per permission for bob")
	perms := []struct {
		name string
		p    int32
	}{{"read", wire.PermRead}, {"write", wire.PermWrite}, {"create", wire.PermCreate}, {"delete", wire.PermDelete}, {"admin", wire.PermAdmin}, {"none", 0}}
	for _, pm := range perms {
		path := "/acl/" + pm.name
		r.CreateACL("A", path, "d", []wire.ACL{digestACL(pm.p, "bob", "pw"), digestACL(wire.PermAll, "alice", "pw")}, wire.ModePersistent)
		r.Create("A", path+"/kid", "", wire.ModePersistent)
		r.Note("bob on " + path)
		r.GetData("B", path, false)
		r.Exists("B", path, false)
		r.GetChildren2("B", path, false)
		r.GetACL("B", path)
		r.SetData("B", path, "bob", -1)
		r.Create("B", path+"/bobkid", "", wire.ModePersistent)
		r.Delete("B", path+"/kid", -1)
		r.SetACL("B", path, []wire.ACL{digestACL(wire.PermAll, "bob", "pw"), digestACL(wire.PermAll, "alice", "pw")}, -1)
		r.Note("world (C) on " + path)
		r.GetData("C", path, false)
		r.GetACL("C", path)
		r.SetData("C", path, "c", -1)
	}
	r.Note("ip ACLs")
	r.CreateACL("A", "/acl/ip", "ip", []wire.ACL{ipACL(wire.PermRead, "127.0.0.1")}, wire.ModePersistent)
	r.CreateACL("A", "/acl/ip8", "ip8", []wire.ACL{ipACL(wire.PermRead|wire.PermWrite, "127.0.0.0/8")}, wire.ModePersistent)
	r.CreateACL("A", "/acl/ipother", "ipo", []wire.ACL{ipACL(wire.PermAll, "10.1.2.3"), ipACL(wire.PermRead, "10.0.0.0/8")}, wire.ModePersistent)
	r.GetData("C", "/acl/ip", false)
	r.SetData("C", "/acl/ip", "x", -1)
	r.SetData("C", "/acl/ip8", "x", -1)
	r.GetData("C", "/acl/ipother", false)
	r.GetACL("C", "/acl/ipother")
	r.Note("invalid ACLs")
	for _, bad := range [][]wire.ACL{
		{},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: "someone"}}},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "nosuch", ID: "x"}}},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: "nocolon"}}},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "ip", ID: "notanip"}}},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "ip", ID: "127.0.0.1/33"}}},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "ip", ID: "127.0.0.1/0"}}},
		{{Perms: 0, ID: wire.AnyoneID}},
		{{Perms: 64, ID: wire.AnyoneID}},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "auth", ID: "whatever"}}},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "super", ID: "x"}}},
		{worldACL(wire.PermRead), worldACL(wire.PermAll)},
	} {
		r.CreateACL("A", "/acl/bad", "", bad, wire.ModePersistent)
		r.Delete("A", "/acl/bad", -1)
		r.SetACL("A", "/acl/read", bad, -1)
	}
	r.GetACL("A", "/acl/read")
	r.Note("nil ACL")
	r.Do("A", wire.OpCreate, createReq("/acl/nilacl", "", nil, wire.ModePersistent))
	r.Note("auth in setACL")
	r.SetACL("B", "/acl/admin", wire.CreatorAllACL, -1)
	r.GetACL("B", "/acl/admin")
	r.GetACL("A", "/acl/admin")
	r.Note("error precedence: create NoNode vs NoAuth, NoAuth vs BadArguments")
	r.CreateACL("A", "/acl/locked", "", []wire.ACL{worldACL(wire.PermRead)}, wire.ModePersistent)
	r.Create("B", "/acl/locked/x", "", wire.ModePersistent)
	r.Create("B", "/acl/locked/x/y", "", wire.ModePersistent)
	r.Create("B", "/acl/locked/", "", wire.ModePersistent)
	r.Create("B", "/acl/locked/", "", wire.ModePersistentSequential)
	r.Create("B", "/acl/locked/x", "", wire.ModeEphemeral)
	r.SetData("B", "/acl/locked", "", 99)
	r.Delete("B", "/acl/locked", 99)
	r.SetACL("B", "/acl/locked", open, 99)
	r.SetACL("B", "/acl/locked", []wire.ACL{}, 99)
	r.CreateACL("A", "/acl/eph", "", []wire.ACL{worldACL(wire.PermRead)}, wire.ModeEphemeral)
	r.CreateACL("B", "/acl/eph/x", "", []wire.ACL{}, wire.ModePersistent)
	r.Create("B", "/acl/eph/x", "", wire.ModePersistent)
	r.Note("super")
	r.Connect("S")
	r.AddAuth("S", "digest", "super:"+superPassword)
	r.GetACL("S", "/acl/none")
	r.GetData("S", "/acl/none", false)
	r.SetData("S", "/acl/none", "super", -1)
	r.Delete("S", "/acl/none/kid", -1)
	r.WhoAmI("S")
	r.Note("ip auth scheme via addAuth and unknown schemes")
	r.AddAuth("C", "ip", "127.0.0.1")
	r.WhoAmI("C")
	r.Connect("E")
	r.AddAuth("E", "nosuch", "x")
	r.Connect("F")
	r.AddAuth("F", "world", "anyone")
	r.Connect("G")
	r.AddAuth("G", "digest", "nocolon")
	r.WhoAmI("G")
}

func watches(r *run) {
	r.Connect("A")
	r.Connect("B")
	r.Create("A", "/w", "", wire.ModePersistent)
	r.Note("exists on a missing node leaves a watch; getData/getChildren on a missing node do not")
	r.Exists("B", "/w/x", true)
	r.GetData("B", "/w/y", true)
	r.GetChildren("B", "/w/z", true)
	r.GetChildren("B", "/w", true)
	r.Create("A", "/w/x", "1", wire.ModePersistent)
	r.Create("A", "/w/y", "1", wire.ModePersistent)
	r.Create("A", "/w/z", "1", wire.ModePersistent)
	r.Note("data, exist and child watches of one session, plus the parent's child watch, on delete")
	r.GetData("B", "/w/x", true)
	r.Exists("B", "/w/x", true)
	r.GetChildren("B", "/w/x", true)
	r.GetChildren("B", "/w", true)
	r.GetData("A", "/w/x", true)
	r.Delete("A", "/w/x", -1)
	r.Note("setData fires NodeDataChanged to data and exist watches, not child watches")
	r.GetData("B", "/w/y", true)
	r.Exists("A", "/w/y", true)
	r.GetChildren("B", "/w/y", true)
	r.SetData("A", "/w/y", "2", -1)
	r.SetData("A", "/w/y", "3", -1)
	r.Note("child create fires NodeChildrenChanged on the parent only; exists on the new node fires NodeCreated first")
	r.Exists("B", "/w/y/k", true)
	r.Create("A", "/w/y/k", "", wire.ModePersistent)
	r.Note("setACL fires nothing")
	r.GetData("B", "/w/y/k", true)
	r.SetACL("A", "/w/y/k", open, -1)
	r.Note("failed writes fire nothing")
	r.SetData("A", "/w/y/k", "", 42)
	r.Delete("A", "/w/y", -1)
	r.Create("A", "/w/y/k", "", wire.ModePersistent)
	r.Delete("A", "/w/y/k", -1)
	r.Note("watch on the root's children")
	r.GetChildren("B", "/", true)
	r.Create("A", "/w2", "", wire.ModePersistent)
	r.Note("persistent watch: data + child events, stays")
	r.AddWatch("B", "/w2", wire.AddWatchPersistent)
	r.Create("A", "/w2/a", "", wire.ModePersistent)
	r.SetData("A", "/w2", "x", -1)
	r.Create("A", "/w2/a/deep", "", wire.ModePersistent)
	r.SetData("A", "/w2/a", "x", -1)
	r.Delete("A", "/w2/a/deep", -1)
	r.Delete("A", "/w2/a", -1)
	r.SetData("A", "/w2", "y", -1)
	r.Note("persistent-recursive watch: node and descendants, no NodeChildrenChanged")
	r.AddWatch("A", "/w3", wire.AddWatchPersistentRecursive)
	r.Create("B", "/w3", "", wire.ModePersistent)
	r.Create("B", "/w3/a", "", wire.ModePersistent)
	r.Create("B", "/w3/a/b", "", wire.ModePersistent)
	r.SetData("B", "/w3/a/b", "x", -1)
	r.Delete("B", "/w3/a/b", -1)
	r.Multi("B", opCreate("/w3/m1", "", wire.ModePersistent), opSetData("/w3/a", "y", -1), opDelete("/w3/m1", -1))
	r.Note("a one-shot watch on top of a recursive one")
	r.GetData("A", "/w3/a", true)
	r.SetData("B", "/w3/a", "z", -1)
	r.SetData("B", "/w3/a", "zz", -1)
	r.Note("checkWatches and removeWatches")
	r.CheckWatches("B", "/w2", wire.WatcherData)
	r.CheckWatches("B", "/w2", wire.WatcherChildren)
	r.CheckWatches("B", "/w2", wire.WatcherAny)
	r.CheckWatches("B", "/w/none", wire.WatcherAny)
	r.GetData("B", "/w/z", true)
	r.GetChildren("B", "/w/z", true)
	r.CheckWatches("B", "/w/z", wire.WatcherData)
	r.RemoveWatches("B", "/w/z", wire.WatcherChildren)
	r.CheckWatches("B", "/w/z", wire.WatcherChildren)
	r.RemoveWatches("B", "/w/z", wire.WatcherChildren)
	r.SetData("A", "/w/z", "x", -1)
	r.Create("A", "/w/z/c", "", wire.ModePersistent)
	r.GetData("B", "/w/z", true)
	r.GetChildren("B", "/w/z", true)
	r.RemoveWatches("B", "/w/z", wire.WatcherAny)
	r.SetData("A", "/w/z", "y", -1)
	r.Exists("B", "/w/gone", true)
	r.RemoveWatches("B", "/w/gone", wire.WatcherData)
	r.RemoveWatches("B", "/w2", wire.WatcherData)
	r.SetData("A", "/w2", "z", -1)
	r.RemoveWatches("B", "/w2", wire.WatcherAny)
	r.SetData("A", "/w2", "zz", -1)
	r.RemoveWatches("A", "/w3", wire.WatcherAny)
	r.SetData("B", "/w3/a", "q", -1)
	r.RemoveWatches("A", "/w3", wire.WatcherAny)
	r.RemoveWatches("A", "/bad/", wire.WatcherAny)
	r.Note("an ephemeral of the watcher's own session")
	r.Create("B", "/w/eb", "", wire.ModeEphemeral)
	r.Exists("A", "/w/eb", true)
	r.GetChildren("A", "/w", true)
	r.GetData("B", "/w/eb", true)
	r.Note("closeSession fires the closing session's own watches before its reply")
	r.CloseSession("B")
	r.Exists("A", "/w/eb", false)
}

// reaper waits for the server's container/TTL reaper; events tell when a
// node is gone.
func reaper(r *run) {
	r.Connect("A")
	r.Connect("B")
	r.CreateContainer("A", "/c", "")
	r.CreateContainer("A", "/c/c2", "")
	r.Create("A", "/c/c2/kid", "", wire.ModePersistent)
	r.CreateContainer("A", "/empty", "")
	r.CreateTTL("A", "/t", "", wire.ModePersistentWithTTL, 1500)
	r.CreateTTL("A", "/tk", "", wire.ModePersistentWithTTL, 1500)
	r.Create("A", "/tk/kid", "", wire.ModePersistent)
	ts := r.CreateTTL("A", "/ts-", "", wire.ModePersistentSequentialWithTTL, 1500)
	r.CreateTTL("A", "/tlong", "", wire.ModePersistentWithTTL, 600000)
	r.Exists("B", "/c", true)
	r.Exists("B", "/c/c2", true)
	r.GetChildren("B", "/", true)
	r.Exists("B", "/t", true)
	r.Exists("B", ts.RespPath(), true)
	r.Delete("A", "/c/c2/kid", -1)
	r.Note("wait until the nested containers and TTL nodes are reaped")
	r.WaitGone("B", "/c", 15*time.Second)
	r.WaitGone("B", "/t", 15*time.Second)
	r.WaitGone("B", ts.RespPath(), 15*time.Second)
	r.GetChildren2("B", "/", false)
	r.Note("a TTL node with a child survives; after the child goes it is reaped")
	r.Exists("B", "/tk", true)
	r.Delete("A", "/tk/kid", -1)
	r.WaitGone("B", "/tk", 15*time.Second)
	r.Note("a container never given a child stays; a long TTL stays")
	r.Exists("B", "/empty", false)
	r.Exists("B", "/tlong", false)
	r.GetChildren2("B", "/", false)
}

// WaitGone polls with exists until path is gone (pinging lets the
// notifications in), then records the final exists.
func (r *run) WaitGone(s, path string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for r.err == nil && time.Now().Before(deadline) {
		r.ping(s, false)
		l := r.Exists(s, path, false)
		if l.Err == wire.ErrNoNode.String() {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r.err == nil {
		r.err = fmt.Errorf("%s was not reaped within %s", path, limit)
	}
}

func noExtendedTypes(r *run) {
	r.Connect("A")
	r.CreateTTL("A", "/ttl", "", wire.ModePersistentWithTTL, 1000)
	r.CreateTTL("A", "/ttlseq-", "", wire.ModePersistentSequentialWithTTL, 1000)
	r.Create2("A", "/ttl2", "", wire.ModePersistentWithTTL)
	r.Multi("A", opCreateTTL("/ttlm", "", wire.ModePersistentWithTTL, 1000))
	r.CreateContainer("A", "/c", "")
	r.Create("A", "/c/kid", "", wire.ModePersistent)
	r.Exists("A", "/c", true)
	r.Delete("A", "/c/kid", -1)
	r.WaitGone("A", "/c", 15*time.Second)
	r.GetChildren2("A", "/", false)
}

// quota writes the nodes zkCli's `setquota -n 3 /q` then `setquota -b 100 /q`
// leave (zkCli takes one limit option per call), in its order and with its
// data (SetQuotaCommand.createQuota: limits node, then a stats node holding
// "count=0,bytes=0" that the server recomputes on creation), then changes
// /q's subtree so the server updates zookeeper_stats.
// A hard limit on /qh (`setquota -N 2 /qh`) is only logged: enforceQuota is off.
func quota(r *run) {
	r.Connect("A")
	r.Create("A", "/q", "12345", wire.ModePersistent)
	r.Create("A", "/q/a", "abc", wire.ModePersistent)
	r.Do("A", wire.OpCreate, trace.Request{Path: "/zookeeper/quota/q", ACL: open, Mode: mode(wire.ModePersistent)})
	r.Create("A", "/zookeeper/quota/q/zookeeper_limits", "count=3,bytes=100=;byteHardLimit=-1;countHardLimit=-1", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/q/zookeeper_stats", "count=0,bytes=0", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.Create("A", "/q/b", "0123456789", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.SetData("A", "/q/a", "abcdef", -1)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.Note("past the soft limits: a warning in the server log, no error")
	r.Create("A", "/q/c", "", wire.ModePersistent)
	r.Create("A", "/q/d", "", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.Delete("A", "/q/b", -1)
	r.GetData("A", "/zookeeper/quota/q/zookeeper_stats", false)
	r.Note("hard count limit without enforceQuota")
	r.Create("A", "/qh", "", wire.ModePersistent)
	r.Do("A", wire.OpCreate, trace.Request{Path: "/zookeeper/quota/qh", ACL: open, Mode: mode(wire.ModePersistent)})
	r.Create("A", "/zookeeper/quota/qh/zookeeper_limits", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=2", wire.ModePersistent)
	r.Create("A", "/zookeeper/quota/qh/zookeeper_stats", "count=0,bytes=0", wire.ModePersistent)
	r.Create("A", "/qh/a", "", wire.ModePersistent)
	r.Create("A", "/qh/b", "", wire.ModePersistent)
	r.GetData("A", "/zookeeper/quota/qh/zookeeper_stats", false)
	r.Note("deleting the quota'd node")
	r.Delete("A", "/qh/a", -1)
	r.Delete("A", "/qh/b", -1)
	r.Delete("A", "/qh", -1)
	r.GetData("A", "/zookeeper/quota/qh/zookeeper_stats", false)
	r.GetChildren2("A", "/zookeeper/quota", false)
	r.GetChildren2("A", "/zookeeper/quota/q", false)
	r.GetAllChildrenNumber("A", "/zookeeper")
}
