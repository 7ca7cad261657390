package election

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
	"pgregory.net/rapid"
)

// One test per claim about Fast Leader Election, each naming where
// ZooKeeper 3.8.0 makes it (FastLeaderElection.java unless said otherwise).
// The servers here run ZooKeeper's fixed final wait (FixedFinalizeWait);
// finalize_test.go has the claims of the adaptive one.

const fw = DefaultFinalizeWait

func mustNew(t *testing.T, cfg Config) *Election {
	t.Helper()
	e, err := New(cfg)
	require.NoError(t, err)
	return e
}

// fiveSlowResend resends only after a second, so that a Wakeup finalizeWait
// away shows the final wait has begun.
func fiveSlowResend(t *testing.T, id int64) *Election {
	return mustNew(t, Config{ID: id, Voters: []int64{1, 2, 3, 4, 5}, MinNotificationInterval: time.Second, FixedFinalizeWait: true})
}

func three(t *testing.T, id int64) *Election {
	return mustNew(t, Config{ID: id, Voters: []int64{1, 2, 3}, QuorumConfig: []byte("cfg"), FixedFinalizeWait: true})
}

func note(state wire.PeerState, leader, zxid, round, peerEpoch int64) wire.Notification {
	return wire.Notification{State: state, Leader: leader, Zxid: zxid, ElectionEpoch: round, PeerEpoch: peerEpoch, Version: wire.NotificationVersion}
}

func looking(leader, zxid, round, peerEpoch int64) wire.Notification {
	return note(wire.PeerLooking, leader, zxid, round, peerEpoch)
}

// votesSent lists the (recipient, notification) pairs of a Ready, without
// the config bytes.
func votesSent(rd Ready) []Message {
	out := make([]Message, len(rd.Messages))
	for i, m := range rd.Messages {
		m.Notification.Config = nil
		out[i] = m
	}
	return out
}

func to(id int64, n wire.Notification) Message { return Message{To: id, Notification: n} }

// Reference: totalOrderPredicate — a vote wins on higher peerEpoch, then
// higher zxid, then higher server id.
func TestVoteOrderIsPeerEpochThenZxidThenSid(t *testing.T) {
	base := Vote{Leader: 2, Zxid: 0x100000005, PeerEpoch: 1}
	cases := []struct {
		name string
		v    Vote
		want bool
	}{
		{"higher peerEpoch beats higher zxid and sid", Vote{Leader: 1, Zxid: 0x1, PeerEpoch: 2}, true},
		{"lower peerEpoch loses to anything", Vote{Leader: 3, Zxid: 0x900000000, PeerEpoch: 0}, false},
		{"same epoch, higher zxid wins", Vote{Leader: 1, Zxid: 0x100000006, PeerEpoch: 1}, true},
		{"same epoch and zxid, higher sid wins", Vote{Leader: 3, Zxid: 0x100000005, PeerEpoch: 1}, true},
		{"same epoch and zxid, lower sid loses", Vote{Leader: 1, Zxid: 0x100000005, PeerEpoch: 1}, false},
		{"a vote does not beat itself", base, false},
		{"the round is not part of the order", Vote{Leader: 2, Zxid: 0x100000005, PeerEpoch: 1, ElectionEpoch: 9}, false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, tc.v.Beats(base), tc.name)
	}
}

// Reference: ZOOKEEPER-1419 — the predicate must be a strict total order
// on (peerEpoch, zxid, sid), or servers can switch between two votes that
// each beat the other and never settle: irreflexive, transitive, and of two
// different votes exactly one wins. The round plays no part.
func TestPropertyVoteOrderIsStrictAndTotal(t *testing.T) {
	small := func(t *rapid.T, name string) Vote {
		return Vote{
			Leader:        rapid.Int64Range(1, 3).Draw(t, name+"Sid"),
			Zxid:          rapid.Int64Range(0, 2).Draw(t, name+"Zxid"),
			PeerEpoch:     rapid.Int64Range(0, 2).Draw(t, name+"Epoch"),
			ElectionEpoch: rapid.Int64Range(0, 2).Draw(t, name+"Round"),
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		a, b, c := small(t, "a"), small(t, "b"), small(t, "c")
		require.False(t, a.Beats(a))
		if a.Beats(b) && b.Beats(c) {
			require.True(t, a.Beats(c), "%v > %v > %v", a, b, c)
		}
		same := a.Leader == b.Leader && a.Zxid == b.Zxid && a.PeerEpoch == b.PeerEpoch
		require.Equal(t, !same, a.Beats(b) != b.Beats(a), "%v vs %v", a, b)
	})
}

