package datatree

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
)

// trafficLog records what the tree reports, one "read|write ns bytes" line
// per call.
type trafficLog struct{ lines []string }

func (l *trafficLog) Read(ns string, b int64) {
	l.lines = append(l.lines, fmt.Sprintf("read %s %d", ns, b))
}
func (l *trafficLog) Write(ns string, b int64) {
	l.lines = append(l.lines, fmt.Sprintf("write %s %d", ns, b))
}

func (l *trafficLog) take() []string {
	out := l.lines
	l.lines = nil
	return out
}

// TestTrafficMatchesZooKeeper: the sizes the tree reports per namespace are
// the ones Debian's ZooKeeper 3.8.0 recorded for the same requests (its mntr
// after each step: avg/min/max/cnt/sum of <ns>_read_per_namespace and
// <ns>_write_per_namespace pin every value below).
func TestTrafficMatchesZooKeeper(t *testing.T) {
	log := &trafficLog{}
	h := newHarness(t, Config{Traffic: log})
	read := func(op wire.OpCode, path string) wire.ErrCode {
		t.Helper()
		r, _ := h.tree.Read(&Request{Op: op, Body: &wire.PathWatchRequest{Path: path}}, 0, nil)
		return r.Err
	}
	require.Equal(t, wire.ErrOK, h.create(1, "/a", "12345", wire.ModePersistent).Err)
	assert.Equal(t, []string{"write a 7"}, log.take(), "path 2 + data 5")

	require.Equal(t, wire.ErrOK, read(wire.OpGetData, "/a"))
	require.Equal(t, wire.ErrOK, read(wire.OpExists, "/a"))
	require.Equal(t, wire.ErrNoNode, read(wire.OpExists, "/nope"))
	assert.Equal(t, []string{"read a 75", "read a 70"}, log.take(), "path + data + 68 of stat; a missing node is no read")

	h.create(1, "/a/bb", "x", wire.ModePersistent)
	h.create(1, "/a/ccc", "", wire.ModePersistent)
	require.Equal(t, wire.ErrOK, read(wire.OpGetChildren, "/a"))
	require.Equal(t, wire.ErrOK, read(wire.OpGetChildren2, "/a"))
	assert.Equal(t, []string{"write a 6", "write a 6", "read a 75", "read a 75"}, log.take(), "children's names 2 + 3")

	for _, p := range []string{"/", ""} {
		require.Equal(t, wire.ErrOK, read(wire.OpGetData, p))
		require.Equal(t, wire.ErrOK, read(wire.OpGetChildren, p))
		require.Equal(t, wire.ErrOK, read(wire.OpExists, p))
	}
	require.Equal(t, wire.ErrOK, read(wire.OpGetData, "/zookeeper/config"))
	assert.Equal(t, []string{"read zookeeper 85"}, log.take(), "the root is in no namespace")

	_, _ = h.setData("/a/bb", "0123456789", -1)
	_, _ = h.delete("/a/ccc", -1)
	assert.Equal(t, []string{"write a 15", "write a 6"}, log.take(), "the new data; a delete is its path")

	h.create(1, "/été", "1", wire.ModePersistent)
	h.create(1, "/sp ace", "1", wire.ModePersistent)
	h.create(2, "/e", "1", wire.ModeEphemeral)
	h.write(&Request{Session: 2, Op: wire.OpCloseSession})
	assert.Equal(t, []string{"write été 5", "write sp ace 8", "write e 3", "write e 2"}, log.take(),
		"lengths in UTF-16 units; a closed session's ephemeral is deleted")

	// What does not count: an error txn, setACL, a read without READ.
	assert.Equal(t, wire.ErrNodeExists, h.create(1, "/a", "", wire.ModePersistent).Err)
	r, _ := h.write(&Request{Op: wire.OpSetACL, Body: &wire.SetACLRequest{Path: "/a", ACL: []wire.ACL{{Perms: wire.PermWrite, ID: wire.Id{Scheme: "world", ID: "anyone"}}}, Version: -1}})
	require.Equal(t, wire.ErrOK, r.Err)
	require.Equal(t, wire.ErrNoAuth, read(wire.OpGetData, "/a"))
	require.Equal(t, wire.ErrNoAuth, read(wire.OpGetChildren, "/a"))
	assert.Empty(t, log.take())

	// A multi's sub-txns, a multiRead's ops.
	r, _ = h.write(&Request{Session: 1, Op: wire.OpMulti, Body: &MultiRequest{Ops: []MultiOp{
		{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/b", Data: []byte("1"), ACL: wire.OpenACLUnsafe}},
		{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/b/c", Data: []byte("xy"), ACL: wire.OpenACLUnsafe}},
		{Op: wire.OpSetData, Body: &wire.SetDataRequest{Path: "/b", Data: []byte("123"), Version: -1}},
	}}})
	require.Equal(t, wire.ErrOK, r.Err)
	r, _ = h.tree.Read(&Request{Op: wire.OpMultiRead, Body: &MultiRequest{Ops: []MultiOp{
		{Op: wire.OpGetData, Body: &wire.PathWatchRequest{Path: "/b/c"}},
		{Op: wire.OpGetChildren, Body: &wire.PathWatchRequest{Path: "/b"}},
		{Op: wire.OpGetData, Body: &wire.PathWatchRequest{Path: "/nope"}},
	}}}, 0, nil)
	require.Equal(t, wire.ErrOK, r.Err)
	assert.Equal(t, []string{"write b 3", "write b 6", "write b 5", "read b 74", "read b 71"}, log.take())
}

// TestTrafficOfReplayedTxns: txns applied from a log count as writes, as
// ZooKeeper counts the txns it replays at start-up.
func TestTrafficOfReplayedTxns(t *testing.T) {
	src := newHarness(t, Config{})
	var txns []Txn
	for _, req := range []*Request{
		{Session: 1, Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/q", Data: []byte("abc"), ACL: wire.OpenACLUnsafe}},
		{Session: 1, Op: wire.OpDelete, Body: &wire.PathVersionRequest{Path: "/q", Version: -1}},
	} {
		src.zxid++
		txn := src.tree.Prepare(req, src.zxid, 1)
		src.tree.Apply(&txn, nil)
		txns = append(txns, txn)
	}
	log := &trafficLog{}
	replica := New(Config{Traffic: log})
	for i := range txns {
		replica.Apply(&txns[i], nil)
	}
	assert.Equal(t, []string{"write q 5", "write q 2"}, log.lines)
}

func TestTopNamespace(t *testing.T) {
	for path, want := range map[string]string{
		"/a": "a", "/a/b/c": "a", "/zookeeper": "zookeeper", "/zookeeper/quota/x": "zookeeper",
		"/sp ace/x": "sp ace", "a/b": "b", "//x": "", "/a//": "a",
	} {
		ns, ok := topNamespace(path)
		assert.True(t, ok, path)
		assert.Equal(t, want, ns, path)
	}
	for _, path := range []string{"/", "", "a", "//", "///"} {
		_, ok := topNamespace(path)
		assert.False(t, ok, "%q has no namespace", path)
	}
}

// countingTraffic counts without allocating, as the server's does once a
// namespace is known.
type countingTraffic struct{ reads, writes, bytes int64 }

func (c *countingTraffic) Read(_ string, b int64)  { c.reads++; c.bytes += b }
func (c *countingTraffic) Write(_ string, b int64) { c.writes++; c.bytes += b }

// TestTrafficAllocatesNothing: measuring adds no allocation to a read or an
// applied write.
func TestTrafficAllocatesNothing(t *testing.T) {
	c := &countingTraffic{}
	h := newHarness(t, Config{Traffic: c})
	h.create(1, "/ns", "", wire.ModePersistent)
	h.create(1, "/ns/node", "0123456789", wire.ModePersistent)
	reads := testing.AllocsPerRun(100, func() {
		h.tree.GetData("/ns/node", nil, false, 0)
		h.tree.Exists("/ns/node", false, 0)
	})
	assert.Zero(t, reads)
	h.zxid++
	txn := h.tree.Prepare(&Request{Session: 1, Op: wire.OpSetData, Body: &wire.SetDataRequest{Path: "/ns/node", Data: []byte("x"), Version: -1}}, h.zxid, 1)
	writes := testing.AllocsPerRun(100, func() { h.tree.Apply(&txn, nil) })
	assert.Zero(t, writes)
	assert.Positive(t, c.reads)
	assert.Positive(t, c.writes)
}
