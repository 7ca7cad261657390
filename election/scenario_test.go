package election

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
	"pgregory.net/rapid"
)

// Whole elections over the test network (cluster_test.go), one scenario
// each, under both final-wait rules. Messages take 10ms unless a test
// routes them otherwise.

func sameLocals(ids []int64, zxid, epoch int64) map[int64]local {
	m := map[int64]local{}
	for _, id := range ids {
		m[id] = local{zxid: zxid, epoch: epoch}
	}
	return m
}

// finalWaitRule is one of the two final waits: the adaptive one (the
// default) or ZooKeeper's fixed one.
type finalWaitRule struct {
	name  string
	fixed bool
}

func (r finalWaitRule) tune(cfg *Config) { cfg.FixedFinalizeWait = r.fixed }

// withQuorum is r's tuning with a quorum verifier.
func (r finalWaitRule) withQuorum(q QuorumVerifier) func(*Config) {
	return func(cfg *Config) {
		r.tune(cfg)
		cfg.Quorum = q
	}
}

var finalWaitRules = []finalWaitRule{{"adaptive", false}, {"fixed", true}}

// eachFinalWaitRule runs test once per final-wait rule, as a subtest.
func eachFinalWaitRule(t *testing.T, test func(t *testing.T, rule finalWaitRule)) {
	for _, rule := range finalWaitRules {
		t.Run(rule.name, func(t *testing.T) { test(t, rule) })
	}
}

// Reference: FastLeaderElection.totalOrderPredicate (zxid before sid). The
// adaptive rule decides after the two hops that bring every vote and then a
// quorum for the best one; ZooKeeper waits finalizeWait after its last
// notification.
func TestThreeVotersElectTheHighestZxid(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters := []int64{1, 2, 3}
		c := newCluster(t, voters, nil, map[int64]local{1: {0x100000009, 1}, 2: {0x100000004, 1}, 3: {0x100000007, 1}}, rule.tune)
		c.start(voters...)
		require.True(t, c.runUntil(time.Second, c.allDecided(voters...)), c.trace())
		c.requireLeader(t, 1, 1, voters...)
		want := 20 * time.Millisecond // two hops of 10ms
		if rule.fixed {
			want += DefaultFinalizeWait
		}
		require.Equal(t, want, c.now, c.trace())
	})
}

// Reference: FastLeaderElection.totalOrderPredicate — peerEpoch first.
func TestFiveVotersPreferTheHigherEpochOverTheHigherZxid(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters := []int64{1, 2, 3, 4, 5}
		locals := map[int64]local{1: {0x100000050, 1}, 2: {0x200000001, 2}, 3: {0x100000060, 1}, 4: {0x200000000, 2}, 5: {0x100000070, 1}}
		c := newCluster(t, voters, nil, locals, rule.tune)
		c.start(voters...)
		require.True(t, c.runUntil(time.Second, c.allDecided(voters...)), c.trace())
		c.requireLeader(t, 2, 1, voters...)
		require.Equal(t, int64(2), c.nodes[3].Vote().PeerEpoch)
	})
}

// Reference: FastLeaderElection.totalOrderPredicate — the sid breaks ties.
func TestTieIsBrokenByTheHighestSid(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters := []int64{1, 2, 3, 4, 5}
		c := newCluster(t, voters, nil, sameLocals(voters, 0x300000002, 3), rule.tune)
		c.start(voters...)
		require.True(t, c.runUntil(time.Second, c.allDecided(voters...)), c.trace())
		c.requireLeader(t, 5, 1, voters...)
	})
}

