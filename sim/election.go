package sim

// The election port between simulated servers, carried by the rules zabd's
// transport follows (package zab/peerlink, as zab/server/peernet does over
// TCP): one connection per pair, the one the larger id dials (a smaller
// id's dial only sends its handshake and asks to be called back); a send
// slot of one notification per peer, where a newer one replaces one not
// yet written; the last one written sent again on a new connection; a
// failed dial retried after a growing backoff, and a refused one reported
// to the Peer at once (zab.PeerUnreachable: nothing listens there).
//
// What the network does to these connections is what it does to quorum
// connections (network.go): FIFO per direction; a notification that meets
// a partition breaks its connection silently (both ends hear of it after
// tcpGiveUp), one to a stopped server breaks it visibly; a dial across a
// partition times out (peerlink.DefaultDialTimeout), one to a stopped
// server is refused after a round trip.

import (
	"fmt"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/peerlink"
	"github.com/zabd/zabd/zab/runlog"
)

// voteConn is one election connection, dialled by a and accepted by b.
type voteConn struct {
	id     int
	a, b   int
	broken bool
	last   [2]time.Duration // last delivery time per direction (a→b, b→a), for FIFO
}

func (c *voteConn) dir(from int) int {
	if from == c.a {
		return 0
	}
	return 1
}

// electionEnd is one incarnation of a server's election link with one
// peer: peerlink's state, and what peernet's send goroutine for that peer
// is doing (dialling, or waiting before the next dial).
type electionEnd struct {
	from, to int
	link     *peerlink.Election[*voteConn, wire.Notification]
	dialing  bool
	// sleep is the pending end of a wait between dials (nil: none); a
	// wake cuts it short, as peernet's wake channel does.
	sleep *bool
	// woken: a wake came while the sender was busy dialling; the next wait
	// returns at once (peernet's wake channel holds one signal).
	woken bool
}

// electionEnd returns server from's link with server to, making it on
// first use; its incarnation's links go when it stops (electionDown).
func (net *network) electionEnd(from, to int) *electionEnd {
	e := net.elections[from][to]
	if e == nil {
		e = &electionEnd{from: from, to: to,
			link: peerlink.NewElection[*voteConn, wire.Notification](int64(from+1), int64(to+1))}
		net.elections[from][to] = e
	}
	return e
}

// sendVote carries an election notification: into the sender's slot for
// that peer, then on as peerlink says.
func (net *network) sendVote(from int, v *zab.Vote) {
	to := int(v.To) - 1
	if to < 0 || to >= net.n || to == from {
		net.w.fail(KindProtocol, "server %d sent a vote to unknown server %d", from+1, v.To)
		return
	}
	e := net.electionEnd(from, to)
	e.link.Send(v.Notification)
	net.wake(e)
}

// wake is peernet's signal to a link's send goroutine.
func (net *network) wake(e *electionEnd) {
	switch {
	case e.sleep != nil:
		*e.sleep = false
		e.sleep = nil
		net.pumpVotes(e)
	case e.dialing:
		e.woken = true
	default:
		net.pumpVotes(e)
	}
}

// pumpVotes is one turn of peernet's send goroutine: write what the slot
// holds on the connection, or dial when there is none.
func (net *network) pumpVotes(e *electionEnd) {
	for {
		step, n, c := e.link.Next()
		switch step {
		case peerlink.Idle:
			return
		case peerlink.Write:
			net.sendOnVoteConn(c, e.from, e.to, &n, false)
		case peerlink.Dial:
			net.dialElection(e)
			return
		}
	}
}

// live reports whether e is still the link of a running incarnation.
func (net *network) live(e *electionEnd) bool {
	return net.w.servers[e.from].up && net.elections[e.from][e.to] == e
}

// pause is peernet's wait between dials, cut short by a wake.
func (net *network) pause(e *electionEnd, wait time.Duration) {
	e.dialing = false
	if e.woken {
		e.woken = false
		net.pumpVotes(e)
		return
	}
	pending := true
	e.sleep = &pending
	net.w.q.After(wait, func() {
		if !pending || !net.live(e) {
			return
		}
		e.sleep = nil
		net.pumpVotes(e)
	})
}

// dialElection dials e's peer: refused by a stopped server, silent across
// a partition, otherwise a connection that carries the dialler's
// handshake first.
func (net *network) dialElection(e *electionEnd) {
	e.dialing = true
	from, to := e.from, e.to
	start, arrive := net.w.clock.Mono(), net.deliveryTime(from, to, 0)
	net.w.q.At(arrive, func() {
		if !net.live(e) {
			return
		}
		cut, reject := net.cut(from, to)
		back, _ := net.cut(to, from)
		switch {
		case (cut || back) && !reject:
			// Silence: the dial times out.
			net.w.q.At(start+peerlink.DefaultDialTimeout, func() {
				if net.live(e) {
					net.pause(e, e.link.DialFailed())
				}
			})
		case cut || !net.w.servers[to].up:
			net.w.q.At(net.deliveryTime(to, from, 0), func() {
				if !net.live(e) {
					return
				}
				if !net.w.servers[to].up {
					// Nothing listens on its port: its process is gone.
					net.w.tr.logf("server %d: election port of %d refused the connection", from+1, to+1)
					net.w.servers[from].step(zab.PeerUnreachable{Peer: int64(to + 1)})
				}
				if net.live(e) {
					net.pause(e, e.link.DialFailed())
				}
			})
		default:
			net.nextID++
			c := &voteConn{id: net.nextID, a: from, b: to}
			net.w.q.At(net.deliveryTime(to, from, 0), func() { net.dialled(e, c) })
		}
	})
}

