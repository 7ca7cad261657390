package datatree

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

// These tests apply the txn logs and load the snapshots that ZooKeeper 3.8.0
// wrote while the golden traces were recorded (testdata/golden/*/log.*,
// snapshot.*): the digest ZooKeeper stored after every txn must be ours
// after applying it, and every snapshot restored and replayed forward must
// reach the same digests.

const goldenDir = "testdata/golden"

// goldenConfig reads a scenario's server settings from the manifest.
func goldenConfig(t *testing.T, scenario string) Config {
	b, err := os.ReadFile(filepath.Join(goldenDir, "manifest.json"))
	require.NoError(t, err)
	var manifest map[string]struct{ Config []string }
	require.NoError(t, json.Unmarshal(b, &manifest))
	var cfg Config
	for _, line := range manifest[scenario].Config {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "extendedTypesEnabled":
			cfg.ExtendedTypesEnabled = v == "true"
		case "DigestAuthenticationProvider.superDigest":
			cfg.SuperDigest = v
		case "enforceQuota":
			cfg.EnforceQuota = v == "true"
		}
	}
	return cfg
}

func goldenScenarios(t *testing.T) []string {
	entries, err := os.ReadDir(goldenDir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	require.NotEmpty(t, out)
	return out
}

func logTxn(e trace.LogEntry) Txn {
	txn := Txn{Header: e.Header, Body: e.Body}
	if e.Digest != nil {
		txn.Digest = *e.Digest
	}
	return txn
}

// replayChecked applies entries to tr, requiring ZooKeeper's digest after
// each one past fuzzyUpTo (a restored fuzzy snapshot reaches a consistent
// state only once the txns its serialization overlapped are replayed;
// ZooKeeper too compares digests only from there).
func replayChecked(t *testing.T, tr *Tree, entries []trace.LogEntry, fuzzyUpTo int64, what string) {
	t.Helper()
	for _, e := range entries {
		txn := logTxn(e)
		tr.Apply(&txn, nil)
		if e.Header.Zxid <= fuzzyUpTo {
			continue
		}
		if e.Digest != nil && e.Digest.TreeDigest != tr.Digest() && !modeOwnerDigest(tr, txn, e.Digest.TreeDigest) {
			require.Equal(t, e.Digest.TreeDigest, tr.Digest(), "%s: digest after zxid %#x (%v)", what, e.Header.Zxid, e.Header.Type)
		}
	}
}

func TestZooKeeperLogDigests(t *testing.T) {
	for _, sc := range goldenScenarios(t) {
		t.Run(sc, func(t *testing.T) {
			entries, err := trace.ReadTxnLogs(filepath.Join(goldenDir, sc))
			require.NoError(t, err)
			require.NotEmpty(t, entries)
			tr := New(goldenConfig(t, sc))
			replayChecked(t, tr, entries, 0, "log")
		})
	}
}

// zkSnapshot is a ZooKeeper snapshot file taken apart: the tree part's
// bytes and the digest stored after it.
type zkSnapshot struct {
	zxid       int64
	tree       []byte
	digestZxid int64
	digest     int64
}

// readZKSnapshot splits a FileSnap file: header {magic "ZKSN", version,
// dbid}, session table, tree, {checksum, "/"}, {zxid, digest version,
// digest}, {checksum, "/"}.
func readZKSnapshot(t *testing.T, path string) zkSnapshot {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, uint32(0x5a4b534e), binary.BigEndian.Uint32(b), "%s: magic", path)
	zxid, err := strconv.ParseInt(strings.TrimPrefix(filepath.Base(path), "snapshot."), 16, 64)
	require.NoError(t, err)
	d := wire.NewDecoder(b[16:])
	n := d.ReadInt()
	for i := int32(0); i < n; i++ {
		d.ReadLong()
		d.ReadInt()
	}
	require.NoError(t, d.Err())
	start := 16 + d.Offset()
	_, err = Load(Config{}, d, zxid)
	require.NoError(t, err, "%s", path)
	snap := zkSnapshot{zxid: zxid, tree: b[start : 16+d.Offset()]}
	d.ReadLong()
	require.Equal(t, "/", d.ReadString())
	snap.digestZxid = d.ReadLong()
	d.ReadInt()
	snap.digest = d.ReadLong()
	require.NoError(t, d.Err())
	return snap
}

