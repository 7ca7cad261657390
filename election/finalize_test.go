package election

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
)

// The adaptive final wait (the default; Config.FixedFinalizeWait restores
// ZooKeeper's), one test per claim. ZooKeeper's own final wait is tested in
// election_paper_test.go (TestQuorumThenFinalizeWaitThenDecide and after;
// TestWorseVoteDuringFinalizeWaitIsDroppedAndWaitRestarts has the inputs of
// TestEveryVoterHeardAndNoneBetterDecidesAtOnce).

// probe is the adaptive wait's first resend to the voters still silent.
const probe = fw / 8

func adaptive(t *testing.T, id int64, voters ...int64) *Election {
	return mustNew(t, Config{ID: id, Voters: voters, MinNotificationInterval: time.Second})
}

// Reference: issue 11, item 3 — "decide at once when every voter has
// agreed". 3 holds the best vote; with 2's agreement it has a quorum but 1
// is unheard, so it waits; 1's vote for 3 makes the round unanimous and 3
// leads at once, with nobody left to tell.
func TestUnanimousRoundDecidesAtOnce(t *testing.T) {
	e := adaptive(t, 3, 1, 2, 3)
	e.Start(0, 5, 0)
	e.Ready()
	e.Step(10, 2, looking(3, 5, 1, 0))
	rd := e.Ready()
	require.Nil(t, rd.Decision)
	require.Equal(t, 10+probe, rd.Wakeup, "1 is unheard: wait (at most finalizeWait), asking it again first")
	e.Step(20, 1, looking(3, 5, 1, 0))
	rd = e.Ready()
	require.Equal(t, &Decision{State: wire.PeerLeading, Vote: Vote{Leader: 3, Zxid: 5, ElectionEpoch: 1}}, rd.Decision)
	require.Empty(t, rd.Messages, "everyone votes for 3: no one to tell")
	require.Zero(t, rd.Wakeup)
}

// Reference: issue 11, item 3 — "wait only while a better vote could still
// arrive". A voter's votes in a round only improve, from its own initial
// vote; once every voter is heard with nothing better than ours, no better
// vote exists. 1's vote for itself (worse) is the last one missing: 3
// decides at once, and tells 1, which is still LOOKING for itself, that it
// leads.
func TestEveryVoterHeardAndNoneBetterDecidesAtOnce(t *testing.T) {
	e := adaptive(t, 3, 1, 2, 3)
	e.Start(0, 5, 0)
	e.Step(10, 2, looking(3, 5, 1, 0))
	e.Ready()
	e.Step(20, 1, looking(1, 5, 1, 0))
	rd := e.Ready()
	require.Equal(t, &Decision{State: wire.PeerLeading, Vote: Vote{Leader: 3, Zxid: 5, ElectionEpoch: 1}}, rd.Decision)
	require.Equal(t, []Message{to(1, note(wire.PeerLeading, 3, 5, 1, 0))}, votesSent(rd))

	// The same before the quorum: all heard first, then the quorum forms.
	f := adaptive(t, 2, 1, 2, 3)
	f.Start(0, 5, 0)
	f.Ready()
	f.Step(10, 1, looking(1, 5, 1, 0))
	f.Step(11, 3, looking(3, 5, 1, 0)) // better: adopted, and the quorum is 2 and 3
	rd = f.Ready()
	require.Equal(t, &Decision{State: wire.PeerFollowing, Vote: Vote{Leader: 3, Zxid: 5, ElectionEpoch: 1}}, rd.Decision)
	require.Equal(t, []Message{to(1, looking(3, 5, 1, 0)), to(3, looking(3, 5, 1, 0)), to(1, note(wire.PeerFollowing, 3, 5, 1, 0))}, votesSent(rd),
		"its new vote goes out, then its decision to 1, last heard voting for itself")
}