// Reference: ZOOKEEPER-1419 (leader election never settled with five
// servers: totalOrderPredicate compared the sid even when the peerEpochs
// differed, so two votes could each beat the other and servers switched
// back and forth). Servers 1-3 accepted epoch 2 but logged nothing in it;
// 4 and 5 missed it; all have the same last zxid. Under the pre-1419
// predicate 4 and 5 beat 1-3 on the sid while 1-3 beat them on the epoch.
// Here, over random start times, delivery orders, losses and duplicates,
// every run settles, stays settled, and elects a server of epoch 2 (every
// quorum holds one of 1-3, and the leader is the best of a quorum), which
// 4 and 5 follow; when all start together and nothing is lost it is 3
// (TestPropertySynchronousAgreement's case).
func TestZooKeeper1419FiveNodesSettle(t *testing.T) {
	const zxid = 0x100000005
	pre1419Beats := func(v, o Vote) bool { // the predicate before the fix, to show the scenario is the bug's
		return v.PeerEpoch > o.PeerEpoch || v.PeerEpoch == o.PeerEpoch && v.Zxid > o.Zxid || v.Zxid == o.Zxid && v.Leader > o.Leader
	}
	three, five := Vote{Leader: 3, Zxid: zxid, PeerEpoch: 2}, Vote{Leader: 5, Zxid: zxid, PeerEpoch: 1}
	require.True(t, pre1419Beats(three, five) && pre1419Beats(five, three), "the old predicate is not an order here")
	require.True(t, three.Beats(five) && !five.Beats(three))

	rapid.Check(t, func(t *rapid.T) {
		p := drawPlan(t)
		p.voters, p.observers = []int64{1, 2, 3, 4, 5}, nil
		p.locals = map[int64]local{1: {zxid, 2}, 2: {zxid, 2}, 3: {zxid, 2}, 4: {zxid, 1}, 5: {zxid, 1}}
		for id := range p.startAt {
			if !slices.Contains(p.voters, id) {
				delete(p.startAt, id)
			}
		}
		for _, id := range p.voters {
			if _, ok := p.startAt[id]; !ok {
				p.startAt[id] = 0
			}
		}
		clear(p.crashAt)
		clear(p.restartAt)
		c := checkSettles(t, p)
		leader := c.nodes[1].Vote()
		require.Equal(t, int64(2), leader.PeerEpoch, "leader %v\n%s", leader, c.trace())
	})
}

// A server restarted after the others moved through several rounds is in
// round 1: its vote is answered with the current round and it joins it.
// Reference: FastLeaderElection.WorkerReceiver (an older round is answered)
// and lookForLeader (a higher round is joined).
func TestStaleRoundCatchesUp(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters := []int64{1, 2, 3}
		c := newCluster(t, voters, nil, sameLocals(voters, 5, 0), rule.tune)
		c.down[3] = true
		c.start(1, 2)
		for range 4 { // four failed elections: 1 and 2 move to round 5 without deciding
			c.start(1, 2)
		}
		c.route = func(p packet) []time.Duration {
			if p.from == 2 || p.to == 2 { // 2 is cut off: only 1 and 3 can agree
				return nil
			}
			return []time.Duration{c.now + 10*time.Millisecond}
		}
		c.restart(3)
		require.True(t, c.runUntil(time.Second, c.allDecided(1, 3)), c.trace())
		c.requireLeader(t, 3, 5, 1, 3)
		require.Contains(t, c.trace(), "1 -> 3 LOOKING leader=1 zxid=0x5 round=5", "1 answered 3's round-1 vote with round 5")
	})
}

// requireQuietAfter asserts that the named servers sent no LOOKING vote
// and took no decision after since: they stayed in the roles they had.
func (c *cluster) requireQuietAfter(t *testing.T, since time.Duration, ids ...int64) {
	t.Helper()
	for _, s := range c.sent {
		if s.at > since && slices.Contains(ids, s.from) {
			require.NotEqual(t, wire.PeerLooking, s.n.State, "server %d voted again at %v\n%s", s.from, s.at, c.trace())
		}
	}
	for _, d := range c.decisions {
		if d.at > since && slices.Contains(ids, d.id) {
			require.Fail(t, "a new election", "server %d decided again at %v\n%s", d.id, d.at, c.trace())
		}
	}
}

// A server that starts after the ensemble has a leader hears FOLLOWING and
// LEADING answers and follows that leader in the leader's round, though
// its own vote is better; the others stay as they are.
// Reference: FastLeaderElection.WorkerReceiver (a decided server answers a
// LOOKING one with its vote) and receivedFollowingNotification (a quorum
// of claims whose leader says LEADING is followed); issue 11, item 3.
func TestLateServerJoinsTheLeader(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters := []int64{1, 2, 3, 4, 5}
		c := newCluster(t, voters, nil, sameLocals(voters, 0x100000003, 1), rule.tune)
		c.start(1, 2, 3, 4)
		c.start(1, 2, 3, 4) // they are in round 2
		require.True(t, c.runUntil(time.Second, c.allDecided(1, 2, 3, 4)), c.trace())
		c.requireLeader(t, 4, 2, 1, 2, 3, 4)
		c.runFor(time.Second)
		settled := c.now

		c.locals[5] = local{zxid: 0x100000009, epoch: 1} // a better zxid does not matter any more
		c.start(5)
		require.True(t, c.runUntil(c.now+time.Second, c.allDecided(5)), c.trace())
		c.requireLeader(t, 4, 2, 1, 2, 3, 4, 5)
		require.Equal(t, int64(2), c.nodes[5].Round(), "it took the leader's round")
		require.Equal(t, settled+20*time.Millisecond, c.now, "one round trip: its vote out, the answers back")
		c.requireQuietAfter(t, settled, 1, 2, 3, 4)
	})
}

