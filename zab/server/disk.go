package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	mathrand "math/rand"
	"sync/atomic"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// diskWriter is the group-commit goroutine: it appends every batch of txns
// it is handed and fsyncs once for all batches that arrived meanwhile, then
// publishes the durable zxid.
type diskWriter struct {
	wal *storage.Log
	log *slog.Logger

	in chan []datatree.Txn
	// durable is the highest zxid known durable; durableSignal (capacity 1)
	// tells the event loop to read it. The writer never blocks on the loop:
	// signals coalesce.
	durable       atomic.Int64
	durableSignal chan struct{}
	err           atomic.Pointer[error]
	done          chan struct{}

	// Figures for mntr and /metrics.
	fsyncs     atomic.Int64
	fsyncNanos atomic.Int64
	batchTxns  atomic.Int64
}

func newDiskWriter(wal *storage.Log, log *slog.Logger) *diskWriter {
	d := &diskWriter{wal: wal, log: log, in: make(chan []datatree.Txn, 64), durableSignal: make(chan struct{}, 1), done: make(chan struct{})}
	d.durable.Store(wal.DurableZxid())
	return d
}

// run appends and syncs until in is closed, then closes the log. A failed
// append or fsync is fatal: it is published through err and the writer
// stops taking txns (storage must not be retried).
func (d *diskWriter) run() {
	defer close(d.done)
	buf := make([]byte, 0, 4096)
	for batch := range d.in {
		n := 0
		for more := true; more; {
			for i := range batch {
				buf = zab.EncodeTxnEntryInto(buf, &batch[i])
				if _, err := d.wal.Append(buf); err != nil {
					d.failWith(fmt.Errorf("append txn 0x%x: %w", batch[i].Header.Zxid, err))
					d.drain()
					return
				}
			}
			n += len(batch)
			// Take whatever else is already waiting into this fsync.
			select {
			case batch, more = <-d.in:
			default:
				more = false
			}
		}
		start := time.Now()
		zxid, err := d.wal.Sync()
		if err != nil {
			d.failWith(fmt.Errorf("fsync the txn log: %w", err))
			d.drain()
			return
		}
		d.fsyncs.Add(1)
		d.fsyncNanos.Add(int64(time.Since(start)))
		d.batchTxns.Add(int64(n))
		d.durable.Store(zxid)
		select {
		case d.durableSignal <- struct{}{}:
		default:
		}
	}
	if err := d.wal.Close(); err != nil {
		d.log.Error("closing the txn log", "err", err)
	}
}

// drain swallows batches after a failure so that the event loop never
// blocks on a dead writer.
func (d *diskWriter) drain() {
	select {
	case d.durableSignal <- struct{}{}:
	default:
	}
	for range d.in {
	}
}

func (d *diskWriter) failWith(err error) { d.err.Store(&err) }

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
	log   *slog.Logger
	in    chan zab.SnapshotChunk
	// written reports finished snapshots to the event loop.
	written chan zab.SnapshotWritten
	stop    <-chan struct{} // closed when the server stops
	done    chan struct{}
	count   atomic.Int64

	// Autopurge: after a snapshot, once purgeEvery has passed since the
	// last purge, keep the newest retain snapshots and the logs they need.
	// Purging here, between snapshots, never races a snapshot being written.
	purgeEvery time.Duration // 0: off
	retain     int
	lastPurge  time.Time
}

func newSnapshotWriter(store *storage.Store, log *slog.Logger, stop <-chan struct{}, purgeEvery time.Duration, retain int) *snapshotWriter {
	return &snapshotWriter{
		store: store, log: log, stop: stop, in: make(chan zab.SnapshotChunk, 256), written: make(chan zab.SnapshotWritten, 4),
		done: make(chan struct{}), purgeEvery: purgeEvery, retain: retain, lastPurge: time.Now(),
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
	pw.Close()
	if err = <-result; err == nil {
		w.count.Add(1)
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
