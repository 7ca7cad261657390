package zab

import (
	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

// defaultSnapshotStepNodes bounds the work one step of a fuzzy snapshot
// does between applies, so a snapshot never pauses writes for long.
const defaultSnapshotStepNodes = 1024

// snapshotState decides when a snapshot starts and advances the fuzzy
// serialization between applies, one bounded step at a time, handing the
// bytes to the shell as SnapshotChunks.
type snapshotState struct {
	txnsSinceSnapshot int
	// threshold: a snapshot starts once more txns than this have been
	// applied since the last one began (SnapCount/2 plus a random roll
	// below SnapCount/2, as ZooKeeper's SyncRequestProcessor draws it, so
	// that members of an ensemble do not all snapshot at once).
	threshold int
	running   *datatree.Snapshot // being serialized
	// installing: the running snapshot is of a tree a SNAP installed
	// (forced); its chunks say so (SnapshotChunk.Installed).
	installing bool
	// unwritten: a snapshot (of zxid unwrittenZxid) was fully handed over
	// and the shell has not yet reported it written; no new one starts
	// meanwhile, so two snapshot streams never overlap.
	unwritten     bool
	unwrittenZxid int64
	// forced: a snapshot of a tree a SNAP installed must start as soon as
	// the one being written is.
	forced bool
}

// forceInstalled makes a snapshot of the tree, which a SNAP installed,
// start as soon as possible. A snapshot being serialized is finished first,
// at once (the tree it walks is about to be replaced), so that the streams
// stay whole and in order.
func (s *snapshotState) forceInstalled(p *Peer) {
	for s.running != nil {
		s.step(p)
	}
	s.forced = true
}

// rearm draws the next snapshot point.
func (s *snapshotState) rearm(p *Peer) {
	s.threshold = p.cfg.SnapCount/2 + p.rng.IntN(p.cfg.SnapCount/2)
}

// advance takes one step of the running snapshot, or starts one when due.
func (s *snapshotState) advance(p *Peer) {
	if s.running == nil {
		switch {
		case s.forced && !s.unwritten:
			s.forced, s.installing = false, true
		case s.txnsSinceSnapshot <= s.threshold:
			return
		default:
			s.txnsSinceSnapshot = 0
			s.rearm(p)
			if s.unwritten {
				// As ZooKeeper does when its snapshot thread is still
				// busy: skip this one.
				return
			}
		}
		s.running = p.tree.StartSnapshot()
		p.out.Snapshots = append(p.out.Snapshots, SnapshotChunk{
			Zxid:      s.running.Zxid(),
			First:     true,
			Sessions:  p.sessions.Table(),
			Installed: s.installing,
		})
	}
	s.step(p)
}

// step serializes the next bounded piece of the running snapshot.
func (s *snapshotState) step(p *Peer) {
	var e wire.Encoder
	done := s.running.Step(&e, p.cfg.SnapshotStepNodes)
	chunk := SnapshotChunk{Zxid: s.running.Zxid(), Data: e.Bytes(), Installed: s.installing}
	if done {
		chunk.Last = true
		chunk.Digest = SnapshotDigest{Zxid: p.tree.LastZxid(), Version: datatree.DigestVersion, Digest: p.tree.Digest()}
		s.running, s.installing = nil, false
		s.unwritten, s.unwrittenZxid = true, chunk.Zxid
	}
	p.out.Snapshots = append(p.out.Snapshots, chunk)
}

// written handles the shell's report that a snapshot is on disk (or that
// writing it failed: the next one will be tried at the next snapshot point).
// A report for any other zxid than the one handed over is ignored.
func (s *snapshotState) written(e SnapshotWritten) {
	if s.unwritten && e.Zxid == s.unwrittenZxid {
		s.unwritten = false
	}
}
