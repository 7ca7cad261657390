package member

import (
	"errors"
	"fmt"
	"io"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/storage"
)

// ErrCrashed ends a job that an Observer stopped (an aimed crash).
var ErrCrashed = errors.New("the process crashed")

type opKind uint8

const (
	opTruncate opKind = iota
	opEpochs
	opClearDamage
	opAppend
	opInstall
)

// diskOp is one operation of the ordered disk stream (contract rule 1).
type diskOp struct {
	kind   opKind
	seq    uint64
	zxid   int64 // opTruncate: cut after it; opInstall: the snapshot's
	epochs zab.EpochWrite
	role   zab.Role          // opEpochs: the member's role when it was asked
	txns   []datatree.Txn    // opAppend, owned by the queue
	first  zab.SnapshotChunk // opInstall: the first chunk (sessions)
	tree   []byte            // opInstall: the tree's bytes so far
	digest zab.SnapshotDigest
	whole  bool // opInstall: the last chunk arrived
}

// DiskJob is a run of disk operations carried out together and ended by one
// fsync when it appended anything (group commit). Run touches only storage
// and the job; the rest of the Member waits for DiskDone.
type DiskJob struct {
	ops []diskOp
	m   *Member
	// Fsync syncs the log: the leaves' (zabd times it; the simulator
	// may fail it).
	fsync func(*storage.Log) (int64, error)

	// Results, set by Run.
	err       error
	durable   int64   // the log's durable zxid at the end
	installed []int64 // the zxids of the SNAPs' snapshots installed
	wrote     bool    // something changed the log (append, truncate, install)
	unsynced  int     // txns appended since the job's last fsync
	enc       wire.Encoder
}

// Err is the job's failure, once it has run.
func (j *DiskJob) Err() error { return j.err }

// enqueue adds an operation to the stream and returns its number.
func (m *Member) enqueue(op diskOp) uint64 {
	m.lastOp++
	op.seq = m.lastOp
	m.queue = append(m.queue, op)
	return op.seq
}

// enqueueAppends adds txns to the stream, joining the batch at its end if
// there is one (one fsync covers them all either way).
func (m *Member) enqueueAppends(txns []datatree.Txn) {
	if k := len(m.queue); k > 0 && m.queue[k-1].kind == opAppend {
		m.queue[k-1].txns = append(m.queue[k-1].txns, txns...)
		return
	}
	buf := append(m.spare[:0], txns...)
	m.spare = nil
	m.enqueue(diskOp{kind: opAppend, txns: buf})
}

// kick starts a job with every queued operation, unless one is running or
// the queue begins with a SNAP's snapshot still arriving.
func (m *Member) kick() {
	if m.running != nil || m.stopped {
		return
	}
	// A job ends with the first barrier it takes (a truncation, an epoch
	// write, a damage repair): the sends held behind that barrier leave
	// when it is done, before any later one runs, so that, say, an
	// ACKEPOCH never leaves once a later acceptedEpoch is on disk.
	n := 0
	for n < len(m.queue) && (m.queue[n].kind != opInstall || m.queue[n].whole) {
		n++
		if k := m.queue[n-1].kind; k == opTruncate || k == opEpochs || k == opClearDamage {
			break
		}
	}
	if n == 0 {
		return
	}
	j := &DiskJob{ops: append([]diskOp(nil), m.queue[:n]...), m: m, fsync: m.leaves.Fsync}
	m.queue = append(m.queue[:0], m.queue[n:]...)
	m.running = j
	m.leaves.RunDisk(j)
}

// Run carries out the job's operations in order (contract rules 2–7).
func (j *DiskJob) Run() {
	m := j.m
	for i := range j.ops {
		op := &j.ops[i]
		if op.kind != opAppend {
			if j.err = j.sync(); j.err != nil {
				return
			}
		}
		switch op.kind {
		case opTruncate:
			if err := m.Log.Truncate(op.zxid); err != nil {
				j.err = fmt.Errorf("truncate the txn log after 0x%x: %w", op.zxid, err)
				return
			}
			j.wrote = true
			m.obs.Truncated(op.zxid)
		case opEpochs:
			if err := m.Store.SetAcceptedEpoch(op.epochs.Accepted); err != nil {
				j.err = fmt.Errorf("write acceptedEpoch %d: %w", op.epochs.Accepted, err)
				return
			}
			if err := m.Store.SetCurrentEpoch(op.epochs.Current); err != nil {
				j.err = fmt.Errorf("write currentEpoch %d: %w", op.epochs.Current, err)
				return
			}
			if m.obs.EpochsWritten(op.epochs, op.role) {
				j.err = ErrCrashed
				return
			}
		case opClearDamage:
			if err := m.Store.ClearDamage(); err != nil {
				j.err = fmt.Errorf("forget the log damage: %w", err)
				return
			}
			m.obs.DamageCleared()
		case opAppend:
			if j.err = j.append(op.txns); j.err != nil {
				return
			}
			j.unsynced += len(op.txns)
		case opInstall:
			if j.err = j.install(op); j.err != nil {
				return
			}
		}
	}
	if j.err = j.sync(); j.err != nil {
		return
	}
	j.durable = m.Log.DurableZxid()
}

