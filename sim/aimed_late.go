package sim

// late-followerinfo (faults.AimLateInfo): a learner's FOLLOWERINFO (or an
// observer's OBSERVERINFO) is held back on its way, and everything after it
// on the same connection with it (TCP keeps order), for initLimit to the
// switch's MaxMs: past the learner's own initLimit, after which it gives
// its leader up, elects again and may introduce itself, on a new
// connection, to the same member in a new role or epoch or to another.
// The stale introduction then arrives at a member that may lead a new
// epoch, be in discovery again, or follow.
//
// The rules it targets: a leader counts a learner's acceptedEpoch, and its
// FOLLOWERINFO towards the discovery quorum, only from the connection it
// now holds (a newer connection's packets overtaking an older one's close
// the older one); an epoch a leader proposes is above every acceptedEpoch
// it counted, and a learner that introduces itself with a later
// acceptedEpoch than the proposed one makes the leader look again rather
// than be sent a LEADERINFO it must refuse; a member that does not lead
// refuses the introduction.

import (
	"time"

	"github.com/zabd/zabd/wire"
)

// aimLateInfo is how much later than its latency packet qp, sent from→to,
// arrives: an aimed delay for a FOLLOWERINFO or OBSERVERINFO, else 0.
func (net *network) aimLateInfo(from, to int, qp *wire.QuorumPacket) time.Duration {
	if qp.Type != wire.PacketFollowerInfo && qp.Type != wire.PacketObserverInfo {
		return 0
	}
	w := net.w
	sw := w.aim.late
	if !w.aim.fires(sw, "") {
		return 0
	}
	d := sw.drawMs(initLimitTicks * w.sched.TickMs)
	w.tr.logf("fault %8dms late-followerinfo link=%d-%d delay=%dms aimed:%s: %s of server %d to %d held back, with what follows it on the connection",
		w.nowMs(), from+1, to+1, d, sw.Kind, qp.Type, from+1, to+1)
	return ms(d)
}
