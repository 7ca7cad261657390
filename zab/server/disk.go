package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	mathrand "math/rand"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/server/metrics"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// diskWriter is the one ordered stream of log operations (docs/architecture.md, "Carrying out a Ready"): the
// group-commit goroutine appends every batch of txns it is handed and
// fsyncs once for all batches that arrived meanwhile, then publishes the
// durable zxid. An ensemble member also truncates the log, writes the epoch
// files and installs a snapshot received from its leader here, in order
// with the appends.
type diskWriter struct {
	wal   *storage.Log
	store *storage.Store
	log   *slog.Logger

	in chan diskOp
	// durable is the highest zxid known durable; durableSignal (capacity 1)
	// tells the event loop to read it. The writer never blocks on the loop:
	// signals coalesce. After a truncation it goes down with the log.
	durable       atomic.Int64
	durableSignal chan struct{}
	// advanced is closed (and replaced) whenever durable moves or the
	// writer fails or ends, for waiters other than the event loop.
	advancedMu sync.Mutex
	advanced   chan struct{}
	// installed reports a snapshot installed from the leader (SNAP).
	installed chan zab.SnapshotWritten
	err       atomic.Pointer[error]
	done      chan struct{}

	// The snapshot being installed, and the operations that arrived
	// behind it: the install removes the old log files, so nothing is
	// appended before it is complete.
	install  *installing
	deferred []diskOp

	// Figures for mntr and /metrics.
	fsyncs     atomic.Int64
	fsyncNanos atomic.Int64
	batchTxns  atomic.Int64
	// fsyncTime and batchSize are ZooKeeper's fsynctime (ms) and
	// sync_processor_batch_size (txns made durable by one fsync).
	fsyncTime, batchSize *metrics.Distribution
}

// diskOp is one operation of the stream: exactly one field is set. The
// event loop waits on done for a truncation or an epoch write, which must
// be durable before the Ready's peer messages leave.
type diskOp struct {
	appends  []datatree.Txn
	truncate *int64
	epochs   *zab.EpochWrite
	chunk    *zab.SnapshotChunk // a piece of a snapshot installed from a SNAP
	// clearDamage forgets the log damage a start cut (Ready.DamageRepaired).
	clearDamage bool
	done        chan error
}

// installing gathers a SNAP-installed snapshot's chunks.
type installing struct {
	first zab.SnapshotChunk
	tree  []byte
}

func newDiskWriter(wal *storage.Log, store *storage.Store, log *slog.Logger, m *measured) *diskWriter {
	d := &diskWriter{wal: wal, store: store, log: log, in: make(chan diskOp, 64), durableSignal: make(chan struct{}, 1),
		installed: make(chan zab.SnapshotWritten, 4), done: make(chan struct{}), advanced: make(chan struct{}),
		fsyncTime: m.fsyncTime, batchSize: m.syncBatchSize}
	d.durable.Store(wal.DurableZxid())
	return d
}

// append hands the writer a batch of txns.
func (d *diskWriter) append(txns []datatree.Txn) { d.in <- diskOp{appends: txns} }

// sync runs op (a truncation or an epoch write) and waits until it is
// durable.
func (d *diskWriter) sync(op diskOp) error {
	op.done = make(chan error, 1)
	d.in <- op
	return <-op.done
}

// run carries out operations until in is closed, then closes the log. A
// failed operation is fatal: it is published through err and the writer
// stops taking txns (storage must not be retried).
func (d *diskWriter) run() {
	defer close(d.done)
	buf := make([]byte, 0, 4096)
	var carry *diskOp // an operation taken while gathering appends
	for {
		var op diskOp
		switch {
		case carry != nil:
			op, carry = *carry, nil
		case d.install == nil && len(d.deferred) > 0:
			op, d.deferred = d.deferred[0], d.deferred[1:]
		default:
			var ok bool
			if op, ok = <-d.in; !ok {
				if err := d.wal.Close(); err != nil {
					d.log.Error("closing the txn log", "err", err)
				}
				return
			}
		}
		var err error
		switch {
		case op.chunk != nil:
			err = d.installChunk(op.chunk)
		case op.epochs != nil:
			err = d.writeEpochs(*op.epochs)
		case op.clearDamage:
			err = d.store.ClearDamage()
		case d.install != nil:
			err = d.deferBehindInstall(op)
		case op.truncate != nil:
			err = d.truncate(*op.truncate)
		default:
			carry, err = d.appendAndSync(op.appends, &buf)
		}
		if op.done != nil {
			op.done <- err
		}
		if err != nil {
			d.failWith(err)
			d.drain()
			return
		}
	}
}

