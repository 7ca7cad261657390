package sim

// The simulated network between the members of an ensemble.
//
// Fault model. Zab runs over TCP, so the network may do only what TCP lets
// a network do to Zab, and nothing kinder:
//
//   - Quorum connections (leader–learner) are FIFO: packets on one
//     connection arrive in the order sent, each after a latency drawn from
//     its link's own random stream (one stream per direction of each pair,
//     so that a fault on one link does not reshuffle the others). Packets
//     on different connections may overtake each other.
//   - A connection never loses a packet and goes on: loss is a break. A
//     broken connection loses everything in flight both ways; an end learns
//     of the break (PeerDisconnected) only after a delay, and what it sends
//     meanwhile is lost too. A break is injected (breakconn), follows a
//     crash of either end, or a partition (below).
//   - A partition cuts traffic between groups of servers: isolate (a group
//     — one server, a minority or a majority — from the rest, both ways),
//     leader (whoever leads at that moment), oneway (the group hears
//     nobody but is heard: asymmetric), bridge (two groups cut from each
//     other, one server seeing both). A packet that meets a cut breaks its
//     connection silently: neither end is told until TCP would give up
//     (tcpGiveUp), or one end closes it, or the other end connects anew.
//   - A new connection replaces the pair's old one at the receiver, which
//     closes the old one: a packet of the old connection that arrives
//     after the new one's first (connections may overtake each other) is
//     lost with everything else in flight on it.
//     The ends find out through their own timeouts (syncLimit, initLimit),
//     as real members must. Partitions heal after their duration.
//   - A clogged link delivers nothing for a while, then everything held, in
//     order (a link that stalls without breaking); a slow link adds a delay
//     to every packet for a while.
//   - Aimed faults (aimed.go) add three things: a cut that refuses the
//     packets that meet it, so both ends learn of the break at once (a
//     firewall's reject rule; aimed duels); a learner's FOLLOWERINFO held
//     back, and its connection behind it, past a new election; and a
//     process killed between two sends, whose packets sent before still
//     arrive, followed by the close of each of its connections.
//   - A learner's dial of its leader, the bound on what waits to be sent
//     to a peer, and the election port's connections follow zabd's rules
//     (package zab/peerlink, which zab/server/peernet follows over TCP):
//     a dial refused by a stopped leader or lost across a cut is retried
//     for peerlink.DefaultLeaderDialWindow; a sender whose backlog to a
//     peer passes Schedule.PeerQueueBytes drops that connection; election
//     connections are election.go's.
//
// Crashes and restarts of servers, with the disk faults, are server.go's;
// wall-clock jumps are per server.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/peerlink"
	"github.com/zabd/zabd/zab/runlog"
)

const (
	// tcpGiveUp is how long an end holds a silently broken connection
	// before TCP reports it (a short retransmission timeout).
	tcpGiveUp = 2 * time.Second
	// breakNotice is how long an end takes to learn of a break it can see
	// (a reset, or its peer process gone).
	breakNotice = time.Millisecond
)

// peerConn is one quorum connection between two servers (by index),
// opened by a learner (a) to its leader (b).
type peerConn struct {
	id     int
	a, b   int
	broken bool
	// closedBy: an end closed it on purpose; packets to that end are lost.
	closedBy [2]bool
	// last delivery time per direction (a→b, b→a), for FIFO.
	last [2]time.Duration
	// dialing: the learner's dial has not reached the leader yet; its
	// attempts follow peerlink.LeaderDial, as zabd's peernet makes them.
	dialing bool
	dial    peerlink.LeaderDial
	// backlog per direction: what was sent and has not arrived, standing
	// for the sender's send queue (and its socket's buffers), bounded as
	// peernet bounds it (peerlink.Backlog).
	backlog [2]peerlink.Backlog
}

func (c *peerConn) dir(from int) int {
	if from == c.a {
		return 0
	}
	return 1
}

// other is the end of c that is not s.
func (c *peerConn) other(s int) int {
	if s == c.a {
		return c.b
	}
	return c.a
}

// link is the state of one direction between two servers.
type link struct {
	rng       *rand.Rand
	clogUntil time.Duration
	slowUntil time.Duration
	slowDelay time.Duration
}

// network carries quorum packets and votes between servers.
type network struct {
	w     *world
	n     int
	links [][]*link     // [from][to]
	conns [][]*peerConn // [holder][other]: the connection holder uses
	// elections: [server][peer], the server's election link with peer
	// (election.go).
	elections [][]*electionEnd
	cuts      []activeCut // partitions in force
	nextID    int
	// spare holds delivered peerDeliveries for reuse: a run sends a packet
	// for most of its steps.
	spare freeList[peerDelivery]
}

