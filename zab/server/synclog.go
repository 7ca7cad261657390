package server

import (
	"sync/atomic"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/zab/restore"
	"github.com/zabd/zabd/zab/storage"
)

// syncLog is the member's txn log as its leader reads it back to
// synchronize a learner that is behind the committed window (zab.TxnLog):
// a DIFF from the log instead of the whole tree, while the gap is at most
// snapshotSizeFactor (0.33 by default) of the newest snapshot's size, as
// ZooKeeper's leader does
// (LearnerHandler.syncFollower with getProposalsFromTxnLog). The event loop
// calls it; it reads the files beside the disk writer, only txns already
// durable, so nothing it reads is being written.
type syncLog struct {
	store *storage.Store
	// factor is the snapshotSizeFactor key: the budget's share of the
	// newest snapshot's size (never negative: then there is no syncLog).
	factor float64
	// durable is the disk writer's durable zxid, set once it runs (before
	// the event loop starts).
	durable *atomic.Int64
}

func (l *syncLog) ReadAfter(after, upTo int64) ([]datatree.Txn, bool) {
	if l.durable == nil || upTo > l.durable.Load() {
		return nil, false
	}
	base, size, err := l.store.NewestSnapshot()
	if err != nil {
		return nil, false
	}
	it, err := l.store.ReadLog(after, upTo)
	if err != nil {
		return nil, false
	}
	defer it.Close()
	return restore.ReadForSync(it, after, upTo, base, restore.SyncLogBudget(size, l.factor))
}
