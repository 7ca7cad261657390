package sim

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/member"
	"github.com/zabd/zabd/zab/storage"
)

// A simulated server runs package zab/member, the executor zabd runs, with
// these leaves: the simulated disk under storage, disk jobs and snapshot
// files that take simulated time, and the simulated network. It is also
// the member's Observer: the checkers' bookkeeping and the aimed faults
// hook in at the points the Ready contract names.

// SendClient carries one message to its client connection.
func (s *server) SendClient(m *zab.Message) { s.send(m) }

// SendVotes puts election notifications on the network.
func (s *server) SendVotes(votes []zab.Vote) {
	for i := range votes {
		s.w.net.sendVote(s.id, &votes[i])
	}
}

// SendPeer puts quorum packets on the network, where an aimed fanout-crash
// may kill the member between two of them, and a sync-write-crash right
// after an ACKEPOCH or NEWLEADER ACK.
func (s *server) SendPeer(msgs []zab.PeerMessage) {
	acked := -1
	for i := range msgs {
		if s.w.aim.fanout != nil && s.aimFanout(msgs, i) {
			return
		}
		s.w.net.sendPeer(s.id, &msgs[i])
		if s.w.aim.syncCrash != nil && isSyncAck(&msgs[i]) {
			acked = i
		}
	}
	if acked >= 0 {
		s.aimAfterAck(&msgs[acked])
	}
}

// Fsync syncs the log; after a failfsync fault, this one fsync fails.
func (s *server) Fsync(l *storage.Log) (int64, error) {
	if !s.failNextSync {
		return l.Sync()
	}
	s.failNextSync = false
	failing := s.cfg
	failing.SyncFail = 1
	s.disk.SetConfig(failing)
	defer s.disk.SetConfig(s.cfg)
	return l.Sync()
}

// RunDisk runs a disk job at once (what it writes is on the simulated disk
// from now on, durable where it fsynced) and hands it back after the
// disk's latency: fsyncBase..2×fsyncBase, more while an fsync is slowed.
// A real disk writer lags the same way: appends that arrive meanwhile wait
// for the next job. An aimed hold-fsync keeps the job from starting until
// it ends.
func (s *server) RunDisk(j *member.DiskJob) {
	w, gen := s.w, s.gen
	if held := s.held(); held > 0 {
		w.q.After(held, func() {
			if s.gen == gen && s.up {
				s.RunDisk(j)
			}
		})
		return
	}
	delay := fsyncBase + time.Duration(s.fsyncRng.Int64N(int64(fsyncBase)))
	if w.clock.Mono() < s.slowUntil {
		delay += s.slowDelay
	}
	began := w.clock.Mono()
	j.Run()
	if s.gen != gen || !s.up {
		return // an aimed crash inside the job
	}
	w.q.After(delay, func() {
		if s.gen != gen || !s.up {
			return
		}
		w.recordFsync(s.sid, began)
		if err := s.m.DiskDone(s.now(), j); err != nil {
			s.stopOnIOError("a disk job", err)
			return
		}
		s.loopBack()
	})
}

// simSnapshot gathers a snapshot's tree and writes it after the time
// writing takes (snapshotTime; an aimed hold-fsync holds it too).
type simSnapshot struct {
	s      *server
	j      *member.SnapshotJob
	gen    int
	tree   []byte
	chunks int // the steps of the fuzzy serialization
	err    error
}

// BeginSnapshot starts gathering a snapshot of the member's own tree.
func (s *server) BeginSnapshot(j *member.SnapshotJob) member.SnapshotStream {
	return &simSnapshot{s: s, j: j, gen: s.gen}
}

func (ss *simSnapshot) Chunk(p []byte) {
	ss.tree = append(ss.tree, p...)
	ss.chunks++
}

func (ss *simSnapshot) Abort(err error) {
	ss.err = err
	ss.End()
}

func (ss *simSnapshot) End() {
	s, j := ss.s, ss.j
	if d := j.Digest(); d.Zxid > j.Zxid {
		// The tree went on applying txns while it was serialized: the
		// snapshot is named after the zxid it started at but holds some
		// of the later txns too, which a recovery from it replays again.
		s.w.stats.FuzzySnapshots++
		s.w.tr.logf("server %d: fuzzy snapshot 0x%x serialized in %d steps while txns up to 0x%x were applied", s.sid, j.Zxid, ss.chunks, d.Zxid)
	}
	s.w.q.After(snapshotTime(len(ss.tree))+s.held(), func() {
		if s.gen != ss.gen || !s.up {
			return
		}
		if ss.err != nil {
			j.Err = ss.err
		} else {
			j.Write(bytes.NewReader(ss.tree))
		}
		s.m.SnapshotDone(s.now(), j)
		s.loopBack()
	})
}

// pendingInstall is a SNAP the Peer installed whose snapshot the member
// has yet to write, with the zxid up to which its tree holds later txns (0:
// whole).
type pendingInstall struct {
	zxid, fuzzyUntil int64
}

