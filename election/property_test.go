package election

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
	"pgregory.net/rapid"
)

// Properties over the test network. A run draws the ensemble (3 or 5
// voters, up to 2 observers), each voter's epoch and zxid, the final-wait
// rule (adaptive or ZooKeeper's fixed wait), whether links are FIFO (as a
// TCP connection is) or reorder freely, and a fault phase: messages lost,
// duplicated and delayed (up to beyond finalizeWait), servers starting at
// different times, and up to a minority of voters crashing (some restart,
// with a fresh Election in round 1). At the heal time faults stop: every
// crashed voter that is to come back is back, and every message sent from
// then on arrives, once, within 50ms.
//
// Between FLE and the network sits a stand-in for ZAB's discovery, since
// FLE alone may leave servers in disagreement (TestSplitDecisionWhenAVoteIsLate)
// or following a crashed leader: a server that decided more than 2s ago
// starts a new round unless its leader is up, LEADING, and followed (same
// leader and peerEpoch) by a quorum of voters counting itself. ZooKeeper's
// leader waits initLimit for that quorum and its followers give up on an
// unreachable leader the same way.
//
// What is checked, precisely:
//   - Support: every decision had a quorum of voters behind it in what the
//     decider received before deciding (its own cast vote counting for
//     itself): either each sent exactly the decided vote (leader, zxid,
//     peerEpoch and round — as a LOOKING vote, or as a FOLLOWING/LEADING
//     claim of that round, which ZooKeeper's vote equality lets count
//     without asking the leader), or each sent that vote or a
//     FOLLOWING/LEADING claim naming its leader, and then the leader itself
//     said LEADING, or is the decider.
//   - Own vote first: no voter ever casts a LOOKING vote worse than its own
//     initial vote of that round (checked on every message by the network).
//     Hence the decided vote is at least the initial vote of every voter in
//     a supporting quorum of the first kind — the leader is the best of the
//     quorum that elected it. It need not be the best of all voters, nor of
//     votes the quorum never saw.
//   - Only voters lead: no decision names an observer or nobody.
//   - Liveness: once healed, every live server decides within 5 minutes of
//     virtual time, all on one leader that is LEADING with a quorum, and
//     the ensemble stays so (no server decides again in the next minute).
//   - Best of a quorum: that leader's vote beats or equals the initial
//     vote of a quorum of voters (what ZAB needs: the leader's history is
//     the longest among some quorum).
// Agreement within a round is not checked here, because FLE does not give
// it under these faults; TestPropertySynchronousAgreement checks it where
// it holds.

type faultPlan struct {
	voters, observers []int64
	locals            map[int64]local
	startAt           map[int64]time.Duration
	crashAt           map[int64]time.Duration
	restartAt         map[int64]time.Duration // absent: stays down
	heal              time.Duration
	lossPercent       int
	dupPercent        int
	maxDelay          time.Duration
	fixedWait         bool           // ZooKeeper's fixed final wait instead of the adaptive one
	fifo              bool           // each link delivers in send order
	quorum            QuorumVerifier // nil: a majority of the voters
	seed              uint64
}

func drawPlan(t *rapid.T) faultPlan {
	nv := rapid.SampledFrom([]int{3, 5}).Draw(t, "voters")
	no := rapid.IntRange(0, 2).Draw(t, "observers")
	p := faultPlan{
		locals: map[int64]local{}, startAt: map[int64]time.Duration{},
		crashAt: map[int64]time.Duration{}, restartAt: map[int64]time.Duration{},
		heal:        time.Duration(rapid.IntRange(0, 20).Draw(t, "healSeconds")) * time.Second,
		lossPercent: rapid.IntRange(0, 40).Draw(t, "lossPercent"),
		dupPercent:  rapid.IntRange(0, 20).Draw(t, "dupPercent"),
		maxDelay:    time.Duration(rapid.IntRange(1, 1000).Draw(t, "maxDelayMillis")) * time.Millisecond,
		fixedWait:   rapid.Bool().Draw(t, "fixedFinalizeWait"),
		fifo:        rapid.Bool().Draw(t, "fifoLinks"),
		seed:        rapid.Uint64().Draw(t, "seed"),
	}
	for i := range nv + no {
		id := int64(i + 1)
		if i < nv {
			p.voters = append(p.voters, id)
			epoch := int64(rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("epoch%d", id)))
			zxidEpoch := int64(rapid.IntRange(0, int(epoch)).Draw(t, fmt.Sprintf("zxidEpoch%d", id)))
			p.locals[id] = local{zxid: zxidEpoch<<32 | int64(rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("counter%d", id))), epoch: epoch}
		} else {
			p.observers = append(p.observers, id)
		}
		p.startAt[id] = time.Duration(rapid.IntRange(0, 1000).Draw(t, fmt.Sprintf("start%d", id))) * time.Millisecond
	}
	crashed := rapid.SliceOfNDistinct(rapid.SampledFrom(p.voters), 0, (nv-1)/2, rapid.ID[int64]).Draw(t, "crashed")
	for _, id := range crashed {
		p.crashAt[id] = p.startAt[id] + time.Duration(rapid.IntRange(0, 20000).Draw(t, fmt.Sprintf("crashAfter%d", id)))*time.Millisecond
		if rapid.Bool().Draw(t, fmt.Sprintf("restarts%d", id)) {
			p.restartAt[id] = p.crashAt[id] + time.Duration(rapid.IntRange(0, 20000).Draw(t, fmt.Sprintf("downFor%d", id)))*time.Millisecond
			p.heal = max(p.heal, p.restartAt[id])
		}
	}
	return p
}

