package sim

// sync-write-crash (faults.AimSyncWriteCrash): a member crashes right after
// a durable write of discovery or synchronization and before the sends
// that depend on it, or right after it sent its ACKEPOCH or NEWLEADER ACK.
// The events that can fire it:
//
//   - the Ready's epoch files written: a leader's (at its epoch proposal,
//     and once a quorum acknowledged it: moment lead), a learner's with a
//     new acceptedEpoch only (at LEADERINFO: accepted) or a new
//     currentEpoch (at its NEWLEADER ACK: current); the crash comes before
//     that Ready's appends and sends;
//   - the updatingEpoch mark written for a txn of an epoch newer than
//     currentEpoch: the crash comes before the txn is appended;
//   - an fsync of a member in discovery or synchronization done: the crash
//     comes before the Peer hears LogDurable (before the NEWLEADER ACK that
//     waits for it);
//   - the snapshot of a tree a SNAP installed written: the crash comes
//     before the Peer hears SnapshotWritten;
//   - an ACKEPOCH or a NEWLEADER ACK sent: the crash comes right after.
//
// The rules it targets, each of which a crash in that window breaks if the
// core gets its order wrong: acceptedEpoch is durable before ACKEPOCH
// leaves (a restarted member must not accept a lower epoch it promised to
// refuse); currentEpoch is written only once the synchronized txns are
// durable (a member must not restart in the new epoch with a log that
// lacks its history: ZOOKEEPER-3911, ZOOKEEPER-4643); the updatingEpoch
// mark keeps a log newer than currentEpoch startable, and its epoch files
// consistent (acceptedEpoch ≥ currentEpoch); a SNAP's NEWLEADER ACK waits
// for its snapshot to be written. The restart then checks, as every
// restart does, that nothing reported durable was lost and that the epoch
// files are in order; the ensemble invariants check the rest.

import (
	"fmt"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// aimSyncWrite crashes s if a sync-write-crash fires now, at moment m;
// why says what was just made durable. It reports whether s crashed.
func (s *server) aimSyncWrite(m faults.Moment, why string) bool {
	sw := s.w.aim.syncCrash
	if !s.w.aim.fires(sw, m) {
		return false
	}
	s.aimedCrash(sw, why)
	return true
}

// epochsMoment is the sync-write-crash moment of an epoch write: a
// leader's (role is the member's role when its Ready was carried out), or
// a learner's with a new currentEpoch or only a new acceptedEpoch.
func (s *server) epochsMoment(e zab.EpochWrite, role zab.Role) faults.Moment {
	switch {
	case role == zab.RoleLeading:
		return faults.AfterLead
	case e.Current != s.diskCurrent:
		return faults.AfterCurrent
	}
	return faults.AfterAccepted
}

// isSyncAck reports whether m is an ACKEPOCH or a NEWLEADER ACK (an ACK
// of a zxid with counter 0): the acknowledgements of discovery and
// synchronization, each of which vouches for a durable write.
func isSyncAck(m *zab.PeerMessage) bool {
	return m.Kind == zab.PeerSend &&
		(m.Packet.Type == wire.PacketAckEpoch || m.Packet.Type == wire.PacketAck && m.Packet.Zxid&0xffffffff == 0)
}

// aimAfterAck: s has just sent m, an ACKEPOCH or a NEWLEADER ACK; a
// sync-write-crash may strike now. It reports whether s crashed.
func (s *server) aimAfterAck(m *zab.PeerMessage) bool {
	return s.aimSyncWrite(faults.AfterAck, fmt.Sprintf("sent %s %s to server %d; dies right after", m.Packet.Type, wire.ZxidString(m.Packet.Zxid), m.To))
}

// hasUpdatingMark reports whether s's data directory holds the
// updatingEpoch mark (storage's name for it, in the epochs' directory).
func (s *server) hasUpdatingMark() bool {
	f, err := s.disk.Open(s.store.Dir() + "/updatingEpoch")
	if err != nil {
		return false
	}
	f.Close()
	return true
}
