package election

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
)

// This file is the tests' network: a set of Elections, messages in flight
// with delivery times, and virtual time that jumps from one event to the
// next. Nothing here sleeps; the route function decides each message's fate
// (when it arrives, whether it is lost or duplicated).

// local is what a server brings to an election from its disk.
type local struct {
	zxid  int64 // last logged zxid
	epoch int64 // currentEpoch
}

type packet struct {
	at       time.Duration
	seq      int // send order, to break ties between equal arrival times
	from, to int64
	n        wire.Notification
}

type decisionRecord struct {
	id    int64
	at    time.Duration
	state wire.PeerState
	vote  Vote
}

// sentRecord is one notification as its sender cast it.
type sentRecord struct {
	at       time.Duration
	from, to int64
	n        wire.Notification
}

type cluster struct {
	t         require.TestingT
	now       time.Duration
	voters    []int64
	observers []int64
	tune      func(*Config) // applied to every server's Config, restarts too
	quorum    QuorumVerifier
	nodes     map[int64]*Election
	locals    map[int64]local
	wakeup    map[int64]time.Duration
	down      map[int64]bool
	// refuse: a message that reaches a down server is refused, and its
	// sender told so (SetUnreachable), as a dial to a dead process is;
	// otherwise it is lost without a word, as across a partition.
	refuse   bool
	inflight []packet
	seq      int
	// route returns the arrival times of a message sent now: none when
	// it is lost, several when duplicated. nil routes every message to
	// arrive after delay.
	route func(p packet) []time.Duration
	delay time.Duration
	// initial is each server's own vote at its latest Start (voters only).
	initial   map[int64]Vote
	decisions []decisionRecord
	sent      []sentRecord
	delivered []sentRecord // as received, at the time of receipt
	log       []string     // one line per event, for traces and determinism
}

func newCluster(t require.TestingT, voters, observers []int64, locals map[int64]local, tune func(*Config)) *cluster {
	c := &cluster{
		t: t, voters: voters, observers: observers, tune: tune,
		nodes: map[int64]*Election{}, locals: locals, wakeup: map[int64]time.Duration{},
		down: map[int64]bool{}, initial: map[int64]Vote{}, delay: 10 * time.Millisecond,
	}
	for _, id := range c.ids() {
		c.nodes[id] = c.newElection(id)
	}
	return c
}

// newElection builds server id's Election with the cluster's tuning, and
// learns the quorum verifier the servers use.
func (c *cluster) newElection(id int64) *Election {
	cfg := Config{ID: id, Voters: c.voters, Observers: c.observers}
	if c.tune != nil {
		c.tune(&cfg)
	}
	e, err := New(cfg)
	require.NoError(c.t, err)
	c.quorum = e.quorum
	return e
}

// ids lists every server, ascending.
func (c *cluster) ids() []int64 {
	return slices.Sorted(slices.Values(append(slices.Clone(c.voters), c.observers...)))
}

func (c *cluster) logf(format string, args ...any) {
	c.log = append(c.log, fmt.Sprintf("%8v ", c.now)+fmt.Sprintf(format, args...))
}

// start begins a round on each server named (restarting a crashed one).
func (c *cluster) start(ids ...int64) {
	for _, id := range ids {
		l := c.locals[id]
		delete(c.down, id)
		c.nodes[id].Start(c.now, l.zxid, l.epoch)
		if slices.Contains(c.voters, id) {
			c.initial[id] = Vote{Leader: id, Zxid: l.zxid, PeerEpoch: l.epoch}
		}
		c.logf("server %d starts round %d with zxid 0x%x, epoch %d", id, c.nodes[id].Round(), l.zxid, l.epoch)
		c.flush(id)
	}
}

// crash stops a server: it receives nothing and its timers stop. A crash
// loses its election state, so restart builds a fresh Election.
func (c *cluster) crash(id int64) {
	c.down[id] = true
	delete(c.wakeup, id)
	c.logf("server %d crashes", id)
}

func (c *cluster) restart(id int64) {
	c.nodes[id] = c.newElection(id)
	c.start(id)
}

// flush takes a server's Ready and carries it out.
func (c *cluster) flush(id int64) {
	rd := c.nodes[id].Ready()
	for _, m := range rd.Messages {
		require.NotEqual(c.t, id, m.To, "a server never sends to itself")
		if n := m.Notification; n.State == wire.PeerLooking && slices.Contains(c.voters, id) {
			cast := Vote{Leader: n.Leader, Zxid: n.Zxid, PeerEpoch: n.PeerEpoch}
			if c.initial[id].Beats(cast) { // the trace is built only on failure
				require.Fail(c.t, "a vote worse than the caster's own", "voter %d cast %v, worse than its initial vote %v\n%s", id, cast, c.initial[id], c.trace())
			}
		}
		c.sent = append(c.sent, sentRecord{at: c.now, from: id, to: m.To, n: m.Notification})
		p := packet{from: id, to: m.To, n: m.Notification}
		arrivals := []time.Duration{c.now + c.delay}
		if c.route != nil {
			arrivals = c.route(p)
		}
		for _, at := range arrivals {
			p.at, p.seq = at, c.seq
			c.seq++
			c.inflight = append(c.inflight, p)
		}
	}
	if rd.Decision != nil {
		c.decisions = append(c.decisions, decisionRecord{id: id, at: c.now, state: rd.Decision.State, vote: rd.Decision.Vote})
		c.logf("server %d decides %v %v", id, rd.Decision.State, rd.Decision.Vote)
	}
	if rd.Wakeup != 0 {
		c.wakeup[id] = rd.Wakeup
	} else {
		delete(c.wakeup, id)
	}
}