// Reference: lookForLeader — logicalclock.incrementAndGet, updateProposal(
// getInitId, getInitLastLoggedZxid, getPeerEpoch), sendNotifications to
// every voter (buildMsg: version 2 and the config).
func TestStartProposesItselfToEveryVoter(t *testing.T) {
	e := mustNew(t, Config{ID: 2, Voters: []int64{3, 1, 2}, Observers: []int64{4}, QuorumConfig: []byte("server.1=...")})
	e.Start(0, 0x100000007, 1)
	rd := e.Ready()
	want := looking(2, 0x100000007, 1, 1)
	want.Config = []byte("server.1=...")
	require.Equal(t, []Message{to(1, want), to(3, want)}, rd.Messages, "to voters in ascending id, not to itself or observers")
	require.Equal(t, int64(1), e.Round())
	require.Equal(t, wire.PeerLooking, e.State())
	require.Equal(t, Vote{Leader: 2, Zxid: 0x100000007, ElectionEpoch: 1, PeerEpoch: 1}, e.Vote())
	require.Equal(t, fw, rd.Wakeup, "first resend after minNotificationInterval = finalizeWait")

	e.Start(time.Second, 0x100000009, 1)
	require.Equal(t, int64(2), e.Round(), "every new election is a new round")
}

// Reference: lookForLeader, LOOKING case — a better vote in our round is
// adopted and sent to every voter; a worse one is only recorded.
func TestBetterVoteInOurRoundIsAdoptedAndSent(t *testing.T) {
	e := three(t, 1)
	e.Start(0, 5, 0)
	e.Ready()

	e.Step(10, 2, looking(2, 5, 1, 0))
	require.Equal(t, []Message{to(2, looking(2, 5, 1, 0)), to(3, looking(2, 5, 1, 0))}, votesSent(e.Ready()))
	require.Equal(t, int64(2), e.Vote().Leader)

	e.Step(20, 3, looking(3, 4, 1, 0)) // higher sid but lower zxid: worse
	require.Empty(t, e.Ready().Messages)
	require.Equal(t, int64(2), e.Vote().Leader)
}

// Reference: lookForLeader, LOOKING case, n.electionEpoch > logicalclock —
// join the round, clear recvset, propose the better of the sender's vote and
// our own initial vote, and send it.
func TestHigherRoundIsJoinedWithVotesForgotten(t *testing.T) {
	e := fiveSlowResend(t, 1)
	e.Start(0, 9, 0)
	e.Step(1, 2, looking(1, 9, 1, 0)) // 2 agrees with us in round 1: 2 of 5
	e.Ready()

	e.Step(2, 3, looking(3, 4, 7, 0)) // round 7, worse vote: we propose our initial vote in round 7
	require.Equal(t, int64(7), e.Round())
	require.Equal(t, []Message{to(2, looking(1, 9, 7, 0)), to(3, looking(1, 9, 7, 0)), to(4, looking(1, 9, 7, 0)), to(5, looking(1, 9, 7, 0))}, votesSent(e.Ready()))

	// Round 1's vote from 2 was forgotten: 4 and 5 agreeing make 3 of 5
	// only with us, not 4 with 2.
	e.Step(3, 4, looking(1, 9, 7, 0))
	rd := e.Ready()
	require.Equal(t, 3+time.Second, rd.Wakeup, "no quorum yet: the resend timer, not the final wait")
	e.Step(4, 5, looking(1, 9, 7, 0))
	require.Equal(t, 4+fw, e.Ready().Wakeup, "us, 4 and 5 are a quorum: final wait")

	// Joining a round with a better vote than ours adopts it.
	f := three(t, 1)
	f.Start(0, 9, 0)
	f.Step(1, 3, looking(3, 10, 4, 0))
	require.Equal(t, Vote{Leader: 3, Zxid: 10, ElectionEpoch: 4}, f.Vote())
}

// Reference: WorkerReceiver.run — a LOOKING voter in an older round is sent
// our current vote at once; lookForLeader does not count its vote.
func TestOlderRoundIsAnsweredAndNotCounted(t *testing.T) {
	e := fiveSlowResend(t, 1)
	e.Start(0, 5, 0)
	e.Step(1, 2, looking(3, 9, 3, 0)) // jump to round 3, adopt 3: 1 and 2 agree
	e.Ready()
	e.Step(2, 3, looking(3, 9, 2, 0)) // 3 votes like us, but in round 2
	rd := e.Ready()
	require.Equal(t, []Message{to(3, looking(3, 9, 3, 0))}, votesSent(rd))
	require.Equal(t, 2+time.Second, rd.Wakeup, "3's round-2 vote is not counted: no quorum, no final wait")
	e.Step(3, 4, looking(3, 9, 3, 0))
	require.Equal(t, 3+fw, e.Ready().Wakeup, "1, 2 and 4 in round 3 are a quorum")
}

