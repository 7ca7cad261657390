package sim

import (
	"fmt"

	"github.com/zabd/zabd/zab"
)

// A member's role changes, as the trace tells them and the checkers count
// them.

// roleChanged traces a role or phase change and counts established epochs.
func (s *server) roleChanged(st zab.SoftState) {
	was := s.role
	s.role = st
	if st.Phase == zab.PhaseBroadcast {
		s.damaged = false // synchronized: the leader restored what it lost
	}
	if st.Role == zab.RoleLeading && st.Phase == zab.PhaseBroadcast && was != st {
		s.decidingSince = s.w.clock.Mono()
	}
	if st.Role == zab.RoleLeading && st.Phase == zab.PhaseDiscovery && was != st && s.w.net != nil {
		s.w.leaderStarting(s)
	}
	if s.w.tr.on() {
		from := "start"
		if was != (zab.SoftState{}) {
			from = fmt.Sprintf("%s (%s)", was.Role, was.Phase)
		}
		s.w.tr.logf("server %d: %s -> %s (%s) leader=%d epoch=%d: %s", s.sid, from, st.Role, st.Phase, st.Leader, st.Epoch, phaseGloss(st))
	}
	s.w.recordRole(s.sid, st)
	s.w.inv.roleChanged(s)
}

// phaseGloss says in a few words what a member does in its role and
// phase, for someone reading the trace to learn Zab.
func phaseGloss(st zab.SoftState) string {
	leads := st.Role == zab.RoleLeading
	switch st.Phase {
	case zab.PhaseElection:
		return "fast leader election: exchanging votes (epoch, zxid, id) until a quorum agrees"
	case zab.PhaseDiscovery:
		if leads {
			return "discovery: gathering FOLLOWERINFO from a quorum to choose a new epoch above every accepted one"
		}
		if st.Role == zab.RoleObserving {
			return "discovery: OBSERVERINFO sent; waiting for the leader's new epoch (LEADERINFO), to accept it durably and ACKEPOCH"
		}
		return "discovery: FOLLOWERINFO sent; waiting for the leader's new epoch (LEADERINFO), to accept it durably and ACKEPOCH"
	case zab.PhaseSync:
		if leads {
			return "synchronization: bringing each learner to its history by DIFF, TRUNC or SNAP, then NEWLEADER; established once a quorum ACKs"
		}
		return "synchronization: taking the leader's DIFF, TRUNC or SNAP, making it durable, then ACKing NEWLEADER; serving at UPTODATE"
	case zab.PhaseBroadcast:
		if leads {
			return "broadcast: serving; each write is a PROPOSAL, committed once a quorum has logged it and ACKed"
		}
		if st.Role == zab.RoleObserving {
			return "broadcast: serving reads, forwarding writes; each committed txn arrives by INFORM, logged and applied (observers never vote or ACK)"
		}
		return "broadcast: serving reads, forwarding writes; each PROPOSAL logged and ACKed, applied at its COMMIT"
	}
	return st.Phase.String()
}
