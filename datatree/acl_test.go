package datatree

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
)

// TestACLPermissionMatrix gives a node (and its parent) an ACL granting one
// permission to everyone and runs every operation against it: each must
// succeed exactly when it needs that permission (or none), as in
// ZooKeeper: create and delete check the parent, reads READ, getACL READ or
// ADMIN, setACL ADMIN, exists nothing.
func TestACLPermissionMatrix(t *testing.T) {
	perms := map[string]int32{"READ": wire.PermRead, "WRITE": wire.PermWrite, "CREATE": wire.PermCreate, "DELETE": wire.PermDelete, "ADMIN": wire.PermAdmin}
	type opCase struct {
		name string
		need int32 // 0: no permission needed; several bits: any of them
		run  func(h *harness) wire.ErrCode
	}
	ops := []opCase{
		{"create child", wire.PermCreate, func(h *harness) wire.ErrCode {
			r, _ := h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/n/new", ACL: wire.OpenACLUnsafe}})
			return r.Err
		}},
		{"delete child", wire.PermDelete, func(h *harness) wire.ErrCode {
			r, _ := h.write(&Request{Op: wire.OpDelete, Body: &wire.PathVersionRequest{Path: "/n/kid", Version: -1}})
			return r.Err
		}},
		{"setData", wire.PermWrite, func(h *harness) wire.ErrCode {
			r, _ := h.write(&Request{Op: wire.OpSetData, Body: &wire.SetDataRequest{Path: "/n", Version: -1}})
			return r.Err
		}},
		{"setACL", wire.PermAdmin, func(h *harness) wire.ErrCode {
			r, _ := h.write(&Request{Op: wire.OpSetACL, Body: &wire.SetACLRequest{Path: "/n", ACL: wire.OpenACLUnsafe, Version: -1}})
			return r.Err
		}},
		{"check in multi", wire.PermRead, func(h *harness) wire.ErrCode {
			r, _ := h.write(&Request{Op: wire.OpMulti, Body: &MultiRequest{Ops: []MultiOp{{Op: wire.OpCheck, Body: &wire.PathVersionRequest{Path: "/n", Version: -1}}}}})
			return r.Multi[0].Err
		}},
		{"getData", wire.PermRead, func(h *harness) wire.ErrCode { _, _, err := h.tree.GetData("/n", nil, false, 0); return err }},
		{"getChildren", wire.PermRead, func(h *harness) wire.ErrCode { _, _, err := h.tree.GetChildren("/n", nil, false, 0); return err }},
		{"getAllChildrenNumber", wire.PermRead, func(h *harness) wire.ErrCode { _, err := h.tree.GetAllChildrenNumber("/n", nil); return err }},
		{"getACL", wire.PermRead | wire.PermAdmin, func(h *harness) wire.ErrCode { _, _, err := h.tree.GetACL("/n", nil); return err }},
		{"exists", 0, func(h *harness) wire.ErrCode { _, err := h.tree.Exists("/n", false, 0); return err }},
		{"multiRead getData", wire.PermRead, func(h *harness) wire.ErrCode {
			r, _ := h.tree.Read(&Request{Op: wire.OpMultiRead, Body: &MultiRequest{Ops: []MultiOp{{Op: wire.OpGetData, Body: &wire.PathWatchRequest{Path: "/n"}}}}}, 0, nil)
			return r.Multi[0].Err
		}},
	}
	for pname, perm := range perms {
		for _, op := range ops {
			t.Run(fmt.Sprintf("%s with %s", op.name, pname), func(t *testing.T) {
				h := newHarness(t, Config{})
				h.mustCreate("/n")
				h.mustCreate("/n/kid")
				acl := []wire.ACL{{Perms: perm, ID: wire.AnyoneID}}
				r, _ := h.write(&Request{Op: wire.OpSetACL, Body: &wire.SetACLRequest{Path: "/n", ACL: acl, Version: -1}})
				require.Equal(t, wire.ErrOK, r.Err)
				want := wire.ErrNoAuth
				if op.need == 0 || op.need&perm != 0 {
					want = wire.ErrOK
				}
				assert.Equal(t, want, op.run(h))
			})
		}
	}
}