// Deliberate difference from WorkerReceiver.run: an observer does not
// answer a voter's vote of an older round, since the voter would only answer
// back (it never counts an observer's vote) and the two would loop.
func TestObserverDoesNotAnswerOlderRounds(t *testing.T) {
	e := mustNew(t, Config{ID: 4, Voters: []int64{1, 2, 3}, Observers: []int64{4}})
	e.Start(0, 0, 0)
	e.Step(1, 1, looking(3, 5, 6, 0)) // the observer joins round 6
	e.Ready()
	e.Step(2, 2, looking(2, 5, 4, 0))
	require.Empty(t, e.Ready().Messages)
}

// Reference: lookForLeader — once voteSet.hasAllQuorums for our proposal,
// poll for finalizeWait; with nothing better, setPeerState and return.
func TestQuorumThenFinalizeWaitThenDecide(t *testing.T) {
	e := three(t, 3)
	e.Start(0, 5, 0)
	e.Ready()
	e.Step(100, 1, looking(3, 5, 1, 0))
	rd := e.Ready()
	require.Equal(t, 100+fw, rd.Wakeup)
	e.Tick(100 + fw - 1)
	require.Nil(t, e.Ready().Decision, "not before finalizeWait has passed")
	e.Tick(100 + fw)
	rd = e.Ready()
	require.Equal(t, &Decision{State: wire.PeerLeading, Vote: Vote{Leader: 3, Zxid: 5, ElectionEpoch: 1}}, rd.Decision)
	require.Zero(t, rd.Wakeup, "no timers once decided")
	require.Equal(t, wire.PeerLeading, e.State())
}

// Reference: lookForLeader, the finalizeWait loop — a better vote ends the
// wait and is handled like any other.
func TestBetterVoteDuringFinalizeWaitIsAdopted(t *testing.T) {
	e := three(t, 2)
	e.Start(0, 5, 0)
	e.Step(1, 1, looking(2, 5, 1, 0))
	e.Ready()
	e.Step(50, 3, looking(3, 5, 1, 0))
	rd := e.Ready()
	require.Equal(t, []Message{to(1, looking(3, 5, 1, 0)), to(3, looking(3, 5, 1, 0))}, votesSent(rd))
	require.Equal(t, 50+fw, rd.Wakeup, "us and 3 agree on 3: a new final wait")
	e.Tick(50 + fw)
	require.Equal(t, &Decision{State: wire.PeerFollowing, Vote: Vote{Leader: 3, Zxid: 5, ElectionEpoch: 1}}, e.Ready().Decision)
}

// Reference: lookForLeader, the finalizeWait loop — a vote that is not
// better is taken off the queue and dropped, and the wait starts again.
func TestWorseVoteDuringFinalizeWaitIsDroppedAndWaitRestarts(t *testing.T) {
	e := three(t, 3)
	e.Start(0, 5, 0)
	e.Step(1, 2, looking(3, 5, 1, 0))
	e.Ready()
	e.Step(150, 1, looking(1, 5, 1, 0))
	rd := e.Ready()
	require.Empty(t, rd.Messages)
	require.Equal(t, 150+fw, rd.Wakeup)
	e.Tick(1 + fw)
	require.Nil(t, e.Ready().Decision)
	e.Tick(150 + fw)
	rd = e.Ready()
	require.NotNil(t, rd.Decision)
	require.Empty(t, rd.Messages, "nobody is told on deciding")
}

// Reference: lookForLeader — when poll(notTimeout) returns nothing,
// sendNotifications again and double notTimeout up to
// maxNotificationInterval; an arriving notification restarts the wait but
// keeps the interval.
func TestNotificationIntervalDoublesToMax(t *testing.T) {
	e := mustNew(t, Config{ID: 1, Voters: []int64{1, 2, 3}, MaxNotificationInterval: 1500 * time.Millisecond})
	e.Start(0, 5, 0)
	rd := e.Ready()
	var resends []time.Duration
	for range 6 {
		now := rd.Wakeup
		e.Tick(now - 1)
		require.Empty(t, e.Ready().Messages, "nothing before the interval is up")
		e.Tick(now)
		rd = e.Ready()
		require.Len(t, rd.Messages, 2, "the vote goes to both other voters again")
		resends = append(resends, now)
	}
	ms := time.Millisecond
	require.Equal(t, []time.Duration{200 * ms, 600 * ms, 1400 * ms, 2900 * ms, 4400 * ms, 5900 * ms}, resends)

	e.Step(6000*ms, 2, looking(2, 4, 1, 0)) // a worse vote: no quorum, but it restarts the wait, at the capped interval
	require.Equal(t, 7500*ms, e.Ready().Wakeup)
}