// Reference: issue 11, item 3 — FinalizeWait stays the bound while a voter
// is silent; unlike ZooKeeper's wait
// (TestWorseVoteDuringFinalizeWaitIsDroppedAndWaitRestarts), notifications
// that are not better do not push the decision back. Meanwhile the silent
// voter is sent the vote again, FinalizeWait/8 after the quorum formed and
// then twice as long each time: only it, and never past the bound.
func TestSilentVoterBoundsTheWait(t *testing.T) {
	e := adaptive(t, 5, 1, 2, 3, 4, 5)
	e.Start(0, 5, 0)
	e.Step(50, 1, looking(5, 5, 1, 0))
	e.Step(100, 2, looking(5, 5, 1, 0))
	require.Equal(t, 100+probe, e.Ready().Wakeup, "a quorum at 100: ask the silent voters again at 100+finalizeWait/8")
	e.Step(110, 3, looking(3, 5, 1, 0))
	rd := e.Ready()
	require.Empty(t, rd.Messages)
	require.Equal(t, 100+probe, rd.Wakeup, "3 heard, 4 silent")
	for _, at := range []time.Duration{100 + probe, 100 + 3*probe, 100 + 7*probe} {
		e.Tick(at)
		rd = e.Ready()
		require.Nil(t, rd.Decision)
		require.Equal(t, []Message{to(4, looking(5, 5, 1, 0))}, votesSent(rd), "at %v only 4, still silent, is asked again", at)
	}
	require.Equal(t, 100+fw, rd.Wakeup, "the next probe would fall after the bound")
	e.Tick(100 + fw - 1)
	rd = e.Ready()
	require.Nil(t, rd.Decision)
	require.Empty(t, rd.Messages)
	e.Tick(100 + fw)
	rd = e.Ready()
	require.Equal(t, &Decision{State: wire.PeerLeading, Vote: Vote{Leader: 5, Zxid: 5, ElectionEpoch: 1}}, rd.Decision)
	require.Equal(t, []Message{to(3, note(wire.PeerLeading, 5, 5, 1, 0))}, votesSent(rd), "3, heard voting for itself, is told")
}

// Reference: FastLeaderElection.lookForLeader, the finalizeWait loop — a
// better vote ends the wait under the adaptive rule too.
func TestBetterVoteEndsTheAdaptiveWait(t *testing.T) {
	e := adaptive(t, 1, 1, 2, 3, 4, 5)
	e.Start(0, 5, 0)
	e.Step(10, 2, looking(1, 5, 1, 0))
	e.Step(20, 3, looking(1, 5, 1, 0))
	require.Equal(t, 20+probe, e.Ready().Wakeup)
	e.Step(30, 4, looking(4, 6, 1, 0))
	rd := e.Ready()
	require.Nil(t, rd.Decision)
	require.Len(t, rd.Messages, 4, "4's better vote adopted and sent to every voter")
	require.Equal(t, 30+time.Second, rd.Wakeup, "only 1 and 4 vote for 4: no quorum, no final wait")
}

// Reference: issue 11, item 3 — nothing better may be known. A
// FOLLOWING claim of this round for a better vote is recorded (it is not
// adopted: FLE adopts LOOKING votes only), so though every voter is heard
// the server waits out the bound rather than decide against it.
func TestBetterClaimOfTheRoundKeepsTheWait(t *testing.T) {
	e := adaptive(t, 1, 1, 2, 3)
	e.Start(0, 5, 0)
	e.Step(10, 3, note(wire.PeerFollowing, 2, 9, 1, 0))
	e.Step(20, 2, looking(1, 5, 1, 0))
	rd := e.Ready()
	require.Nil(t, rd.Decision)
	require.Equal(t, 20+probe, rd.Wakeup)
	e.Tick(20 + probe)
	require.Empty(t, e.Ready().Messages, "every voter is heard: no one to ask again")
	e.Tick(20 + fw)
	require.NotNil(t, e.Ready().Decision)
}

