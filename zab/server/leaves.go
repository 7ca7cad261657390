package server

import (
	"time"

	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/member"
	"github.com/zabd/zabd/zab/runlog"
	"github.com/zabd/zabd/zab/storage"
)

// shell is zabd's side of package zab/member: its leaves (sockets, the disk
// and snapshot goroutines) and its observer (logs and metrics). Every
// method runs on the event loop except those the Observer marks "in the
// job", which run on the disk goroutine and touch only the logger and
// atomic counters.
type shell struct {
	member.NoObserver
	s *Server
}

// Loaded marks where a start's replay of the log begins (for
// startup_txns_load_time).
func (sh shell) Loaded() { sh.s.replayStart = time.Now() }

func (sh shell) SendClient(m *zab.Message) { sh.s.dispatch(m, time.Now()) }

func (sh shell) SendVotes(votes []zab.Vote) {
	sh.s.rec.sentVotes(votes)
	sh.s.net.SendVotes(votes)
}

func (sh shell) SendPeer(msgs []zab.PeerMessage) {
	sh.s.rec.sentPeer(msgs)
	sh.s.measurePeerTraffic(msgs, nil)
	sh.s.net.SendPeer(msgs)
}

func (sh shell) Fsync(l *storage.Log) (int64, error) { return sh.s.disk.fsync(l) }

func (sh shell) RunDisk(j *member.DiskJob) { sh.s.disk.jobs <- j }

func (sh shell) BeginSnapshot(j *member.SnapshotJob) member.SnapshotStream {
	sh.s.snapshots.in <- snapshotItem{begin: j}
	return snapshotStream{in: sh.s.snapshots.in}
}

// Ready logs the member's new role, its notices and the sessions its txns
// create and end, and counts the notifications, before the Ready is carried
// out.
func (sh shell) Ready(rd *zab.Ready) {
	s := sh.s
	if rd.State != nil {
		s.roleChanged(*rd.State)
		s.rec.role(*rd.State)
	}
	for _, n := range rd.Notices {
		if n.Warn {
			s.log.Warn(n.Text)
		} else {
			s.log.Info(n.Text)
		}
	}
	if len(rd.Appends) > 0 {
		s.logSessionTxns(rd.Appends)
	}
	s.measureNotifications(rd.Messages)
}

// Durable records the point the log became durable to, with runRecordFile.
func (sh shell) Durable(zxid int64) {
	sh.s.rec.add(runlog.Event{Kind: runlog.KindDurable, Zxid: zxid})
}

func (sh shell) Truncated(after int64) {
	sh.s.log.Info("txn log truncated", "after", zxidHex(after))
}

func (sh shell) EpochsWritten(e zab.EpochWrite, _ zab.Role) bool {
	sh.s.log.Info("epochs persisted", "accepted_epoch", e.Accepted, "current_epoch", e.Current)
	return false
}

func (sh shell) DamageCleared() {
	sh.s.log.Info("the log damage is repaired by the leader's synchronization; forgotten on disk")
}

func (sh shell) Synced(_ int64, txns int) bool {
	sh.s.disk.synced(txns)
	return false
}

func (sh shell) Installed(name string, zxid int64, n int) bool {
	sh.s.log.Info("installed the leader's snapshot", "file", name, "zxid", zxidHex(zxid), "bytes", n)
	return false
}