// Reference: WorkerReceiver.run, not LOOKING — a LOOKING voter is sent
// our current vote with our state and its round; other notifications are
// ignored.
func TestDecidedServerAnswersLookingVoters(t *testing.T) {
	e := three(t, 3)
	e.Start(0, 5, 0)
	e.Step(1, 2, looking(3, 5, 1, 0))
	e.Tick(1 + fw)
	e.Ready()

	e.Step(500, 1, looking(1, 2, 4, 0))
	require.Equal(t, []Message{to(1, note(wire.PeerLeading, 3, 5, 1, 0))}, votesSent(e.Ready()))
	e.Step(501, 1, note(wire.PeerFollowing, 2, 5, 1, 0))
	require.Empty(t, e.Ready().Messages)
	require.Equal(t, wire.PeerLeading, e.State())
}

// Reference: receivedFollowingNotification and checkLeader — claims of a
// quorum are followed only once the leader they name itself claims
// LEADING.
func TestFollowingNeedsQuorumAndLeaderSayingLeading(t *testing.T) {
	e := mustNew(t, Config{ID: 1, Voters: []int64{1, 2, 3, 4, 5}})
	e.Start(0, 5, 0)
	e.Step(1, 2, note(wire.PeerFollowing, 4, 9, 1, 2))
	e.Step(2, 3, note(wire.PeerFollowing, 4, 9, 1, 2))
	e.Step(3, 5, note(wire.PeerFollowing, 4, 9, 1, 2))
	require.Equal(t, wire.PeerLooking, e.State(), "three of five follow 4, but 4 has not said it leads")
	e.Step(4, 4, note(wire.PeerLeading, 4, 9, 1, 2))
	require.Equal(t, wire.PeerFollowing, e.State())
	require.Equal(t, &Decision{State: wire.PeerFollowing, Vote: Vote{Leader: 4, Zxid: 9, ElectionEpoch: 1, PeerEpoch: 2}}, e.Ready().Decision)
}

// Reference: receivedFollowingNotification, outofelection — claims from
// another round count too; deciding on them sets logicalclock to their
// round.
func TestClaimsFromAnotherRoundAreFollowed(t *testing.T) {
	e := three(t, 1)
	e.Start(0, 5, 0) // round 1; the others decided in round 6
	e.Step(1, 3, note(wire.PeerLeading, 3, 7, 6, 1))
	require.Equal(t, wire.PeerLooking, e.State(), "one claim of three is no quorum")
	e.Step(2, 2, note(wire.PeerFollowing, 3, 7, 6, 1))
	require.Equal(t, wire.PeerFollowing, e.State())
	require.Equal(t, int64(6), e.Round())
	require.Equal(t, Vote{Leader: 3, Zxid: 7, ElectionEpoch: 6, PeerEpoch: 1}, e.Vote())
}

// Reference: checkLeader — when the claims name us as leader, we lead only
// if they are of our round.
func TestClaimsNamingUsMustBeOfOurRound(t *testing.T) {
	e := three(t, 1)
	e.Start(0, 5, 0)
	e.Step(1, 2, note(wire.PeerFollowing, 1, 5, 4, 0))
	e.Step(2, 3, note(wire.PeerFollowing, 1, 5, 4, 0))
	require.Equal(t, wire.PeerLooking, e.State(), "a quorum says we lead, but in round 4, not ours (1)")

	f := three(t, 1)
	f.Start(0, 5, 0)
	f.Step(1, 2, note(wire.PeerFollowing, 1, 5, 1, 0))
	require.Equal(t, wire.PeerLeading, f.State(), "2 following us in our round, with our own vote, is a quorum")
}

