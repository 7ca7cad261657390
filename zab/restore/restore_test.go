package restore_test

import (
	"fmt"
	"io"
	mathrand "math/rand"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/restore"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

var treeCfg = datatree.Config{ExtendedTypesEnabled: true}

const sessionID = 0x100

// history is a session's creation, then n creates of /n1../nn, zxids 1..n+1.
func history(n int) []datatree.Txn {
	txns := []datatree.Txn{{
		Header: wire.TxnHeader{ClientID: sessionID, Zxid: 1, Time: 1000, Type: wire.OpCreateSession},
		Body:   &wire.CreateSessionTxn{TimeOut: 30000},
	}}
	for i := 1; i <= n; i++ {
		txns = append(txns, datatree.Txn{
			Header: wire.TxnHeader{ClientID: sessionID, Cxid: int32(i), Zxid: int64(i + 1), Time: 1000, Type: wire.OpCreate},
			Body:   &wire.CreateTxn{Path: fmt.Sprintf("/n%d", i), Data: []byte("d"), ACL: wire.OpenACLUnsafe, ParentCVersion: int32(i)},
		})
	}
	return txns
}

func openStore(t testing.TB, dir string) *storage.Store {
	t.Helper()
	store, err := storage.Open(storage.Options{FS: vfs.OS{}, Dir: dir, SnapCount: 1000, Rand: mathrand.New(mathrand.NewSource(1))})
	require.NoError(t, err)
	return store
}

// logTxns appends txns to a data directory's log and makes them durable.
func logTxns(t testing.TB, store *storage.Store, txns []datatree.Txn) {
	t.Helper()
	rec, err := store.Recover(func(d *wire.Decoder, zxid int64) error {
		_, err := datatree.Load(treeCfg, d, zxid)
		return err
	})
	require.NoError(t, err)
	for i := range txns {
		_, err := rec.Log.Append(zab.EncodeTxnEntry(&txns[i]))
		require.NoError(t, err)
	}
	durable, err := rec.Log.Sync()
	require.NoError(t, err)
	require.Equal(t, txns[len(txns)-1].Header.Zxid, durable)
	require.NoError(t, rec.Log.Close())
}

// applied is the tree the txns build, applied directly.
func applied(txns []datatree.Txn) *datatree.Tree {
	tree := datatree.New(treeCfg)
	for i := range txns {
		tree.Apply(&txns[i], nil)
	}
	return tree
}

// start is what a shell does with Load's result.
func start(t testing.TB, rec *storage.Recovery, restored zab.Restored) (*zab.Peer, int) {
	t.Helper()
	peer, err := zab.New(zab.Config{ServerID: zab.StandaloneServerID, Tree: treeCfg}, zab.Time{Wall: 2000}, rand.New(rand.NewPCG(1, 2)), restored)
	require.NoError(t, err)
	n, err := restore.Replay(peer, rec)
	require.NoError(t, err)
	return peer, n
}

func TestWithoutSnapshotReplaysTheWholeLog(t *testing.T) {
	dir := t.TempDir()
	txns := history(3)
	logTxns(t, openStore(t, dir), txns)

	rec, restored, err := restore.Load(openStore(t, dir), treeCfg)
	require.NoError(t, err)
	defer rec.Log.Close()
	require.Empty(t, rec.Snapshot.Name)
	require.Equal(t, zab.Restored{}, restored, "no snapshot: the Peer starts from a fresh tree")

	peer, n := start(t, rec, restored)
	require.Equal(t, len(txns), n)
	require.Equal(t, int64(len(txns)), peer.LastZxid())
	require.Equal(t, applied(txns).Digest(), peer.Digest())
}

func TestFromSnapshotReplaysOnlyTheTxnsAfterIt(t *testing.T) {
	dir := t.TempDir()
	txns := history(4)
	store := openStore(t, dir)
	logTxns(t, store, txns)
	const snapZxid = 3
	snapTree := applied(txns[:snapZxid])
	writeSnapshot(t, store, snapZxid, snapTree, storage.ZxidDigest{Zxid: snapZxid, Version: datatree.DigestVersion, Digest: snapTree.Digest()})

	rec, restored, err := restore.Load(openStore(t, dir), treeCfg)
	require.NoError(t, err)
	defer rec.Log.Close()
	require.NotEmpty(t, rec.Snapshot.Name)
	require.NotNil(t, restored.Tree)
	require.Equal(t, snapTree.Digest(), restored.Tree.Digest())
	require.Equal(t, []sessions.Session{{ID: sessionID, Timeout: 30000}}, restored.Sessions)
	require.Equal(t, &zab.SnapshotDigest{Zxid: snapZxid, Version: datatree.DigestVersion, Digest: snapTree.Digest()}, restored.Digest)

	peer, n := start(t, rec, restored)
	require.Equal(t, len(txns)-snapZxid, n)
	require.Equal(t, int64(len(txns)), peer.LastZxid())
	require.Equal(t, applied(txns).Digest(), peer.Digest())
}

// writeSnapshot writes tree as the snapshot of zxid, with digest as its
// digest section.
func writeSnapshot(t *testing.T, store *storage.Store, zxid int64, tree *datatree.Tree, digest storage.ZxidDigest) {
	t.Helper()
	_, err := store.WriteSnapshot(&storage.Snapshot{
		Zxid:     zxid,
		Sessions: []storage.Session{{ID: sessionID, Timeout: 30000}},
		WriteTree: func(w io.Writer) error {
			var e wire.Encoder
			tree.WriteSnapshot(&e)
			_, err := w.Write(e.Bytes())
			return err
		},
		Digest: func() storage.ZxidDigest { return digest },
	})
	require.NoError(t, err)
}

// ZooKeeper writes an empty digest section (zxid 0, digest 0) into a
// snapshot taken before it processed any txn — every member of a new
// ensemble writes snapshot.0 so — and a digest of a txn older than the
// snapshot (a new leader's snapshot at zxid epoch<<32) that no replay can
// meet; it compares neither. Neither stops a server that takes over such a
// data directory: the replay is checked against the txns' own digests.
func TestSnapshotDigestsZooKeeperDoesNotCompareAreIgnored(t *testing.T) {
	for name, c := range map[string]struct {
		snapZxid int64
		digest   func(tree *datatree.Tree) storage.ZxidDigest
	}{
		"empty digest of snapshot.0": {0, func(*datatree.Tree) storage.ZxidDigest {
			return storage.ZxidDigest{Version: datatree.DigestVersion}
		}},
		"digest older than the snapshot": {3, func(tree *datatree.Tree) storage.ZxidDigest {
			return storage.ZxidDigest{Zxid: 2, Version: datatree.DigestVersion, Digest: tree.Digest() + 1}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			txns := history(4)
			store := openStore(t, dir)
			logTxns(t, store, txns)
			snapTree := applied(txns[:c.snapZxid])
			writeSnapshot(t, store, c.snapZxid, snapTree, c.digest(snapTree))

			rec, restored, err := restore.Load(openStore(t, dir), treeCfg)
			require.NoError(t, err)
			defer rec.Log.Close()
			require.Nil(t, restored.Digest, "nothing to compare the tree with")
			peer, n := start(t, rec, restored)
			require.Equal(t, len(txns)-int(c.snapZxid), n)
			require.Equal(t, applied(txns).Digest(), peer.Digest())
		})
	}
}

func TestLoadReturnsStoragesRefusal(t *testing.T) {
	dir := t.TempDir()
	txns := history(2)
	// A log that starts mid-epoch, with no snapshot to start from, has lost
	// the txns before it: storage refuses, and Load must say so unchanged.
	for i := range txns {
		txns[i].Header.Zxid += 10
	}
	logTxns(t, openStore(t, dir), txns)
	_, _, err := restore.Load(openStore(t, dir), treeCfg)
	require.ErrorIs(t, err, storage.ErrDataLoss)
}

func TestReplayClosesASessionLoggedWithoutBody(t *testing.T) {
	dir := t.TempDir()
	txns := history(1)
	txns[1].Body.(*wire.CreateTxn).Ephemeral = true
	// ZooKeeper before 3.6 logged closeSession with no body.
	txns = append(txns, datatree.Txn{Header: wire.TxnHeader{ClientID: sessionID, Zxid: 3, Time: 1000, Type: wire.OpCloseSession}})
	logTxns(t, openStore(t, dir), txns)

	rec, restored, err := restore.Load(openStore(t, dir), treeCfg)
	require.NoError(t, err)
	defer rec.Log.Close()
	peer, n := start(t, rec, restored)
	require.Equal(t, 3, n)

	txns[2].Body = &wire.CloseSessionTxn{}
	closed := applied(txns)
	_, code := closed.Exists("/n1", false, 0)
	require.Equal(t, wire.ErrNoNode, code, "closing the session deletes its ephemeral")
	require.Equal(t, closed.Digest(), peer.Digest())
	require.Equal(t, applied(txns[:2]).NodeCount()-1, closed.NodeCount())
}

func TestLoadReadsTheEpochFiles(t *testing.T) {
	dir := t.TempDir()
	store := openStore(t, dir)
	_, restored, err := restore.Load(store, treeCfg)
	require.NoError(t, err)
	require.Equal(t, [2]int64{0, 0}, [2]int64{restored.AcceptedEpoch, restored.CurrentEpoch}, "no epoch files: epoch 0")
	require.NoError(t, store.SetCurrentEpoch(3))
	_, restored, err = restore.Load(openStore(t, dir), treeCfg)
	require.NoError(t, err)
	require.Equal(t, [2]int64{3, 3}, [2]int64{restored.AcceptedEpoch, restored.CurrentEpoch}, "an absent acceptedEpoch is currentEpoch")
	require.NoError(t, store.SetAcceptedEpoch(4))
	_, restored, err = restore.Load(openStore(t, dir), treeCfg)
	require.NoError(t, err)
	require.Equal(t, [2]int64{4, 3}, [2]int64{restored.AcceptedEpoch, restored.CurrentEpoch})
	require.NoError(t, os.WriteFile(filepath.Join(dir, storage.VersionDir, "currentEpoch"), []byte("three"), 0o644))
	_, _, err = restore.Load(openStore(t, dir), treeCfg)
	require.ErrorContains(t, err, `currentEpoch`)
	require.ErrorContains(t, err, `"three" is not an epoch`)
}

// ReadForSync sends a DIFF from the log only when the learner's last zxid
// anchors it in the log (a logged txn, or the base the log begins after),
// the txns reach upTo, and they fit the budget; SyncLogBudget is the factor
// (0.33 by default) of the snapshot, of 16 KiB at least; negative: none.
func TestReadForSync(t *testing.T) {
	dir := t.TempDir()
	store := openStore(t, dir)
	txns := history(20)         // zxids 1..21
	logTxns(t, store, txns[4:]) // the log holds 5..21: it begins after 4
	read := func(after, upTo, base int64, budget int) ([]int64, bool) {
		it, err := store.ReadLog(after, upTo)
		require.NoError(t, err)
		defer it.Close()
		got, ok := restore.ReadForSync(it, after, upTo, base, budget)
		var zxids []int64
		for _, g := range got {
			zxids = append(zxids, g.Header.Zxid)
		}
		return zxids, ok
	}
	zxids, ok := read(7, 10, 4, 1<<20)
	require.True(t, ok)
	require.Equal(t, []int64{8, 9, 10}, zxids, "after a logged txn, up to upTo")
	zxids, ok = read(4, 6, 4, 1<<20)
	require.True(t, ok, "the base the log begins after anchors it")
	require.Equal(t, []int64{5, 6}, zxids)
	_, ok = read(3, 6, 4, 1<<20)
	require.False(t, ok, "before the log: not anchored")
	_, ok = read(4, 6, 2, 1<<20)
	require.False(t, ok, "4 is neither logged nor the base")
	_, ok = read(7, 25, 4, 1<<20)
	require.False(t, ok, "the log does not reach upTo")
	entry := len(zab.EncodeTxnEntry(&txns[8]))
	_, ok = read(7, 10, 4, 3*entry-1)
	require.False(t, ok, "over the budget")
	_, ok = read(7, 10, 4, 3*entry+3)
	require.True(t, ok, "within it")
	require.Equal(t, 346030, restore.SyncLogBudget(1<<20, restore.DefaultSnapshotSizeFactor))
	require.Equal(t, 5406, restore.SyncLogBudget(100, restore.DefaultSnapshotSizeFactor), "at least 0.33 of 16 KiB")
	require.Equal(t, 1<<19, restore.SyncLogBudget(1<<20, 0.5), "the factor given")
	require.Equal(t, -1, restore.SyncLogBudget(1<<20, -1), "a negative factor: never from the log")
	_, ok = read(7, 10, 4, restore.SyncLogBudget(1<<20, -1))
	require.False(t, ok, "no read fits a negative budget")
}

// TestFirstStartWritesZooKeepersSnapshotZero: a fresh data directory gets
// snapshot.0 byte for byte as ZooKeeper 3.8.0 writes it on its first start
// (testdata/zk38-snapshot.0, taken from Debian's zookeeper 3.8.0 started
// standalone on an empty dataDir); a directory with txns or a snapshot gets
// none, and the next recovery starts from it.
func TestFirstStartWritesZooKeepersSnapshotZero(t *testing.T) {
	dir := t.TempDir()
	rec, _, err := restore.Load(openStore(t, dir), treeCfg)
	require.NoError(t, err)
	name, err := restore.Initialize(openStore(t, dir), rec)
	require.NoError(t, err)
	require.NoError(t, rec.Log.Close())
	require.Equal(t, "snapshot.0", name)
	require.Equal(t, name, rec.Snapshot.Name)
	want, err := os.ReadFile(filepath.Join("testdata", "zk38-snapshot.0"))
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(dir, storage.VersionDir, name))
	require.NoError(t, err)
	require.Equal(t, want, got)

	// Logged txns after it: recovery starts from snapshot.0 and writes no
	// other.
	logTxns(t, openStore(t, dir), history(2))
	rec, restored, err := restore.Load(openStore(t, dir), treeCfg)
	require.NoError(t, err)
	defer rec.Log.Close()
	require.Equal(t, "snapshot.0", rec.Snapshot.Name)
	name, err = restore.Initialize(openStore(t, dir), rec)
	require.NoError(t, err)
	require.Empty(t, name)
	peer, n := start(t, rec, restored)
	require.Equal(t, 3, n)
	require.Equal(t, applied(history(2)).Digest(), peer.Digest())
}

// TestNoInitialSnapshotOverALog: a directory whose log holds txns but no
// snapshot (written before zabd wrote snapshot.0) gets no snapshot.0, which
// would claim an empty tree at zxid 0 the log does not start from.
func TestNoInitialSnapshotOverALog(t *testing.T) {
	dir := t.TempDir()
	logTxns(t, openStore(t, dir), history(1))
	rec, _, err := restore.Load(openStore(t, dir), treeCfg)
	require.NoError(t, err)
	defer rec.Log.Close()
	name, err := restore.Initialize(openStore(t, dir), rec)
	require.NoError(t, err)
	require.Empty(t, name)
	entries, err := os.ReadDir(filepath.Join(dir, storage.VersionDir))
	require.NoError(t, err)
	for _, e := range entries {
		require.NotContains(t, e.Name(), "snapshot.")
	}
}