type activeCut struct {
	id    int
	pairs map[[2]int]bool // directed pairs whose traffic is cut
	what  string
	// reject: a packet that meets the cut is refused, as a firewall's
	// reject rule refuses it, and both ends learn of the break at once
	// (aimed duels); otherwise it is dropped silently.
	reject bool
}

func newNetwork(w *world, n int) *network {
	net := &network{w: w, n: n}
	net.links = make([][]*link, n)
	net.conns = make([][]*peerConn, n)
	net.elections = make([][]*electionEnd, n)
	for i := range n {
		net.elections[i] = make([]*electionEnd, n)
		net.links[i] = make([]*link, n)
		net.conns[i] = make([]*peerConn, n)
		for j := range n {
			if i != j {
				net.links[i][j] = &link{rng: w.streams.Stream(fmt.Sprintf("link/%d/%d", i, j))}
			}
		}
	}
	return net
}

// cut reports whether traffic from→to is cut by a partition now, and
// whether a cut that meets it rejects it.
func (net *network) cut(from, to int) (cut, reject bool) {
	for _, c := range net.cuts {
		if c.pairs[[2]int{from, to}] {
			cut, reject = true, reject || c.reject
		}
	}
	return cut, reject
}

// deliveryTime is when a packet sent now from→to arrives, at or after
// last (FIFO within its connection).
func (net *network) deliveryTime(from, to int, last time.Duration) time.Duration {
	l := net.links[from][to]
	now := net.w.clock.Mono()
	at := now + 100*time.Microsecond + time.Duration(l.rng.Int64N(int64(2*time.Millisecond)))
	if now < l.slowUntil {
		at += l.slowDelay
	}
	at = max(at, l.clogUntil, last)
	return at
}

// sendPeer carries one PeerMessage from server from. A SNAP's stream is
// carried whole, with its last piece: the learner can act on none of it
// before.
func (net *network) sendPeer(from int, m *zab.PeerMessage) {
	sender := net.w.servers[from]
	if m = sender.snaps.Add(m); m == nil {
		return
	}
	to := int(m.To) - 1
	if to < 0 || to >= net.n || to == from {
		net.w.fail(KindProtocol, "server %d sent a quorum message to unknown server %d", from+1, m.To)
		return
	}
	c := net.conns[from][to]
	if m.Kind == zab.PeerClose {
		if c == nil {
			return
		}
		net.conns[from][to] = nil
		c.closedBy[c.dir(from)] = true
		net.schedule(net.spare.get(peerDelivery{net: net, c: c, from: from, to: to, close: true}), 0)
		return
	}
	if t := m.Packet.Type; t == wire.PacketFollowerInfo || t == wire.PacketObserverInfo {
		// As zabd's transport (peernet): a learner introduces itself on a
		// new connection to its leader, closing the one it had.
		if c != nil {
			net.sendPeer(from, &zab.PeerMessage{To: m.To, Kind: zab.PeerClose})
		}
		net.nextID++
		c = &peerConn{id: net.nextID, a: from, b: to, dialing: true,
			dial: peerlink.StartLeaderDial(net.w.clock.Mono(), peerlink.DefaultLeaderDialWindow)}
		net.conns[from][to] = c
	} else if c == nil {
		// Only a learner's introduction opens a connection; anything
		// else was meant for a connection that is gone, and is lost with it.
		net.w.tr.logf("server %d -> %d %s lost: no connection", from+1, to+1, m.Packet.Type)
		return
	}
	if !net.w.inv.sent(sender, m) {
		return
	}
	if net.w.tr.on() {
		net.w.tr.logf("server %d -> %d %s", from+1, to+1, describePacket(&m.Packet, m.Snapshot))
	}
	var late time.Duration
	if net.w.aim.late != nil {
		late = net.aimLateInfo(from, to, &m.Packet)
	}
	if net.overflows(c, from, m) {
		return
	}
	d := peerDelivery{net: net, c: c, from: from, to: to, pkt: m.Packet, snap: m.Snapshot, sent: net.w.clock.Mono()}
	if m.Packet.Type == wire.PacketSnap {
		// A SNAP's stream is the sender's live tree, serialized a step at
		// a time from the SNAP's zxid until now: it may hold any txn the
		// sender has applied up to now, and, if the sender's own tree was
		// loaded from a fuzzy snapshot and is not yet whole again, some of
		// the txns up to that snapshot's end.
		if f := max(sender.fuzzyUntil, sender.peer.LastZxid()); f > m.Packet.Zxid {
			d.snapFuzzyUntil = f
		}
	}
	net.schedule(net.spare.get(d), late)
}