// Ready: before the member carries out rd, the checkers look at the Peer:
// the tree against the digest its last applied txn carried, and the tree a
// SNAP installed.
func (s *server) Ready(rd *zab.Ready) {
	if rd.Installed != nil {
		s.w.inv.installed(s, *rd.Installed)
		s.fuzzyUntil = s.arrivedFuzzyUntil // the tree is the leader's
		if s.fuzzyUntil != 0 {
			s.w.stats.FuzzySyncs++
			s.w.tr.logf("server %d: installed a SNAP of a fuzzy tree, which holds some txns up to 0x%x: they apply again once committed", s.sid, s.fuzzyUntil)
		}
		s.installs = append(s.installs, pendingInstall{zxid: *rd.Installed, fuzzyUntil: s.fuzzyUntil})
	}
	if s.fuzzyUntil != 0 && s.peer.LastZxid() >= s.fuzzyUntil {
		s.fuzzyUntil = 0 // applied again: whole
	}
	if want, ok := s.digests.get(s.peer.LastZxid()); ok && want != s.peer.Digest() && s.fuzzyUntil == 0 {
		s.w.fail(KindDigest, "server %d: tree digest after applying 0x%x is %d, but the txn says %d", s.sid, s.peer.LastZxid(), s.peer.Digest(), want)
		s.m.Stop()
		return
	}
	s.logical(rd)
	state := s.role
	if rd.State != nil {
		state = *rd.State
	}
	if state.Role == zab.RoleLeading && s.w.ensemble != nil {
		for i := range rd.Appends {
			if rd.Appends[i].Header.Zxid>>32 != state.Epoch {
				// Not a proposal: a txn of an earlier epoch, taken as a
				// learner and held behind a SNAP's install until its
				// snapshot was durable (zab.installedSnapshot), logged now
				// that the member leads. Appended judges it.
				continue
			}
			s.entryEnc.Reset()
			zab.WriteTxnEntry(&s.entryEnc, &rd.Appends[i])
			if !s.w.inv.proposed(s, rd.Appends[i].Header.Zxid, s.entryEnc.Bytes()) {
				s.m.Stop()
				return
			}
		}
	}
	s.w.inv.answering(s, rd)
	s.w.inv.conform(s, rd)
	s.ready = rd
}

// logical records the log as rd's disk operations will leave it, in Ready
// order, ahead of the disk jobs: the tree may apply a txn before its own log
// has written it (a leader commits on its followers' ACKs, as ZooKeeper's
// does), and the checkers judge what it delivered by what it logs. A crash
// keeps only what was durable (stop).
func (s *server) logical(rd *zab.Ready) {
	if rd.Truncate != nil {
		z := *rd.Truncate
		s.logged = slices.DeleteFunc(s.logged, func(l int64) bool { return l > z })
		s.digests.deleteAbove(z)
	}
	if rd.Installed != nil {
		// A SNAP replaced the tree: what was recorded of the old one is
		// void, and an error txn next leaves the new one as it is (a fuzzy
		// one is no tree of its zxid: nothing to record).
		z := *rd.Installed
		s.logged = slices.DeleteFunc(s.logged, func(l int64) bool { return l <= z })
		s.digests.clear()
		if s.fuzzyUntil == 0 {
			s.digests.put(s.peer.LastZxid(), s.peer.Digest())
		}
	}
	last := int64(0)
	if k := len(s.logged); k > 0 {
		last = s.logged[k-1]
	}
	for i := range rd.Appends {
		t := &rd.Appends[i]
		z := t.Header.Zxid
		if t.Header.Type == wire.OpCloseSession {
			s.w.closing[t.Header.ClientID] = true
		}
		if t.Digest.Version != 0 {
			s.digests.put(z, t.Digest.TreeDigest)
		} else if prev, ok := s.digests.get(last); ok {
			s.digests.put(z, prev) // an error txn leaves the tree as it was
		}
		s.witnessed.put(z, loggedTxnOf(t))
		s.logged = append(s.logged, z)
		last = z
	}
}

// Carried: the Ready's disk operations are under way; the invariants
// check the member, then its new role is taken, before anything is sent.
func (s *server) Carried() {
	s.w.inv.stepped(s)
	if len(s.w.failures) > 0 {
		s.m.Stop()
		return
	}
	rd := s.ready
	if rd.State != nil {
		s.roleChanged(*rd.State)
	}
	for _, n := range rd.Notices {
		s.w.tr.logf("server %d: %s", s.sid, n.Text)
		s.w.inv.noticed(s, &n)
	}
}

// Durable: the Peer hears the log is durable to zxid.
func (s *server) Durable(zxid int64) {
	s.durable = max(s.durable, zxid)
	s.w.recordDurable(s.sid, zxid)
	if s.w.tr.on() {
		s.w.tr.logf("server %d: durable to 0x%x", s.sid, zxid)
	}
}