// Reference: WorkerReceiver.run, !validVoter(response.sid) — a LOOKING
// non-voter is answered with our vote, our state and our round, and its
// vote never reaches the count.
func TestNonVoterIsAnsweredAndNeverCounted(t *testing.T) {
	e := mustNew(t, Config{ID: 1, Voters: []int64{1, 2, 3}, Observers: []int64{4, 5}})
	e.Start(0, 5, 0)
	e.Ready()
	e.Step(1, 4, looking(1, 5, 1, 0))
	e.Step(2, 5, looking(1, 5, 1, 0))
	require.Equal(t, []Message{to(4, looking(1, 5, 1, 0)), to(5, looking(1, 5, 1, 0))}, votesSent(e.Ready()))
	e.Tick(2 + fw)
	require.Equal(t, wire.PeerLooking, e.State(), "two observers agreeing with us are no quorum")
}

// Deliberate difference from WorkerReceiver.run: a non-voter that is not
// LOOKING is not answered (it has nothing to learn, and an OBSERVING
// observer answers a LOOKING voter, which would answer back, and so on).
func TestNonLookingObserverIsNotAnswered(t *testing.T) {
	e := mustNew(t, Config{ID: 1, Voters: []int64{1, 2, 3}, Observers: []int64{4}})
	e.Start(0, 5, 0)
	e.Ready()
	e.Step(1, 4, note(wire.PeerObserving, 3, 5, 1, 0))
	require.Empty(t, e.Ready().Messages)
}

// Reference: getInitId, getInitLastLoggedZxid, getPeerEpoch and
// learningState — an observer proposes nobody (Long.MIN_VALUE), learns the
// voters' choice and decides OBSERVING.
func TestObserverProposesNobodyAndObserves(t *testing.T) {
	e := mustNew(t, Config{ID: 4, Voters: []int64{1, 2, 3}, Observers: []int64{4}})
	e.Start(0, 5, 0)
	require.Equal(t, []Message{to(1, looking(math.MinInt64, math.MinInt64, 1, math.MinInt64)), to(2, looking(math.MinInt64, math.MinInt64, 1, math.MinInt64)), to(3, looking(math.MinInt64, math.MinInt64, 1, math.MinInt64))}, votesSent(e.Ready()))
	e.Step(1, 3, note(wire.PeerLeading, 3, 5, 1, 0))
	e.Step(2, 1, note(wire.PeerFollowing, 3, 5, 1, 0))
	require.Equal(t, &Decision{State: wire.PeerObserving, Vote: Vote{Leader: 3, Zxid: 5, ElectionEpoch: 1}}, e.Ready().Decision)
}

// Reference: lookForLeader, validVoter(n.leader) — a vote for a server
// that is not a voter is ignored.
func TestVoteForNonVoterIsIgnored(t *testing.T) {
	e := mustNew(t, Config{ID: 1, Voters: []int64{1, 2, 3}, Observers: []int64{9}})
	e.Start(0, 5, 0)
	e.Ready()
	e.Step(1, 2, looking(9, 100, 1, 5))
	require.Empty(t, e.Ready().Messages)
	require.Equal(t, int64(1), e.Vote().Leader)
}

// Reference: WorkerReceiver.run — a state other than the four is dropped;
// lookForLeader — with our zxid or the sender's at -1, LOOKING votes are
// ignored.
func TestUnknownStateAndMinusOneZxidAreIgnored(t *testing.T) {
	e := three(t, 1)
	e.Start(0, 5, 0)
	e.Ready()
	e.Step(1, 2, note(wire.PeerState(7), 3, 9, 1, 0))
	e.Step(2, 3, looking(3, -1, 1, 0))
	require.Empty(t, e.Ready().Messages)
	require.Equal(t, int64(1), e.Vote().Leader)

	f := three(t, 1)
	f.Start(0, -1, 0)
	f.Ready()
	f.Step(1, 2, looking(3, 9, 1, 0))
	require.Empty(t, f.Ready().Messages)
	require.Equal(t, int64(1), f.Vote().Leader)
}