// overflows applies peernet's bound on what waits to be sent to one peer
// (peerlink.Backlog) to what from has sent over c that has not arrived:
// when m would pass it, from drops the connection, and m is lost with
// everything queued before it. A SNAP's stream, which the simulator
// carries whole, counts as peernet counts it: the SNAP is judged alone,
// its stream's pieces do not overflow.
func (net *network) overflows(c *peerConn, from int, m *zab.PeerMessage) bool {
	b := &c.backlog[c.dir(from)]
	judged := zab.PeerMessage{Kind: m.Kind, Packet: m.Packet}
	if !b.Overflows(&judged, net.w.sched.PeerQueueBytes) {
		b.Add(m)
		return false
	}
	net.breakConn(c, true, fmt.Sprintf("server %d's send queue to %d passed %d bytes with %d messages waiting", from+1, c.other(from)+1, b.Bytes, b.Count))
	return true
}

// peerDelivery is one packet, or the news of a close, on its way over c
// from→to: one allocation per packet, run by the event queue.
type peerDelivery struct {
	net      *network
	c        *peerConn
	from, to int
	close    bool // the sender closed c; otherwise pkt and snap are a packet
	pkt      wire.QuorumPacket
	snap     []byte
	sent     time.Duration // when it left, for the run record
	// snapFuzzyUntil: a SNAP's sender held a fuzzy tree up to this zxid.
	snapFuzzyUntil int64
}

// schedule delivers d in order on its connection, late after its
// latency (an aimed delay: what follows on the connection waits behind it).
func (net *network) schedule(d *peerDelivery, late time.Duration) {
	dir := d.c.dir(d.from)
	at := net.deliveryTime(d.from, d.to, d.c.last[dir]) + late
	d.c.last[dir] = at
	net.w.q.Schedule(at, d)
}

// Run delivers d unless the connection broke first or a cut meets it,
// then gives d back for reuse (the queue is done with it).
func (d *peerDelivery) Run() {
	if d.deliver() {
		d.net.spare.put(d)
	}
}

// deliver carries d out; false when d was kept for a later attempt of the
// learner's dial.
func (d *peerDelivery) deliver() bool {
	net, c, from, to := d.net, d.c, d.from, d.to
	if !d.close && !c.broken {
		c.backlog[c.dir(from)].Remove(&zab.PeerMessage{Packet: d.pkt, Snapshot: d.snap})
	}
	if c.broken || c.closedBy[1-c.dir(from)] || (c.dialing && d.close) {
		// Lost with its connection; or the learner closed a connection
		// its dial never opened, which its leader never hears of.
		return true
	}
	cut, reject := net.cut(from, to)
	if c.dialing {
		if cut || !net.w.servers[to].up {
			return net.dialFailed(d, !cut || reject)
		}
		c.dialing = false
	}
	if cut || !net.w.servers[to].up {
		net.breakConn(c, reject || !net.w.servers[to].up, "a packet met a partition or a stopped server")
		return true
	}
	// The receiver takes c as its connection with from; if it held an
	// older one, that one is over (a peer that connects anew has
	// dropped its old connection). If it holds a newer one, c is the
	// older: its packets were overtaken by the newer connection's, and
	// the receiver closed c when it took the newer one (zabd's peernet
	// drops what arrives on a replaced connection), so this packet and
	// whatever else is in flight on c are lost.
	if old := net.conns[to][from]; old != c {
		if old != nil && old.id > c.id {
			net.breakConn(c, true, fmt.Sprintf("server %d took the newer connection %d from %d", to+1, old.id, from+1))
			return true
		}
		if old != nil {
			// The receiver closes the replaced connection: whatever is
			// still on its way over it is lost, even once c breaks too
			// and the receiver holds no connection with from any more.
			old.closedBy[old.dir(to)] = true
			net.conns[to][from] = nil
			net.w.tr.logf("server %d: connection %d from %d replaced by %d", to+1, old.id, from+1, c.id)
			net.w.servers[to].connectionGone(from)
			if !net.w.servers[to].up || c.broken {
				return true
			}
		}
		net.conns[to][from] = c
	}
	s := net.w.servers[to]
	if d.close {
		if net.conns[to][from] == c {
			net.conns[to][from] = nil
			net.w.tr.logf("server %d: quorum connection from %d closed", to+1, from+1)
			s.connectionGone(from)
		}
		return true
	}
	if d.pkt.Type == wire.PacketSnap {
		// Whether the Peer installs it, its Ready says (Ready.Installed).
		s.arrivedFuzzyUntil = d.snapFuzzyUntil
	}
	if net.w.aim.hold != nil {
		s.aimHold(&d.pkt)
	}
	net.w.inv.received(s, from, &d.pkt)
	net.w.recordMessage(from, to, d.sent, &d.pkt)
	s.step(zab.PeerPacket{From: int64(from + 1), Packet: d.pkt, Snapshot: d.snap})
	return true
}

