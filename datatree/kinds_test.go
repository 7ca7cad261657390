package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
)

func reapPaths(tr *Tree, now, maxNeverUsed int64) []string {
	var out []string
	for _, r := range tr.ReapCandidates(now, maxNeverUsed) {
		out = append(out, r.Body.(*wire.PathRequest).Path)
	}
	return out
}

func (h *harness) createContainer(path string) Result {
	r, _ := h.write(&Request{Session: 1, Op: wire.OpCreateContainer, Body: &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe, Flags: wire.ModeContainer}})
	return r
}

// reap issues one pass of the reaper's requests.
func (h *harness) reap(maxNeverUsed int64) []Result {
	var out []Result
	for _, req := range h.tree.ReapCandidates(h.now, maxNeverUsed) {
		r, _ := h.write(&req)
		out = append(out, r)
	}
	return out
}

// TestContainerRemoval: containers go once they had a child and have none,
// nested ones in successive passes; a never-used one only past maxNeverUsed.
func TestContainerRemoval(t *testing.T) {
	h := newHarness(t, Config{})
	r := h.createContainer("/c")
	require.Equal(t, wire.ErrOK, r.Err)
	assert.Zero(t, r.Stat.EphemeralOwner, "a container shows ephemeralOwner 0")
	assert.Equal(t, containerOwner, h.tree.nodes.get("/c").owner, "stored as Long.MIN_VALUE")
	h.createContainer("/c/c2")
	h.mustCreate("/c/c2/leaf")
	h.createContainer("/unused")
	assert.Empty(t, reapPaths(h.tree, h.now, 0))
	h.delete("/c/c2/leaf", -1)
	assert.Equal(t, []string{"/c/c2"}, reapPaths(h.tree, h.now, 0))
	res := h.reap(0)
	require.Equal(t, []Result{{Op: wire.OpDeleteContainer, Path: "/c/c2"}}, res)
	assert.Equal(t, []string{"/c"}, reapPaths(h.tree, h.now, 0), "the parent goes in the next pass")
	h.reap(0)
	_, err := h.tree.Exists("/c", false, 0)
	assert.Equal(t, wire.ErrNoNode, err)
	assert.Empty(t, reapPaths(h.tree, h.now+1_000_000, 0), "never used: kept")
	assert.Equal(t, []string{"/unused"}, reapPaths(h.tree, h.now+1_000_000, 1000))

	// create2 with the container flag makes a plain node, never reaped.
	r, _ = h.write(&Request{Op: wire.OpCreate2, Body: &wire.CreateRequest{Path: "/plain", ACL: wire.OpenACLUnsafe, Flags: wire.ModeContainer}})
	require.Equal(t, wire.ErrOK, r.Err)
	h.mustCreate("/plain/x")
	h.delete("/plain/x", -1)
	assert.NotContains(t, reapPaths(h.tree, h.now, 0), "/plain")
}

// TestDeleteContainerChecks: a client's deleteContainer is BadArguments;
// the server's checks only NotEmpty and the kind (ephemerals refused).
func TestDeleteContainerChecks(t *testing.T) {
	h := newHarness(t, Config{})
	dc := func(path string, internal bool) wire.ErrCode {
		r, _ := h.write(&Request{Op: wire.OpDeleteContainer, Body: &wire.PathRequest{Path: path}, Internal: internal})
		return r.Err
	}
	h.createContainer("/c")
	h.mustCreate("/c/x")
	assert.Equal(t, wire.ErrBadArguments, dc("/c/x", false))
	assert.Equal(t, wire.ErrNotEmpty, dc("/c", true))
	h.create(5, "/e", "", wire.ModeEphemeral)
	assert.Equal(t, wire.ErrBadVersion, dc("/e", true))
	assert.Equal(t, wire.ErrNoNode, dc("/none", true))
	// No ACL or version check: a read-only persistent node goes.
	h.write(&Request{Op: wire.OpSetACL, Body: &wire.SetACLRequest{Path: "/c", ACL: wire.ReadACLUnsafe, Version: -1}})
	assert.Equal(t, wire.ErrOK, dc("/c/x", true))
}