// Reference: FastLeaderElection.totalOrderPredicate (a weight-0 server is
// never preferred) and issue 11, item 3. A voter of weight 0 can never
// bring a better vote, so it is not waited for: 1, 2 and 3 decide without
// hearing 4.
func TestWeightZeroVoterIsNotWaitedFor(t *testing.T) {
	e := mustNew(t, Config{ID: 3, Voters: []int64{1, 2, 3, 4}, Quorum: weightZeroForFour(t), MinNotificationInterval: time.Second})
	e.Start(0, 5, 0)
	e.Step(10, 1, looking(1, 5, 1, 0))
	e.Step(20, 2, looking(3, 5, 1, 0))
	require.Equal(t, &Decision{State: wire.PeerLeading, Vote: Vote{Leader: 3, Zxid: 5, ElectionEpoch: 1}}, e.Ready().Decision)
}

// Reference: FastLeaderElection.lookForLeader — a vote of an older round
// is not counted, so it does not count as hearing its sender either: it
// will vote again in our round once it has our answer.
func TestOlderRoundVoteIsNotHeard(t *testing.T) {
	e := adaptive(t, 1, 1, 2, 3)
	e.Start(0, 5, 0)
	e.Step(1, 2, looking(1, 5, 3, 0)) // join round 3; 2 agrees: a quorum
	e.Ready()
	e.Step(2, 3, looking(3, 4, 2, 0)) // round 2: answered only
	rd := e.Ready()
	require.Nil(t, rd.Decision)
	require.Equal(t, []Message{to(3, looking(1, 5, 3, 0))}, votesSent(rd))
	e.Step(3, 3, looking(1, 5, 3, 0))
	require.NotNil(t, e.Ready().Decision, "3 in round 3: all heard")
}

// Reference: the failover aim (docs/benchmarks.md) — a voter whose process
// is gone cannot bring a better vote. 3 holds the best vote with 2's
// agreement; 1's dial was refused, so 3 decides at once rather than wait
// out finalizeWait for 1. A notification from 1 makes it reachable again,
// and in the next round 3 waits for it as before; FixedFinalizeWait never
// looks at reachability.
func TestUnreachableVoterIsNotWaitedFor(t *testing.T) {
	e := adaptive(t, 3, 1, 2, 3)
	e.Start(0, 5, 0)
	e.Ready()
	e.SetUnreachable(1)
	e.Step(10, 2, looking(3, 5, 1, 0))
	rd := e.Ready()
	require.Equal(t, &Decision{State: wire.PeerLeading, Vote: Vote{Leader: 3, Zxid: 5, ElectionEpoch: 1}}, rd.Decision)

	// Unreachable while already waiting: the wait ends then.
	f := adaptive(t, 3, 1, 2, 3)
	f.Start(0, 5, 0)
	f.Step(10, 2, looking(3, 5, 1, 0))
	require.Equal(t, 10+probe, f.Ready().Wakeup)
	f.SetUnreachable(1)
	require.NotNil(t, f.Ready().Decision)

	// Heard from again: waited for again.
	g := adaptive(t, 3, 1, 2, 3)
	g.Start(0, 5, 0)
	g.SetUnreachable(1)
	g.Step(5, 1, looking(1, 4, 0, 0)) // an older round's vote: not counted, but 1 is alive
	g.Ready()
	g.Step(10, 2, looking(3, 5, 1, 0))
	rd = g.Ready()
	require.Nil(t, rd.Decision)
	require.Equal(t, 10+probe, rd.Wakeup)

	// A new round forgets it: 1 may have restarted since, and the round's
	// first vote to it is refused again if not (hunt seed 72310).
	n := adaptive(t, 3, 1, 2, 3)
	n.Start(0, 5, 0)
	n.SetUnreachable(1)
	n.Start(1, 5, 0)
	n.Step(10, 2, looking(3, 5, 2, 0))
	rd = n.Ready()
	require.Nil(t, rd.Decision, "1 is waited for in the new round")
	require.Equal(t, 10+probe, rd.Wakeup)

	// ZooKeeper's own wait ignores it.
	z := mustNew(t, Config{ID: 3, Voters: []int64{1, 2, 3}, FixedFinalizeWait: true, MinNotificationInterval: time.Second})
	z.Start(0, 5, 0)
	z.SetUnreachable(1)
	z.Step(10, 2, looking(3, 5, 1, 0))
	rd = z.Ready()
	require.Nil(t, rd.Decision)
	require.Equal(t, 10+fw, rd.Wakeup, "and asks no one again")

	// Neither itself nor a non-voter is ever unreachable.
	h := adaptive(t, 3, 1, 2, 3)
	h.SetUnreachable(3)
	h.SetUnreachable(9)
	require.Empty(t, h.unreachable)
}