// dialFailed is a learner's dial (d carries its introduction) that met a
// stopped leader (refused: the learner hears it after a round trip) or a
// partition (silence: the dial times out, peerlink.DefaultDialTimeout).
// The learner dials again as peerlink.LeaderDial says, until the Peer
// gives up on the connection or the window passes; then it reports the
// connection lost. It returns false while d waits for the next attempt.
func (net *network) dialFailed(d *peerDelivery, refused bool) bool {
	c, learner := d.c, d.from
	after := peerlink.DefaultDialTimeout
	if refused {
		after = net.deliveryTime(d.to, learner, 0) - net.w.clock.Mono()
	}
	gen := net.w.servers[learner].gen
	net.w.q.After(after, func() {
		s := net.w.servers[learner]
		if s.gen != gen || net.conns[learner][d.to] != c {
			// The Peer gave up on the connection meanwhile (closed it,
			// or introduced itself anew), or its process is gone.
			net.spare.put(d)
			return
		}
		wait, again := c.dial.Failed(net.w.clock.Mono())
		if !again {
			net.w.tr.logf("server %d: cannot reach leader %d: connection %d lost", learner+1, d.to+1, c.id)
			net.spare.put(d)
			net.conns[learner][d.to] = nil
			c.broken = true
			s.connectionGone(d.to)
			return
		}
		net.w.q.After(wait, func() {
			if s.gen != gen || net.conns[learner][d.to] != c {
				net.spare.put(d)
				return
			}
			c.backlog[c.dir(learner)].Add(&zab.PeerMessage{Packet: d.pkt, Snapshot: d.snap})
			c.last[c.dir(learner)] = 0
			net.schedule(d, 0)
		})
	})
	return false
}

// breakConn breaks c: what is in flight is lost. Visible breaks are
// noticed by both ends after breakNotice; silent ones (a partition) after
// tcpGiveUp.
func (net *network) breakConn(c *peerConn, visible bool, why string) {
	if c.broken {
		return
	}
	c.broken = true
	c.backlog = [2]peerlink.Backlog{}
	net.w.tr.logf("quorum connection %d between %d and %d broken: %s", c.id, c.a+1, c.b+1, why)
	after := tcpGiveUp
	if visible {
		after = breakNotice
	}
	for _, e := range [][2]int{{c.a, c.b}, {c.b, c.a}} {
		holder, other := e[0], e[1]
		net.w.q.After(after, func() {
			if net.conns[holder][other] != c {
				return
			}
			net.conns[holder][other] = nil
			if s := net.w.servers[holder]; s.up {
				net.w.tr.logf("server %d: quorum connection %d to %d reported broken", holder+1, c.id, other+1)
				s.connectionGone(other)
			}
		})
	}
}

// connectionGone tells server s that its quorum connection with server
// index peer is gone: what s's member still held to send on it is lost
// with it (member.ConnectionGone), and the Peer hears PeerDisconnected.
func (s *server) connectionGone(peer int) {
	s.w.inv.peerGone(s, peer)
	s.m.ConnectionGone(int64(peer + 1))
	s.step(zab.PeerDisconnected{Peer: int64(peer + 1)})
}

// serverDownFlushing closes every connection of a process that died
// after it sent what it sent: each packet in flight from it still arrives,
// then its peer sees the connection close; packets to it are lost. A
// connection its peer holds and it does not breaks. Its ends are
// forgotten, as by serverDown.
func (net *network) serverDownFlushing(s int) {
	net.w.inv.crashed(net.w.servers[s])
	net.electionDown(s, true)
	for o := range net.n {
		mine := net.conns[s][o]
		if mine != nil && !mine.broken {
			mine.closedBy[mine.dir(s)] = true
			net.schedule(net.spare.get(peerDelivery{net: net, c: mine, from: s, to: o, close: true}), 0)
		}
		if theirs := net.conns[o][s]; theirs != nil && theirs != mine {
			net.breakConn(theirs, true, fmt.Sprintf("server %d stopped", s+1))
		}
		net.conns[s][o] = nil
	}
}