// TestACLIdentities: digest ids match exactly, ip ids by address and CIDR,
// the super user passes everything, world:anyone everyone.
func TestACLIdentities(t *testing.T) {
	alice := DigestID("alice:pw")
	// The id ZooKeeper 3.8 gave "owner:pw" (acl_watches golden trace).
	assert.Equal(t, "owner:iMB/SsBMvf3UxIEfwB61nsj4SCM=", DigestID("owner:pw"))
	cases := []struct {
		acl  wire.Id
		auth []wire.Id
		ok   bool
	}{
		{wire.AnyoneID, nil, true},
		{wire.Id{Scheme: "digest", ID: alice}, []wire.Id{{Scheme: "digest", ID: alice}}, true},
		{wire.Id{Scheme: "digest", ID: alice}, []wire.Id{{Scheme: "digest", ID: DigestID("alice:wrong")}}, false},
		{wire.Id{Scheme: "ip", ID: "10.0.0.0/8"}, []wire.Id{{Scheme: "ip", ID: "10.200.3.4"}}, true},
		{wire.Id{Scheme: "ip", ID: "10.0.0.0/8"}, []wire.Id{{Scheme: "ip", ID: "11.0.0.1"}}, false},
		{wire.Id{Scheme: "ip", ID: "127.0.0.1"}, []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}}, true},
		{wire.Id{Scheme: "ip", ID: "127.0.0.1"}, []wire.Id{{Scheme: "ip", ID: "127.0.0.2"}}, false},
		{wire.Id{Scheme: "ip", ID: "127.0.0.0/31"}, []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}}, true},
		{wire.Id{Scheme: "ip", ID: "0.0.0.0/0"}, []wire.Id{{Scheme: "ip", ID: "8.8.8.8"}}, true},
		{wire.Id{Scheme: "ip", ID: "10.0.0.1"}, []wire.Id{{Scheme: "digest", ID: "10.0.0.1"}}, false},
		{wire.Id{Scheme: "digest", ID: alice}, []wire.Id{{Scheme: "super", ID: ""}}, true},
	}
	for _, c := range cases {
		got := checkACL([]wire.ACL{{Perms: wire.PermRead, ID: c.acl}}, wire.PermRead, c.auth)
		assert.Equal(t, c.ok, got, "%v with %v", c.acl, c.auth)
	}
	// The super digest configured authenticates as super.
	ids, code := Authenticate(Config{SuperDigest: DigestID("super:adminpw")}, "digest", []byte("super:adminpw"), Client{Addr: "1.2.3.4"})
	require.Equal(t, wire.ErrOK, code)
	assert.Equal(t, []wire.Id{{Scheme: "super"}, {Scheme: "digest", ID: DigestID("super:adminpw")}}, ids)
	_, code = Authenticate(Config{}, "world", []byte("anyone"), Client{Addr: "1.2.3.4"})
	assert.Equal(t, wire.ErrAuthFailed, code)
}

// TestInvalidACLs: what fixupACL refuses, and the auth expansion.
func TestInvalidACLs(t *testing.T) {
	digestB := wire.Id{Scheme: "digest", ID: DigestID("bob:pw")}
	withBob := []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}, digestB}
	bad := [][]wire.ACL{
		nil, {},
		{{Perms: 31, ID: wire.Id{Scheme: "world", ID: "someone"}}},
		{{Perms: 31, ID: wire.Id{Scheme: "digest", ID: "nocolon"}}},
		{{Perms: 31, ID: wire.Id{Scheme: "digest", ID: "a:b:c"}}},
		{{Perms: 31, ID: wire.Id{Scheme: "ip", ID: "1.2.3"}}},
		{{Perms: 31, ID: wire.Id{Scheme: "ip", ID: "1.2.3.4/33"}}},
		{{Perms: 31, ID: wire.Id{Scheme: "super", ID: ""}}},
		{{Perms: 31, ID: wire.Id{Scheme: "sasl", ID: "x"}}},
	}
	for _, acl := range bad {
		_, ok := fixupACL(acl, withBob, Config{})
		assert.False(t, ok, "%v", acl)
	}
	for id, valid := range map[string]bool{"a:b": true, ":b": true, "a:b:": true, ":a:": true, "a:b::": true,
		"a:": false, ":": false, "::": false, "": false, "a::b": false, "a:b:c": false} {
		assert.Equal(t, valid, validDigestID(id), "%q", id)
	}
	_, ok := fixupACL(wire.CreatorAllACL, []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}}, Config{})
	assert.False(t, ok, "auth with no digest id")
	got, ok := fixupACL([]wire.ACL{{Perms: 1, ID: wire.AuthIDs}, {Perms: 1, ID: wire.AuthIDs}, {Perms: 2, ID: wire.AnyoneID}}, withBob, Config{})
	require.True(t, ok)
	assert.Equal(t, []wire.ACL{{Perms: 1, ID: digestB}, {Perms: 2, ID: wire.AnyoneID}}, got, "duplicates dropped, auth expanded")
}

// TestGetACLMasksDigests: without ADMIN, digest ids read "user:x".
func TestGetACLMasksDigests(t *testing.T) {
	h := newHarness(t, Config{})
	alice := wire.Id{Scheme: "digest", ID: DigestID("alice:pw")}
	acl := []wire.ACL{{Perms: wire.PermRead, ID: wire.AnyoneID}, {Perms: wire.PermAll, ID: alice}}
	r, _ := h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/m", ACL: acl}})
	require.Equal(t, wire.ErrOK, r.Err)
	got, _, err := h.tree.GetACL("/m", nil)
	require.Equal(t, wire.ErrOK, err)
	assert.Equal(t, []wire.ACL{{Perms: wire.PermRead, ID: wire.AnyoneID}, {Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: "alice:x"}}}, got)
	got, _, _ = h.tree.GetACL("/m", []wire.Id{alice})
	assert.Equal(t, acl, got)
}

// TestAuthOrder pins ZooKeeper's ConcurrentHashMap order of a connection's
// ids, as recorded from ZooKeeper 3.8 (acl_edges golden trace, whoAmI).
func TestAuthOrder(t *testing.T) {
	ids := []wire.Id{
		{Scheme: "ip", ID: "127.0.0.1"},
		{Scheme: "digest", ID: DigestID("u:p:q")},
		{Scheme: "digest", ID: DigestID(":empty")},
		{Scheme: "digest", ID: DigestID("nouser:")},
	}
	got := AuthOrder(append(ids, ids[1]))
	assert.Equal(t, []wire.Id{ids[2], ids[1], ids[3], ids[0]}, got)
	// Past 12 ids the table grows; every id is still there once.
	var many []wire.Id
	for i := 0; i < 40; i++ {
		many = append(many, wire.Id{Scheme: "digest", ID: DigestID(fmt.Sprintf("user%d:pw", i))})
	}
	assert.ElementsMatch(t, many, AuthOrder(many))
}
