package faults

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/zabd/zabd/election"
)

// Kind names a fault.
type Kind string

// The faults a schedule can hold; see the package comment for what each does.
const (
	Crash     Kind = "crash"
	BitFlip   Kind = "bitflip"
	NoSpace   Kind = "nospace"
	SlowFsync Kind = "slowfsync"
	FailFsync Kind = "failfsync"
	Drop      Kind = "drop"
	Pause     Kind = "pause"
	ClockJump Kind = "clockjump"
	// Network faults between the members of an ensemble.
	Partition Kind = "partition"
	BreakConn Kind = "breakconn"
	Clog      Kind = "clog"
	SlowLink  Kind = "slowlink"
	// Intrude: an adversarial client presents client Client's live session
	// (see Passwd).
	Intrude Kind = "intrude"
)

// Kinds lists every fault kind in a fixed order.
var Kinds = []Kind{Crash, BitFlip, NoSpace, SlowFsync, FailFsync, Drop, Pause, ClockJump, Partition, BreakConn, Clog, SlowLink}

// NetworkKinds are the kinds that need an ensemble (links between servers).
var NetworkKinds = []Kind{Partition, BreakConn, Clog, SlowLink}

// AdversaryKinds are faults that Generate does not draw: the simulator draws
// them from a stream of their own, so that adding them left every generated
// schedule's other choices as they were.
var AdversaryKinds = []Kind{Intrude}

// Passwd is what an intruder presents with another client's session id.
type Passwd string

// Intruders' passwords.
const (
	WrongPasswd  Passwd = "wrong"  // 16 bytes that are not the session's password
	EmptyPasswd  Passwd = "empty"  // no password at all
	StolenPasswd Passwd = "stolen" // the session's own password: the session moves to the intruder
)

// Passwds lists the intruders' passwords in a fixed order.
var Passwds = []Passwd{WrongPasswd, EmptyPasswd, StolenPasswd}

// PartitionMode says which servers a partition cuts off (see the package
// comment).
type PartitionMode string

// Partition modes.
const (
	Isolate   PartitionMode = "isolate" // Group is cut off from the rest, both ways
	IsoLeader PartitionMode = "leader"  // the leader at that moment is cut off (Group is ignored)
	OneWay    PartitionMode = "oneway"  // Group hears nobody, but is heard (asymmetric)
	Bridge    PartitionMode = "bridge"  // Group and the rest but Server are cut; Server sees both sides
)

// PartitionModes lists the modes in a fixed order.
var PartitionModes = []PartitionMode{Isolate, IsoLeader, OneWay, Bridge}

// Fault is one timed fault. Which of the optional fields matter depends on
// Kind; the others stay zero.
type Fault struct {
	AtMs   int64 `json:"at_ms"`              // monotonic time of the fault
	Kind   Kind  `json:"kind"`               //
	Server int   `json:"server,omitempty"`   // server faults, clockjump, and one end of a link (0-based)
	Peer   int   `json:"peer,omitempty"`     // breakconn, clog, slowlink: the link's other end
	Client int   `json:"client,omitempty"`   // drop, pause, intrude (1-based, as in the history)
	Torn   bool  `json:"torn,omitempty"`     // crash: tear the last sector written
	DownMs int64 `json:"down_ms,omitempty"`  // crash: time until restart
	ForMs  int64 `json:"for_ms,omitempty"`   // pause, nospace, slowfsync, partition, clog, slowlink, intrude (stolen: how long the thief holds the session): duration
	Delay  int64 `json:"delay_ms,omitempty"` // slowfsync: extra time per fsync; slowlink: extra latency
	JumpMs int64 `json:"jump_ms,omitempty"`  // clockjump: how far the server's wall clock moves

	Mode  PartitionMode `json:"mode,omitempty"`  // partition: whom it cuts off
	Group []int         `json:"group,omitempty"` // partition: the servers on the small side (0-based)

	Passwd Passwd `json:"passwd,omitempty"` // intrude: the password presented
}

// At is the fault's time as a duration.
func (f Fault) At() time.Duration { return ms(f.AtMs) }

