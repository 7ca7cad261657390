package election

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/zabd/zabd/wire"
)

// ZooKeeper 3.8's timing defaults (FastLeaderElection.finalizeWait and the
// zookeeper.fastleader.{min,max}NotificationInterval properties).
const (
	DefaultFinalizeWait            = 200 * time.Millisecond
	DefaultMaxNotificationInterval = 60 * time.Second
)

// Config describes the ensemble as this server sees it.
type Config struct {
	ID        int64   // this server's id (myid)
	Voters    []int64 // participants: they vote and may lead
	Observers []int64 // they learn the leader but never vote
	// Quorum decides which sets of voters are a quorum; nil means a
	// majority of Voters. Its Voters must be exactly Voters.
	Quorum QuorumVerifier
	// FinalizeWait bounds how long a server with a quorum behind its vote
	// waits for a better one; 0 means DefaultFinalizeWait. How the wait is
	// used depends on FixedFinalizeWait.
	FinalizeWait time.Duration
	// FixedFinalizeWait restores ZooKeeper 3.8's final wait exactly: once
	// a quorum agrees with its vote a server decides only after
	// FinalizeWait passes without a better vote, and every notification
	// that is not better is dropped and starts the wait again.
	//
	// Off (the default), the server decides the moment nothing better can
	// arrive in the round: when every voter that may lead (weight above
	// 0) has been heard from in this round and none holds a better vote.
	// Votes in a round only ever improve, and each starts as some voter's
	// own vote, so no better vote exists then; a unanimous round is the
	// simplest case. While some such voter is silent it waits, at most
	// FinalizeWait from the moment the quorum formed, and meanwhile sends
	// its vote again to the silent ones (FinalizeWait/8 after the quorum
	// formed, then twice as long each time): a voter that missed the first
	// one answers, and the dial to one whose process is gone is refused,
	// which the shell reports (SetUnreachable). On deciding it also tells
	// the LOOKING voters whose vote it heard differ what it decided,
	// instead of leaving them to learn it at their next resend. Both rules
	// send the same kinds of notifications, so servers of either kind (and
	// ZooKeeper's) elect together; docs/election.md compares them.
	FixedFinalizeWait bool
	// MinNotificationInterval is the first wait before a LOOKING server
	// sends its vote again; 0 means FinalizeWait (as in ZooKeeper).
	MinNotificationInterval time.Duration
	// MaxNotificationInterval caps that wait as it doubles; 0 means
	// DefaultMaxNotificationInterval.
	MaxNotificationInterval time.Duration
	// QuorumConfig is sent in every notification's Config field (zoo.cfg
	// dynamic syntax, as ZooKeeper's QuorumVerifier.toString gives it). It
	// is shared by all messages, not copied: do not modify it.
	QuorumConfig []byte
}

// Message is a notification to send to server To.
type Message struct {
	To           int64
	Notification wire.Notification
}

// Decision is the end of a round: who leads, and this server's part.
type Decision struct {
	State wire.PeerState // PeerLeading, PeerFollowing or PeerObserving
	Vote  Vote           // the vote decided on; Vote.Leader leads
}

// Ready is what the machine asks of its caller after some calls. Ready()
// hands it over and starts afresh: the slices belong to the caller.
type Ready struct {
	// Messages are the notifications to send, in order. A server never
	// sends to itself: its own vote counts the moment it is cast (as
	// ZooKeeper's loopback would deliver it next).
	Messages []Message
	// Decision is set in the Ready after the call that decided.
	Decision *Decision
	// Wakeup is the time by which Tick must be called; 0 when no timer is
	// running (the server is not LOOKING).
	Wakeup time.Duration
}

