package restore

import (
	"fmt"
	"io"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/storage"
)

// Load recovers store (Store.Recover) and returns the recovery with the
// state a Peer starts from: the newest valid snapshot's tree, loaded with
// tree, its session table and its digest; or, when recovery found no valid
// snapshot (rec.Snapshot.Name is ""), an empty Restored, so that zab.New
// starts from a fresh tree. The epoch files fill AcceptedEpoch and
// CurrentEpoch (see Epochs). The recovery's Log is open: the caller owns it.
func Load(store *storage.Store, tree datatree.Config) (*storage.Recovery, zab.Restored, error) {
	accepted, current, err := Epochs(store)
	if err != nil {
		return nil, zab.Restored{}, err
	}
	var loaded *datatree.Tree
	rec, err := store.Recover(func(d *wire.Decoder, zxid int64) error {
		t, err := datatree.Load(tree, d, zxid)
		loaded = t
		return err
	})
	if err != nil {
		return nil, zab.Restored{}, err
	}
	restored := zab.Restored{AcceptedEpoch: accepted, CurrentEpoch: current}
	// With no valid snapshot, loaded may hold what a failed load left of a
	// corrupt one: storage skipped it, and so must the Peer.
	if rec.Snapshot.Name == "" {
		return rec, restored, nil
	}
	restored.Tree = loaded
	for _, sess := range rec.Snapshot.Sessions {
		restored.Sessions = append(restored.Sessions, sessions.Session{ID: sess.ID, Timeout: sess.Timeout})
	}
	// ZooKeeper compares a snapshot's digest only when its zxid names a txn
	// the replay can reach (DataTree.deserializeZxidDigest): zxid 0 is the
	// empty digest it writes before processing any txn (every member's
	// snapshot.0), and a zxid below the snapshot's is a new leader's
	// snapshot at epoch<<32 carrying the previous epoch's digest.
	if d := rec.Snapshot.Digest; d != nil && d.Zxid > 0 && d.Zxid >= rec.Snapshot.Zxid {
		restored.Digest = &zab.SnapshotDigest{Zxid: d.Zxid, Version: d.Version, Digest: d.Digest}
	}
	return rec, restored, nil
}

// Epochs reads version-2's acceptedEpoch and currentEpoch. An absent
// currentEpoch is 0 (a standalone server, or a member that never joined an
// epoch); an absent acceptedEpoch is currentEpoch, as ZooKeeper takes it.
func Epochs(store *storage.Store) (accepted, current int64, err error) {
	current, _, err = store.CurrentEpoch()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", store.Dir(), err)
	}
	accepted, ok, err := store.AcceptedEpoch()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", store.Dir(), err)
	}
	if !ok {
		accepted = current
	}
	return accepted, current, nil
}

// Replay feeds peer, just built from Load's Restored, every txn rec.Log holds
// after the snapshot, in order, and returns how many it fed. An entry that
// does not decode is an error naming its zxid.
func Replay(peer *zab.Peer, rec *storage.Recovery) (int, error) {
	it, err := rec.Log.Iterator(rec.Snapshot.Zxid + 1)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	n := 0
	for it.Next() {
		txn, err := zab.DecodeTxnEntry(it.Entry())
		if err != nil {
			return n, fmt.Errorf("txn 0x%x: %w", it.Zxid(), err)
		}
		if err := peer.Replay(txn); err != nil {
			return n, err
		}
		n++
	}
	if err := it.Err(); err != nil {
		return n, err
	}
	return n, peer.ReplayDone()
}

// minSyncLogBudget is the snapshot size SyncLogBudget assumes at least, so
// that a member with no snapshot yet, or a tiny one, still sends a short
// gap from its log.
const minSyncLogBudget = 16 << 10

// DefaultSnapshotSizeFactor is ZooKeeper's zookeeper.snapshotSizeFactor
// default: a leader reads a learner's gap from its txn log while the txns
// total at most this fraction of its newest snapshot's size.
const DefaultSnapshotSizeFactor = 0.33

// SyncLogBudget is how many bytes of log entries a leader reads to
// synchronize a learner by DIFF rather than send its snapshot: factor (as
// ZooKeeper's zookeeper.snapshotSizeFactor) times the newest snapshot's size,
// beyond which the snapshot is cheaper. A negative factor turns the DIFF
// from the log off, as in ZooKeeper: the budget is then -1, which no read
// fits.
func SyncLogBudget(snapshotBytes int64, factor float64) int {
	if factor < 0 {
		return -1
	}
	return int(float64(max(snapshotBytes, minSyncLogBudget)) * factor)
}

// ReadForSync reads from it, an iterator that starts at after, the txns a
// leader sends a learner whose last zxid is after, up to upTo (the
// zab.TxnLog contract): only when after is a logged txn, or base (the zxid
// the log begins after: the newest snapshot's), so that the learner's
// history is a prefix of the log's; only when the txns reach upTo; and only
// when their entries total at most budget bytes. Otherwise it returns
// false and the leader sends its snapshot.
func ReadForSync(it *storage.Iterator, after, upTo, base int64, budget int) ([]datatree.Txn, bool) {
	anchored := after == base
	var out []datatree.Txn
	for it.Next() {
		z := it.Zxid()
		if z <= after {
			anchored = anchored || z == after
			continue
		}
		if !anchored || z > upTo {
			break
		}
		if budget -= len(it.Entry()); budget < 0 {
			return nil, false
		}
		t, err := zab.DecodeTxnEntry(it.Entry())
		if err != nil {
			return nil, false
		}
		out = append(out, t)
		if z == upTo {
			break
		}
	}
	if it.Err() != nil || !anchored || len(out) == 0 || out[len(out)-1].Header.Zxid != upTo {
		return nil, false
	}
	return out, true
}

// Initialize writes snapshot.0, the empty tree, when recovery found no
// snapshot and no txn: a data directory's first start. ZooKeeper 3.8 does
// the same (FileTxnSnapLog.restore with its default zookeeper.db.autocreate)
// and refuses to start on a directory whose txn log has no snapshot before
// it ("No snapshot found, but there are log entries"), so without it a
// ZooKeeper member could not take over a zabd member's files until zabd's
// first snapshot. It also gives recovery a snapshot to fall back on when a
// later one turns out corrupt: the log from zxid 1 replays over it. Like
// ZooKeeper's, its digest section is the empty digest at zxid 0, which no
// replay compares. It returns the file's name, or "" when the directory
// needed none. A failure loses nothing (recovery removes a half-written
// file); the shells do not serve after one, as ZooKeeper does not.
func Initialize(store *storage.Store, rec *storage.Recovery) (string, error) {
	if rec.Snapshot.Name != "" || rec.LastZxid != 0 {
		return "", nil
	}
	empty := datatree.New(datatree.Config{})
	name, err := store.WriteSnapshot(&storage.Snapshot{
		Zxid: 0,
		WriteTree: func(out io.Writer) error {
			e := wire.NewEncoder(nil)
			empty.WriteSnapshot(e)
			_, err := out.Write(e.Bytes())
			return err
		},
		Digest: func() storage.ZxidDigest { return storage.ZxidDigest{Version: datatree.DigestVersion} },
	})
	if err != nil {
		return "", fmt.Errorf("write the initial snapshot: %w", err)
	}
	rec.Snapshot = storage.SnapshotInfo{Name: name}
	return name, nil
}