// A late joiner that has been electing alone for a while, so it is in a
// higher round than the established ensemble, and holds the best vote of
// all: the others answer it from their older round and it follows their
// leader. No new election: they neither vote nor decide again.
// Reference: FastLeaderElection.receivedFollowingNotification, the
// outofelection set (claims of any round; deciding on them takes their
// round); issue 11, item 3.
func TestLateJoinerInAHigherRoundFollowsWithoutANewElection(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters := []int64{1, 2, 3}
		c := newCluster(t, voters, nil, map[int64]local{1: {0x100000003, 1}, 2: {0x100000004, 1}, 3: {0x200000001, 2}}, rule.tune)
		c.down[3] = true
		c.start(1, 2)
		require.True(t, c.runUntil(time.Second, c.allDecided(1, 2)), c.trace())
		c.requireLeader(t, 2, 1, 1, 2)
		c.runFor(time.Second)
		settled := c.now

		delete(c.down, 3)
		for range 5 { // five lonely rounds, nobody hearing it
			c.start(3)
		}
		require.Equal(t, int64(5), c.nodes[3].Round())
		require.True(t, c.runUntil(c.now+time.Second, c.allDecided(3)), c.trace())
		c.requireLeader(t, 2, 1, 1, 2, 3)
		c.requireQuietAfter(t, settled, 1, 2)
	})
}

// FLE alone can elect two leaders in one round: a vote that reaches one
// server after its final wait and another before. Here 2 decides on
// itself with 1's support, then 3's vote reaches 1, which moves on and,
// with 3, makes 3 leader as well. Both decisions had a quorum behind them
// ({1,2} and {1,3}) with 1 in both — ZAB's discovery, needing a quorum of
// followers for a new epoch, is what leaves one of them leading. The
// adaptive rule does not prevent this: 2 never hears 3, so it waits out
// its bound, as ZooKeeper does.
func TestSplitDecisionWhenAVoteIsLate(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters := []int64{1, 2, 3}
		c := newCluster(t, voters, nil, sameLocals(voters, 5, 0), rule.tune)
		c.route = func(p packet) []time.Duration {
			switch {
			case p.from == 3 && p.to == 2, p.from == 1 && p.to == 2 && c.now >= 50*time.Millisecond:
				return []time.Duration{c.now + time.Second} // late, past 2's final wait
			case p.from == 3 && p.to == 1 && c.now == 0:
				return []time.Duration{100 * time.Millisecond}
			}
			return []time.Duration{c.now + 10*time.Millisecond}
		}
		c.start(voters...)
		require.True(t, c.runUntil(time.Second, c.allDecided(voters...)), c.trace())
		two, _ := c.lastDecision(2)
		three, _ := c.lastDecision(3)
		require.Equal(t, wire.PeerLeading, two.state, c.trace())
		require.Equal(t, wire.PeerLeading, three.state, c.trace())
		require.Equal(t, two.vote.ElectionEpoch, three.vote.ElectionEpoch, "same round, two leaders")
		c.requireLeader(t, 3, 1, 1)
	})
}

// Observers learn the leader, and their notifications never make a quorum.
// Reference: FastLeaderElection.lookForLeader, validVoter.
func TestObserversLearnTheLeaderAndDoNotVote(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters, observers := []int64{1, 2, 3}, []int64{4, 5}
		c := newCluster(t, voters, observers, sameLocals([]int64{1, 2, 3, 4, 5}, 7, 0), rule.tune)
		c.down[1], c.down[2] = true, true
		c.start(3, 4, 5)
		c.runFor(10 * time.Second)
		require.Equal(t, wire.PeerLooking, c.nodes[3].State(), "3 with two observers has no quorum\n%s", c.trace())
		require.Equal(t, wire.PeerLooking, c.nodes[4].State())

		c.start(1)
		require.True(t, c.runUntil(c.now+time.Minute, c.allDecided(1, 3, 4, 5)), c.trace())
		c.requireLeader(t, 3, 1, 1, 3, 4, 5)
	})
}

// weightZeroForFour is one group of four voters in which 4 weighs 0: a
// quorum is two of 1, 2 and 3.
func weightZeroForFour(t *testing.T) Hierarchical {
	return mustHierarchical(t, [][]int64{{1, 2, 3, 4}}, map[int64]int64{4: 0})
}