// Reference: the failover aim (docs/benchmarks.md). The survivor that sees
// the leader fail first starts the next round and sends its vote to a
// member still FOLLOWING, which answers with its old decision. When that
// member starts looking in turn, the vote it was sent counts in its new
// round, as if it had just arrived: with the dead leader unreachable, it
// decides at once instead of waiting a notification interval for the vote
// to be sent again. A LOOKING vote of the round it decided in, or of an
// older one, is only answered, never kept, and one older than FinalizeWait
// is forgotten.
func TestEarlyVoteOfTheNextRoundCounts(t *testing.T) {
	// 1 follows 3, decided in round 1 with 2.
	following := func() *Election {
		e := adaptive(t, 1, 1, 2, 3)
		e.Start(0, 5, 0)
		e.Step(1, 3, looking(3, 5, 1, 0))
		e.Step(2, 2, looking(3, 5, 1, 0))
		require.Equal(t, &Decision{State: wire.PeerFollowing, Vote: Vote{Leader: 3, Zxid: 5, ElectionEpoch: 1}}, e.Ready().Decision)
		return e
	}
	e := following()
	e.Step(10, 2, looking(2, 5, 1, 0)) // the decided round: answered only
	e.Step(11, 2, looking(2, 6, 2, 0)) // the next round, begun at 2
	rd := e.Ready()
	require.Equal(t, []Message{to(2, note(wire.PeerFollowing, 3, 5, 1, 0)), to(2, note(wire.PeerFollowing, 3, 5, 1, 0))}, votesSent(rd),
		"a FOLLOWING member answers LOOKING votes with its decision")
	e.Start(20, 5, 0)
	require.Nil(t, e.Ready().Decision, "2's early vote counts: 1 and 2 are a quorum for 2, and 3 may yet answer")
	e.SetUnreachable(3) // the round's first vote to 3 is refused: its process is gone
	rd = e.Ready()
	require.Equal(t, &Decision{State: wire.PeerFollowing, Vote: Vote{Leader: 2, Zxid: 6, ElectionEpoch: 2}}, rd.Decision,
		"2's early vote is better, adopted, and 1 and 2 are a quorum")

	// An early vote older than FinalizeWait is not counted: 2 may have
	// decided since.
	g := following()
	g.Step(10, 2, looking(2, 6, 2, 0))
	g.Start(11+fw, 5, 0)
	g.SetUnreachable(3)
	require.Nil(t, g.Ready().Decision)

	// ZooKeeper's rule drops it.
	z := mustNew(t, Config{ID: 1, Voters: []int64{1, 2, 3}, FixedFinalizeWait: true, MinNotificationInterval: time.Second})
	z.Start(0, 5, 0)
	z.Announce(wire.PeerFollowing, Vote{Leader: 3, Zxid: 5, ElectionEpoch: 1})
	z.Step(10, 2, looking(2, 6, 2, 0))
	z.Ready()
	z.Start(20, 5, 0)
	require.Equal(t, []Message{to(2, looking(1, 5, 2, 0)), to(3, looking(1, 5, 2, 0))}, votesSent(z.Ready()), "its own vote only: 2's is not counted")

	// Without the early vote the round waits for 2 to send again.
	f := following()
	f.Step(10, 2, looking(2, 5, 1, 0))
	f.Start(20, 5, 0)
	f.SetUnreachable(3)
	require.Nil(t, f.Ready().Decision)
}