// faultyRoute loses, duplicates and delays messages before the heal time,
// from the plan's seed; afterwards each arrives once within 50ms. On FIFO
// links no message overtakes one sent before it on the same link (equal
// arrival times go in send order).
func faultyRoute(c *cluster, p faultPlan) func(packet) []time.Duration {
	rng := rand.New(rand.NewPCG(p.seed, 0))
	type link struct{ from, to int64 }
	last := map[link]time.Duration{}
	return func(pk packet) []time.Duration {
		var at []time.Duration
		switch {
		case c.now >= p.heal:
			at = append(at, c.now+time.Duration(1+rng.IntN(50))*time.Millisecond)
		case rng.IntN(100) < p.lossPercent:
		default:
			copies := 1
			if rng.IntN(100) < p.dupPercent {
				copies = 2
			}
			for range copies {
				at = append(at, c.now+time.Duration(rng.Int64N(int64(p.maxDelay)+1)))
			}
		}
		if p.fifo {
			l := link{pk.from, pk.to}
			for i := range at {
				at[i] = max(at[i], last[l])
				last[l] = at[i]
			}
		}
		return at
	}
}

// plannedEvent is a start, crash or restart at a time.
type plannedEvent struct {
	at   time.Duration
	id   int64
	kind string
}

func (p faultPlan) events() []plannedEvent {
	var evs []plannedEvent
	for id, at := range p.startAt {
		evs = append(evs, plannedEvent{at, id, "start"})
	}
	for id, at := range p.crashAt {
		evs = append(evs, plannedEvent{at, id, "crash"})
	}
	for id, at := range p.restartAt {
		evs = append(evs, plannedEvent{at, id, "restart"})
	}
	slices.SortFunc(evs, func(a, b plannedEvent) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return int(a.id - b.id)
	})
	return evs
}

const (
	zabGrace     = 2 * time.Second // how long a decided server waits for its ensemble to form
	superviseGap = 500 * time.Millisecond
)

// established reports whether leader is up, LEADING, and followed by a
// quorum of voters (itself included) with its peerEpoch.
func (c *cluster) established(leader int64) bool {
	l, ok := c.nodes[leader]
	if !ok || c.down[leader] || l.State() != wire.PeerLeading || l.Vote().Leader != leader {
		return false
	}
	var group []int64
	for _, id := range c.voters {
		e := c.nodes[id]
		if !c.down[id] && (id == leader || e.State() == wire.PeerFollowing && e.Vote().Leader == leader && e.Vote().PeerEpoch == l.Vote().PeerEpoch) {
			group = append(group, id)
		}
	}
	return c.quorum.ContainsQuorum(group)
}

// supervise restarts the election of every server whose decision did not
// lead to an established ensemble within zabGrace.
func (c *cluster) supervise() {
	for _, id := range c.ids() {
		e := c.nodes[id]
		if c.down[id] || e.State() == wire.PeerLooking {
			continue
		}
		d, _ := c.lastDecision(id)
		if c.now-d.at >= zabGrace && !c.established(e.Vote().Leader) {
			c.logf("server %d gives up on leader %d", id, e.Vote().Leader)
			c.start(id)
		}
	}
}

// converged: every live server decided on one established leader.
func (c *cluster) converged() bool {
	leader := int64(-1)
	for _, id := range c.ids() {
		if c.down[id] {
			continue
		}
		e := c.nodes[id]
		if e.State() == wire.PeerLooking || leader >= 0 && e.Vote().Leader != leader {
			return false
		}
		leader = e.Vote().Leader
	}
	return c.established(leader)
}