// Election is one server's fast leader election. It is not safe for
// concurrent use; the shell calls it from one goroutine.
type Election struct {
	id           int64
	voters       []int64 // ascending
	quorum       QuorumVerifier
	finalizeWait time.Duration
	fixedWait    bool // FixedFinalizeWait: ZooKeeper's final wait
	minInterval  time.Duration
	maxInterval  time.Duration
	quorumConfig []byte

	started      bool
	abstain      bool // see SetAbstain
	state        wire.PeerState
	logicalClock int64 // the current round
	initial      Vote  // this round's own vote: what a jump to a higher round falls back to
	proposal     Vote  // the vote this server currently casts; ElectionEpoch is logicalClock
	current      Vote  // the vote decided on or announced, answered to LOOKING servers when not LOOKING

	// recv holds the latest vote of each voter in the current round;
	// outOfElection the latest claim of each voter that has left the
	// election, whatever its round.
	recv          map[int64]ballot
	outOfElection map[int64]ballot
	// heard holds the latest vote or claim of each voter in the current
	// round, including those the final wait drops (which recv does not
	// record): the adaptive final wait ends once every voter that may lead
	// is in it.
	heard map[int64]ballot
	// unreachable holds the voters the shell could not reach in this
	// round (SetUnreachable) and has heard nothing from since: the
	// adaptive final wait does not wait for them. Start forgets them:
	// a voter refused long ago may have restarted and be cut off now,
	// and its vote may yet arrive (hunt seed 72310: a member kept a
	// voter marked for a minute and decided 200 ms before the leader
	// it chose, whose connection then bounced it back to looking, again
	// and again). The round's first notifications dial every voter, so a
	// dead one is refused again at once.
	unreachable map[int64]bool
	// early holds, per voter, the latest LOOKING notification of a round
	// later than the one we decided in, received while we were not
	// LOOKING: the next election began at that voter before it began here
	// (it saw the leader fail first). Start counts those received within
	// FinalizeWait, as if they arrived just after it; otherwise the voter
	// would not be heard until it sends again, a whole notification
	// interval later (ZooKeeper drops them, and a failover waits for that
	// resend). An older one is dropped: its sender has had time to decide
	// since, and its claim will say so. FixedFinalizeWait keeps none, as
	// ZooKeeper.
	early map[int64]earlyVote

	// While finalizing, a quorum agrees with the proposal and the server
	// decides at finalizeAt unless a better vote arrives first.
	finalizing bool
	finalizeAt time.Duration
	// While finalizing with the adaptive wait, the vote is sent again to
	// the voters still silent at probeAt, and probeEvery doubles.
	probeAt    time.Duration
	probeEvery time.Duration
	// Without a notification before resendAt the vote is sent again and
	// interval doubles.
	interval time.Duration
	resendAt time.Duration
	// selfPending: this server cast a vote it has not yet counted (the
	// loopback notification ZooKeeper would deliver next).
	selfPending bool

	out     []Message
	decided *Decision
}