// TestTTLRemoval: TTL nodes need extended types; they go once childless and
// unmodified for longer than their TTL, and a setData restarts the clock.
func TestTTLRemoval(t *testing.T) {
	createTTL := func(h *harness, path string, mode wire.CreateMode, ttl int64) Result {
		r, _ := h.write(&Request{Op: wire.OpCreateTTL, Body: &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe, Flags: mode, TTL: ttl, HasTTL: true}})
		return r
	}
	off := newHarness(t, Config{})
	assert.Equal(t, wire.ErrUnimplemented, createTTL(off, "/t", wire.ModePersistentWithTTL, 100).Err)

	h := newHarness(t, Config{ExtendedTypesEnabled: true})
	for _, ttl := range []int64{0, -5, maxTTL + 1} {
		assert.Equal(t, wire.ErrBadArguments, createTTL(h, "/t", wire.ModePersistentWithTTL, ttl).Err, "ttl %d", ttl)
	}
	assert.Equal(t, wire.ErrBadArguments, createTTL(h, "/t", wire.ModePersistent, 100).Err, "a TTL without a TTL mode")
	r, _ := h.write(&Request{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/t", ACL: wire.OpenACLUnsafe, Flags: wire.ModePersistentWithTTL}})
	assert.Equal(t, wire.ErrBadArguments, r.Err, "a TTL mode outside createTTL")

	r = createTTL(h, "/t", wire.ModePersistentWithTTL, 100)
	require.Equal(t, wire.ErrOK, r.Err)
	assert.Zero(t, r.Stat.EphemeralOwner, "a TTL node shows ephemeralOwner 0")
	assert.Equal(t, ttlOwner(100), h.tree.nodes.get("/t").owner, "stored with the TTL in ephemeralOwner")
	tCreated := h.now
	r = createTTL(h, "/s-", wire.ModePersistentSequentialWithTTL, 200)
	assert.Equal(t, "/s-0000000001", r.Path)
	sCreated := h.now
	assert.Empty(t, reapPaths(h.tree, tCreated+100, 0))
	assert.Equal(t, []string{"/t"}, reapPaths(h.tree, tCreated+101, 0))
	assert.Equal(t, []string{"/s-0000000001", "/t"}, reapPaths(h.tree, sCreated+201, 0))
	h.setData("/t", "touch", -1)
	h.mustCreate("/s-0000000001/kid")
	assert.Empty(t, reapPaths(h.tree, tCreated+101, 0), "modified since")
	assert.Equal(t, []string{"/t"}, reapPaths(h.tree, sCreated+1000, 0), "a TTL node with a child stays")
	h.now = h.tree.nodes.get("/t").mtime + 101
	res := h.reap(0)
	assert.Equal(t, []Result{{Op: wire.OpDeleteContainer, Path: "/t"}}, res)
}

// TestSequentialNumbers: the suffix counts children ever created under the
// parent: deletes do not lower it, failed creates do not raise it, a
// hand-made node with the next name blocks sequential creates until another
// child is created.
func TestSequentialNumbers(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/q")
	h.mustCreate("/q/plain")                                                                       // counter 1
	assert.Equal(t, "/q/s0000000001", h.create(1, "/q/s", "", wire.ModePersistentSequential).Path) // 2
	assert.Equal(t, "/q/s0000000002", h.create(7, "/q/s", "", wire.ModeEphemeralSequential).Path)  // 3
	h.delete("/q/plain", -1)
	assert.Equal(t, wire.ErrOK, h.create(1, "/q/plain", "", wire.ModePersistent).Err) // 4
	assert.Equal(t, wire.ErrNodeExists, h.create(1, "/q/s0000000002", "", wire.ModePersistent).Err)
	assert.Equal(t, "/q/s0000000004", h.create(1, "/q/s", "", wire.ModePersistentSequential).Path) // 5
	h.mustCreate("/q/s0000000006")                                                                 // 6
	assert.Equal(t, wire.ErrNodeExists, h.create(1, "/q/s", "", wire.ModePersistentSequential).Err)
	assert.Equal(t, wire.ErrNodeExists, h.create(1, "/q/s", "", wire.ModePersistentSequential).Err)
	h.mustCreate("/q/other")                                                                       // 7
	assert.Equal(t, "/q/s0000000007", h.create(1, "/q/s", "", wire.ModePersistentSequential).Path) // 8
	assert.Equal(t, "/q/0000000008", h.create(1, "/q/", "", wire.ModePersistentSequential).Path)
	// At the root /zookeeper does not count: it was never created.
	assert.Equal(t, "/0000000001", h.create(1, "/", "", wire.ModePersistentSequential).Path)
	// A recreated parent starts again at 0.
	h.mustCreate("/r")
	h.create(1, "/r/x", "", wire.ModePersistentSequential)
	h.delete("/r/x0000000000", -1)
	h.delete("/r", -1)
	h.mustCreate("/r")
	assert.Equal(t, "/r/x0000000000", h.create(1, "/r/x", "", wire.ModePersistentSequential).Path)
}

// TestStaleReapDeletesOnlyTheNodeChosen: the reaper chooses from the
// applied tree, which lags the txns already accepted. A reap decided
// before the node was deleted and made again at its path — as a never-used
// container, or as a client's persistent node — must not delete the new
// node, nor a TTL node refreshed since (ZooKeeper's prepare would: it
// checks only children and the ephemeral kind; simulator hunt seeds 38940
// and 35633). The node chosen, unchanged, still goes.
func TestStaleReapDeletesOnlyTheNodeChosen(t *testing.T) {
	h := newHarness(t, Config{ExtendedTypesEnabled: true})
	h.createContainer("/c")
	h.mustCreate("/c/x")
	h.delete("/c/x", -1)
	stale := h.tree.ReapCandidates(h.now, 0)
	require.Len(t, stale, 1)

	h.delete("/c", -1)
	h.createContainer("/c") // never used
	r, _ := h.write(&stale[0])
	assert.Equal(t, wire.ErrBadVersion, r.Err, "a new container at the path")
	h.delete("/c", -1)
	h.mustCreate("/c") // persistent
	r, _ = h.write(&stale[0])
	assert.Equal(t, wire.ErrBadVersion, r.Err, "a persistent node at the path")

	r, _ = h.write(&Request{Op: wire.OpCreateTTL, Body: &wire.CreateRequest{Path: "/t", ACL: wire.OpenACLUnsafe, Flags: wire.ModePersistentWithTTL, TTL: 100, HasTTL: true}})
	require.Equal(t, wire.ErrOK, r.Err)
	h.now += 1000
	stale = h.tree.ReapCandidates(h.now, 0)
	require.Len(t, stale, 1)
	h.write(&Request{Op: wire.OpSetData, Body: &wire.SetDataRequest{Path: "/t", Data: []byte("x"), Version: -1}})
	r, _ = h.write(&stale[0])
	assert.Equal(t, wire.ErrBadVersion, r.Err, "a TTL node refreshed since")

	h.now += 1000
	fresh := h.tree.ReapCandidates(h.now, 0)
	require.Len(t, fresh, 1)
	r, _ = h.write(&fresh[0])
	assert.Equal(t, wire.ErrOK, r.Err, "the node chosen, unchanged, goes")
}