func TestZooKeeperSnapshotsRestoreAndReplay(t *testing.T) {
	for _, sc := range goldenScenarios(t) {
		t.Run(sc, func(t *testing.T) {
			dir := filepath.Join(goldenDir, sc)
			cfg := goldenConfig(t, sc)
			entries, err := trace.ReadTxnLogs(dir)
			require.NoError(t, err)
			live := New(cfg)
			replayChecked(t, live, entries, 0, "log")
			snaps, err := filepath.Glob(filepath.Join(dir, "snapshot.*"))
			require.NoError(t, err)
			sort.Strings(snaps)
			require.NotEmpty(t, snaps)
			for _, p := range snaps {
				snap := readZKSnapshot(t, p)
				tr, err := Load(cfg, wire.NewDecoder(snap.tree), snap.zxid)
				require.NoError(t, err)
				var rest []trace.LogEntry
				upTo := New(cfg) // the tree as of the digest the snapshot stores
				for _, e := range entries {
					if e.Header.Zxid > snap.zxid {
						rest = append(rest, e)
					}
					if e.Header.Zxid <= snap.digestZxid {
						txn := logTxn(e)
						upTo.Apply(&txn, nil)
					}
				}
				if snap.digestZxid > 0 {
					require.Equal(t, snap.digest, upTo.Digest(), "%s: the digest it stores, for zxid %#x", p, snap.digestZxid)
				}
				// The restored tree itself is not compared with the stored
				// digest: ZooKeeper writes the digest of the last txn it
				// finished applying, while the tree may already hold the
				// next one's changes (recorded: ephemerals/snapshot.5).
				replayChecked(t, tr, rest, snap.digestZxid, filepath.Base(p)+" + log")
				require.Equal(t, live.Digest(), tr.Digest(), "%s: digest after replay", p)
				requireSameTree(t, live, tr)
			}
		})
	}
}

// requireSameTree compares two trees node by node: stored stat, data, ACL.
func requireSameTree(t require.TestingT, want, got *Tree) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	require.Equal(t, want.NodeCount(), got.NodeCount(), "node count")
	for p, n := range allNodes(want) {
		g := got.nodes.get(p)
		require.NotNil(t, g, "missing %s", p)
		require.Equal(t, n.stat(), g.stat(), "stat of %s", p)
		if !strings.HasSuffix(p, "/"+quotaStatNode) {
			// Quota stats are recounted on load (as ZooKeeper does), so a
			// client's hand-written stats do not survive a restore.
			require.Equal(t, string(n.data()), string(g.data()), "data of %s", p)
		}
		require.Equal(t, want.acls.list(n.acl), got.acls.list(g.acl), "ACL of %s", p)
		require.Equal(t, want.childNames(n), got.childNames(g), "children of %s", p)
	}
}

// modeOwnerDigest recognises the digests ZooKeeper logs that are not its
// tree's: for a create whose mode flags and opcode disagree on the node's
// kind (create2 with the container flag, createContainer in persistent or
// ephemeral mode), the logged digest counts the node with the owner the
// mode gives, while the node applies as the txn says (its next txn's
// digest is the tree's again).
func modeOwnerDigest(tr *Tree, txn Txn, logged int64) bool {
	var path string
	switch b := txn.Body.(type) {
	case *wire.CreateTxn:
		path = b.Path
	case *wire.CreateContainerTxn:
		path = b.Path
	default:
		return false
	}
	n := tr.nodes.get(path)
	if n == nil || n.czxid != txn.Header.Zxid {
		return false
	}
	for _, owner := range []int64{containerOwner, 0, txn.Header.ClientID} {
		as := n.stat()
		as.owner = owner
		if tr.Digest()-int64(tr.digestOf(path, n))+int64(tr.nodeDigest(path, n.data(), &as)) == logged {
			return true
		}
	}
	return false
}