// String is the fault in one line, as the trace prints it. It names
// servers by their id (myid), which counts from 1, while the JSON's server,
// peer and group fields count from 0.
func (f Fault) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%8dms %s", f.AtMs, f.Kind)
	switch f.Kind {
	case Drop, Pause:
		fmt.Fprintf(&b, " client=%d", f.Client)
	case Intrude:
		fmt.Fprintf(&b, " client=%d passwd=%s", f.Client, f.Passwd)
	case BreakConn, Clog, SlowLink:
		fmt.Fprintf(&b, " link=%d-%d", f.Server+1, f.Peer+1)
	case Partition:
		fmt.Fprintf(&b, " %s", f.Mode)
		if f.Mode != IsoLeader {
			b.WriteString(" group=")
			for i, g := range f.Group {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "%d", g+1)
			}
		}
		if f.Mode == Bridge {
			fmt.Fprintf(&b, " bridge=%d", f.Server+1)
		}
	default:
		fmt.Fprintf(&b, " server=%d", f.Server+1)
	}
	if f.Torn {
		b.WriteString(" torn")
	}
	if f.DownMs != 0 {
		fmt.Fprintf(&b, " down=%dms", f.DownMs)
	}
	if f.ForMs != 0 {
		fmt.Fprintf(&b, " for=%dms", f.ForMs)
	}
	if f.Delay != 0 {
		fmt.Fprintf(&b, " delay=%dms", f.Delay)
	}
	if f.JumpMs != 0 {
		fmt.Fprintf(&b, " jump=%dms", f.JumpMs)
	}
	return b.String()
}

// Schedule is everything that decides a run besides the code under test.
// Seed seeds the workload and the disks' own randomness (which sectors a
// crash loses); the rest is explicit so that a shrinker can cut it down.
type Schedule struct {
	Seed    int64 `json:"seed"`
	Servers int   `json:"servers"`
	// Ensemble runs the servers as a replicated ensemble (ids 1..Servers);
	// without it the one server is standalone.
	Ensemble bool `json:"ensemble,omitempty"`
	// Observers are the last Observers servers: they learn, never vote.
	Observers int `json:"observers,omitempty"`
	// Groups, when set, makes the voters' quorum ZooKeeper's hierarchical
	// one (zoo.cfg group.N and weight.N: election.Hierarchical) instead of
	// a majority: every voter (servers 1..Voters) in exactly one group,
	// no observer in any. Weights gives a voter's weight (0 or more; a
	// voter left out weighs 1, as in ZooKeeper); only with Groups.
	Groups  [][]int64       `json:"groups,omitempty"`
	Weights map[int64]int64 `json:"weights,omitempty"`
	// Swarm lists the fault kinds the seed switched on (swarm testing:
	// each seed tries a different mix), for the trace's header.
	Swarm            []Kind `json:"swarm,omitempty"`
	Clients          int    `json:"clients"`
	OpsPerClient     int    `json:"ops_per_client"`
	MaxThinkMs       int64  `json:"max_think_ms"` // a client's pause between operations is uniform in [0, this]
	SessionTimeoutMs int64  `json:"session_timeout_ms"`
	TickMs           int64  `json:"tick_ms"`
	SnapCount        int    `json:"snap_count,omitempty"` // snapshot and log roll every ~SnapCount txns; 0: never
	// SnapshotStepNodes is zab.Config.SnapshotStepNodes: how many znodes
	// one step of a fuzzy snapshot serializes between applies; 0 is the
	// Peer's default (1024, a whole small tree in one step). A few nodes
	// make writes interleave with the snapshot, so that it is really fuzzy.
	SnapshotStepNodes int `json:"snapshot_step_nodes,omitempty"`
	// PeerQueueBytes is peernet.Config.MaxQueuedBytes: what may wait to be
	// sent to one peer on the quorum port before that peer's connection is
	// dropped (peerlink.Backlog); 0 is zabd's default, 256 MiB, which the
	// simulator's small trees never reach.
	PeerQueueBytes int `json:"peer_queue_bytes,omitempty"`
	// LoopDelayUs is how long a member's event loop takes, after an event,
	// to come back for the Peer's Ready: the events that arrive meanwhile
	// are stepped into the same Ready, as zabd's loop steps every event
	// waiting (up to 256) before it takes one. 0: a Ready after each event.
	LoopDelayUs int64 `json:"loop_delay_us,omitempty"`
	// ZooKeeperSync is zab.Ensemble.ZooKeeperSync (zoo.cfg
	// mixedEnsemble=true): leaders synchronize learners by ZooKeeper 3.8's
	// rule where zabd's own differs (a SNAP, not a TRUNC across epochs).
	ZooKeeperSync bool `json:"zookeeper_sync,omitempty"`
	// Recipe, if set ("lock", "election", "queue" or "barrier":
	// simclient.RecipeLock, RecipeElection, RecipeQueue, RecipeBarrier), has the first RecipeClients clients run that
	// ZooKeeper recipe instead of the random workload; the recipe checkers
	// judge what they believed and did (sim/recipes.go).
	Recipe        string `json:"recipe,omitempty"`
	RecipeClients int    `json:"recipe_clients,omitempty"`
	// ReapIntervalMs is zab.Config.ContainerCheckInterval: how often the
	// servers delete empty containers and expired TTL nodes by themselves,
	// and the history checkers allow those deletions; 0 turns reaping off
	// (the check waits 24 h) and the checkers with it.
	ReapIntervalMs int64   `json:"reap_interval_ms,omitempty"`
	SafetyMs       int64   `json:"safety_ms"`   // the fault phase
	LivenessMs     int64   `json:"liveness_ms"` // after it, no faults: all work must finish
	Faults         []Fault `json:"faults"`
	// Aimed are the aimed faults switched on (see Aimed): they fire on
	// the run's events, during the safety phase.
	Aimed []Aimed `json:"aimed,omitempty"`
}

