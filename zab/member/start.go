package member

import (
	"fmt"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/restore"
	"github.com/zabd/zabd/zab/storage"
)

// Options says how to start a member.
type Options struct {
	// Storage opens the data directory (its FS is the leaves' file
	// system; Rand is required).
	Storage storage.Options
	// Config is the Peer's configuration; Open sets Tree from Tree and,
	// for an ensemble member, TxnLog.
	Config zab.Config
	Tree   datatree.Config
	// SnapshotSizeFactor is zookeeper.snapshotSizeFactor: a leader
	// synchronizes a learner by DIFF from its log while the txns total at
	// most this share of its newest snapshot's size; negative turns the
	// DIFF from the log off.
	SnapshotSizeFactor float64
	Now                zab.Time
	Rand               zab.Rand // the Peer's randomness
	Leaves             Leaves
	Observer           Observer // nil: NoObserver
}

// Stage names the step of a start that failed.
type Stage string

const (
	StageOpen       Stage = "open the data directory"
	StageRecover    Stage = "recover"
	StageFirstStart Stage = "first start"
	StageEpochs     Stage = "read the epoch files"
	StagePeer       Stage = "build the replica"
	StageReplay     Stage = "replay the txn log"
)

// StartError is a failed start, with its stage.
type StartError struct {
	Stage Stage
	Err   error
}

func (e *StartError) Error() string { return fmt.Sprintf("%s: %v", e.Stage, e.Err) }
func (e *StartError) Unwrap() error { return e.Err }

// Started is what a start found and did, for the shell's logs and checks.
type Started struct {
	Recovery *storage.Recovery
	// Initialized names snapshot.0 when this was the data directory's
	// first start (restore.Initialize).
	Initialized string
	// Replayed counts the txns replayed from the log over the snapshot.
	Replayed int
	// DamageForgotten: a standalone server started past damage
	// (storage.Options.AllowDataLoss) and forgot it, since no other member
	// can restore what it cut.
	DamageForgotten string
	// Restored is what the Peer was built from (epochs, damage, the tree
	// and its digest).
	Restored zab.Restored
}

// Open starts a member from its data directory: recovery (zab/restore),
// snapshot.0 on a first start, the damage a cut left (an ensemble member
// abstains from elections until a leader has synchronized it; a standalone
// one forgets it), the epoch files, the Peer, and the replay of the log.
// The Peer is not started: call Start. On failure the log is closed.
func Open(opts Options) (*Member, *Started, error) {
	fail := func(stage Stage, err error, rec *storage.Recovery) (*Member, *Started, error) {
		if rec != nil && rec.Log != nil {
			rec.Log.Close()
		}
		return nil, nil, &StartError{Stage: stage, Err: err}
	}
	store, err := storage.Open(opts.Storage)
	if err != nil {
		return fail(StageOpen, err, nil)
	}
	rec, restored, err := restore.Load(store, opts.Tree)
	if err != nil {
		return fail(StageRecover, err, nil)
	}
	st := &Started{Recovery: rec}
	if st.Initialized, err = restore.Initialize(store, rec); err != nil {
		// As ZooKeeper, a first start that cannot write its snapshot does
		// not serve.
		return fail(StageFirstStart, err, rec)
	}
	cfg := opts.Config
	cfg.Tree = opts.Tree
	m := &Member{Store: store, Log: rec.Log, leaves: opts.Leaves, obs: opts.Observer, durable: rec.Log.DurableZxid()}
	if m.obs == nil {
		m.obs = NoObserver{}
	}
	if cfg.Ensemble == nil {
		if rec.Damaged != "" {
			if err := store.ClearDamage(); err != nil {
				return fail(StageRecover, err, rec)
			}
			st.DamageForgotten = rec.Damaged
		}
	} else {
		if opts.SnapshotSizeFactor >= 0 {
			cfg.TxnLog = txnLog{m: m, factor: opts.SnapshotSizeFactor}
		}
		if rec.Damaged != "" {
			// Storage remembers the cut until a leader has synchronized
			// this member, however often it restarts before that.
			restored.LogDamaged = &zab.LogDamage{AfterZxid: rec.LastZxid, What: rec.Damaged}
		}
		if restored.AcceptedEpoch, restored.CurrentEpoch, err = store.MemberEpochs(rec.LastZxid); err != nil {
			return fail(StageEpochs, err, rec)
		}
	}
	st.Restored = restored
	if m.Peer, err = zab.New(cfg, opts.Now, opts.Rand, restored); err != nil {
		return fail(StagePeer, err, rec)
	}
	m.obs.Loaded()
	if st.Replayed, err = restore.Replay(m.Peer, rec); err != nil {
		return fail(StageReplay, err, rec)
	}
	return m, st, nil
}

// Start starts the Peer (an ensemble member's first votes); Flush carries
// out what it asks.
func (m *Member) Start() { m.Peer.Start() }

// txnLog is the member's log as its leader reads it back to synchronize a
// learner behind the committed window (zab.TxnLog): a DIFF from the log
// while the txns total at most factor of the newest snapshot's size, as
// ZooKeeper's leader does (LearnerHandler.syncFollower with
// getProposalsFromTxnLog). It reads the files beside the disk jobs, and
// only txns already durable, so nothing it reads is being written.
type txnLog struct {
	m      *Member
	factor float64
}

func (l txnLog) ReadAfter(after, upTo int64) ([]datatree.Txn, bool) {
	if upTo > l.m.durable {
		return nil, false
	}
	base, size, err := l.m.Store.NewestSnapshot()
	if err != nil {
		return nil, false
	}
	it, err := l.m.Store.ReadLog(after, upTo)
	if err != nil {
		return nil, false
	}
	defer it.Close()
	return restore.ReadForSync(it, after, upTo, base, restore.SyncLogBudget(size, l.factor))
}
