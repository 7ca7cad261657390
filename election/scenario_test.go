package election

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
)

// Whole elections over the test network (cluster_test.go), one scenario
// each. Messages take 10ms unless a test routes them otherwise.

func sameLocals(ids []int64, zxid, epoch int64) map[int64]local {
	m := map[int64]local{}
	for _, id := range ids {
		m[id] = local{zxid: zxid, epoch: epoch}
	}
	return m
}

func TestThreeVotersElectTheHighestZxid(t *testing.T) {
	voters := []int64{1, 2, 3}
	c := newCluster(t, voters, nil, map[int64]local{1: {0x100000009, 1}, 2: {0x100000004, 1}, 3: {0x100000007, 1}}, nil)
	c.start(voters...)
	require.True(t, c.runUntil(time.Second, c.allDecided(voters...)), c.trace())
	c.requireLeader(t, 1, 1, voters...)
	require.Equal(t, time.Duration(220*time.Millisecond), c.now, "two hops of 10ms, then finalizeWait\n%s", c.trace())
}

func TestFiveVotersPreferTheHigherEpochOverTheHigherZxid(t *testing.T) {
	voters := []int64{1, 2, 3, 4, 5}
	locals := map[int64]local{1: {0x100000050, 1}, 2: {0x200000001, 2}, 3: {0x100000060, 1}, 4: {0x200000000, 2}, 5: {0x100000070, 1}}
	c := newCluster(t, voters, nil, locals, nil)
	c.start(voters...)
	require.True(t, c.runUntil(time.Second, c.allDecided(voters...)), c.trace())
	c.requireLeader(t, 2, 1, voters...)
	require.Equal(t, int64(2), c.nodes[3].Vote().PeerEpoch)
}

func TestTieIsBrokenByTheHighestSid(t *testing.T) {
	voters := []int64{1, 2, 3, 4, 5}
	c := newCluster(t, voters, nil, sameLocals(voters, 0x300000002, 3), nil)
	c.start(voters...)
	require.True(t, c.runUntil(time.Second, c.allDecided(voters...)), c.trace())
	c.requireLeader(t, 5, 1, voters...)
}

// A server restarted after the others moved through several rounds is in
// round 1: its vote is answered with the current round and it joins it.
func TestStaleRoundCatchesUp(t *testing.T) {
	voters := []int64{1, 2, 3}
	c := newCluster(t, voters, nil, sameLocals(voters, 5, 0), nil)
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
	c.restart(3, nil)
	require.True(t, c.runUntil(time.Second, c.allDecided(1, 3)), c.trace())
	c.requireLeader(t, 3, 5, 1, 3)
	require.Contains(t, c.trace(), "1 -> 3 LOOKING leader=1 zxid=0x5 round=5", "1 answered 3's round-1 vote with round 5")
}

// A server that starts after the ensemble has a leader hears FOLLOWING and
// LEADING answers and follows that leader in the leader's round.
func TestLateServerJoinsTheLeader(t *testing.T) {
	voters := []int64{1, 2, 3, 4, 5}
	c := newCluster(t, voters, nil, sameLocals(voters, 0x100000003, 1), nil)
	c.start(1, 2, 3, 4)
	c.start(1, 2, 3, 4) // they are in round 2
	require.True(t, c.runUntil(time.Second, c.allDecided(1, 2, 3, 4)), c.trace())
	c.requireLeader(t, 4, 2, 1, 2, 3, 4)

	c.locals[5] = local{zxid: 0x100000009, epoch: 1} // a better zxid does not matter any more
	c.start(5)
	require.True(t, c.runUntil(c.now+time.Second, c.allDecided(5)), c.trace())
	c.requireLeader(t, 4, 2, 5)
	require.Equal(t, int64(2), c.nodes[5].Round(), "it took the leader's round")
}

// FLE alone can elect two leaders in one round: a vote that reaches one
// server after its finalizeWait and another before. Here 2 decides on
// itself with 1's support, then 3's vote reaches 1, which moves on and,
// with 3, makes 3 leader as well. Both decisions had a quorum behind them
// ({1,2} and {1,3}) with 1 in both — ZAB's discovery, needing a quorum of
// followers for a new epoch, is what leaves one of them leading.
func TestSplitDecisionWhenAVoteIsLate(t *testing.T) {
	voters := []int64{1, 2, 3}
	c := newCluster(t, voters, nil, sameLocals(voters, 5, 0), nil)
	c.route = func(p packet) []time.Duration {
		switch {
		case p.from == 3 && p.to == 2, p.from == 1 && p.to == 2 && c.now >= 50*time.Millisecond:
			return []time.Duration{c.now + time.Second} // late, past 2's finalizeWait
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
}

// Observers learn the leader, and their notifications never make a quorum.
func TestObserversLearnTheLeaderAndDoNotVote(t *testing.T) {
	voters, observers := []int64{1, 2, 3}, []int64{4, 5}
	c := newCluster(t, voters, observers, sameLocals([]int64{1, 2, 3, 4, 5}, 7, 0), nil)
	c.down[1], c.down[2] = true, true
	c.start(3, 4, 5)
	c.runFor(10 * time.Second)
	require.Equal(t, wire.PeerLooking, c.nodes[3].State(), "3 with two observers has no quorum\n%s", c.trace())
	require.Equal(t, wire.PeerLooking, c.nodes[4].State())

	c.start(1)
	require.True(t, c.runUntil(c.now+time.Minute, c.allDecided(1, 3, 4, 5)), c.trace())
	c.requireLeader(t, 3, 1, 1, 3, 4, 5)
}

// The leader dies; ZAB notices and the survivors start a new round, which
// elects the best of them.
func TestDeadLeaderIsReplaced(t *testing.T) {
	voters := []int64{1, 2, 3}
	c := newCluster(t, voters, nil, map[int64]local{1: {0x100000004, 1}, 2: {0x100000003, 1}, 3: {0x100000004, 1}}, nil)
	c.start(voters...)
	require.True(t, c.runUntil(time.Second, c.allDecided(voters...)), c.trace())
	c.requireLeader(t, 3, 1, voters...)

	c.crash(3)
	c.locals[1], c.locals[2] = local{0x100000009, 1}, local{0x100000009, 1} // both synced more from 3
	c.start(1, 2)
	require.True(t, c.runUntil(c.now+time.Second, c.allDecided(1, 2)), c.trace())
	c.requireLeader(t, 2, 2, 1, 2)
}

// Every notification is lost for 2 seconds: each server resends at 200,
// 600 and 1400ms (doubling), and once the network heals the next resend,
// at 3000ms, brings the election to an end.
func TestLostNotificationsAreSentAgain(t *testing.T) {
	voters := []int64{1, 2, 3}
	c := newCluster(t, voters, nil, sameLocals(voters, 5, 0), nil)
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
	require.Equal(t, []time.Duration{0, 200 * ms, 600 * ms, 1400 * ms, 3000 * ms, 3010 * ms, 3010 * ms}, sendTimes,
		"start, three resends while lost, one after healing, then 2's and 3's votes adopted in turn\n%s", c.trace())
}