// Validate reports the first thing that makes s unrunnable.
func (s *Schedule) Validate() error {
	switch {
	case s.Servers < 1:
		return fmt.Errorf("schedule: servers = %d, need at least 1", s.Servers)
	case !s.Ensemble && s.Servers != 1:
		return fmt.Errorf("schedule: servers = %d without ensemble: a standalone run has one server", s.Servers)
	case s.Observers < 0 || s.Observers >= s.Servers:
		return fmt.Errorf("schedule: observers = %d, need 0 <= observers < servers (%d)", s.Observers, s.Servers)
	case s.Clients < 0:
		return fmt.Errorf("schedule: clients = %d is negative", s.Clients)
	case s.OpsPerClient < 0:
		return fmt.Errorf("schedule: ops_per_client = %d is negative", s.OpsPerClient)
	case s.MaxThinkMs < 0:
		return fmt.Errorf("schedule: max_think_ms = %d is negative", s.MaxThinkMs)
	case s.SnapCount < 0 || s.SnapCount == 1:
		return fmt.Errorf("schedule: snap_count = %d, need 0 (never) or at least 2", s.SnapCount)
	case s.SnapshotStepNodes < 0:
		return fmt.Errorf("schedule: snapshot_step_nodes = %d is negative", s.SnapshotStepNodes)
	case s.PeerQueueBytes < 0:
		return fmt.Errorf("schedule: peer_queue_bytes = %d is negative", s.PeerQueueBytes)
	case s.Recipe != "" && s.Recipe != "lock" && s.Recipe != "election" && s.Recipe != "queue" && s.Recipe != "barrier":
		return fmt.Errorf("schedule: recipe = %q, want lock, election, queue or barrier", s.Recipe)
	case s.RecipeClients < 0 || s.RecipeClients > s.Clients || (s.Recipe == "") != (s.RecipeClients == 0):
		return fmt.Errorf("schedule: recipe_clients = %d with recipe %q and %d clients: need 1 to clients with a recipe, 0 without", s.RecipeClients, s.Recipe, s.Clients)
	case s.LoopDelayUs < 0:
		return fmt.Errorf("schedule: loop_delay_us = %d is negative", s.LoopDelayUs)
	case s.ReapIntervalMs < 0:
		return fmt.Errorf("schedule: reap_interval_ms = %d is negative", s.ReapIntervalMs)
	case s.TickMs <= 0:
		return fmt.Errorf("schedule: tick_ms = %d, need > 0", s.TickMs)
	case s.SessionTimeoutMs < 2*s.TickMs:
		return fmt.Errorf("schedule: session_timeout_ms = %d is below 2 ticks", s.SessionTimeoutMs)
	case s.SafetyMs < 0 || s.LivenessMs <= 0:
		return fmt.Errorf("schedule: safety_ms = %d and liveness_ms = %d, need >= 0 and > 0", s.SafetyMs, s.LivenessMs)
	}
	if _, err := s.Quorum(); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	for i, f := range s.Faults {
		if !slices.Contains(Kinds, f.Kind) && !slices.Contains(AdversaryKinds, f.Kind) {
			return fmt.Errorf("schedule: fault %d: unknown kind %q", i, f.Kind)
		}
		if f.AtMs < 0 || f.AtMs > s.SafetyMs {
			return fmt.Errorf("schedule: fault %d (%s) at %dms is outside the safety phase [0, %d]", i, f.Kind, f.AtMs, s.SafetyMs)
		}
		if err := s.validateFault(&f); err != nil {
			return fmt.Errorf("schedule: fault %d (%s): %w", i, f.Kind, err)
		}
		if f.DownMs < 0 || f.ForMs < 0 || f.Delay < 0 {
			return fmt.Errorf("schedule: fault %d (%s): negative duration", i, f.Kind)
		}
	}
	if !slices.IsSortedFunc(s.Faults, func(a, b Fault) int { return int(a.AtMs - b.AtMs) }) {
		return fmt.Errorf("schedule: faults are not in time order")
	}
	return s.validateAimed()
}

