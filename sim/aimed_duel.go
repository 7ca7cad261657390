package sim

// duel (faults.AimDuel): as a member starts to lead (discovery), a bridge
// partition cuts it, with up to half of the others, from the rest, one
// other voter (drawn) seeing both sides; the cut refuses what meets it,
// so that the members cut off from the would-be leader learn it at once
// and elect again among themselves and the shared voter, and it heals
// after up to the switch's MaxMs (about initLimit), while the first would-be
// leader may still be in discovery. Half the time, at a drawn moment
// before the cut heals, the shared voter's connection with the would-be
// leader breaks, so that it too elects again, and it may have sent
// FOLLOWERINFO and ACKEPOCH to both; otherwise it stays, and the
// would-be leader synchronizes it alone while the others elect without
// them. Stats.RivalLeaders counts how often a member began to
// lead while another still led in discovery or synchronization.
//
// The rules it targets: each epoch has one established leader
// (Leadership), because a learner ACKs an epoch to one leader only and
// refuses a LEADERINFO below its acceptedEpoch, and a leader proposes an
// epoch above every acceptedEpoch it counted and gives up when a learner
// has accepted a later one; a learner that acknowledged an epoch to one
// leader and then joins another is synchronized to the second leader's
// history, whatever it logged from the first.

import (
	"fmt"
	"slices"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/zab"
)

// leaderStarting: s has begun to lead, in discovery. It counts rival
// would-be leaders, and may start a duel.
func (w *world) leaderStarting(s *server) {
	for _, o := range w.servers {
		if o != s && o.up && o.role.Role == zab.RoleLeading && o.role.Phase != zab.PhaseBroadcast {
			w.stats.RivalLeaders++
			w.tr.logf("server %d begins to lead while server %d still leads in %s: two would-be leaders at once", s.sid, o.sid, o.role.Phase)
			break
		}
	}
	sw := w.aim.duel
	if !w.aim.fires(sw, "") {
		return
	}
	var voters, rest []int
	for _, o := range w.servers {
		if o != s && slices.Contains(w.ensemble.Voters, o.sid) {
			voters = append(voters, o.id)
		}
	}
	shared := voters[sw.rng.IntN(len(voters))] // an ensemble has at least three voters
	for _, o := range w.servers {
		if o != s && o.id != shared {
			rest = append(rest, o.id)
		}
	}
	group := []int{s.id}
	perm := sw.rng.Perm(len(rest))
	for _, i := range perm[:sw.rng.IntN(len(rest)/2+1)] {
		group = append(group, rest[i])
	}
	slices.Sort(group)
	d := sw.drawMs(1)
	leave := int64(-1)
	if sw.rng.IntN(2) == 0 {
		leave = sw.rng.Int64N(d)
	}
	f := faults.Fault{AtMs: w.nowMs(), Kind: faults.Partition, Mode: faults.Bridge, Server: shared, Group: group, ForMs: d}
	why := fmt.Sprintf("server %d begins to lead; server %d sees both sides", s.sid, shared+1)
	if leave >= 0 {
		why += fmt.Sprintf(" and leaves it after %dms", leave)
	}
	w.tr.logf("fault %s aimed:%s: %s", f, sw.Kind, why)
	w.net.partition(f, w.clock.Mono()+ms(d), true)
	if leave < 0 {
		return
	}
	gen := s.gen
	w.q.After(ms(leave), func() {
		if s.gen != gen || !s.up {
			return
		}
		for _, c := range []*peerConn{w.net.conns[s.id][shared], w.net.conns[shared][s.id]} {
			if c != nil {
				w.net.breakConn(c, true, "aimed duel: the shared voter leaves the would-be leader")
			}
		}
	})
}
