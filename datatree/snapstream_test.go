package datatree_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

// ensembleCapture holds what a ZooKeeper 3.8.0 ensemble sent between its
// members (wire/testdata/capture/capture.sh ensemble), the snapshot streams
// that follow SNAP packets among it.
const ensembleCapture = "../wire/testdata/golden/ensemble"

type captureVector struct {
	Name   string
	Kind   string
	File   string
	Offset int64
	Length int
}

// TestLoadSnapStreamGolden: each snapshot a 3.8.0 leader streamed to a
// learner after SNAP (the session table, the tree, the signature) loads
// whole, and the tree is the leader's at the SNAP's zxid: its digest is the
// one the leader's proposal of that zxid carried.
func TestLoadSnapStreamGolden(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(ensembleCapture, "manifest.json"))
	require.NoError(t, err)
	var manifest []captureVector
	require.NoError(t, json.Unmarshal(raw, &manifest))
	files := map[string][]byte{}
	read := func(file string) []byte {
		if files[file] == nil {
			b, err := os.ReadFile(filepath.Join(ensembleCapture, file))
			require.NoError(t, err)
			files[file] = b
		}
		return files[file]
	}
	// Every proposal, by zxid.
	proposals := map[int64]wire.TxnEntry{}
	for _, v := range manifest {
		if v.Kind != "quorum/PROPOSAL" {
			continue
		}
		var qp wire.QuorumPacket
		require.NoError(t, wire.Unmarshal(read(v.File)[v.Offset:v.Offset+int64(v.Length)], &qp))
		e, err := wire.DecodeTxnEntry(qp.Data)
		require.NoError(t, err, v.Name)
		require.NotNil(t, e.Digest, v.Name)
		proposals[qp.Zxid] = e
	}
	// liveAt gives the sessions (and their timeouts) that the txns up to
	// zxid left open.
	liveAt := func(zxid int64) map[int64]int32 {
		live := map[int64]int32{}
		for z, e := range proposals {
			if b, ok := e.Body.(*wire.CreateSessionTxn); ok && z <= zxid {
				live[e.Header.ClientID] = b.TimeOut
			}
		}
		for z, e := range proposals {
			if e.Header.Type == wire.OpCloseSession && z <= zxid {
				delete(live, e.Header.ClientID)
			}
		}
		return live
	}

	const held int64 = 0x0100000d82380006 // alive, with /held, while follower 3 was sent a snapshot
	streams := 0
	for _, v := range manifest {
		if v.Kind != "quorum/snapshot-stream" {
			continue
		}
		streams++
		stream := read(v.File)
		var snap wire.QuorumPacket // the 20-byte SNAP packet just before the stream
		require.NoError(t, wire.Unmarshal(stream[v.Offset-20:v.Offset], &snap), v.Name)
		require.Equal(t, wire.PacketSnap, snap.Type, v.Name)

		d := wire.NewDecoder(stream[v.Offset : v.Offset+int64(v.Length)])
		sessions := map[int64]int32{}
		for n := d.ReadInt(); n > 0 && d.Err() == nil; n-- {
			id := d.ReadLong()
			sessions[id] = d.ReadInt()
		}
		require.NoError(t, d.Err(), v.Name)
		tree, err := datatree.Load(datatree.Config{}, d, snap.Zxid)
		require.NoError(t, err, v.Name)
		d.Read(&wire.SnapshotEnd{})
		require.NoError(t, d.Err(), v.Name)
		assert.Zero(t, d.Remaining(), v.Name)

		if v.Name != "quorum-to2-7.in/quorum/snapshot-stream#1" {
			// The learners that joined epoch 1 at its start were sent an
			// empty tree and no sessions.
			assert.Empty(t, sessions, v.Name)
			assert.Equal(t, 4, tree.NodeCount(), v.Name) // /, /zookeeper, its config and quota
			continue
		}
		if assert.Contains(t, proposals, snap.Zxid, v.Name) {
			assert.Equal(t, proposals[snap.Zxid].Digest.TreeDigest, tree.Digest(), "%s: digest of the tree at %#x", v.Name, snap.Zxid)
		}
		assert.Equal(t, liveAt(snap.Zxid), sessions, v.Name)
		assert.Contains(t, sessions, held, v.Name)
		assert.Equal(t, []string{"/held"}, tree.Ephemerals(held), v.Name)
		for _, path := range []string{"/ops", "/ops/a7", "/observer-2", "/diff-1", "/snap-2"} {
			_, code := tree.Exists(path, false, 0)
			assert.Equal(t, wire.ErrOK, code, "%s: %s", v.Name, path)
		}
	}
	assert.Equal(t, 3, streams)
}
