package storage

import (
	"fmt"
	"io"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
)

// testTree stands in for the datatree in these tests: it writes and reads
// ZooKeeper's DataTree layout (ACL cache, then nodes by path, then "/")
// with one node per applied txn, /t<zxid hex>, whose data is the entry.
type testTree struct {
	entries map[int64][]byte
	// nodes holds every node load read, by path ("" is the root).
	nodes map[string]testNode
}

type testNode struct {
	data []byte
	acl  int64
	stat wire.StatPersisted
}

func newTestTree() *testTree { return &testTree{entries: map[int64][]byte{}} }

func (t *testTree) zxids() []int64 {
	var z []int64
	for k := range t.entries {
		z = append(z, k)
	}
	slices.Sort(z)
	return z
}

func (t *testTree) clone() *testTree {
	c := newTestTree()
	for k, v := range t.entries {
		c.entries[k] = v
	}
	return c
}

func (t *testTree) write(w io.Writer) error {
	e := wire.NewEncoder(nil)
	e.WriteInt(1) // ACL cache: one list, id 1 = world:anyone ALL
	e.WriteLong(1)
	e.WriteACLs([]wire.ACL{{Perms: 31, ID: wire.Id{Scheme: "world", ID: "anyone"}}})
	node := func(path string, data []byte) {
		e.WriteString(path)
		e.WriteBuffer(data)
		e.WriteLong(1)
		var st wire.StatPersisted
		st.Encode(e)
	}
	node("", nil)
	for _, z := range t.zxids() {
		node(fmt.Sprintf("/t%x", z), t.entries[z])
	}
	e.WriteString("/")
	_, err := w.Write(e.Bytes())
	return err
}

func (t *testTree) load(d *wire.Decoder, _ int64) error {
	t.entries = map[int64][]byte{}
	t.nodes = map[string]testNode{}
	n := d.ReadInt()
	for i := int32(0); i < n && d.Err() == nil; i++ {
		d.ReadLong()
		d.ReadACLs()
	}
	for d.Err() == nil {
		path := d.ReadString()
		if path == "/" {
			break
		}
		nd := testNode{data: d.ReadBuffer(), acl: d.ReadLong()}
		nd.stat.Decode(d)
		t.nodes[path] = nd
		var z int64
		if _, err := fmt.Sscanf(path, "/t%x", &z); err == nil && path == fmt.Sprintf("/t%x", z) {
			t.entries[z] = nd.data
		}
	}
	return d.Err()
}

func (t *testTree) snapshot(zxid int64) *Snapshot {
	return &Snapshot{
		Zxid:      zxid,
		Sessions:  []Session{{ID: 0x100, Timeout: 30000}, {ID: 0x200, Timeout: 4000}},
		WriteTree: t.clone().write,
		Digest:    func() ZxidDigest { return ZxidDigest{Zxid: zxid, Version: 2, Digest: zxid * 7} },
	}
}

// logTxns appends txns 1..n to log, each with size bytes of data from rng
// and synced on its own, adds them to tree, and writes a snapshot of tree
// after each zxid for which snapAt is true.
func logTxns(t *testing.T, s *Store, log *Log, tree *testTree, n int64, size int, rng *rand.Rand, snapAt func(z int64) bool) {
	t.Helper()
	for z := int64(1); z <= n; z++ {
		e := makeEntry(z, size, rng)
		_, err := log.Append(e)
		require.NoError(t, err)
		_, err = log.Sync()
		require.NoError(t, err)
		tree.entries[z] = e
		if snapAt(z) {
			_, err := s.WriteSnapshot(tree.snapshot(z))
			require.NoError(t, err)
		}
	}
}

// makeEntry builds a setData txn entry for zxid with size bytes of data.
func makeEntry(zxid int64, size int, rng *rand.Rand) []byte {
	data := make([]byte, size)
	rng.Read(data)
	e := wire.NewEncoder(nil)
	(&wire.TxnEntry{
		Header: wire.TxnHeader{ClientID: 0x100, Cxid: int32(zxid), Zxid: zxid, Time: 1700000000000 + zxid, Type: wire.OpSetData},
		Body:   &wire.SetDataTxn{Path: "/k", Data: data, Version: int32(zxid)},
		Digest: &wire.TxnDigest{Version: 2, TreeDigest: zxid},
	}).Encode(e)
	return e.Bytes()
}

// readAll replays the log from zxid on.
func readAll(l *Log, from int64) (map[int64][]byte, []int64, error) {
	it, err := l.Iterator(from)
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	out := map[int64][]byte{}
	var order []int64
	for it.Next() {
		out[it.Zxid()] = slices.Clone(it.Entry())
		order = append(order, it.Zxid())
	}
	return out, order, it.Err()
}