// runPlan plays the plan until limit or until done (checked once every
// planned start, crash and restart happened), with the ZAB stand-in every
// superviseGap.
func runPlan(c *cluster, p faultPlan, limit time.Duration, done func() bool) bool {
	evs := p.events()
	nextSupervise := superviseGap
	for steps := 0; ; steps++ {
		if len(evs) == 0 && done() {
			return true
		}
		if steps > 200_000 {
			require.Fail(c.t, "runaway run", "still going at %v after %d events; last events:\n%s", c.now, steps, strings.Join(c.log[len(c.log)-40:], "\n"))
		}
		next := min(nextSupervise, limit)
		if len(evs) > 0 {
			next = min(next, evs[0].at)
		}
		if c.step(next) {
			continue
		}
		if next >= limit {
			return false
		}
		c.now = next
		for len(evs) > 0 && evs[0].at <= c.now {
			ev := evs[0]
			evs = evs[1:]
			switch ev.kind {
			case "start":
				if !c.down[ev.id] {
					c.start(ev.id)
				}
			case "crash":
				c.crash(ev.id)
			case "restart":
				c.restart(ev.id)
			}
		}
		if c.now >= nextSupervise {
			c.supervise()
			nextSupervise += superviseGap
		}
	}
}

func newPlannedCluster(t require.TestingT, p faultPlan) *cluster {
	c := newCluster(t, p.voters, p.observers, p.locals, func(cfg *Config) {
		cfg.FixedFinalizeWait = p.fixedWait
		cfg.Quorum = p.quorum
	})
	c.route = faultyRoute(c, p)
	return c
}

func TestPropertyFaultsSafetyAndLiveness(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawPlan(t)
		checkSettles(t, p)
	})
}

// checkSettles plays p, checks every property of the file comment, and
// returns the settled cluster.
func checkSettles(t *rapid.T, p faultPlan) *cluster {
	c := newPlannedCluster(t, p)
	ok := runPlan(c, p, p.heal+5*time.Minute, func() bool { return c.now >= p.heal && c.converged() })
	checkSupport(t, c)
	for _, d := range c.decisions {
		require.Contains(t, c.voters, d.vote.Leader, "only voters lead")
		require.Positive(t, c.quorum.Weight(d.vote.Leader), "a voter of weight 0 never leads\n%s", c.trace())
	}
	require.True(t, ok, "no single established leader 5 minutes after healing at %v\n%s", p.heal, c.trace())
	checkBestOfAQuorum(t, c)

	settled := len(c.decisions)
	c.runFor(time.Minute)
	require.True(t, c.converged(), "the ensemble came apart after settling\n%s", c.trace())
	require.Len(t, c.decisions, settled, "a server decided again after the ensemble settled\n%s", c.trace())
	return c
}

// checkBestOfAQuorum asserts that the established leader's vote is at least
// as good as the initial vote of a quorum of voters. (Each voter's epoch
// and zxid stay the same for a whole run, so its initial vote is the same
// in every round.)
func checkBestOfAQuorum(t require.TestingT, c *cluster) {
	var leader int64
	for _, id := range c.voters {
		if !c.down[id] && c.nodes[id].State() == wire.PeerLeading {
			leader = id
		}
	}
	won := c.nodes[leader].Vote()
	var notBetter []int64
	for _, id := range c.voters {
		if !c.initial[id].Beats(won) {
			notBetter = append(notBetter, id)
		}
	}
	require.True(t, c.quorum.ContainsQuorum(notBetter), "leader %v is better than the initial votes of only %v\n%s", won, notBetter, c.trace())
}

// Weighted and grouped ensembles (ZooKeeper's QuorumHierarchical), some
// voters of weight 0, under the same faults but no crashes: they settle as
// majorities do, on a leader of weight above 0 that is the best of a
// quorum.
func TestPropertyWeightedEnsemblesSettle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawPlan(t)
		clear(p.crashAt)
		clear(p.restartAt)
		p.quorum = drawHierarchical(t, p.voters)
		checkSettles(t, p)
	})
}

// drawHierarchical splits voters into up to three groups with weights of
// 0 to 2, at least one voter weighing more than 0.
func drawHierarchical(t *rapid.T, voters []int64) Hierarchical {
	groups := make([][]int64, rapid.IntRange(1, 3).Draw(t, "groups"))
	weights := map[int64]int64{}
	for _, id := range voters {
		g := rapid.IntRange(0, len(groups)-1).Draw(t, fmt.Sprintf("group%d", id))
		groups[g] = append(groups[g], id)
		weights[id] = int64(rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("weight%d", id)))
	}
	groups = slices.DeleteFunc(groups, func(g []int64) bool { return len(g) == 0 })
	if !slices.ContainsFunc(voters, func(id int64) bool { return weights[id] > 0 }) {
		weights[voters[0]] = 1
	}
	h, err := NewHierarchical(groups, weights)
	require.NoError(t, err)
	return h
}