// sync fsyncs the txns the job appended since its last fsync, if any: at
// its end, and before any other operation, so that the stream is durable
// in its order (what a barrier's sends vouch for includes every append
// before it).
func (j *DiskJob) sync() error {
	if j.unsynced == 0 {
		return nil
	}
	z, err := j.fsync(j.m.Log)
	if err != nil {
		return fmt.Errorf("fsync the txn log: %w", err)
	}
	n := j.unsynced
	j.unsynced = 0
	if j.m.obs.Synced(z, n) {
		return ErrCrashed
	}
	return nil
}

// append writes one batch (contract rule 5).
func (j *DiskJob) append(txns []datatree.Txn) error {
	m := j.m
	last := txns[len(txns)-1].Header.Zxid
	newer := last>>32 > m.Log.LastZxid()>>32
	if err := m.Store.CoverEpoch(last); err != nil {
		return fmt.Errorf("mark the log's epoch %d before its txns: %w", last>>32, err)
	}
	if newer && m.obs.EpochCovered(last) {
		return ErrCrashed
	}
	for i := range txns {
		t := &txns[i]
		j.enc.Reset()
		zab.WriteTxnEntry(&j.enc, t)
		entry := j.enc.Bytes()
		if m.obs.Appending(t, entry) {
			return ErrCrashed
		}
		if _, err := m.Log.Append(entry); err != nil {
			return fmt.Errorf("append txn 0x%x: %w", t.Header.Zxid, err)
		}
		j.wrote = true
	}
	return nil
}

// install makes a SNAP's snapshot the log's starting point (contract rule 7).
func (j *DiskJob) install(op *diskOp) error {
	m := j.m
	tree, digest := op.tree, op.digest
	name, err := m.Store.InstallSnapshot(m.Log, &storage.Snapshot{
		Zxid:     op.zxid,
		Sessions: storageSessions(op.first.Sessions),
		WriteTree: func(out io.Writer) error {
			_, err := out.Write(tree)
			return err
		},
		Digest: func() storage.ZxidDigest { return storageDigest(digest) },
	})
	if err != nil {
		return fmt.Errorf("install the leader's snapshot at 0x%x: %w", op.zxid, err)
	}
	j.wrote = true
	j.installed = append(j.installed, op.zxid)
	if m.obs.Installed(name, op.zxid, len(tree)) {
		return ErrCrashed
	}
	return nil
}

// DiskDone takes a finished job back on the event loop: the Peer hears what
// it made durable (SnapshotWritten for each SNAP installed, then
// LogDurable), the sends it held back leave, and the next job starts. It
// returns the job's failure, which is fatal to the process (contract rule
// 10). A job of a stopped member is ignored.
func (m *Member) DiskDone(now zab.Time, j *DiskJob) error {
	if m.stopped || j != m.running {
		return nil
	}
	m.running = nil
	if j.err != nil {
		return j.err
	}
	m.doneOp = j.ops[len(j.ops)-1].seq
	for _, op := range j.ops {
		if op.kind == opAppend && cap(op.txns) > cap(m.spare) {
			clear(op.txns)
			m.spare = op.txns[:0]
		}
	}
	for _, z := range j.installed {
		m.Peer.Step(now, zab.SnapshotWritten{Zxid: z})
	}
	if j.wrote {
		// A truncation the Peer asked for after this job's appends has
		// already cut them in its log, and what it appended since under
		// the same zxids is not this job's: the report must not cover it
		// (simulator seed 4076, found by trace conformance: a follower
		// ACKed re-appended txns on an older job's fsync).
		durable := j.durable
		for i := range m.queue {
			if m.queue[i].kind == opTruncate {
				durable = min(durable, m.queue[i].zxid)
			}
		}
		m.durable = durable
		m.obs.Durable(durable)
		m.Peer.Step(now, zab.LogDurable{Zxid: durable})
	}
	m.releaseSends()
	m.snapshotMayEnd()
	m.kick()
	return nil
}

func storageSessions(ss []sessions.Session) []storage.Session {
	out := make([]storage.Session, len(ss))
	for i, s := range ss {
		out[i] = storage.Session{ID: s.ID, Timeout: s.Timeout}
	}
	return out
}

func storageDigest(d zab.SnapshotDigest) storage.ZxidDigest {
	return storage.ZxidDigest{Zxid: d.Zxid, Version: d.Version, Digest: d.Digest}
}