func (s *Schedule) validateFault(f *Fault) error {
	server := func(n int) error {
		if n < 0 || n >= s.Servers {
			return fmt.Errorf("server %d does not exist", n)
		}
		return nil
	}
	switch f.Kind {
	case Drop, Pause, Intrude:
		if f.Client < 1 || f.Client > s.Clients {
			return fmt.Errorf("client %d does not exist", f.Client)
		}
		if f.Kind == Intrude && !slices.Contains(Passwds, f.Passwd) {
			return fmt.Errorf("unknown passwd %q (want one of %v)", f.Passwd, Passwds)
		}
		return nil
	case BreakConn, Clog, SlowLink:
		if !s.Ensemble {
			return fmt.Errorf("a network fault needs an ensemble")
		}
		if f.Server == f.Peer {
			return fmt.Errorf("a link needs two servers, not %d twice", f.Server)
		}
		if err := server(f.Peer); err != nil {
			return err
		}
	case Partition:
		if !s.Ensemble {
			return fmt.Errorf("a network fault needs an ensemble")
		}
		if !slices.Contains(PartitionModes, f.Mode) {
			return fmt.Errorf("unknown partition mode %q", f.Mode)
		}
		if f.Mode != IsoLeader && len(f.Group) == 0 {
			return fmt.Errorf("partition %s with an empty group", f.Mode)
		}
		for _, g := range f.Group {
			if err := server(g); err != nil {
				return err
			}
			if f.Mode == Bridge && g == f.Server {
				return fmt.Errorf("the bridge server %d is in the group", g)
			}
		}
	}
	return server(f.Server)
}

// Voters is how many servers vote (all but the observers).
func (s *Schedule) Voters() int { return s.Servers - s.Observers }

// Quorum is the rule that decides which sets of voters are a quorum: a
// majority of the voters, or the hierarchical quorum of Groups and
// Weights. It fails on groups that do not hold exactly the voters or
// that ZooKeeper would refuse, naming the field.
func (s *Schedule) Quorum() (election.QuorumVerifier, error) {
	voters := make([]int64, s.Voters())
	for i := range voters {
		voters[i] = int64(i + 1)
	}
	if s.Groups == nil {
		if s.Weights != nil {
			return nil, errors.New("weights without groups: a majority quorum weighs every voter 1")
		}
		return election.NewMajority(voters)
	}
	if !s.Ensemble {
		return nil, errors.New("groups for a standalone server")
	}
	var grouped []int64
	for _, g := range s.Groups {
		grouped = append(grouped, g...)
	}
	slices.Sort(grouped)
	if !slices.Equal(grouped, voters) {
		return nil, fmt.Errorf("groups %v must hold each voter (servers 1..%d) once, and no observer", s.Groups, len(voters))
	}
	q, err := election.NewHierarchical(s.Groups, s.Weights)
	if err != nil {
		return nil, fmt.Errorf("groups %v, weights %v: %w", s.Groups, s.Weights, err)
	}
	return q, nil
}

