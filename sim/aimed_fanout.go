package sim

// fanout-crash (faults.AimFanoutCrash): a leader crashes in the middle of
// a fan-out, right before it sends a packet to one learner that it sends,
// in the same Ready, to another learner too: a PROPOSAL or a COMMIT (an
// observer's INFORM) of one zxid, a NEWLEADER, an UPTODATE or a
// LEADERINFO. What it sent before reaches its learners; nothing from this
// packet on leaves. Before the first PROPOSAL of a zxid the txn is in the
// leader's log only (and may survive there, unsynced sectors being kept
// with even odds); before a COMMIT to the second follower, one follower
// knows the txn committed and the others do not.
//
// The rules it targets: a txn one member was told is committed is never
// lost or replaced, whoever leads next (PrefixConsistency,
// LeaderLogCompleteness), while a proposal no quorum acknowledged may be,
// and a member that logged it and comes back to a leader that lacks it is
// synchronized by TRUNC (or SNAP), never by a DIFF that would keep it
// (ZOOKEEPER-1154); a learner that took NEWLEADER or UPTODATE from a
// leader that then died, next to one that did not, ends in the same
// history as the other; a learner that accepted a LEADERINFO its fellows
// never saw keeps its acceptedEpoch, and later epochs rise above it.

import (
	"fmt"
	"strings"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// aimFanout: s, leading, is about to send msgs[i]; if the same packet goes
// to another learner in msgs too, a fanout-crash may strike before it. It
// reports whether s crashed.
func (s *server) aimFanout(msgs []zab.PeerMessage, i int) bool {
	m := &msgs[i]
	if m.Kind != zab.PeerSend || s.role.Role != zab.RoleLeading {
		return false
	}
	var moment faults.Moment
	switch m.Packet.Type {
	case wire.PacketProposal:
		moment = faults.AtProposal
	case wire.PacketCommit, wire.PacketInform:
		moment = faults.AtCommit
	case wire.PacketNewLeader:
		moment = faults.AtNewLeader
	case wire.PacketUpToDate:
		moment = faults.AtUpToDate
	case wire.PacketLeaderInfo:
		moment = faults.AtLeaderInfo
	default:
		return false
	}
	sw := s.w.aim.fanout
	if !sw.AimsAt(moment) {
		return false
	}
	var others []int64 // the other learners of this fan-out
	switch moment {
	case faults.AtProposal, faults.AtCommit:
		// The leader forwards a proposal or a commit to its learners one
		// after another; a synchronization's PROPOSAL and COMMIT pairs go
		// to one learner.
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(msgs) && sameFanout(m, &msgs[j]) {
				others = append(others, msgs[j].To)
			}
		}
	default:
		for j := range msgs {
			if n := &msgs[j]; j != i && n.Kind == zab.PeerSend && n.Packet.Type == m.Packet.Type && n.To != m.To {
				others = append(others, n.To)
			}
		}
	}
	if len(others) == 0 || !s.w.aim.fires(sw, moment) {
		return false
	}
	var also []string
	for _, o := range others {
		also = append(also, fmt.Sprint(o))
	}
	s.aimedCrash(sw, fmt.Sprintf("dies before sending %s %s to server %d (fanned out to server %s too), what it sent before on its way",
		m.Packet.Type, wire.ZxidString(m.Packet.Zxid), m.To, strings.Join(also, ", ")))
	return true
}

// sameFanout reports whether n carries the proposal or commit of m's zxid
// to another learner.
func sameFanout(m, n *zab.PeerMessage) bool {
	if n.Kind != zab.PeerSend || n.To == m.To || n.Packet.Zxid != m.Packet.Zxid {
		return false
	}
	if m.Packet.Type == wire.PacketProposal {
		return n.Packet.Type == wire.PacketProposal
	}
	return n.Packet.Type == wire.PacketCommit || n.Packet.Type == wire.PacketInform
}