// nextEvent returns the earliest pending event: a packet (index) or a
// server's wakeup. Packets come before timers at the same instant, and ties
// go to the lower sequence number or server id.
func (c *cluster) nextEvent() (at time.Duration, packetIdx int, timer int64, ok bool) {
	packetIdx = -1
	if len(c.inflight) > 0 {
		packetIdx = 0
		for i, p := range c.inflight {
			q := c.inflight[packetIdx]
			if cmp.Or(cmp.Compare(p.at, q.at), cmp.Compare(p.seq, q.seq)) < 0 {
				packetIdx = i
			}
		}
		at, ok = c.inflight[packetIdx].at, true
	}
	for _, id := range c.ids() {
		w, has := c.wakeup[id]
		if has && !c.down[id] && (!ok || w < at) {
			at, packetIdx, timer, ok = w, -1, id, true
		}
	}
	return at, packetIdx, timer, ok
}

// step runs the next event if it is due by limit.
func (c *cluster) step(limit time.Duration) bool {
	at, idx, timer, ok := c.nextEvent()
	if !ok || at > limit {
		return false
	}
	c.now = max(c.now, at)
	if idx >= 0 {
		p := c.inflight[idx]
		c.inflight = slices.Delete(c.inflight, idx, idx+1)
		if c.down[p.to] {
			if c.refuse && !c.down[p.from] {
				c.logf("%d -> %d refused", p.from, p.to)
				c.nodes[p.from].SetUnreachable(p.to)
				c.flush(p.from)
			}
			return true
		}
		c.logf("%d -> %d %s", p.from, p.to, describe(p.n))
		c.delivered = append(c.delivered, sentRecord{at: c.now, from: p.from, to: p.to, n: p.n})
		e := c.nodes[p.to]
		before := e.Vote()
		e.Step(c.now, p.from, p.n)
		if after := e.Vote(); after != before && e.State() == wire.PeerLooking {
			c.logf("server %d now votes %v", p.to, after)
		}
		c.flush(p.to)
		return true
	}
	c.logf("server %d wakes up", timer)
	c.nodes[timer].Tick(c.now)
	c.flush(timer)
	return true
}

// runFor runs events for d of virtual time.
func (c *cluster) runFor(d time.Duration) {
	limit := c.now + d
	for c.step(limit) {
	}
	c.now = limit
}

// runUntil runs events until done holds or limit passes; it reports done.
func (c *cluster) runUntil(limit time.Duration, done func() bool) bool {
	for !done() {
		if !c.step(limit) {
			return done()
		}
	}
	return true
}

// allDecided reports whether every named server has left LOOKING.
func (c *cluster) allDecided(ids ...int64) func() bool {
	return func() bool {
		for _, id := range ids {
			if c.down[id] || c.nodes[id].State() == wire.PeerLooking {
				return false
			}
		}
		return true
	}
}

func (c *cluster) lastDecision(id int64) (decisionRecord, bool) {
	for i := len(c.decisions) - 1; i >= 0; i-- {
		if c.decisions[i].id == id {
			return c.decisions[i], true
		}
	}
	return decisionRecord{}, false
}

func describe(n wire.Notification) string {
	return fmt.Sprintf("%v leader=%d zxid=0x%x round=%d peerEpoch=%d", n.State, n.Leader, n.Zxid, n.ElectionEpoch, n.PeerEpoch)
}

func (c *cluster) trace() string { return strings.Join(c.log, "\n") }

// requireLeader asserts that every named server decided on leader in
// round, leading exactly when it is the leader.
func (c *cluster) requireLeader(t *testing.T, leader, round int64, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		e := c.nodes[id]
		want := wire.PeerFollowing
		switch {
		case id == leader:
			want = wire.PeerLeading
		case slices.Contains(c.observers, id):
			want = wire.PeerObserving
		}
		require.Equal(t, want, e.State(), "server %d's state\n%s", id, c.trace())
		require.Equal(t, leader, e.Vote().Leader, "server %d's leader\n%s", id, c.trace())
		require.Equal(t, round, e.Vote().ElectionEpoch, "server %d's round\n%s", id, c.trace())
	}
}