// appendAndSync appends txns and every batch of txns already waiting, then
// fsyncs once (group commit). It returns the first other operation it
// took, to be carried out next.
func (d *diskWriter) appendAndSync(txns []datatree.Txn, buf *[]byte) (*diskOp, error) {
	var carry *diskOp
	n := 0
gather:
	for {
		if len(txns) > 0 {
			if err := d.store.CoverEpoch(txns[len(txns)-1].Header.Zxid); err != nil {
				return nil, err
			}
		}
		for i := range txns {
			*buf = zab.EncodeTxnEntryInto(*buf, &txns[i])
			if _, err := d.wal.Append(*buf); err != nil {
				return nil, fmt.Errorf("append txn 0x%x: %w", txns[i].Header.Zxid, err)
			}
		}
		n += len(txns)
		// Take whatever else is already waiting into this fsync.
		select {
		case op, ok := <-d.in:
			switch {
			case !ok:
				break gather
			case op.appends != nil:
				txns = op.appends
			default:
				carry = &op
				break gather
			}
		default:
			break gather
		}
	}
	start := time.Now()
	zxid, err := d.wal.Sync()
	if err != nil {
		return nil, fmt.Errorf("fsync the txn log: %w", err)
	}
	took := time.Since(start)
	d.fsyncs.Add(1)
	d.fsyncNanos.Add(int64(took))
	d.batchTxns.Add(int64(n))
	d.fsyncTime.Observe(took.Milliseconds())
	d.batchSize.Observe(int64(n))
	d.publish(zxid)
	return carry, nil
}

// publish makes zxid the durable zxid and tells the event loop and every
// waitDurable.
func (d *diskWriter) publish(zxid int64) {
	d.durable.Store(zxid)
	select {
	case d.durableSignal <- struct{}{}:
	default:
	}
	d.wakeWaiters()
}

// wakeWaiters wakes every waitDurable to look again.
func (d *diskWriter) wakeWaiters() {
	d.advancedMu.Lock()
	close(d.advanced)
	d.advanced = make(chan struct{})
	d.advancedMu.Unlock()
}

// waitDurable returns once the log is durable up to zxid, or with the
// writer's failure, or when stop is closed or the writer has ended.
func (d *diskWriter) waitDurable(zxid int64, stop <-chan struct{}) error {
	for {
		d.advancedMu.Lock()
		advanced := d.advanced
		d.advancedMu.Unlock()
		if err := d.failure(); err != nil {
			return err
		}
		if d.durable.Load() >= zxid {
			return nil
		}
		select {
		case <-advanced:
		case <-stop:
			return errors.New("server stopping")
		case <-d.done:
			if err := d.failure(); err != nil {
				return err
			}
			if d.durable.Load() >= zxid {
				return nil
			}
			return errors.New("the txn log is closed")
		}
	}
}

// truncate cuts the log after zxid, durably (a TRUNC, or a SNAP that
// replaces a longer history).
func (d *diskWriter) truncate(zxid int64) error {
	if err := d.wal.Truncate(zxid); err != nil {
		return fmt.Errorf("truncate the txn log after 0x%x: %w", zxid, err)
	}
	d.log.Info("txn log truncated", "after", zxidHex(zxid))
	d.publish(d.wal.DurableZxid())
	return nil
}

func (d *diskWriter) writeEpochs(e zab.EpochWrite) error {
	if err := d.store.SetAcceptedEpoch(e.Accepted); err != nil {
		return fmt.Errorf("write acceptedEpoch %d: %w", e.Accepted, err)
	}
	if err := d.store.SetCurrentEpoch(e.Current); err != nil {
		return fmt.Errorf("write currentEpoch %d: %w", e.Current, err)
	}
	return nil
}

// deferBehindInstall keeps an operation that arrived during an install
// for after it; a truncation (which can only cut txns the leader sent
// after the snapshot, since the tree already holds the snapshot) drops
// those of the kept appends at once.
func (d *diskWriter) deferBehindInstall(op diskOp) error {
	if op.truncate == nil {
		d.deferred = append(d.deferred, op)
		return nil
	}
	z := *op.truncate
	if z < d.install.first.Zxid {
		return fmt.Errorf("truncate after 0x%x while installing the snapshot at 0x%x", z, d.install.first.Zxid)
	}
	kept := d.deferred[:0]
	for _, o := range d.deferred {
		o.appends = slices.DeleteFunc(o.appends, func(t datatree.Txn) bool { return t.Header.Zxid > z })
		if len(o.appends) > 0 {
			kept = append(kept, o)
		}
	}
	d.deferred = kept
	return nil
}