// String prints the schedule as the trace's header shows it.
func (s *Schedule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "schedule seed=%d servers=%d clients=%d ops/client=%d max-think=%dms session-timeout=%dms tick=%dms snap-count=%d safety=%dms liveness=%dms faults=%d\n",
		s.Seed, s.Servers, s.Clients, s.OpsPerClient, s.MaxThinkMs, s.SessionTimeoutMs, s.TickMs, s.SnapCount, s.SafetyMs, s.LivenessMs, len(s.Faults))
	if s.Ensemble {
		fmt.Fprintf(&b, "  ensemble: %d voters, %d observers\n", s.Voters(), s.Observers)
	} else {
		b.WriteString("  standalone\n")
	}
	if s.Groups != nil {
		fmt.Fprintf(&b, "  hierarchical quorum: groups %v", s.Groups)
		if s.Weights != nil {
			fmt.Fprintf(&b, ", weights %v", s.Weights)
		}
		b.WriteString("\n")
	}
	if s.Swarm != nil {
		fmt.Fprintf(&b, "  swarm: fault kinds on: %v\n", s.Swarm)
	}
	if s.SnapshotStepNodes > 0 {
		fmt.Fprintf(&b, "  fuzzy snapshots: %d znodes per step\n", s.SnapshotStepNodes)
	}
	if s.Recipe != "" {
		fmt.Fprintf(&b, "  recipe: %d clients run the %s recipe\n", s.RecipeClients, s.Recipe)
	}
	if s.ZooKeeperSync {
		fmt.Fprintf(&b, "  leaders synchronize by ZooKeeper's rules (mixedEnsemble=true)\n")
	}
	if s.LoopDelayUs > 0 {
		fmt.Fprintf(&b, "  event loops: a Ready %dµs after the first event that waits for one\n", s.LoopDelayUs)
	}
	if s.PeerQueueBytes > 0 {
		fmt.Fprintf(&b, "  peer send queues bounded at %d bytes\n", s.PeerQueueBytes)
	}
	if s.ReapIntervalMs > 0 {
		fmt.Fprintf(&b, "  reaping: empty containers and expired TTL nodes every %dms\n", s.ReapIntervalMs)
	}
	b.WriteString(s.aimedHeader())
	for _, f := range s.Faults {
		fmt.Fprintf(&b, "  fault %s\n", f)
	}
	return b.String()
}

// MarshalIndented is the schedule as a JSON file's content.
func (s *Schedule) MarshalIndented() []byte {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("faults: a Schedule always marshals: %v", err)) // only plain fields
	}
	return append(b, '\n')
}

// Parse reads a schedule from JSON and validates it; unknown fields are
// refused so a typo in a hand-written file does not pass silently.
func Parse(data []byte) (*Schedule, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var s Schedule
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Load reads and validates the schedule file at path.
func Load(path string) (*Schedule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Clone returns a deep copy, for shrinking.
func (s *Schedule) Clone() *Schedule {
	c := *s
	c.Faults = slices.Clone(s.Faults)
	for i := range c.Faults {
		c.Faults[i].Group = slices.Clone(c.Faults[i].Group)
	}
	c.Swarm = slices.Clone(s.Swarm)
	c.Groups = slices.Clone(s.Groups)
	for i := range c.Groups {
		c.Groups[i] = slices.Clone(c.Groups[i])
	}
	c.Weights = maps.Clone(s.Weights)
	c.Aimed = slices.Clone(s.Aimed)
	for i := range c.Aimed {
		c.Aimed[i].Moments = slices.Clone(c.Aimed[i].Moments)
	}
	return &c
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
