package member

import (
	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/zab"
)

// Observer watches a Member carry out its Readys: zabd logs and measures,
// the simulator records what its checkers need and injects aimed faults.
// The methods marked "in the job" run inside DiskJob.Run, wherever the
// leaves run it (zabd: the disk goroutine), so they must be safe there;
// the rest run on the event loop. A method that returns crash true has
// stopped the process (the simulator's aimed crash, after calling
// Member.Stop): the job ends there and nothing after it is carried out.
// Embed NoObserver for the methods you do not need.
type Observer interface {
	// Loaded: a start loaded the newest snapshot and is about to replay
	// the log over it.
	Loaded()
	// Ready: the Peer's next Ready, before any of it is carried out.
	Ready(rd *zab.Ready)
	// Carried: the Ready's disk operations are queued (and a job started
	// if none was running), its sends not yet made.
	Carried()
	// Durable: the Peer is about to hear that the log is durable to zxid.
	Durable(zxid int64)
	// SnapshotWritten: a snapshot of the member's own tree is finished
	// (name and size when written) and the Peer is about to hear it.
	SnapshotWritten(j *SnapshotJob)

	// In the job: a truncation is done.
	Truncated(after int64)
	// In the job: the epoch files are written (role: the member's role when
	// the Ready that asked for it was carried out).
	EpochsWritten(e zab.EpochWrite, role zab.Role) (crash bool)
	// In the job: the damage a start cut is forgotten on disk.
	DamageCleared()
	// In the job: storage.Store.CoverEpoch ran before a batch that starts
	// a newer epoch than the last txn appended (zxid is the batch's last).
	EpochCovered(zxid int64) (crash bool)
	// In the job: txn is about to be appended as entry (the log copies
	// it). Returning stop ends the job without appending it.
	Appending(t *datatree.Txn, entry []byte) (stop bool)
	// In the job: an fsync made the log durable to zxid; txns is how many
	// txns it covered.
	Synced(zxid int64, txns int) (crash bool)
	// In the job: the snapshot of a SNAP is installed as file name.
	Installed(name string, zxid int64, bytes int) (crash bool)
}

// NoObserver observes nothing.
type NoObserver struct{}

func (NoObserver) Loaded()                                     {}
func (NoObserver) Ready(*zab.Ready)                            {}
func (NoObserver) Carried()                                    {}
func (NoObserver) Durable(int64)                               {}
func (NoObserver) SnapshotWritten(*SnapshotJob)                {}
func (NoObserver) Truncated(int64)                             {}
func (NoObserver) EpochsWritten(zab.EpochWrite, zab.Role) bool { return false }
func (NoObserver) DamageCleared()                              {}
func (NoObserver) EpochCovered(int64) bool                     { return false }
func (NoObserver) Appending(*datatree.Txn, []byte) bool        { return false }
func (NoObserver) Synced(int64, int) bool                      { return false }
func (NoObserver) Installed(string, int64, int) bool           { return false }