// installChunk gathers a SNAP-installed snapshot; with its last chunk, the
// snapshot replaces the log (storage.Store.InstallSnapshot: the log is
// cut to the snapshot, the snapshot written, the old log files removed)
// and the Peer hears that it is written.
func (d *diskWriter) installChunk(c *zab.SnapshotChunk) error {
	if c.First {
		d.install = &installing{first: *c}
	}
	in := d.install
	if in == nil || in.first.Zxid != c.Zxid {
		return fmt.Errorf("a piece of the snapshot at 0x%x outside its stream", c.Zxid)
	}
	in.tree = append(in.tree, c.Data...)
	if !c.Last {
		return nil
	}
	d.install = nil
	start := time.Now()
	sessions := make([]storage.Session, len(in.first.Sessions))
	for i, s := range in.first.Sessions {
		sessions[i] = storage.Session{ID: s.ID, Timeout: s.Timeout}
	}
	digest := c.Digest
	name, err := d.store.InstallSnapshot(d.wal, &storage.Snapshot{
		Zxid:     c.Zxid,
		Sessions: sessions,
		WriteTree: func(out io.Writer) error {
			_, err := out.Write(in.tree)
			return err
		},
		Digest: func() storage.ZxidDigest {
			return storage.ZxidDigest{Zxid: digest.Zxid, Version: digest.Version, Digest: digest.Digest}
		},
	})
	if err != nil {
		return fmt.Errorf("install the leader's snapshot at 0x%x: %w", c.Zxid, err)
	}
	d.log.Info("installed the leader's snapshot", "file", name, "zxid", zxidHex(c.Zxid), "bytes", len(in.tree), "took", time.Since(start).Round(time.Millisecond))
	d.publish(d.wal.DurableZxid())
	select {
	case d.installed <- zab.SnapshotWritten{Zxid: c.Zxid}:
	default:
		// The loop has not taken the earlier reports: this member went
		// through several SNAPs meanwhile, and waits for this one in
		// vain until its sync times out and starts again.
		d.log.Warn("the report of an installed snapshot was dropped", "zxid", zxidHex(c.Zxid))
	}
	return nil
}

// drain swallows operations after a failure so that the event loop never
// blocks on a dead writer; waiting operations get the failure.
func (d *diskWriter) drain() {
	select {
	case d.durableSignal <- struct{}{}:
	default:
	}
	err := d.failure()
	for op := range d.in {
		if op.done != nil {
			op.done <- err
		}
	}
}

func (d *diskWriter) failWith(err error) {
	d.err.Store(&err)
	d.wakeWaiters()
}

// failure returns the fatal error, if one happened.
func (d *diskWriter) failure() error {
	if p := d.err.Load(); p != nil {
		return *p
	}
	return nil
}

// snapshotWriter writes the snapshot streams the Peer emits, in the
// background: the event loop hands it chunks and never waits for the disk.
type snapshotWriter struct {
	store *storage.Store
	// disk is the log's writer: a snapshot is finished only once the log
	// holds every txn in it durably (storage's WriteSnapshot contract).
	disk *diskWriter
	log  *slog.Logger
	in   chan zab.SnapshotChunk
	// written reports finished snapshots to the event loop.
	written chan zab.SnapshotWritten
	stop    <-chan struct{} // closed when the server stops
	done    chan struct{}
	// took records each snapshot's duration in ms (snapshottime).
	took *metrics.Distribution

	// Autopurge: after a snapshot, once purgeEvery has passed since the
	// last purge, keep the newest retain snapshots and the logs they need.
	// Purging here, between snapshots, never races a snapshot being written.
	purgeEvery time.Duration // 0: off
	retain     int
	lastPurge  time.Time
}

func newSnapshotWriter(store *storage.Store, disk *diskWriter, log *slog.Logger, stop <-chan struct{}, purgeEvery time.Duration, retain int, took *metrics.Distribution) *snapshotWriter {
	return &snapshotWriter{
		store: store, disk: disk, log: log, stop: stop, in: make(chan zab.SnapshotChunk, 256), written: make(chan zab.SnapshotWritten, 4),
		done: make(chan struct{}), purgeEvery: purgeEvery, retain: retain, lastPurge: time.Now(), took: took,
	}
}