// checkSupport asserts that every decision had a quorum behind it in what
// its decider received (see the file comment).
func checkSupport(t require.TestingT, c *cluster) {
	q := c.quorum
	for _, d := range c.decisions {
		var exact, backing []int64 // voters that sent exactly the vote; voters that sent it or a claim for its leader
		leaderSaysLeading := d.vote.Leader == d.id
		add := func(set []int64, sid int64) []int64 {
			if slices.Contains(c.voters, sid) && !slices.Contains(set, sid) {
				set = append(set, sid)
			}
			return set
		}
		for _, s := range c.sent { // the decider's own cast vote
			if s.from == d.id && s.at <= d.at && s.n.State == wire.PeerLooking && noteVote(s.n) == d.vote {
				exact = add(exact, d.id)
				backing = add(backing, d.id)
			}
		}
		for _, r := range c.delivered {
			if r.to != d.id || r.at > d.at {
				continue
			}
			if noteVote(r.n) == d.vote && r.n.State != wire.PeerObserving {
				exact = add(exact, r.from)
			}
			switch r.n.State {
			case wire.PeerLooking:
				if noteVote(r.n) == d.vote {
					backing = add(backing, r.from)
				}
			case wire.PeerFollowing, wire.PeerLeading:
				if r.n.Leader == d.vote.Leader {
					backing = add(backing, r.from)
					leaderSaysLeading = leaderSaysLeading || r.from == d.vote.Leader && r.n.State == wire.PeerLeading
				}
			}
		}
		slices.Sort(exact)
		slices.Sort(backing)
		if !q.ContainsQuorum(exact) && !(q.ContainsQuorum(backing) && leaderSaysLeading) {
			require.Fail(t, "decision without a quorum", "server %d decided %v at %v; exactly that vote from %v, it or claims for its leader from %v (leader says LEADING: %v)\n%s",
				d.id, d.vote, d.at, exact, backing, leaderSaysLeading, c.trace())
		}
	}
}

func noteVote(n wire.Notification) Vote {
	return Vote{Leader: n.Leader, Zxid: n.Zxid, ElectionEpoch: n.ElectionEpoch, PeerEpoch: n.PeerEpoch}
}

// Where FLE does give agreement: every server starts at once and every
// message arrives (perhaps twice) within finalizeWait. Then every server
// decides, in round 1, on the best initial vote of all voters, because that
// vote reaches everyone before anyone's final wait can end. With the
// adaptive final wait over FIFO links without duplicates, every voter has
// also decided within two message delays: by one delay it has heard every
// voter's first vote and adopted the best, by two it holds a quorum of
// votes for it, and nothing better can arrive. (Observers take longer:
// voters send them nothing unasked, only answer their votes.)
func TestPropertySynchronousAgreement(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawPlan(t)
		clear(p.crashAt)
		clear(p.restartAt)
		for id := range p.startAt {
			p.startAt[id] = 0
		}
		p.heal = time.Hour
		p.lossPercent = 0
		if rapid.Bool().Draw(t, "noDuplicates") {
			p.dupPercent = 0
		}
		p.maxDelay = time.Duration(rapid.Int64Range(0, int64(DefaultFinalizeWait)-1).Draw(t, "syncDelay"))
		c := newPlannedCluster(t, p)
		require.True(t, runPlan(c, p, time.Minute, c.allDecided(c.ids()...)), c.trace())

		best := Vote{Leader: p.voters[0], Zxid: p.locals[p.voters[0]].zxid, PeerEpoch: p.locals[p.voters[0]].epoch}
		for _, id := range p.voters {
			if v := (Vote{Leader: id, Zxid: p.locals[id].zxid, PeerEpoch: p.locals[id].epoch}); v.Beats(best) {
				best = v
			}
		}
		best.ElectionEpoch = 1
		for _, id := range c.ids() {
			require.Equal(t, best, c.nodes[id].Vote(), "server %d\n%s", id, c.trace())
		}
		checkSupport(t, c)
		if !p.fixedWait && p.fifo && p.dupPercent == 0 {
			for _, d := range c.decisions {
				if slices.Contains(p.voters, d.id) {
					require.LessOrEqual(t, d.at, 2*p.maxDelay, "voter %d decided later than two message delays (%v)\n%s", d.id, p.maxDelay, c.trace())
				}
			}
		}
	})
}
