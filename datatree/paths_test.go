package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/zabd/zabd/wire"
)

func TestValidPath(t *testing.T) {
	valid := []string{"/", "/a", "/a/b", "/a.b", "/...", "/a/.b", "/a/b..", "/é", "/a b", "/zookeeper"}
	invalid := []string{"", "a", "/a/", "//", "/a//b", "/.", "/..", "/a/.", "/a/../b", "/a\x00b", "/a\x01", "/a\x7f",
		"/a\u0085", "/a\ud7ff\ufff0", "/\U0001F600", "/\xff", "/a\uf8ff", "/a\ufffd"}
	for _, p := range valid {
		assert.True(t, validPath(p), "%q", p)
	}
	for _, p := range invalid {
		assert.False(t, validPath(p), "%q", p)
	}
}

// TestPathsWhereZooKeeperChecksThem: create, setData and setACL answer
// BadArguments; delete and reads do not validate and answer NoNode; the
// special nodes refuse deletes.
func TestPathsWhereZooKeeperChecksThem(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/a")
	// "/a//b" would be BadArguments too, but its parent "/a/" is missing
	// and ZooKeeper looks the parent up first.
	assert.Equal(t, wire.ErrNoNode, h.create(1, "/a//b", "", wire.ModePersistent).Err)
	for _, p := range []string{"/a/", "/a/.", "/a/..", "/a/\x01"} {
		assert.Equal(t, wire.ErrBadArguments, h.create(1, p, "", wire.ModePersistent).Err, "create %q", p)
		r, _ := h.setData(p, "", -1)
		assert.Equal(t, wire.ErrBadArguments, r.Err, "setData %q", p)
		r, _ = h.write(&Request{Op: wire.OpSetACL, Body: &wire.SetACLRequest{Path: p, ACL: wire.OpenACLUnsafe, Version: -1}})
		assert.Equal(t, wire.ErrBadArguments, r.Err, "setACL %q", p)
		r, _ = h.delete(p, -1)
		assert.Equal(t, wire.ErrNoNode, r.Err, "delete %q", p)
		_, _, err := h.tree.GetData(p, nil, false, 0)
		assert.Equal(t, wire.ErrNoNode, err, "getData %q", p)
	}
	// No slash at all, or a NUL, is BadArguments for delete too.
	r, _ := h.delete("a", -1)
	assert.Equal(t, wire.ErrBadArguments, r.Err)
	r, _ = h.delete("/a\x00", -1)
	assert.Equal(t, wire.ErrBadArguments, r.Err)
	_, err := h.tree.Exists("/a\x00", false, 0)
	assert.Equal(t, wire.ErrBadArguments, err, "exists refuses a NUL")
	// The empty path reads the root.
	_, st, err := h.tree.GetData("", nil, false, 0)
	assert.Equal(t, wire.ErrOK, err)
	assert.Equal(t, h.stat("/"), st)
	// Special nodes.
	for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		r, _ := h.delete(p, -1)
		assert.Equal(t, wire.ErrBadArguments, r.Err, "delete %s", p)
	}
	assert.Equal(t, wire.ErrNodeExists, h.create(1, "/", "", wire.ModePersistent).Err)
	r, _ = h.setData("/zookeeper/config", "x", -1)
	assert.Equal(t, wire.ErrNoAuth, r.Err)
	assert.Equal(t, wire.ErrOK, h.create(1, "/zookeeper/x", "", wire.ModePersistent).Err)
}

// TestErrorPrecedence follows ZooKeeper's order of checks where several fail.
func TestErrorPrecedence(t *testing.T) {
	h := newHarness(t, Config{})
	locked := []wire.ACL{{Perms: wire.PermRead, ID: wire.AnyoneID}}
	h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/ro", ACL: locked}})
	h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/ro/kid", ACL: locked}})
	h.create(5, "/eph", "", wire.ModeEphemeral)
	create := func(path string, acl []wire.ACL) wire.ErrCode {
		r, _ := h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: path, ACL: acl}})
		return r.Err
	}
	assert.Equal(t, wire.ErrNoNode, create("/none/x/", wire.OpenACLUnsafe), "NoNode (parent) before BadArguments")
	assert.Equal(t, wire.ErrNoAuth, create("/ro/", wire.OpenACLUnsafe), "NoAuth (parent) before BadArguments")
	assert.Equal(t, wire.ErrInvalidACL, create("/eph/x", nil), "InvalidACL before NoChildrenForEphemerals")
	assert.Equal(t, wire.ErrInvalidACL, create("/none/x", nil), "InvalidACL before NoNode")
	assert.Equal(t, wire.ErrNodeExists, create("/eph", wire.OpenACLUnsafe))
	assert.Equal(t, wire.ErrNoChildrenForEphemerals, create("/eph/x", wire.OpenACLUnsafe))
	r, _ := h.delete("/ro/kid", 7)
	assert.Equal(t, wire.ErrNoAuth, r.Err, "delete: NoAuth before BadVersion")
	r, _ = h.delete("/ro", 7)
	assert.Equal(t, wire.ErrBadVersion, r.Err, "delete: BadVersion before NotEmpty")
	r, _ = h.setData("/ro", "x", 7)
	assert.Equal(t, wire.ErrNoAuth, r.Err, "setData: NoAuth before BadVersion")
	setACL := func(acl []wire.ACL, version int32) wire.ErrCode {
		r, _ := h.write(&Request{Op: wire.OpSetACL, Body: &wire.SetACLRequest{Path: "/ro", ACL: acl, Version: version}})
		return r.Err
	}
	assert.Equal(t, wire.ErrInvalidACL, setACL(nil, 7), "setACL: InvalidACL before NoAuth")
	assert.Equal(t, wire.ErrNoAuth, setACL(wire.OpenACLUnsafe, 7), "setACL: NoAuth before BadVersion")
}