// dialled is the dialler's side of a connection that opened: it sends its
// handshake and keeps the connection if it is the larger id; a smaller id
// closes it and waits to be called back.
func (net *network) dialled(e *electionEnd, c *voteConn) {
	if !net.live(e) {
		net.breakVoteConn(c, true, "its dialler stopped")
		return
	}
	net.sendOnVoteConn(c, e.from, e.to, nil, false)
	if !e.link.DialSurvives() {
		net.sendOnVoteConn(c, e.from, e.to, nil, true)
		net.pause(e, peerlink.CallBackWait)
		return
	}
	net.install(e, c)
	e.dialing = false
	e.woken = false
	net.pumpVotes(e)
}

// install makes c e's connection, closing the one it replaces.
func (net *network) install(e *electionEnd, c *voteConn) {
	if old, replaced := e.link.Installed(c); replaced {
		net.closeVoteConn(old, e.from)
	}
	net.w.tr.logf("server %d: election connection %d with %d", e.from+1, c.id, e.to+1)
}

// voteDelivery is a notification (nil: the dialler's handshake), or the
// close of the connection by its sender, on its way over c.
type voteDelivery struct {
	c        *voteConn
	from, to int
	note     *wire.Notification
	close    bool
	sent     time.Duration // when it left, for the run record
}

// sendOnVoteConn puts a handshake (n nil), a notification or a close on c,
// FIFO in its direction.
func (net *network) sendOnVoteConn(c *voteConn, from, to int, n *wire.Notification, close bool) {
	dir := c.dir(from)
	at := net.deliveryTime(from, to, c.last[dir])
	c.last[dir] = at
	d := voteDelivery{c: c, from: from, to: to, close: close, sent: net.w.clock.Mono()}
	if n != nil {
		note := *n
		d.note = &note
	}
	net.w.q.At(at, func() { net.deliverVote(d) })
}

// deliverVote carries d out at its receiver.
func (net *network) deliverVote(d voteDelivery) {
	c, from, to := d.c, d.from, d.to
	if c.broken {
		return
	}
	if d.close {
		net.breakVoteConn(c, true, fmt.Sprintf("server %d closed it", from+1))
		return
	}
	if cut, reject := net.cut(from, to); cut || !net.w.servers[to].up {
		net.breakVoteConn(c, reject || !net.w.servers[to].up, "a notification met a partition or a stopped server")
		return
	}
	e := net.electionEnd(to, from)
	if d.note == nil {
		// The handshake: a larger id's connection is kept; a smaller
		// one asks to be called back, and whatever we held is stale.
		if from > to {
			net.install(e, c)
			net.wake(e)
			return
		}
		if old, had := e.link.CallBackAsked(); had {
			net.closeVoteConn(old, to)
		}
		net.wake(e)
		return
	}
	if cur, ok := e.link.Conn(); !ok || cur != c {
		// A connection the receiver no longer holds: it closed it.
		return
	}
	e.link.Heard(c)
	if net.w.tr.on() {
		net.w.tr.logf("server %d -> %d %s", from+1, to+1, runlog.DescribeVote(d.note))
	}
	net.w.recordVote(from, to, d.sent, d.note)
	net.w.servers[to].step(zab.PeerVote{From: int64(from + 1), Notification: *d.note})
}

// closeVoteConn closes c from holder's side: its peer reads the end after
// what holder sent before it.
func (net *network) closeVoteConn(c *voteConn, holder int) {
	other := c.a
	if holder == c.a {
		other = c.b
	}
	net.sendOnVoteConn(c, holder, other, nil, true)
}

// breakVoteConn breaks c; each end hears of it (peerlink.Election.Dropped)
// after breakNotice when visible (a close, a reset, a stopped process),
// after tcpGiveUp when silent.
func (net *network) breakVoteConn(c *voteConn, visible bool, why string) {
	if c.broken {
		return
	}
	c.broken = true
	net.w.tr.logf("election connection %d between %d and %d broken: %s", c.id, c.a+1, c.b+1, why)
	after := tcpGiveUp
	if visible {
		after = breakNotice
	}
	for _, ends := range [][2]int{{c.a, c.b}, {c.b, c.a}} {
		e := net.elections[ends[0]][ends[1]]
		if e == nil {
			continue
		}
		net.w.q.After(after, func() {
			if net.live(e) && e.link.Dropped(c, visible) {
				net.wake(e)
			}
		})
	}
}

// electionDown breaks every election connection of a stopped server and
// forgets its links: a new incarnation starts with none. flush: the
// process died after it wrote what it wrote (network.serverDownFlushing):
// its connections close behind what is in flight.
func (net *network) electionDown(s int, flush bool) {
	for o := range net.n {
		if e := net.elections[s][o]; e != nil {
			if c, ok := e.link.Conn(); ok {
				if flush {
					net.closeVoteConn(c, s)
				} else {
					net.breakVoteConn(c, true, fmt.Sprintf("server %d stopped", s+1))
				}
			}
			if e.sleep != nil {
				*e.sleep = false
			}
		}
		net.elections[s][o] = nil
	}
}