// Reference: Vote.equals — all fields while either side is LOOKING; leader
// and peerEpoch between decided servers; the leader alone when only one
// side's notification carries a version (ZOOKEEPER-1732, -1805).
func TestVoteEqualityFollowsZooKeeper(t *testing.T) {
	v := Vote{Leader: 3, Zxid: 9, ElectionEpoch: 2, PeerEpoch: 1}
	moved := Vote{Leader: 3, Zxid: 12, ElectionEpoch: 5, PeerEpoch: 1}
	newEpoch := Vote{Leader: 3, Zxid: 9, ElectionEpoch: 2, PeerEpoch: 2}
	fol, lead, look := wire.PeerFollowing, wire.PeerLeading, wire.PeerLooking
	cases := []struct {
		name string
		a, b ballot
		want bool
	}{
		{"looking: same vote", ballot{v, look, 2}, ballot{v, fol, 2}, true},
		{"looking: zxid differs", ballot{v, look, 2}, ballot{moved, fol, 2}, false},
		{"decided: zxid and round may differ", ballot{v, fol, 2}, ballot{moved, lead, 2}, true},
		{"decided: peerEpoch must match", ballot{v, fol, 2}, ballot{newEpoch, lead, 2}, false},
		{"decided, one unversioned: leader alone", ballot{v, fol, 0}, ballot{newEpoch, lead, 2}, true},
		{"decided, both unversioned: peerEpoch must match", ballot{v, fol, 0}, ballot{newEpoch, lead, 0}, false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, tc.a.agrees(tc.b), tc.name)
		require.Equal(t, tc.want, tc.b.agrees(tc.a), tc.name+" (symmetric)")
	}
}

// Reference: QuorumPeer.updateElectionVote — after discovery the vote
// answered to LOOKING servers carries the new epoch.
func TestAnnouncedVoteIsWhatLookingServersHear(t *testing.T) {
	e := three(t, 2)
	e.Start(0, 5, 0)
	e.Step(1, 3, looking(3, 5, 1, 0))
	e.Tick(1 + fw)
	require.Equal(t, wire.PeerFollowing, e.State())
	require.NoError(t, e.Announce(wire.PeerFollowing, Vote{Leader: 3, Zxid: 5, ElectionEpoch: 1, PeerEpoch: 1}))
	e.Ready()
	e.Step(400, 1, looking(1, 5, 2, 0))
	require.Equal(t, []Message{to(1, note(wire.PeerFollowing, 3, 5, 1, 1))}, votesSent(e.Ready()))

	require.Error(t, e.Announce(wire.PeerLooking, Vote{Leader: 3}), "LOOKING is Start's business")
	require.Error(t, e.Announce(wire.PeerLeading, Vote{Leader: 3}), "2 cannot lead with 3 as leader")
	require.Error(t, e.Announce(wire.PeerObserving, Vote{Leader: 3}), "a voter does not observe")
}

// Reference: totalOrderPredicate — a server of weight 0 is never adopted as
// leader; the QuorumVerifier (here QuorumHierarchical's) decides what a
// quorum is, and a weight-0 voter's agreement adds nothing to it.
func TestQuorumVerifierDecidesWeightsAndQuorums(t *testing.T) {
	weighted, err := NewHierarchical([][]int64{{1, 2, 3}}, map[int64]int64{1: 1, 2: 3, 3: 0})
	require.NoError(t, err)
	e := mustNew(t, Config{ID: 1, Voters: []int64{1, 2, 3}, Quorum: weighted, FixedFinalizeWait: true})
	e.Start(0, 5, 0)
	e.Step(1, 3, looking(3, 9, 1, 0))
	require.Equal(t, int64(1), e.Vote().Leader, "3 weighs 0: never a leader however good its zxid")
	e.Step(2, 3, looking(1, 5, 1, 0))
	require.Equal(t, 2+time.Duration(fw), e.Ready().Wakeup, "1 and 3 agree, but weigh 1 of 4: no quorum, no final wait (the resend timer)")
	e.Step(3, 2, looking(2, 5, 1, 0))
	e.Ready()
	e.Step(4, 3, looking(2, 5, 1, 0))
	require.Equal(t, 4+fw, e.Ready().Wakeup, "2 alone weighs 3 of 4 and agrees: final wait")
}

func mustHierarchical(t *testing.T, groups [][]int64, weights map[int64]int64) Hierarchical {
	t.Helper()
	h, err := NewHierarchical(groups, weights)
	require.NoError(t, err)
	return h
}

func TestConfigIsChecked(t *testing.T) {
	bad := []Config{
		{ID: 1},
		{ID: 1, Voters: []int64{1, 1}},
		{ID: 4, Voters: []int64{1, 2, 3}},
		{ID: 1, Voters: []int64{1, 2}, Observers: []int64{2}},
		{ID: 1, Voters: []int64{1, 2}, Quorum: mustHierarchical(t, [][]int64{{1, 2, 3}}, nil)},
		{ID: 1, Voters: []int64{1}, MinNotificationInterval: time.Minute, MaxNotificationInterval: time.Second},
	}
	for _, cfg := range bad {
		_, err := New(cfg)
		require.Error(t, err, "%+v", cfg)
	}
}