// A voter of weight 0 with the best history of all is never elected: the
// others elect the best of themselves, and it follows.
// Reference: FastLeaderElection.totalOrderPredicate (getWeight(newId) == 0)
// and QuorumHierarchical; issue 11, item 3.
func TestWeightZeroVoterNeverLeads(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters := []int64{1, 2, 3, 4}
		locals := map[int64]local{1: {0x100000003, 1}, 2: {0x100000005, 1}, 3: {0x100000004, 1}, 4: {0x200000009, 2}}
		c := newCluster(t, voters, nil, locals, rule.withQuorum(weightZeroForFour(t)))
		c.start(voters...)
		require.True(t, c.runUntil(time.Minute, c.allDecided(voters...)), c.trace())
		c.requireLeader(t, 2, 1, voters...)
	})
}

// A voter of weight 0 agreeing with another is no quorum: 1 and 4 agree on
// 1 for ten seconds and nobody decides; once 2 joins them, 1 leads.
// Reference: QuorumHierarchical.containsQuorum; issue 11, item 3.
func TestWeightZeroVoteDoesNotCount(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters := []int64{1, 2, 3, 4}
		locals := map[int64]local{1: {0x100000009, 1}, 2: {0x100000005, 1}, 3: {0x100000004, 1}, 4: {0x100000003, 1}}
		c := newCluster(t, voters, nil, locals, rule.withQuorum(weightZeroForFour(t)))
		c.down[2], c.down[3] = true, true
		c.start(1, 4)
		c.runFor(10 * time.Second)
		require.Equal(t, int64(1), c.nodes[4].Vote().Leader, "4 votes for 1\n%s", c.trace())
		require.Empty(t, c.decisions, "1 and 4 are no quorum\n%s", c.trace())

		c.start(2)
		require.True(t, c.runUntil(c.now+time.Minute, c.allDecided(1, 2, 4)), c.trace())
		c.requireLeader(t, 1, 1, 1, 2, 4)
	})
}

// The leader dies; ZAB notices and the survivors start a new round, which
// elects the best of them.
func TestDeadLeaderIsReplaced(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters := []int64{1, 2, 3}
		c := newCluster(t, voters, nil, map[int64]local{1: {0x100000004, 1}, 2: {0x100000003, 1}, 3: {0x100000004, 1}}, rule.tune)
		c.start(voters...)
		require.True(t, c.runUntil(time.Second, c.allDecided(voters...)), c.trace())
		c.requireLeader(t, 3, 1, voters...)
		c.runFor(time.Second) // ZAB runs; it notices the crash ticks later, long after the election's last messages

		c.crash(3)
		c.locals[1], c.locals[2] = local{0x100000009, 1}, local{0x100000009, 1} // both synced more from 3
		c.start(1, 2)
		require.True(t, c.runUntil(c.now+time.Second, c.allDecided(1, 2)), c.trace())
		c.requireLeader(t, 2, 2, 1, 2)
	})
}

// Every notification is lost for 2 seconds: each server resends at 200,
// 600 and 1400ms (doubling), and once the network heals the next resend,
// at 3000ms, brings the election to an end.
// Reference: FastLeaderElection.lookForLeader, notTimeout.
func TestLostNotificationsAreSentAgain(t *testing.T) {
	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		voters := []int64{1, 2, 3}
		c := newCluster(t, voters, nil, sameLocals(voters, 5, 0), rule.tune)
		healAt := 2 * time.Second
		c.route = func(p packet) []time.Duration {
			if c.now < healAt {
				return nil
			}
			return []time.Duration{c.now + 10*time.Millisecond}
		}
		c.start(voters...)
		require.True(t, c.runUntil(time.Minute, c.allDecided(voters...)), c.trace())
		c.requireLeader(t, 3, 1, voters...)

		var sendTimes []time.Duration
		for _, s := range c.sent {
			if s.from == 1 && s.to == 3 {
				sendTimes = append(sendTimes, s.at)
			}
		}
		ms := time.Millisecond
		require.Equal(t, []time.Duration{0, 200 * ms, 600 * ms, 1400 * ms, 3000 * ms, 3010 * ms}, sendTimes[:6],
			"start, three resends while lost, one after healing, then 3's vote adopted\n%s", c.trace())
		end := 3020 * ms // 3's vote adopted by 1 and 2 at 3010, their votes for 3 with 3 at 3020
		if rule.fixed {
			end += DefaultFinalizeWait
		}
		require.Equal(t, end, c.now, c.trace())
	})
}