// purge runs autopurge now.
func (w *snapshotWriter) purge() {
	w.lastPurge = time.Now()
	if err := w.store.Purge(w.retain); err != nil {
		w.log.Warn("autopurge failed", "err", err)
		return
	}
	w.log.Info("autopurge done", "retained_snapshots", w.retain)
}

// run writes one snapshot per stream until in is closed.
func (w *snapshotWriter) run() {
	defer close(w.done)
	for first := range w.in {
		if !first.First {
			continue // the tail of a stream whose start was lost to a stop
		}
		complete, err := w.write(first)
		if !complete {
			return
		}
		if err != nil {
			w.log.Warn("snapshot failed; the log still holds every txn", "zxid", zxidHex(first.Zxid), "err", err)
		} else if w.purgeEvery > 0 && time.Since(w.lastPurge) >= w.purgeEvery {
			w.purge()
		}
		select {
		case w.written <- zab.SnapshotWritten{Zxid: first.Zxid, Err: err}:
		case <-w.stop:
		}
	}
}

// write streams one snapshot, from its first chunk to its last, into
// storage. complete is false when the server stopped mid-stream.
func (w *snapshotWriter) write(first zab.SnapshotChunk) (complete bool, err error) {
	start := time.Now()
	pr, pw := io.Pipe()
	var digest zab.SnapshotDigest // set from the last chunk before pw closes
	sessions := make([]storage.Session, len(first.Sessions))
	for i, s := range first.Sessions {
		sessions[i] = storage.Session{ID: s.ID, Timeout: s.Timeout}
	}
	result := make(chan error, 1)
	var name string
	go func() {
		var err error
		name, err = w.store.WriteSnapshot(&storage.Snapshot{
			Zxid:     first.Zxid,
			Sessions: sessions,
			WriteTree: func(out io.Writer) error {
				_, err := io.Copy(out, pr)
				return err
			},
			Digest: func() storage.ZxidDigest {
				return storage.ZxidDigest{Zxid: digest.Zxid, Version: digest.Version, Digest: digest.Digest}
			},
		})
		pr.CloseWithError(err) // unblock the feeder if writing failed
		result <- err
	}()
	chunk := first
	for {
		pw.Write(chunk.Data) // an error here is the writer's, returned below
		if chunk.Last {
			digest = chunk.Digest
			break
		}
		var ok bool
		if chunk, ok = <-w.in; !ok {
			pw.CloseWithError(errors.New("server stopping"))
			<-result
			return false, nil
		}
	}
	// A learner applies what its leader committed before its own log has
	// made it durable, so the snapshot may hold txns the log has yet to
	// fsync; a crash would then leave a log ending before the snapshot
	// (the simulator's seed 22540). The log's writer fsyncs everything it
	// is handed at once, so this waits at most one fsync, as ZooKeeper's
	// SyncRequestProcessor flushes the log before it snapshots.
	if err := w.disk.waitDurable(digest.Zxid, w.stop); err != nil {
		pw.CloseWithError(fmt.Errorf("the log never made 0x%x durable: %w", digest.Zxid, err))
		return true, <-result
	}
	pw.Close()
	if err = <-result; err == nil {
		w.took.Observe(time.Since(start).Milliseconds())
		w.log.Info("snapshot taken", "file", name, "zxid", zxidHex(first.Zxid), "sessions", len(sessions), "took", time.Since(start).Round(time.Millisecond))
	}
	return true, err
}

// syncHookFS sends every file's Sync to sync, with the file's name and the
// file itself (whose Sync is the real one): forceSync=no skips fsyncs with
// it, and tests delay, record or fail them.
type syncHookFS struct {
	vfs.FS
	sync func(name string, f vfs.File) error
}

func (s syncHookFS) Create(name string) (vfs.File, error) {
	f, err := s.FS.Create(name)
	return syncHookFile{File: f, name: name, sync: s.sync}, err
}

func (s syncHookFS) Open(name string) (vfs.File, error) {
	f, err := s.FS.Open(name)
	return syncHookFile{File: f, name: name, sync: s.sync}, err
}

type syncHookFile struct {
	vfs.File
	name string
	sync func(name string, f vfs.File) error
}

func (f syncHookFile) Sync() error { return f.sync(f.name, f.File) }

// skipSync is forceSync=no's sync hook: no fsync at all.
func skipSync(string, vfs.File) error { return nil }

func newMathRand(seed uint64) *mathrand.Rand { return mathrand.New(mathrand.NewSource(int64(seed))) }
