package zab

import (
	"time"

	"github.com/zabd/zabd/wire"
)

// A learner may decide on its leader before the leader does: its election
// ended a moment earlier, so its FOLLOWERINFO (or OBSERVERINFO) reaches a
// member that is still looking. ZooKeeper's learner retries its connection
// for about initLimit ticks until the leader's acceptor runs; a member here
// holds that first packet instead, as long as that, and takes it as leader
// once it leads, or closes the connection once it follows or the time is
// up. The hold lives in the core so that every shell (zabd's transport and
// the simulator's network alike) behaves the same.

// heldLearner is a learner's first packet on a connection, held while this
// member looks.
type heldLearner struct {
	packet PeerPacket
	until  time.Duration // the monotonic time the hold ends
}

// holdLearner holds e if it opens a learner's connection and this member is
// still looking; it reports whether it did. A newer connection of the same
// learner replaces its held one.
func (p *Peer) holdLearner(e PeerPacket) bool {
	if p.role != RoleLooking || p.standalone() ||
		e.Packet.Type != wire.PacketFollowerInfo && e.Packet.Type != wire.PacketObserverInfo {
		return false
	}
	h := heldLearner{packet: e, until: p.now.Mono + time.Duration(p.members.initLimit)*p.cfg.Tick}
	for i := range p.held {
		if p.held[i].packet.From == e.From {
			p.held[i] = h
			return true
		}
	}
	p.notice("looking: holding the connection of server %d (%s) until this server leads, at most %d ticks", e.From, e.Packet.Type, p.members.initLimit)
	p.held = append(p.held, h)
	return true
}

// admitHeld hands the held learners to the leader this member has become,
// in the order they arrived. A learner admitted may end the lead at once
// (it accepted an epoch above the one its predecessors let this member
// propose): the member looks again, closing its learners' connections,
// and those not yet admitted are closed with them, as a leader that steps
// down drops the connections it had not yet accepted.
func (p *Peer) admitHeld() {
	held := p.held
	p.held = nil
	for i := range held {
		if p.role != RoleLeading {
			p.held = held[i:]
			p.refuseHeld(true, "the lead ended as it began")
			return
		}
		e := held[i].packet
		p.stepLeader(e.From, &e.Packet, e.Snapshot)
	}
}

// refuseHeld closes the held learners' connections: this member follows,
// or their time is up (only those whose hold ended by now, unless all).
func (p *Peer) refuseHeld(all bool, why string) {
	kept := p.held[:0]
	for _, h := range p.held {
		if !all && h.until > p.now.Mono {
			kept = append(kept, h)
			continue
		}
		p.notice("%s: closing the held connection of server %d: %s", p.role, h.packet.From, why)
		p.closeConnection(h.packet.From)
	}
	clear(p.held[len(kept):])
	p.held = kept
}

// forgetHeld drops a held learner whose connection broke.
func (p *Peer) forgetHeld(peer int64) {
	for i := range p.held {
		if p.held[i].packet.From == peer {
			p.held = append(p.held[:i], p.held[i+1:]...)
			return
		}
	}
}
