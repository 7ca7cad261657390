package datatree

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/zabd/zabd/wire"
)

// FuzzLoad feeds arbitrary bytes to the snapshot loader: it must refuse
// them with a *SnapshotError or load a tree whose snapshot loads back to the
// same tree (digest, nodes, and the same bytes when written again). Seeds:
// testdata/fuzz/FuzzLoad (trees written by this package and the tree parts
// of ZooKeeper 3.8's own snapshots).
func FuzzLoad(f *testing.F) {
	f.Add(snapshotSeed())
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := Config{ExtendedTypesEnabled: true}
		// The highest zxid, so that the snapshot written back leaves no
		// node out as created after it started.
		const lastZxid = math.MaxInt64
		tr, err := Load(cfg, wire.NewDecoder(data), lastZxid)
		if err != nil {
			var se *SnapshotError
			if !errors.As(err, &se) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error of the wrong kind: %v", err)
			}
			if se.Offset < 0 || se.Offset > len(data) {
				t.Fatalf("offset %d outside the %d input bytes", se.Offset, len(data))
			}
			if tr != nil {
				t.Fatal("a tree with an error")
			}
			return
		}
		var first wire.Encoder
		tr.WriteSnapshot(&first)
		again, err := Load(cfg, wire.NewDecoder(first.Bytes()), lastZxid)
		if err != nil {
			t.Fatalf("own snapshot refused: %v", err)
		}
		if again.Digest() != tr.Digest() || again.NodeCount() != tr.NodeCount() {
			t.Fatalf("round trip changed the tree: digest %d→%d, nodes %d→%d", tr.Digest(), again.Digest(), tr.NodeCount(), again.NodeCount())
		}
		var second wire.Encoder
		again.WriteSnapshot(&second)
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatal("writing the reloaded tree gives other bytes")
		}
	})
}

// snapshotSeed is a small tree with every node kind, ACLs and a quota.
func snapshotSeed() []byte {
	tr := New(Config{ExtendedTypesEnabled: true})
	zxid := int64(0)
	do := func(req *Request) {
		zxid++
		txn := tr.Prepare(req, zxid, 1000+zxid)
		tr.Apply(&txn, nil)
	}
	create := func(path, data string, mode wire.CreateMode, acl []wire.ACL) {
		op := wire.OpCreate
		body := &wire.CreateRequest{Path: path, Data: []byte(data), ACL: acl, Flags: mode}
		switch {
		case mode.TTL():
			op, body.HasTTL, body.TTL = wire.OpCreateTTL, true, 5000
		case mode.Container():
			op = wire.OpCreateContainer
		}
		do(&Request{Session: 5, Op: op, Body: body, Auth: []wire.Id{{Scheme: "digest", ID: DigestID("u:p")}}})
	}
	create("/a", "x", wire.ModePersistent, wire.OpenACLUnsafe)
	create("/a/e", "", wire.ModeEphemeral, wire.CreatorAllACL)
	create("/c", "", wire.ModeContainer, wire.ReadACLUnsafe)
	create("/t", "ttl", wire.ModePersistentWithTTL, wire.OpenACLUnsafe)
	create("/zookeeper/quota/a", "", wire.ModePersistent, wire.OpenACLUnsafe)
	create("/zookeeper/quota/a/zookeeper_limits", "count=10,bytes=100", wire.ModePersistent, wire.OpenACLUnsafe)
	create("/zookeeper/quota/a/zookeeper_stats", "count=0,bytes=0", wire.ModePersistent, wire.OpenACLUnsafe)
	var e wire.Encoder
	tr.WriteSnapshot(&e)
	return e.Bytes()
}

// FuzzApply applies arbitrary txns, as a broken leader or a damaged log
// could hand them over (each a TxnHeader and its body, one after the
// other): Apply must never panic, and the tree must stay consistent — every
// node reachable from its parent under its name, the incremental digest
// equal to one computed afresh, and its snapshot loadable to the same tree.
func FuzzApply(f *testing.F) {
	f.Add(txnSeed())
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := New(Config{ExtendedTypesEnabled: true})
		d := wire.NewDecoder(data)
		for d.Remaining() > 0 {
			var hdr wire.TxnHeader
			hdr.Decode(d)
			body, err := wire.DecodeTxnBody(hdr.Type, d)
			if d.Err() != nil || err != nil {
				break
			}
			txn := Txn{Header: hdr, Body: body}
			tr.Apply(&txn, nil)
		}
		var sum int64
		for p, n := range allNodes(tr) {
			sum += int64(tr.digestOf(p, n))
			if p == "/" {
				continue
			}
			parentPath, name, ok := splitPath(p)
			parent := tr.nodes.get(parentPath)
			if !ok || parent == nil || tr.kids(parent)[n.index()] != name || n.name() != name || tr.child(parent, name) != n {
				t.Fatalf("node %q is not linked under its parent", p)
			}
		}
		if sum != tr.Digest() {
			t.Fatalf("incremental digest %d, afresh %d", tr.Digest(), sum)
		}
		var e wire.Encoder
		tr.WriteSnapshot(&e)
		back, err := Load(Config{ExtendedTypesEnabled: true}, wire.NewDecoder(e.Bytes()), math.MaxInt64)
		if err != nil {
			t.Fatalf("own snapshot refused: %v", err)
		}
		if back.Digest() != tr.Digest() || back.NodeCount() != tr.NodeCount() {
			t.Fatal("snapshot round trip changed the tree")
		}
	})
}

// txnSeed is a run of txns touching every kind: creates of each type,
// setData, setACL, a multi, a delete, a closeSession.
func txnSeed() []byte {
	var e wire.Encoder
	zxid := int64(0)
	add := func(typ wire.OpCode, body wire.Record) {
		zxid++
		hdr := wire.TxnHeader{ClientID: 9, Cxid: int32(zxid), Zxid: zxid, Time: 1000 + zxid, Type: typ}
		hdr.Encode(&e)
		body.Encode(&e)
	}
	add(wire.OpCreate, &wire.CreateTxn{Path: "/a", Data: []byte("x"), ACL: wire.OpenACLUnsafe, ParentCVersion: 1})
	add(wire.OpCreate2, &wire.CreateTxn{Path: "/a/e", ACL: wire.OpenACLUnsafe, Ephemeral: true, ParentCVersion: 1})
	add(wire.OpCreateContainer, &wire.CreateContainerTxn{Path: "/c", ACL: wire.ReadACLUnsafe, ParentCVersion: 2})
	add(wire.OpCreateTTL, &wire.CreateTTLTxn{Path: "/t", ACL: wire.OpenACLUnsafe, ParentCVersion: 3, TTL: 100})
	add(wire.OpSetData, &wire.SetDataTxn{Path: "/a", Data: []byte("y"), Version: 1})
	add(wire.OpSetACL, &wire.SetACLTxn{Path: "/a", ACL: wire.ReadACLUnsafe, Version: 1})
	sub := wire.Marshal(&wire.CreateTxn{Path: "/a/m", ACL: wire.OpenACLUnsafe, ParentCVersion: 2})
	add(wire.OpMulti, &wire.MultiTxn{Txns: []wire.Txn{{Type: wire.OpCreate, Data: sub}, {Type: wire.OpDelete, Data: wire.Marshal(&wire.DeleteTxn{Path: "/t"})}}})
	add(wire.OpDelete, &wire.DeleteTxn{Path: "/c"})
	add(wire.OpCloseSession, &wire.CloseSessionTxn{Paths2Delete: []string{"/a/e"}})
	return e.Bytes()
}