// serverDown breaks every connection of a stopped server and forgets its
// ends: a new incarnation starts with none.
func (net *network) serverDown(s int) {
	net.w.inv.crashed(net.w.servers[s])
	net.electionDown(s, false)
	for o := range net.n {
		for _, c := range []*peerConn{net.conns[s][o], net.conns[o][s]} {
			if c != nil {
				net.breakConn(c, true, fmt.Sprintf("server %d stopped", s+1))
			}
		}
		net.conns[s][o] = nil
	}
}

// inject carries out a network fault.
func (net *network) inject(f faults.Fault) {
	w := net.w
	until := w.clock.Mono() + ms(f.ForMs)
	switch f.Kind {
	case faults.BreakConn:
		for _, c := range []*peerConn{net.conns[f.Server][f.Peer], net.conns[f.Peer][f.Server]} {
			if c != nil {
				net.breakConn(c, true, "injected")
			}
		}
	case faults.Clog:
		for _, l := range []*link{net.links[f.Server][f.Peer], net.links[f.Peer][f.Server]} {
			l.clogUntil = max(l.clogUntil, until)
		}
	case faults.SlowLink:
		for _, l := range []*link{net.links[f.Server][f.Peer], net.links[f.Peer][f.Server]} {
			l.slowUntil, l.slowDelay = max(l.slowUntil, until), ms(f.Delay)
		}
	case faults.Partition:
		net.partition(f, until, false)
	}
}

// partition puts a cut in force until the given time; reject: packets
// that meet it are refused rather than dropped (activeCut.reject).
func (net *network) partition(f faults.Fault, until time.Duration, reject bool) {
	group := f.Group
	if f.Mode == faults.IsoLeader {
		group = nil
		if l := net.w.leader(); l >= 0 {
			group = []int{l}
		}
		if group == nil {
			net.w.tr.logf("partition: no leader to cut off")
			return
		}
	}
	in := func(s int) bool { return slices.Contains(group, s) }
	pairs := map[[2]int]bool{}
	for a := range net.n {
		for b := range net.n {
			if a == b {
				continue
			}
			switch f.Mode {
			case faults.Isolate, faults.IsoLeader:
				if in(a) != in(b) {
					pairs[[2]int{a, b}] = true
				}
			case faults.OneWay:
				if !in(a) && in(b) {
					pairs[[2]int{a, b}] = true
				}
			case faults.Bridge:
				if a != f.Server && b != f.Server && in(a) != in(b) {
					pairs[[2]int{a, b}] = true
				}
			}
		}
	}
	net.nextID++
	cut := activeCut{id: net.nextID, pairs: pairs, what: fmt.Sprintf("%s %v", f.Mode, plusOne(group)), reject: reject}
	if f.Mode == faults.Bridge {
		cut.what += fmt.Sprintf(" bridged by %d", f.Server+1)
	}
	if reject {
		cut.what += ", refusing what meets it"
	}
	net.cuts = append(net.cuts, cut)
	net.w.tr.logf("partition %d in force: %s", cut.id, cut.what)
	net.w.recordPartition(runlog.KindPartition, cut.id, cut.what)
	id := cut.id
	net.w.q.At(until, func() { net.unCut(id) })
}

func (net *network) unCut(id int) {
	i := slices.IndexFunc(net.cuts, func(c activeCut) bool { return c.id == id })
	if i < 0 {
		return
	}
	net.w.tr.logf("partition %d healed", id)
	net.w.recordPartition(runlog.KindHeal, id, "")
	net.cuts = slices.Delete(net.cuts, i, i+1)
}

// heal ends every network fault (the liveness phase).
func (net *network) heal() {
	net.cuts = nil
	now := net.w.clock.Mono()
	for _, row := range net.links {
		for _, l := range row {
			if l != nil {
				l.clogUntil = min(l.clogUntil, now)
				l.slowUntil = 0
			}
		}
	}
}

func plusOne(ids []int) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = id + 1
	}
	return out
}

// describePacket renders a quorum packet for the trace.
func describePacket(qp *wire.QuorumPacket, snap []byte) string {
	s := fmt.Sprintf("%s %s", qp.Type, wire.ZxidString(qp.Zxid))
	switch qp.Type {
	case wire.PacketProposal, wire.PacketInform:
		if t, err := zab.DecodeTxnEntry(qp.Data); err == nil {
			s += fmt.Sprintf(" %s session=0x%x cxid=%d", t.Header.Type, t.Header.ClientID, t.Header.Cxid)
		}
	case wire.PacketSnap:
		s += fmt.Sprintf(" (%d bytes of snapshot)", len(snap))
	}
	return s
}