// New checks cfg and returns an Election that has not started: call Start
// to begin the first round. Notifications stepped before that are dropped,
// as a server that is not yet electing receives none; their senders resend.
func New(cfg Config) (*Election, error) {
	voters, err := sortedDistinct(cfg.Voters)
	if err != nil {
		return nil, fmt.Errorf("election config: voters: %w", err)
	}
	if len(voters) == 0 {
		return nil, errors.New("election config: no voters")
	}
	observers, err := sortedDistinct(cfg.Observers)
	if err != nil {
		return nil, fmt.Errorf("election config: observers: %w", err)
	}
	for _, o := range observers {
		if _, found := slices.BinarySearch(voters, o); found {
			return nil, fmt.Errorf("election config: server %d is both voter and observer", o)
		}
	}
	_, isVoter := slices.BinarySearch(voters, cfg.ID)
	_, isObserver := slices.BinarySearch(observers, cfg.ID)
	if !isVoter && !isObserver {
		return nil, fmt.Errorf("election config: server %d is neither voter nor observer", cfg.ID)
	}
	quorum := cfg.Quorum
	if quorum == nil {
		quorum, _ = NewMajority(voters) // voters are checked above
	} else if !slices.Equal(quorum.Voters(), voters) {
		return nil, fmt.Errorf("election config: quorum verifier's voters %v are not %v", quorum.Voters(), voters)
	}
	e := &Election{
		id:            cfg.ID,
		voters:        voters,
		quorum:        quorum,
		finalizeWait:  orDefault(cfg.FinalizeWait, DefaultFinalizeWait),
		fixedWait:     cfg.FixedFinalizeWait,
		maxInterval:   orDefault(cfg.MaxNotificationInterval, DefaultMaxNotificationInterval),
		quorumConfig:  cfg.QuorumConfig,
		state:         wire.PeerLooking,
		recv:          make(map[int64]ballot, len(voters)),
		outOfElection: make(map[int64]ballot, len(voters)),
		heard:         make(map[int64]ballot, len(voters)),
		unreachable:   make(map[int64]bool, len(voters)),
		early:         make(map[int64]earlyVote, len(voters)),
	}
	e.minInterval = orDefault(cfg.MinNotificationInterval, e.finalizeWait)
	if e.finalizeWait < 0 || e.minInterval < 0 || e.maxInterval < e.minInterval {
		return nil, fmt.Errorf("election config: timings must satisfy 0 <= FinalizeWait, 0 <= MinNotificationInterval <= MaxNotificationInterval (got %v, %v, %v)",
			e.finalizeWait, e.minInterval, e.maxInterval)
	}
	return e, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Start begins a new round of LOOKING (ZooKeeper's lookForLeader): the
// round number goes up by one, the server proposes itself with its
// currentEpoch and last logged zxid (an observer proposes nobody) and sends
// that vote to every voter. Call it for the first election and again each
// time the server loses its leader or its followers.
func (e *Election) Start(now time.Duration, lastLoggedZxid, currentEpoch int64) {
	e.started = true
	e.state = wire.PeerLooking
	e.logicalClock++
	if e.isVoter(e.id) && !e.abstain {
		e.initial = Vote{Leader: e.id, Zxid: lastLoggedZxid, PeerEpoch: currentEpoch}
	} else {
		e.initial = Vote{Leader: math.MinInt64, Zxid: math.MinInt64, PeerEpoch: math.MinInt64}
	}
	e.proposal = e.initial
	e.forgetRound()
	clear(e.outOfElection)
	clear(e.unreachable)
	e.finalizing = false
	e.decided = nil
	e.interval = e.minInterval
	e.broadcast()
	e.resendAt = now + e.interval
	e.countOwnVote(now)
	for _, sid := range e.voters { // ascending: no map order in the output
		if ev, ok := e.early[sid]; ok && now-ev.at <= e.finalizeWait {
			e.Step(now, sid, ev.n)
		}
	}
	clear(e.early)
}

// earlyVote is a LOOKING notification of the next round that arrived
// before this server began it, and when it arrived.
type earlyVote struct {
	n  wire.Notification
	at time.Duration
}

// SetAbstain makes the rounds that Start begins from now on abstain (on)
// or vote (off). An abstaining voter votes as an observer does — for
// nobody, so its notifications count for no candidate — and adopts no
// looking vote; it only follows a leader that a quorum of the others has
// decided on. A member whose durable log was damaged abstains: its last
// zxid is not what it acknowledged, so its vote must not help elect a
// leader that lacks txns it once held (Alagappan et al., FAST 2018).
func (e *Election) SetAbstain(on bool) { e.abstain = on }

// SetUnreachable records that the shell could not reach voter sid's
// election port because nothing listens there (its dial was refused): sid's
// process is gone, and no notification can come from it until it starts
// again — when it begins a new round, whose votes arrive like any others.
// Until a notification from sid arrives, the adaptive final wait does not
// wait for sid (a failover then costs no FinalizeWait when the old leader
// is dead rather than cut off). A silent peer — a partition, a dial that
// times out — is not unreachable in this sense: its vote may yet arrive.
// Deciding without sid's vote is what deciding after the wait would do
// when its vote never arrives: the decision still needs a quorum behind
// the proposal, so safety does not depend on it. FixedFinalizeWait
// ignores it, as ZooKeeper has no such input.
func (e *Election) SetUnreachable(sid int64) {
	if sid == e.id || !e.isVoter(sid) {
		return
	}
	e.unreachable[sid] = true
	e.maybeDecideEarly()
}

// Step hands the machine a notification that arrived from server from.
func (e *Election) Step(now time.Duration, from int64, n wire.Notification) {
	if !e.started || n.State < wire.PeerLooking || n.State > wire.PeerObserving {
		return // ZooKeeper drops notifications with an unknown state
	}
	delete(e.unreachable, from) // it is back
	// A server outside the voters (an observer) does not vote: it is
	// ignored, except that while it is LOOKING it is told the vote we stand
	// by. (ZooKeeper 3.8 answers whatever state it reports; an OBSERVING
	// observer answers a LOOKING voter in turn, and the two trade
	// notifications for as long as the voter looks.)
	if !e.isVoter(from) {
		if n.State == wire.PeerLooking {
			e.send(from, e.state, e.standingVote(), e.logicalClock)
		}
		return
	}
	if e.state != wire.PeerLooking {
		// We have left the election: tell a LOOKING voter what we
		// decided, so it can join us.
		if n.State == wire.PeerLooking {
			e.send(from, e.state, e.current, e.current.ElectionEpoch)
			if n.ElectionEpoch > e.current.ElectionEpoch && !e.fixedWait {
				e.early[from] = earlyVote{n: n, at: now}
			}
		}
		return
	}
	b := ballot{
		vote:    Vote{Leader: n.Leader, Zxid: n.Zxid, ElectionEpoch: n.ElectionEpoch, PeerEpoch: n.PeerEpoch},
		state:   n.State,
		version: n.Version,
	}
	// A LOOKING voter in an older round learns ours at once. An observer
	// does not tell it: voters only answer observers, never count them, so
	// the answer would only bring back the same old vote, and the two would
	// trade these forever (ZooKeeper 3.8 does, until the voter's round
	// catches up).
	if n.State == wire.PeerLooking && n.ElectionEpoch < e.logicalClock && e.isVoter(e.id) {
		e.send(from, wire.PeerLooking, e.proposalVote(), e.logicalClock)
	}
	e.receive(now, from, b)
	e.countOwnVote(now)
}

// Tick tells the machine the time: it decides once the final wait is over
// (FinalizeWait after the quorum formed, or after the last notification
// with FixedFinalizeWait), and sends its vote again when no notification
// has arrived for the current interval.
func (e *Election) Tick(now time.Duration) {
	if !e.started || e.state != wire.PeerLooking {
		return
	}
	if e.finalizing {
		switch {
		case now >= e.finalizeAt:
			e.decide(e.proposalVote())
		case !e.fixedWait && now >= e.probeAt:
			e.probeSilentVoters()
			e.probeEvery *= 2
			e.probeAt = now + e.probeEvery
		}
		return
	}
	if now >= e.resendAt {
		e.broadcast()
		e.interval = min(2*e.interval, e.maxInterval)
		e.resendAt = now + e.interval
		e.countOwnVote(now)
	}
}

// Ready hands over what to send, a fresh decision, and the next wakeup.
func (e *Election) Ready() Ready {
	rd := Ready{Messages: e.out, Decision: e.decided}
	e.out, e.decided = nil, nil
	if e.started && e.state == wire.PeerLooking {
		rd.Wakeup = e.resendAt
		if e.finalizing {
			rd.Wakeup = e.finalizeAt
			if !e.fixedWait {
				rd.Wakeup = min(rd.Wakeup, e.probeAt)
			}
		}
	}
	return rd
}

// State is this server's state: LOOKING until it decides, then LEADING,
// FOLLOWING or OBSERVING (or what Announce set).
func (e *Election) State() wire.PeerState { return e.state }

// Round is the current election round (ZooKeeper's logicalclock).
func (e *Election) Round() int64 { return e.logicalClock }

// Vote is the vote this server stands by: its proposal while LOOKING, the
// vote decided on (or announced) afterwards.
func (e *Election) Vote() Vote { return e.standingVote() }

// Announce records that this server is now in state with vote v, which it
// then answers LOOKING servers with. ZAB calls it once discovery fixes the
// new epoch (ZooKeeper's updateElectionVote: the vote keeps its leader and
// takes the new peerEpoch), or to take a role without an election. To
// look for a leader again, call Start.
func (e *Election) Announce(state wire.PeerState, v Vote) error {
	switch {
	case state != wire.PeerLeading && state != wire.PeerFollowing && state != wire.PeerObserving:
		return fmt.Errorf("announce %v: only LEADING, FOLLOWING or OBSERVING can be announced", state)
	case (state == wire.PeerLeading) != (v.Leader == e.id):
		return fmt.Errorf("announce %v with leader %d: server %d leads exactly when it is the leader", state, v.Leader, e.id)
	case (state == wire.PeerObserving) == e.isVoter(e.id):
		return fmt.Errorf("announce %v: server %d is a voter exactly when it does not observe", state, e.id)
	}
	e.started = true
	e.state = state
	e.current = v
	e.finalizing = false
	e.selfPending = false
	e.forgetRound()
	clear(e.outOfElection)
	return nil
}

// receive is the election loop's handling of one notification from a
// voter while LOOKING.
func (e *Election) receive(now time.Duration, from int64, b ballot) {
	if e.finalizing {
		// Only a better vote interrupts the final wait; anything else
		// is dropped. ZooKeeper then starts the wait again; the adaptive
		// rule notes whom it heard and decides if that was the last
		// voter it was waiting for.
		if !e.better(b.vote, e.proposal) {
			if e.fixedWait {
				e.finalizeAt = now + e.finalizeWait
				return
			}
			if e.countsInRound(b) {
				e.heard[from] = b
			}
			e.maybeDecideEarly()
			return
		}
		e.finalizing = false
	}
	e.resendAt = now + e.interval // something arrived: the quiet wait starts again
	if !e.isVoter(b.vote.Leader) {
		return // a vote for a non-voter (an observer's own) counts for nothing
	}
	switch b.state {
	case wire.PeerLooking:
		if e.abstain {
			return // it neither adopts nor counts looking votes
		}
		e.receiveLooking(now, from, b.vote)
	case wire.PeerFollowing, wire.PeerLeading:
		e.receiveDecided(from, b)
	}
}

// receiveLooking handles a vote of a LOOKING voter.
func (e *Election) receiveLooking(now time.Duration, from int64, v Vote) {
	if e.initial.Zxid == -1 || v.Zxid == -1 {
		return // ZooKeeper ignores votes while either side has no zxid
	}
	switch {
	case v.ElectionEpoch > e.logicalClock:
		// A later round: join it, forget this round's votes, and
		// propose the better of its vote and our own initial one.
		e.logicalClock = v.ElectionEpoch
		e.forgetRound()
		e.proposal = e.initial
		if e.better(v, e.initial) {
			e.proposal = v
		}
		e.broadcast()
	case v.ElectionEpoch < e.logicalClock:
		return // answered in Step; an old round's vote is not counted
	case e.better(v, e.proposal):
		e.proposal = v
		e.broadcast()
	}
	e.record(from, ballot{vote: v, state: wire.PeerLooking})
	if e.hasQuorum(e.recv, ballot{vote: e.proposalVote(), state: wire.PeerLooking}) {
		e.finalizing = true
		e.finalizeAt = now + e.finalizeWait
		e.probeEvery = max(e.finalizeWait/8, time.Millisecond)
		e.probeAt = now + e.probeEvery
		e.maybeDecideEarly()
	}
}

// maybeDecideEarly is the adaptive final wait: while finalizing, decide
// at once if nothing better than the proposal can arrive in this round.
func (e *Election) maybeDecideEarly() {
	if !e.fixedWait && e.finalizing && e.nothingBetterCanArrive() {
		e.decide(e.proposalVote())
	}
}

// probeSilentVoters sends the proposal again to every voter the adaptive
// final wait is still waiting for (nothingBetterCanArrive): its first
// notification may have gone down a connection that died with the voter's
// process, or to a voter that was not yet listening. A live voter answers
// as it would the first one; for a dead one the shell's dial is refused
// and reported (SetUnreachable), which ends the wait.
func (e *Election) probeSilentVoters() {
	for _, sid := range e.voters {
		if sid != e.id && e.awaited(sid) {
			e.send(sid, wire.PeerLooking, e.proposalVote(), e.logicalClock)
		}
	}
}

// nothingBetterCanArrive reports whether every voter that may lead has
// been heard from in this round (or is unreachable: SetUnreachable) and
// nothing recorded beats the proposal.
//
// Why that suffices: a vote is born as some voter's own initial vote, and a
// voter's vote only changes, within a round, to a better one. So what a
// voter sends in this round is never worse than its initial vote, and once
// we heard it with a vote no better than ours, its initial vote is no
// better either. When that holds for every voter of weight above 0, no vote
// better than ours exists in the round (a weight-0 voter's own vote is never
// better: it cannot lead), and waiting longer would only delay. LOOKING votes
// we hold are never better (we adopt those); a FOLLOWING/LEADING claim of
// this round can be, and then we keep waiting. A voter that restarts
// without its round number can break the premise; that costs, as a late
// vote does, at most a split decision, which ZAB's discovery resolves.
func (e *Election) nothingBetterCanArrive() bool {
	for _, sid := range e.voters {
		if e.awaited(sid) {
			return false
		}
	}
	for _, b := range e.recv { // the answer does not depend on map order
		if e.better(b.vote, e.proposal) {
			return false
		}
	}
	return true
}

// awaited reports whether the adaptive final wait waits for voter sid: it
// may lead (weight above 0), has not been heard from in this round, and is
// not known to be unreachable.
func (e *Election) awaited(sid int64) bool {
	_, heard := e.heard[sid]
	return !heard && e.quorum.Weight(sid) > 0 && !e.unreachable[sid]
}

// countsInRound reports whether b carries its sender's vote in our round,
// as receiveLooking and receiveDecided would record it.
func (e *Election) countsInRound(b ballot) bool {
	if b.vote.ElectionEpoch != e.logicalClock || !e.isVoter(b.vote.Leader) {
		return false
	}
	switch b.state {
	case wire.PeerLooking:
		return b.vote.Zxid != -1 && e.initial.Zxid != -1
	case wire.PeerFollowing, wire.PeerLeading:
		return true
	}
	return false
}

// record counts b as from's vote in this round.
func (e *Election) record(from int64, b ballot) {
	e.recv[from] = b
	e.heard[from] = b
}

// forgetRound drops the votes of the current round.
func (e *Election) forgetRound() {
	clear(e.recv)
	clear(e.heard)
}

// receiveDecided handles the claim of a voter that has left the election
// (FOLLOWING or LEADING some leader). We follow the claim once a quorum
// makes the same one — in our round, or among all such claims whatever
// their round — and its leader confirms it leads.
func (e *Election) receiveDecided(from int64, b ballot) {
	if b.vote.ElectionEpoch == e.logicalClock {
		// ZooKeeper records these with the version left at 0.
		e.record(from, ballot{vote: b.vote, state: b.state})
		if e.hasQuorum(e.recv, b) && e.leaderConfirmed(e.recv, b.vote) {
			e.decide(b.vote)
			return
		}
	}
	e.outOfElection[from] = b
	if e.hasQuorum(e.outOfElection, b) && e.leaderConfirmed(e.outOfElection, b.vote) {
		e.logicalClock = b.vote.ElectionEpoch
		e.decide(b.vote)
	}
}

// leaderConfirmed is ZooKeeper's checkLeader: a leader other than us must
// itself be among votes saying LEADING (so nobody follows a leader that
// has not taken the role); if the leader is us, the vote must be of our
// round.
func (e *Election) leaderConfirmed(votes map[int64]ballot, v Vote) bool {
	if v.Leader != e.id {
		b, ok := votes[v.Leader]
		return ok && b.state == wire.PeerLeading
	}
	return v.ElectionEpoch == e.logicalClock
}

// hasQuorum reports whether the voters whose ballots agree with target form
// a quorum.
func (e *Election) hasQuorum(votes map[int64]ballot, target ballot) bool {
	agreeing := make([]int64, 0, len(votes))
	for sid, b := range votes {
		if e.isVoter(sid) && b.agrees(target) {
			agreeing = append(agreeing, sid)
		}
	}
	slices.Sort(agreeing) // the verifier sees one order whatever the map's
	return e.quorum.ContainsQuorum(agreeing)
}

// decide ends the round with v.
func (e *Election) decide(v Vote) {
	switch {
	case v.Leader == e.id:
		e.state = wire.PeerLeading
	case e.isVoter(e.id):
		e.state = wire.PeerFollowing
	default:
		e.state = wire.PeerObserving
	}
	e.current = v
	e.finalizing = false
	e.selfPending = false
	if !e.fixedWait {
		e.tellThoseStillLooking(v)
	}
	e.forgetRound()
	clear(e.outOfElection)
	e.decided = &Decision{State: e.state, Vote: v}
}

// tellThoseStillLooking sends our decision to every voter whose latest
// notification of this round was a LOOKING vote other than v. It is what
// they would be answered on their next resend (Step answers LOOKING voters
// once we have decided), sent now: the notification that completed our
// decision may have been theirs, and ZooKeeper leaves it unanswered.
func (e *Election) tellThoseStillLooking(v Vote) {
	for _, sid := range e.voters {
		if b, ok := e.heard[sid]; ok && sid != e.id && b.state == wire.PeerLooking && b.vote != v {
			e.send(sid, e.state, v, v.ElectionEpoch)
		}
	}
}

// better is ZooKeeper's totalOrderPredicate: v beats cur, and v's leader
// may lead at all (weight above 0).
func (e *Election) better(v, cur Vote) bool {
	return e.quorum.Weight(v.Leader) > 0 && v.Beats(cur)
}

// broadcast sends the proposal to every voter, in ascending id; our own
// copy is counted by countOwnVote.
func (e *Election) broadcast() {
	for _, sid := range e.voters {
		if sid == e.id {
			e.selfPending = true
			continue
		}
		e.send(sid, wire.PeerLooking, e.proposalVote(), e.logicalClock)
	}
}

// countOwnVote receives the vote this server last cast, as its loopback
// notification, right after the notification being handled.
func (e *Election) countOwnVote(now time.Duration) {
	for e.selfPending && e.state == wire.PeerLooking {
		e.selfPending = false
		e.receive(now, e.id, ballot{vote: e.proposalVote(), state: wire.PeerLooking, version: wire.NotificationVersion})
	}
}

func (e *Election) send(to int64, state wire.PeerState, v Vote, round int64) {
	e.out = append(e.out, Message{To: to, Notification: wire.Notification{
		State:         state,
		Leader:        v.Leader,
		Zxid:          v.Zxid,
		ElectionEpoch: round,
		PeerEpoch:     v.PeerEpoch,
		Version:       wire.NotificationVersion,
		Config:        e.quorumConfig,
	}})
}

func (e *Election) proposalVote() Vote {
	v := e.proposal
	v.ElectionEpoch = e.logicalClock
	return v
}

// standingVote is the vote we answer with: the proposal while LOOKING
// (ZooKeeper answers observers with the previous round's result then; the
// proposal is what we actually stand by), the decided one afterwards.
func (e *Election) standingVote() Vote {
	if e.state == wire.PeerLooking {
		return e.proposalVote()
	}
	return e.current
}

func (e *Election) isVoter(sid int64) bool {
	_, found := slices.BinarySearch(e.voters, sid)
	return found
}
