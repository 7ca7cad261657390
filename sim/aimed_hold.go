package sim

// hold-fsync (faults.AimHoldFsync): when DIFF or TRUNC (so across the
// NEWLEADER that follows), NEWLEADER, UPTODATE or a SNAP reaches a
// learner, its fsyncs are held: none begins until the hold ends (up to the
// switch's MaxMs, about initLimit), so everything it appends meanwhile
// stays undurable, and a snapshot write (that of the tree a SNAP
// installed included) waits for the hold to end as well. It stretches the windows in which a learner
// holds its synchronized history, or the new epoch's first proposals, in
// memory only.
//
// The rules it targets: a learner ACKs NEWLEADER, and makes the new epoch
// its currentEpoch, only once the synchronized txns are durable (and a
// SNAP's once its snapshot is written); it ACKs a proposal, and answers a
// client, only once that is durable. A core that acts on the appends
// rather than on LogDurable (or SnapshotWritten) sends its ACK, or writes
// currentEpoch, inside the hold, and any crash in it loses what the ACK
// vouched for.

import (
	"time"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// held is how long s's fsyncs are still held (0: not held).
func (s *server) held() time.Duration {
	return max(0, s.holdUntil-s.w.clock.Mono())
}

// aimHold: packet qp is about to reach s; a hold-fsync may fire if it is
// DIFF, TRUNC, NEWLEADER, UPTODATE or SNAP and s is synchronizing.
func (s *server) aimHold(qp *wire.QuorumPacket) {
	var m faults.Moment
	switch qp.Type {
	case wire.PacketDiff, wire.PacketTrunc:
		m = faults.AtDiff
	case wire.PacketNewLeader:
		m = faults.AtNewLeader
	case wire.PacketUpToDate:
		m = faults.AtUpToDate
	case wire.PacketSnap:
		m = faults.AtSnap
	default:
		return
	}
	sw := s.w.aim.hold
	if s.role.Phase != zab.PhaseSync || !s.w.aim.fires(sw, m) {
		return
	}
	d := sw.drawMs(1)
	s.holdUntil = max(s.holdUntil, s.w.clock.Mono()+ms(d))
	s.w.tr.logf("fault %8dms hold-fsync server=%d for=%dms aimed:%s: %s %s arrives; no fsync begins before %s",
		s.w.nowMs(), s.sid, d, sw.Kind, qp.Type, wire.ZxidString(qp.Zxid), fmtMono(s.holdUntil))
}
