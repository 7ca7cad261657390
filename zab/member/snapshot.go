package member

import (
	"fmt"
	"io"

	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/storage"
)

// SnapshotJob is one snapshot of the member's own tree on its way to a file
// (contract rule 9).
type SnapshotJob struct {
	Zxid     int64 // the snapshot's name: the last zxid applied when it began
	Sessions int   // how many sessions it holds
	m        *Member
	sessions []storage.Session
	digest   zab.SnapshotDigest // from the last chunk
	// Set by Write.
	Name  string
	Bytes int64
	Err   error
}

// Digest is the digest written after the tree: of the tree at its zxid,
// which is above Zxid when the snapshot is fuzzy.
func (j *SnapshotJob) Digest() zab.SnapshotDigest { return j.digest }

// Write writes the snapshot file with the tree read from tree (the
// stream's bytes); the leaves call it wherever they like, once End came.
// It touches only storage and the job.
func (j *SnapshotJob) Write(tree io.Reader) {
	j.Name, j.Err = j.m.Store.WriteSnapshot(&storage.Snapshot{
		Zxid:     j.Zxid,
		Sessions: j.sessions,
		WriteTree: func(out io.Writer) error {
			n, err := io.Copy(out, tree)
			j.Bytes = n
			return err
		},
		Digest: func() storage.ZxidDigest { return storageDigest(j.digest) },
	})
}

// snapshotChunk routes one chunk: a SNAP's into the disk stream, the
// member's own to its snapshot stream.
func (m *Member) snapshotChunk(c *zab.SnapshotChunk) {
	if c.Installed {
		m.installChunk(c)
		return
	}
	if c.First {
		if m.snap != nil {
			// A stream the Peer began anew (it never does while one runs):
			// give the old one up rather than mix the two.
			m.snapStream.Abort(fmt.Errorf("snapshot 0x%x superseded by 0x%x", m.snap.Zxid, c.Zxid))
		}
		m.snap = &SnapshotJob{Zxid: c.Zxid, Sessions: len(c.Sessions), m: m, sessions: storageSessions(c.Sessions)}
		m.snapWaiting = false
		m.snapStream = m.leaves.BeginSnapshot(m.snap)
	}
	if m.snap == nil || m.snap.Zxid != c.Zxid || m.snapWaiting {
		return // the tail of a stream that began before this process
	}
	m.snapStream.Chunk(c.Data)
	if c.Last {
		m.snap.digest = c.Digest
		m.snapWaiting = true
		m.snapshotMayEnd()
	}
}

// snapshotMayEnd ends a whole snapshot stream once the log holds every txn
// in it durably: a learner applies what its leader committed before its own
// log has made it durable, so a snapshot may hold txns not yet fsynced, and
// a crash would leave a log ending before the snapshot (as ZooKeeper's
// SyncRequestProcessor flushes the log before it snapshots). Those txns are
// queued or in the running job, so this waits at most for the next job.
func (m *Member) snapshotMayEnd() {
	if !m.snapWaiting || m.durable < m.snap.digest.Zxid {
		return
	}
	stream := m.snapStream
	m.snap, m.snapStream, m.snapWaiting = nil, nil, false
	stream.End()
}

// SnapshotDone takes a written snapshot back on the event loop: the Peer
// hears SnapshotWritten (a failure included: the log still holds every
// txn, and it tries again later).
func (m *Member) SnapshotDone(now zab.Time, j *SnapshotJob) {
	if m.stopped {
		return
	}
	m.obs.SnapshotWritten(j)
	m.Peer.Step(now, zab.SnapshotWritten{Zxid: j.Zxid, Err: j.Err})
}

// installChunk gathers a SNAP's snapshot in its place in the disk stream.
func (m *Member) installChunk(c *zab.SnapshotChunk) {
	if c.First {
		m.installing = m.enqueue(diskOp{kind: opInstall, zxid: c.Zxid, first: *c})
	}
	var op *diskOp
	for i := range m.queue {
		if m.queue[i].seq == m.installing && m.installing != 0 {
			op = &m.queue[i]
		}
	}
	if op == nil || op.zxid != c.Zxid {
		return // the tail of a stream that began before this process
	}
	op.tree = append(op.tree, c.Data...)
	if c.Last {
		op.digest, op.whole = c.Digest, true
		m.installing = 0
	}
}
