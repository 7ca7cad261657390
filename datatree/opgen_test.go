package datatree

import (
	"pgregory.net/rapid"

	"github.com/zabd/zabd/wire"
)

// Random requests over a small universe of paths, sessions and identities,
// so that random sequences hit existing nodes, conflicts and every error.

var (
	genPaths    = []string{"/a", "/b", "/a/x", "/a/y", "/b/x", "/a/x/z", "/a/x/z/w", "/zookeeper/q", "/"}
	genSessions = []int64{11, 12, 13}
	genDigestA  = DigestID("alice:secret")
	genDigestB  = DigestID("bob:secret")
	genX509     = "CN=carol,O=Example"
	// genAuths are the identities a connection can have.
	genAuths = [][]wire.Id{
		{{Scheme: "ip", ID: "127.0.0.1"}},
		{{Scheme: "ip", ID: "10.1.2.3"}, {Scheme: "digest", ID: genDigestA}},
		{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: genDigestB}},
		{{Scheme: "super", ID: ""}, {Scheme: "digest", ID: "super:x"}},
		{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "x509", ID: genX509}},
	}
	genACLs = [][]wire.ACL{
		wire.OpenACLUnsafe,
		wire.ReadACLUnsafe,
		wire.CreatorAllACL,
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: genDigestA}}},
		{{Perms: wire.PermRead | wire.PermCreate, ID: wire.Id{Scheme: "ip", ID: "10.0.0.0/8"}}, {Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: genDigestB}}},
		{{Perms: wire.PermDelete | wire.PermWrite, ID: wire.AnyoneID}, {Perms: wire.PermAdmin, ID: wire.AnyoneID}},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "ip", ID: "300.0.0.1"}}}, // invalid
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "x509", ID: genX509}}},   // valid when the scheme is enabled
		{}, // invalid
	}
	genModes = []wire.CreateMode{
		wire.ModePersistent, wire.ModeEphemeral, wire.ModePersistentSequential, wire.ModeEphemeralSequential,
		wire.ModeContainer, wire.ModePersistentWithTTL, wire.ModePersistentSequentialWithTTL, 9,
	}
)

func genPath(t *rapid.T, label string) string {
	return rapid.SampledFrom(genPaths).Draw(t, label)
}

func genVersion(t *rapid.T, label string) int32 {
	return rapid.Int32Range(-1, 2).Draw(t, label)
}

func genData(t *rapid.T, label string) []byte {
	if rapid.IntRange(0, 5).Draw(t, label+"Nil") == 0 {
		return nil
	}
	return []byte(rapid.StringMatching(`[a-z]{0,6}`).Draw(t, label))
}

// genCreate draws a create-family op: opcode and body.
func genCreate(t *rapid.T) (wire.OpCode, *wire.CreateRequest) {
	op := rapid.SampledFrom([]wire.OpCode{wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL}).Draw(t, "createOp")
	b := &wire.CreateRequest{
		Path:  genPath(t, "path"),
		Data:  genData(t, "data"),
		ACL:   rapid.SampledFrom(genACLs).Draw(t, "acl"),
		Flags: rapid.SampledFrom(genModes).Draw(t, "mode"),
	}
	if op == wire.OpCreateContainer {
		// createContainer in persistent mode logs another digest (see
		// Prepare); in ephemeral modes the pending node is an ephemeral
		// until applied, which the model leaves to the golden traces
		// (create_ops).
		b.Flags = rapid.SampledFrom([]wire.CreateMode{wire.ModeContainer, wire.ModePersistent}).Draw(t, "containerMode")
	}
	if op == wire.OpCreateTTL {
		b.HasTTL = true
		b.TTL = rapid.SampledFrom([]int64{-1, 0, 50, 1000, maxTTL + 1}).Draw(t, "ttl")
	}
	return op, b
}

// genWriteOp draws one op that can be in a multi.
func genWriteOp(t *rapid.T) (wire.OpCode, wire.Record) {
	switch rapid.IntRange(0, 3).Draw(t, "kind") {
	case 0:
		return genCreate(t)
	case 1:
		return wire.OpDelete, &wire.PathVersionRequest{Path: genPath(t, "path"), Version: genVersion(t, "version")}
	case 2:
		return wire.OpSetData, &wire.SetDataRequest{Path: genPath(t, "path"), Data: genData(t, "data"), Version: genVersion(t, "version")}
	default:
		return wire.OpCheck, &wire.PathVersionRequest{Path: genPath(t, "path"), Version: genVersion(t, "version")}
	}
}

// genWrite draws a write request of any kind.
func genWrite(t *rapid.T) *Request {
	req := &Request{
		Session: rapid.SampledFrom(genSessions).Draw(t, "session"),
		Cxid:    rapid.Int32Range(0, 1000).Draw(t, "cxid"),
		Auth:    rapid.SampledFrom(genAuths).Draw(t, "auth"),
	}
	switch rapid.IntRange(0, 9).Draw(t, "write") {
	case 0, 1, 2:
		req.Op, req.Body = genCreate(t)
	case 3:
		req.Op, req.Body = wire.OpDelete, &wire.PathVersionRequest{Path: genPath(t, "path"), Version: genVersion(t, "version")}
	case 4, 5:
		req.Op, req.Body = wire.OpSetData, &wire.SetDataRequest{Path: genPath(t, "path"), Data: genData(t, "data"), Version: genVersion(t, "version")}
	case 6:
		req.Op, req.Body = wire.OpSetACL, &wire.SetACLRequest{Path: genPath(t, "path"), ACL: rapid.SampledFrom(genACLs).Draw(t, "acl"), Version: genVersion(t, "version")}
	case 7:
		m := &MultiRequest{}
		for i, n := 0, rapid.IntRange(0, 3).Draw(t, "ops"); i < n; i++ {
			op, body := genWriteOp(t)
			m.Ops = append(m.Ops, MultiOp{Op: op, Body: body})
		}
		req.Op, req.Body = wire.OpMulti, m
	case 8:
		req.Op = wire.OpCloseSession
	default:
		req.Op, req.Body = wire.OpCheck, &wire.PathVersionRequest{Path: genPath(t, "path"), Version: genVersion(t, "version")}
	}
	return req
}