// SnapshotWritten records a finished snapshot of the member's own tree.
func (s *server) SnapshotWritten(j *member.SnapshotJob) {
	s.w.tr.logf("server %d: snapshot 0x%x written as %s (err %v)", s.sid, j.Zxid, j.Name, j.Err)
	if j.Err == nil {
		s.w.stats.Snapshots++
		s.snapBase = j.Zxid
	}
}

// Truncated: the log lost every txn after zxid; zxids strictly increase
// again from there.
func (s *server) Truncated(zxid int64) {
	s.w.tr.logf("server %d: truncate the log after 0x%x", s.sid, zxid)
	s.appended = min(s.appended, zxid)
	s.durable = min(s.durable, zxid)
}

// EpochsWritten: the epoch files are durable; an aimed sync-write-crash
// may strike before the rest of that Ready.
func (s *server) EpochsWritten(e zab.EpochWrite, role zab.Role) bool {
	s.w.tr.logf("server %d: persist acceptedEpoch=%d currentEpoch=%d", s.sid, e.Accepted, e.Current)
	moment := s.epochsMoment(e, role)
	s.diskAccepted, s.diskCurrent = e.Accepted, e.Current
	s.w.inv.epochsWritten(s)
	return s.w.aim.syncCrash != nil && s.aimSyncWrite(moment, fmt.Sprintf("persisted acceptedEpoch=%d currentEpoch=%d; dies before the rest of that Ready (appends, sends)", e.Accepted, e.Current))
}

// DamageCleared: the damage a start cut is forgotten on disk.
func (s *server) DamageCleared() {
	s.damageOnDisk = false
	s.w.tr.logf("server %d: the log damage is repaired: forgotten on disk", s.sid)
}

// EpochCovered: the updatingEpoch mark may now cover a newer epoch; an
// aimed sync-write-crash may strike before the txns are appended.
func (s *server) EpochCovered(zxid int64) bool {
	return s.w.aim.syncCrash != nil && s.hasUpdatingMark() &&
		s.aimSyncWrite(faults.AfterMark, fmt.Sprintf("the updatingEpoch mark covers epoch %d; dies before appending 0x%x", zxid>>32, zxid))
}

// Appending checks that zxids strictly increase and records what the log
// holds under each, for the checkers.
func (s *server) Appending(t *datatree.Txn, entry []byte) bool {
	z := t.Header.Zxid
	if z <= s.appended {
		s.w.fail(KindZxid, "server %d appended txn 0x%x after 0x%x", s.sid, z, s.appended)
		s.m.Stop()
		return true
	}
	if !s.w.inv.appended(s, z, entry) {
		s.m.Stop()
		return true
	}
	s.appended = z
	if s.w.tr.on() {
		if d, ok := t.Body.(*wire.DeleteTxn); ok && t.Header.Type == wire.OpDeleteContainer {
			s.w.tr.logf("server %d: append txn 0x%x %s %s (the server's own deletion: an empty container or an expired TTL node)", s.sid, z, t.Header.Type, d.Path)
		} else {
			s.w.tr.logf("server %d: append txn 0x%x %s session=0x%x cxid=%d", s.sid, z, t.Header.Type, t.Header.ClientID, t.Header.Cxid)
		}
	}
	return false
}

// Synced: an fsync made the log durable to zxid; in discovery or
// synchronization an aimed sync-write-crash may strike before the Peer
// hears of it.
func (s *server) Synced(zxid int64, txns int) bool {
	return s.w.aim.syncCrash != nil && (s.role.Phase == zab.PhaseDiscovery || s.role.Phase == zab.PhaseSync) &&
		s.aimSyncWrite(faults.AfterFsync, fmt.Sprintf("an fsync made its log durable to 0x%x in %s; dies before the Peer hears of it", zxid, s.role.Phase))
}

// Installed: the snapshot of a SNAP is the log's starting point now. A
// snapshot of a fuzzy tree is remembered as such: a restart from it loads
// a fuzzy tree.
func (s *server) Installed(name string, zxid int64, n int) bool {
	// Drop the installs up to this one, this one included (its zxid may
	// be 0: a leader whose tree holds nothing yet).
	var in pendingInstall
	for len(s.installs) > 0 {
		in, s.installs = s.installs[0], s.installs[1:]
		if in.zxid == zxid {
			break
		}
	}
	s.w.tr.logf("server %d: snapshot 0x%x of the tree a SNAP installed written as %s", s.sid, zxid, name)
	s.w.stats.Snapshots++
	s.snapBase = zxid
	s.appended = max(s.appended, zxid)
	if in.fuzzyUntil != 0 {
		if s.fuzzyInstalled == nil {
			s.fuzzyInstalled = map[string]int64{}
		}
		s.fuzzyInstalled[name] = in.fuzzyUntil
	}
	return s.w.aim.syncCrash != nil &&
		s.aimSyncWrite(faults.AfterSnapshot, fmt.Sprintf("wrote snapshot %s of the tree a SNAP installed; dies before the Peer hears of it", name))
}

// Loaded: the simulator checks a start once it is whole (start).
func (s *server) Loaded() {}
