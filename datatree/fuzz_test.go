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
