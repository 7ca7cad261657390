package server

import (
	"errors"
	"io"
	"log/slog"
	mathrand "math/rand"
	"sync/atomic"
	"time"

	"github.com/zabd/zabd/zab/member"
	"github.com/zabd/zabd/zab/server/metrics"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// zabd's leaves for package zab/member, which carries out every Ready
// (zab/member/ready.go has the contract): disk jobs run on one goroutine,
// snapshot files are written on another, and both report back to the event
// loop, which alone touches the member.

// diskRunner runs the member's disk jobs one at a time on its goroutine
// and hands each back to the event loop.
type diskRunner struct {
	jobs chan *member.DiskJob
	done chan *member.DiskJob
	// Figures for mntr and /metrics: fsyncs and the txns they made
	// durable; fsyncTime and batchSize are ZooKeeper's
	// fsynctime (ms) and sync_processor_batch_size.
	fsyncs    atomic.Int64
	batchTxns atomic.Int64
	fsyncTime *metrics.Distribution
	batchSize *metrics.Distribution
}

func newDiskRunner(m *measured) *diskRunner {
	// At most one job runs (member.Leaves.RunDisk), so one slot each
	// way never blocks the event loop.
	return &diskRunner{jobs: make(chan *member.DiskJob, 1), done: make(chan *member.DiskJob, 1),
		fsyncTime: m.fsyncTime, batchSize: m.syncBatchSize}
}

// run carries out jobs until jobs is closed.
func (d *diskRunner) run() {
	for j := range d.jobs {
		j.Run()
		d.done <- j
	}
}

// fsync syncs the log, timing it.
func (d *diskRunner) fsync(l *storage.Log) (int64, error) {
	start := time.Now()
	z, err := l.Sync()
	took := time.Since(start)
	d.fsyncs.Add(1)
	d.fsyncTime.Observe(took.Milliseconds())
	return z, err
}

// synced counts the txns one fsync made durable.
func (d *diskRunner) synced(txns int) {
	d.batchTxns.Add(int64(txns))
	d.batchSize.Observe(int64(txns))
}

// snapshotRunner writes the snapshots of the member's own tree on its
// goroutine, each as the Peer serializes it (a pipe from the event loop's
// chunks to the file), and hands each back to the event loop. Between
// snapshots it runs autopurge, so a purge never races a snapshot.
type snapshotRunner struct {
	store *storage.Store
	log   *slog.Logger
	in    chan snapshotItem
	done  chan *member.SnapshotJob
	stop  <-chan struct{} // closed when the server stops
	// took records each snapshot's duration in ms (snapshottime).
	took *metrics.Distribution
	// Autopurge: after a snapshot, once purgeEvery has passed since the
	// last purge, keep the newest retain snapshots and the logs they need.
	purgeEvery time.Duration // 0: off
	retain     int
	lastPurge  time.Time
}

// snapshotItem is one step of a snapshot stream: a beginning, a chunk, the
// end or an abort.
type snapshotItem struct {
	begin *member.SnapshotJob
	chunk []byte
	end   bool
	abort error
}

func newSnapshotRunner(store *storage.Store, log *slog.Logger, stop <-chan struct{}, purgeEvery time.Duration, retain int, took *metrics.Distribution) *snapshotRunner {
	return &snapshotRunner{store: store, log: log, stop: stop, in: make(chan snapshotItem, 256), done: make(chan *member.SnapshotJob, 4),
		purgeEvery: purgeEvery, retain: retain, lastPurge: time.Now(), took: took}
}

// purge runs autopurge now.
func (w *snapshotRunner) purge() {
	w.lastPurge = time.Now()
	if err := w.store.Purge(w.retain); err != nil {
		w.log.Warn("autopurge failed", "err", err)
		return
	}
	w.log.Info("autopurge done", "retained_snapshots", w.retain)
}

// run writes one snapshot per stream until in is closed.
func (w *snapshotRunner) run() {
	for it := range w.in {
		if it.begin == nil {
			continue // the tail of a stream whose start was lost to a stop
		}
		if !w.write(it.begin) {
			return
		}
		select {
		case w.done <- it.begin:
		case <-w.stop:
			return
		}
	}
}

// write streams one snapshot into its file; false when the server stopped
// mid-stream.
func (w *snapshotRunner) write(j *member.SnapshotJob) bool {
	start := time.Now()
	pr, pw := io.Pipe()
	written := make(chan struct{})
	go func() {
		j.Write(pr)
		pr.CloseWithError(j.Err) // unblock the feeder if writing failed
		close(written)
	}()
	for it := range w.in {
		switch {
		case it.abort != nil:
			pw.CloseWithError(it.abort)
		case it.end:
			pw.Close()
		default:
			pw.Write(it.chunk) // an error here is the writer's, in j.Err
			continue
		}
		<-written
		if j.Err != nil {
			w.log.Warn("snapshot failed; the log still holds every txn", "zxid", zxidHex(j.Zxid), "err", j.Err)
		} else {
			w.took.Observe(time.Since(start).Milliseconds())
			w.log.Info("snapshot taken", "file", j.Name, "zxid", zxidHex(j.Zxid), "sessions", j.Sessions, "bytes", j.Bytes, "took", time.Since(start).Round(time.Millisecond))
			if w.purgeEvery > 0 && time.Since(w.lastPurge) >= w.purgeEvery {
				w.purge()
			}
		}
		return true
	}
	pw.CloseWithError(errors.New("server stopping"))
	<-written
	return false
}

// snapshotStream feeds one snapshot to the runner.
type snapshotStream struct{ in chan<- snapshotItem }

func (st snapshotStream) Chunk(p []byte)  { st.in <- snapshotItem{chunk: p} }
func (st snapshotStream) End()            { st.in <- snapshotItem{end: true} }
func (st snapshotStream) Abort(err error) { st.in <- snapshotItem{abort: err} }

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
