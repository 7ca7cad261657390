package zab

import (
	"fmt"
	"slices"
	"time"

	"github.com/zabd/zabd/election"
)

// Defaults of the ensemble's timing, in ticks, as ZooKeeper 3.8's sample
// configuration has them.
const (
	DefaultInitLimit = 10
	DefaultSyncLimit = 5
)

// Ensemble describes the members of a replicated ensemble as this member's
// configuration lists them. A Peer without one is standalone: an ensemble of
// one that leads from the start, in epoch 0, without an election.
type Ensemble struct {
	Voters    []int64 // participants: they vote, may lead, and count in quorums
	Observers []int64 // learn every commit, serve clients, never vote
	// Quorum decides which sets of voters are a quorum, for the election and
	// for Zab alike; nil means a majority of Voters.
	Quorum election.QuorumVerifier
	// InitLimit bounds discovery and synchronization, SyncLimit how long a
	// leader and its learners may go unheard, both in ticks; 0 takes the
	// defaults above.
	InitLimit, SyncLimit int
	// Election tunes fast leader election (finalize wait, notification
	// intervals); its ID, Voters, Observers and Quorum are filled in from
	// the Peer's.
	Election election.Config
	// ZooKeeperSync makes the leader synchronize learners exactly as a
	// ZooKeeper 3.8 leader does where zabd's own rule differs: a learner
	// holding a txn the leader lacks, from an older epoch than the
	// leader's next txn, gets a SNAP instead of a TRUNC across epochs (see
	// decideSync). Set for an ensemble with ZooKeeper members (zoo.cfg
	// mixedEnsemble=true).
	ZooKeeperSync bool
}

// Role is what a member is doing now.
type Role uint8

// Roles, as ZooKeeper's ServerState names them.
const (
	RoleLooking Role = iota
	RoleLeading
	RoleFollowing
	RoleObserving
)

func (r Role) String() string {
	switch r {
	case RoleLooking:
		return "looking"
	case RoleLeading:
		return "leading"
	case RoleFollowing:
		return "following"
	case RoleObserving:
		return "observing"
	}
	return fmt.Sprintf("Role(%d)", r)
}

// Phase is where a leader or a learner is in Zab: discovery, then
// synchronization, then broadcast.
type Phase uint8

// Phases of Zab.
const (
	PhaseElection Phase = iota
	PhaseDiscovery
	PhaseSync
	PhaseBroadcast
)

func (p Phase) String() string {
	switch p {
	case PhaseElection:
		return "election"
	case PhaseDiscovery:
		return "discovery"
	case PhaseSync:
		return "synchronization"
	case PhaseBroadcast:
		return "broadcast"
	}
	return fmt.Sprintf("Phase(%d)", p)
}

// members is the ensemble as the Peer uses it.
type members struct {
	voters    []int64 // sorted
	observers []int64 // sorted
	quorum    election.QuorumVerifier
	initLimit int
	syncLimit int
}

func newMembers(self int64, e *Ensemble) (*members, error) {
	if e == nil {
		q, _ := election.NewMajority([]int64{self})
		return &members{voters: []int64{self}, quorum: q, initLimit: DefaultInitLimit, syncLimit: DefaultSyncLimit}, nil
	}
	m := &members{
		voters:    slices.Sorted(slices.Values(e.Voters)),
		observers: slices.Sorted(slices.Values(e.Observers)),
		quorum:    e.Quorum,
		initLimit: e.InitLimit,
		syncLimit: e.SyncLimit,
	}
	if m.quorum == nil {
		q, err := election.NewMajority(m.voters)
		if err != nil {
			return nil, fmt.Errorf("zab: ensemble voters: %w", err)
		}
		m.quorum = q
	}
	if m.initLimit <= 0 {
		m.initLimit = DefaultInitLimit
	}
	if m.syncLimit <= 0 {
		m.syncLimit = DefaultSyncLimit
	}
	if !m.isVoter(self) && !m.isObserver(self) {
		return nil, fmt.Errorf("zab: server %d is neither a voter nor an observer of the ensemble", self)
	}
	return m, nil
}

func (m *members) isVoter(id int64) bool {
	_, ok := slices.BinarySearch(m.voters, id)
	return ok
}

func (m *members) isObserver(id int64) bool {
	_, ok := slices.BinarySearch(m.observers, id)
	return ok
}

func (m *members) isMember(id int64) bool { return m.isVoter(id) || m.isObserver(id) }

func ticks(n int, tick time.Duration) time.Duration { return time.Duration(n) * tick }

// Zxid helpers: zxid = epoch << 32 | counter.
func epochOf(zxid int64) int64      { return zxid >> 32 }
func counterOf(zxid int64) int64    { return zxid & 0xffffffff }
func makeZxid(epoch, c int64) int64 { return epoch<<32 | c }
func zxidHex(zxid int64) string     { return fmt.Sprintf("0x%x", zxid) }
func (p *Peer) notice(format string, args ...any) {
	p.out.Notices = append(p.out.Notices, Notice{Text: fmt.Sprintf(format, args...)})
}
func (p *Peer) warn(format string, args ...any) {
	p.out.Notices = append(p.out.Notices, Notice{Warn: true, Text: fmt.Sprintf(format, args...)})
}

// peerFault warns of a peer's packet that breaks the protocol
// (Notice.PeerFault).
func (p *Peer) peerFault(format string, args ...any) {
	p.out.Notices = append(p.out.Notices, Notice{Warn: true, PeerFault: true, Text: fmt.Sprintf(format, args...)})
}

// maxCounter is the last counter a proposal may use: ZooKeeper forces a new
// election rather than let the counter roll over into the epoch.
const maxCounter = 0xfffffffe
