package sim

import (
	"fmt"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/restore"
	"github.com/zabd/zabd/zab/storage"
)

// What a restart recovered, checked beyond storage's own checks: a fuzzy
// snapshot replayed as a standalone server would, and the zxids the log
// holds, for the invariants.

// checkFuzzyReplay replays an ensemble member's whole log over the fuzzy
// snapshot it loaded, as a standalone server (and ZooKeeper's
// loadDataBase) would at start, on a copy of the tree: every txn the
// snapshot already holds applies again, the snapshot's digest must match
// when replay reaches its zxid, and the tree at the log's end must have the
// digest its last txn carried. The member itself applies those txns only
// when a leader commits them (and the digest checks of drain judge that).
// Only a log cut at damage may end before the snapshot's digest zxid (the
// snapshot waited for the log to hold its txns durably); the copy is then
// as fuzzy as the member, whose leader sends it the rest.
func (s *server) checkFuzzyReplay(treeCfg datatree.Config, rec *storage.Recovery, damaged bool) bool {
	var tree *datatree.Tree
	path := dataDir + "/" + storage.VersionDir + "/" + rec.Snapshot.Name
	_, err := storage.ReadSnapshotFile(s.disk, path, func(d *wire.Decoder, zxid int64) (err error) {
		tree, err = datatree.Load(treeCfg, d, zxid)
		return err
	})
	if err != nil {
		s.w.fail(KindDurability, "server %d: read fuzzy snapshot %s again: %v", s.sid, rec.Snapshot.Name, err)
		return false
	}
	d := rec.Snapshot.Digest // set: the snapshot is fuzzy
	restored := zab.Restored{Tree: tree, Digest: &zab.SnapshotDigest{Zxid: d.Zxid, Version: d.Version, Digest: d.Digest}}
	replica, err := zab.New(zab.Config{ServerID: s.sid, Tree: treeCfg}, s.now(), s.w.streams.Stream(fmt.Sprintf("fuzzy-check/%d/%d", s.id, s.gen)), restored)
	if err == nil {
		_, err = restore.Replay(replica, rec)
	}
	if err != nil {
		s.w.fail(KindDurability, "server %d: replaying the log over fuzzy snapshot %s: %v", s.sid, rec.Snapshot.Name, err)
		return false
	}
	if replica.LastZxid() < d.Zxid {
		if !damaged {
			s.w.fail(KindDurability, "server %d: the log replayed over fuzzy snapshot %s ends at 0x%x, before the snapshot's last applied txn 0x%x, with no damage to explain it",
				s.sid, rec.Snapshot.Name, replica.LastZxid(), d.Zxid)
			return false
		}
		s.w.tr.logf("server %d: the damaged log ends at 0x%x, before the fuzzy snapshot's last applied txn 0x%x: the leader sends the rest", s.sid, replica.LastZxid(), d.Zxid)
		return true
	}
	if want, ok := s.digests.get(replica.LastZxid()); ok && want != replica.Digest() {
		s.w.fail(KindDurability, "server %d: the log replayed over fuzzy snapshot %s ends at 0x%x with tree digest %d, but it was %d when that txn was applied",
			s.sid, rec.Snapshot.Name, replica.LastZxid(), replica.Digest(), want)
		return false
	}
	s.w.tr.logf("server %d: the log replayed over it as a standalone server would ends at 0x%x with the digest that txn carried", s.sid, replica.LastZxid())
	return true
}

// readLogged lists the zxids the recovered log holds.
func (s *server) readLogged(rec *storage.Recovery) error {
	s.logged = s.logged[:0]
	it, err := rec.Log.Iterator(rec.Snapshot.Zxid + 1)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		s.logged = append(s.logged, it.Zxid())
	}
	return it.Err()
}
