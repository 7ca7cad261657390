package zab

import (
	"fmt"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/sessions"
)

// Defaults, as ZooKeeper 3.8 has them.
const (
	DefaultTick                   = 2000 * time.Millisecond
	DefaultSnapCount              = 100000
	DefaultContainerCheckInterval = 60 * time.Second
	DefaultCommittedWindow        = 500
	// StandaloneServerID is the id a standalone ZooKeeper puts in the top
	// byte of its session ids.
	StandaloneServerID = 1
)

// Config is what a Peer needs to know; zero fields take the defaults above.
type Config struct {
	// ServerID is this member's id (myid): the top byte of the session ids
	// it mints. A standalone server uses StandaloneServerID.
	ServerID int64
	// Tick is tickTime: the session expiry granularity.
	Tick time.Duration
	// SessionLimits bounds negotiated session timeouts; zero means 2 and 20
	// ticks.
	SessionLimits sessions.Limits
	// Passwords derives session passwords (set Secret for the ensemble
	// secret; see docs/sessions.md).
	Passwords sessions.Passwords
	// Tree configures the znode tree (super digest, extended types, quotas).
	Tree datatree.Config
	// SnapCount: a snapshot starts after between SnapCount/2 and SnapCount
	// txns (the point is drawn from Rand, as ZooKeeper draws it).
	SnapCount int
	// EnforceAuthSchemes, when set, is enforce.auth.schemes with
	// enforce.auth.enabled (ZooKeeper 3.8's AuthenticationHelper): a
	// connection must hold an identity of one of these schemes (addauth,
	// or x509 from its TLS handshake) before any request but an
	// authentication; another request is answered
	// SessionClosedRequireSaslAuth and the connection closed.
	EnforceAuthSchemes []string
	// ContainerCheckInterval is znode.container.checkIntervalMs: how often
	// empty containers and expired TTL nodes are looked for.
	ContainerCheckInterval time.Duration
	// ContainerMaxNeverUsed is znode.container.maxNeverUsedIntervalMs: a
	// container that never had a child is reaped once this old; 0 (the
	// default) never reaps it.
	ContainerMaxNeverUsed time.Duration
	// SnapshotStepNodes bounds how many znodes one step of a fuzzy
	// snapshot serializes between applies (default 1024).
	SnapshotStepNodes int
	// Bugs switches on deliberate defects, for the simulator's own tests
	// only (see Bugs).
	Bugs Bugs
	// counterLimit, if set, replaces maxCounter as the last zxid counter
	// a leader may propose in an epoch. Only the package's tests set it
	// (export_test.go), to reach the rollover without four billion writes.
	counterLimit int64
	// CommittedWindow is how many recently committed txns are kept in
	// memory for DIFF synchronization.
	CommittedWindow int
	// TxnLog, if set, reads txns back from the member's log, so that a
	// leader synchronizes a learner that is behind its committed window
	// with a DIFF from the log instead of a whole snapshot.
	TxnLog TxnLog
	// Ensemble lists the members of a replicated ensemble; nil runs the
	// member standalone (an ensemble of one, leading epoch 0 from the
	// start, as a standalone ZooKeeper).
	Ensemble *Ensemble
}

func (c *Config) fillDefaults() {
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.SessionLimits == (sessions.Limits{}) {
		c.SessionLimits = sessions.DefaultLimits(c.Tick)
	}
	if c.SnapCount < 2 {
		c.SnapCount = DefaultSnapCount
	}
	if c.ContainerCheckInterval <= 0 {
		c.ContainerCheckInterval = DefaultContainerCheckInterval
	}
	if c.SnapshotStepNodes <= 0 {
		c.SnapshotStepNodes = defaultSnapshotStepNodes
	}
	if c.CommittedWindow <= 0 {
		c.CommittedWindow = DefaultCommittedWindow
	}
}

// TxnLog is the part of the member's log a leader reads to synchronize a
// learner (ZooKeeper's getProposalsFromTxnLog). The shell decides how much
// is worth sending: ZooKeeper reads at most a third of its latest
// snapshot's size (zookeeper.snapshotSizeFactor 0.33) and sends a
// snapshot beyond that.
type TxnLog interface {
	// ReadAfter returns the logged txns with zxids in (after, upTo], in
	// order, and true, if the log holds them all and after is the zxid of
	// a logged txn or the one the log begins after; otherwise false (also
	// when they are more than worth sending).
	ReadAfter(after, upTo int64) ([]datatree.Txn, bool)
}

// Rand is the randomness a Peer draws on (the snapshot point), handed in by
// the shell so that a seed replays a run. *math/rand/v2.Rand satisfies it.
type Rand interface {
	IntN(n int) int
}

// Restored is the state a Peer starts from: the tree and session table
// loaded from the newest snapshot, or a fresh tree and no sessions. The
// txns logged after the snapshot are then fed to Replay, in order, before
// the first Step.
type Restored struct {
	Tree     *datatree.Tree
	Sessions []sessions.Session
	// Digest, if set, is the digest the snapshot recorded after its tree:
	// Replay checks the tree against it once it reaches Digest.Zxid, as
	// ZooKeeper does after loading a fuzzy snapshot.
	Digest *SnapshotDigest
	// AcceptedEpoch and CurrentEpoch are what version-2's acceptedEpoch
	// and currentEpoch files hold (0 when absent); an ensemble member
	// needs them, a standalone one stays in epoch 0.
	AcceptedEpoch, CurrentEpoch int64
	// LogDamaged, if set, says the durable log was damaged and recovery
	// kept only what came before the damage: the member may have
	// acknowledged txns it no longer holds. An ensemble member then
	// abstains from elections (it follows, never votes) until a leader has
	// synchronized it, which restores what it lost from the others; a
	// standalone member cannot recover and must not start with it.
	LogDamaged *LogDamage
}

// LogDamage describes what recovery cut from a damaged log.
type LogDamage struct {
	AfterZxid int64  // the last txn recovery kept
	What      string // the file, offset and cause, for the log
}

// Peer is one replica. It is not safe for concurrent use: one goroutine (the
// shell's event loop) calls Step, Ready and Replay.
type Peer struct {
	cfg Config
	rng Rand
	now Time
	// held are learners' first packets that arrived while this member
	// looked (hold.go).
	held []heldLearner
	// closedConns are the peers whose quorum connection this member asked
	// to close and that have not opened a new one since, nor been reported
	// gone (closeConnection).
	closedConns []int64

	tree     *datatree.Tree
	sessions *sessions.Tracker

	// The role. A member prepares requests only while it leads; an
	// ensemble of one always leads, in epoch 0 (standalone ZooKeeper never
	// leaves epoch 0, so its zxids continue across restarts). Exactly one
	// of lead and learn is set while leading or learning, and the Zab
	// phase is its stage's (phase).
	self     int64
	members  *members
	role     Role
	leaderID int64
	lead     *leaderState
	learn    *learnerState
	quorum   *quorumTracker // the leader's quorum questions

	election       *election.Election // nil when standalone
	electionWakeup time.Duration
	lookingSince   time.Duration
	elections      int64 // elections begun (SoftState.Elections)

	started bool // Start has run
	// damaged: the log lost txns at recovery; cleared once synchronized.
	damaged *LogDamage
	// logFrom is the zxid after which this member's log is known to be
	// its history: the snapshot it started from or installed (a SNAP
	// leaves older, possibly foreign, txns in the log).
	logFrom int64

	// The persistent epochs: acceptedEpoch ≥ currentEpoch.
	acceptedEpoch, currentEpoch int64
	// durable is the last zxid the shell reported durable.
	durable int64

	// The txn pipeline, in zxid order: proposed ≥ durable-at-self ≥
	// committed ≥ applied = tree.LastZxid().
	lastProposed int64
	handedOver   int64      // the last zxid a Ready has handed to the shell's log
	inflight     []proposal // proposed; those from inflightHead on are not yet applied; zxid order
	inflightHead int
	applying     bool // applyCommittedProposals is running (it must not nest)
	window       *committedWindow

	conns  map[ConnID]*conn
	connOf map[int64]ConnID        // session -> its current connection
	queues map[int64]*sessionQueue // per session: requests not yet answered
	// syncWaiters are sessions whose queue head is a sync waiting for its
	// zxid to be applied, in the order they started waiting.
	syncWaiters []int64

	nextReap time.Duration // monotonic time of the next container/TTL scan

	snap        snapshotState
	snapInstall installedSnapshot // a SNAP's tree, until its snapshot is durable
	digestCheck *SnapshotDigest   // the restored snapshot's digest, until replay reaches it
	// digestAhead is the tree's digest at the snapshot's zxid when it was not
	// the snapshot's: a fuzzy ZooKeeper snapshot may already hold the next
	// txn, whose logged digest must then equal it (see checkDigest).
	digestAhead *SnapshotDigest

	// applied is the result of the txn just applied, for the write it
	// answers (see applyCommitted).
	applied datatree.Result

	out Ready
	// appendsHint, messagesHint and peerMessagesHint size the next
	// Ready's slices: the recent high-water marks, halving when the load
	// drops.
	appendsHint, messagesHint, peerMessagesHint int
	// spare holds slices the shell released (Release) for the next Ready
	// whose kind of slice was handed over non-empty.
	spare Ready
	// events is scratch space for the watch events of one apply or read.
	events []datatree.WatchEvent
}

// proposal is a txn between Proposed and Applied.
type proposal struct {
	txn datatree.Txn
}

// New returns a Peer that starts from r at time now. Feed it the logged txns
// with Replay before the first Step.
func New(cfg Config, now Time, rnd Rand, r Restored) (*Peer, error) {
	cfg.fillDefaults()
	if rnd == nil {
		return nil, fmt.Errorf("zab: a Peer needs a random source (the shell's seeded Rand)")
	}
	if err := sessions.ValidateServerID(cfg.ServerID, cfg.Tree.ExtendedTypesEnabled); err != nil {
		return nil, fmt.Errorf("zab: %w", err)
	}
	tree := r.Tree
	if tree == nil {
		tree = datatree.New(cfg.Tree)
	}
	m, err := newMembers(cfg.ServerID, cfg.Ensemble)
	if err != nil {
		return nil, err
	}
	if r.AcceptedEpoch < r.CurrentEpoch {
		return nil, fmt.Errorf("zab: acceptedEpoch %d is below currentEpoch %d: the epoch files are damaged", r.AcceptedEpoch, r.CurrentEpoch)
	}
	p := &Peer{
		cfg:  cfg,
		rng:  rnd,
		now:  now,
		tree: tree,

		self:          cfg.ServerID,
		members:       m,
		window:        newCommittedWindow(cfg.CommittedWindow),
		conns:         make(map[ConnID]*conn),
		connOf:        make(map[int64]ConnID),
		queues:        make(map[int64]*sessionQueue),
		nextReap:      now.Mono + cfg.ContainerCheckInterval,
		acceptedEpoch: r.AcceptedEpoch,
		currentEpoch:  r.CurrentEpoch,
	}
	p.sessions = p.newSessionTracker()
	if cfg.Ensemble != nil {
		if p.election, err = newElection(cfg.ServerID, cfg.Ensemble, m); err != nil {
			return nil, fmt.Errorf("zab: %w", err)
		}
	}
	if d := r.LogDamaged; d != nil {
		if p.election == nil {
			return nil, fmt.Errorf("zab: the log is damaged after zxid 0x%x (%s), and a standalone server has no other member to recover it from", d.AfterZxid, d.What)
		}
		p.damaged = d
		p.election.SetAbstain(true)
		p.warn("log damaged after zxid %s (%s): abstaining from elections until a leader has synchronized this member", zxidHex(d.AfterZxid), d.What)
	}
	for _, s := range r.Sessions {
		p.sessions.Add(s.ID, s.Timeout, now.Mono)
	}
	p.lastProposed = tree.LastZxid()
	p.logFrom = p.lastProposed
	p.handedOver = p.lastProposed
	p.durable = p.lastProposed
	if p.standalone() {
		p.becomeStandaloneLeader()
	}
	p.snap.rearm(p)
	p.digestCheck = r.Digest
	if err := p.checkDigest(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkDigest compares the tree with the restored snapshot's digest once
// replay has reached its zxid. ZooKeeper reads a snapshot's trailer while
// it applies txns, so its tree may already hold the txn after the trailer's
// zxid (ZooKeeper only logs such a mismatch): a mismatch is then accepted
// only if the next logged txn's digest equals the tree's digest before that
// txn replays, that is, if the snapshot really held it (checkAhead).
func (p *Peer) checkDigest() error {
	d := p.digestCheck
	if d == nil || p.tree.LastZxid() < d.Zxid {
		return nil
	}
	p.digestCheck = nil
	if d.Version == datatree.DigestVersion && p.tree.LastZxid() == d.Zxid && p.tree.Digest() != d.Digest {
		p.digestAhead = &SnapshotDigest{Zxid: d.Zxid, Version: d.Version, Digest: d.Digest}
	}
	return nil
}

// checkAhead settles a mismatch checkDigest left open, with the txn that
// replays next (nil at the end of replay).
func (p *Peer) checkAhead(next *datatree.Txn) error {
	d := p.digestAhead
	if d == nil {
		return nil
	}
	p.digestAhead = nil
	if next != nil && next.Digest.Version == d.Version && next.Digest.TreeDigest == p.tree.Digest() {
		return nil
	}
	return fmt.Errorf("zab: tree digest %#x at zxid 0x%x differs from the snapshot's %#x, and the snapshot does not hold the next logged txn either: the snapshot and the log disagree", p.tree.Digest(), d.Zxid, d.Digest)
}

// ReplayDone ends replay: a snapshot digest mismatch that no later txn
// explained is an error.
func (p *Peer) ReplayDone() error { return p.checkAhead(nil) }

// Replay applies a txn read back from the log at start-up: every txn after
// the snapshot's zxid, in zxid order. Those whose effects a fuzzy snapshot
// already holds apply harmlessly, as in ZooKeeper.
func (p *Peer) Replay(txn datatree.Txn) error {
	if txn.Header.Zxid <= p.lastProposed {
		return fmt.Errorf("zab: replaying txn 0x%x after 0x%x: the log is out of order", txn.Header.Zxid, p.lastProposed)
	}
	p.lastProposed = txn.Header.Zxid
	p.handedOver = txn.Header.Zxid
	p.durable = txn.Header.Zxid
	if !p.standalone() {
		// An ensemble member does not know which of its logged txns were
		// committed: they wait as proposals until a leader's
		// synchronization says (ZooKeeper applies them at load and
		// reloads on TRUNC; zabd never applies what may be undone).
		p.inflight = append(p.inflight, proposal{txn: txn})
		return nil
	}
	if err := p.checkAhead(&txn); err != nil {
		return err
	}
	p.applyTxn(&txn)
	p.events = p.events[:0] // nobody watches during replay
	p.quorum.ack(p.self, txn.Header.Zxid)
	return p.checkDigest()
}

// Start ends replay and starts the member: a standalone one serves at
// once; an ensemble member starts looking for a leader. Call it once,
// after the last Replay (and ReplayDone) and before the first Step.
func (p *Peer) Start() {
	if !p.standalone() && !p.started {
		p.started = true
		p.becomeLooking()
	}
}

// newSessionTracker returns an empty session table with the member's
// settings.
func (p *Peer) newSessionTracker() *sessions.Tracker {
	return sessions.NewTracker(sessions.Config{ServerID: p.cfg.ServerID, Tick: p.cfg.Tick, Limits: p.cfg.SessionLimits}, p.now.Mono, p.now.Wall)
}

// standalone reports whether the member is an ensemble of one without an
// election.
func (p *Peer) standalone() bool { return p.cfg.Ensemble == nil }

// durableZxid is the last zxid this member's log holds durably. While the
// snapshot of a tree a SNAP installed is not durable, nothing the member
// holds now is: a crash would bring back its older history.
func (p *Peer) durableZxid() int64 {
	if p.snapInstall.pending {
		return 0
	}
	return min(p.durable, p.handedOver)
}

// commitPoint is the last zxid known committed: on the leader, what a
// quorum has acknowledged; on a learner, what the leader said.
func (p *Peer) commitPoint() int64 {
	switch {
	case p.lead != nil:
		return p.quorum.committed()
	case p.learn != nil:
		return p.learn.committed
	}
	return 0
}

// phase is where the member is in Zab: its role's stage's phase, or
// election while looking.
func (p *Peer) phase() Phase {
	switch {
	case p.lead != nil:
		return p.lead.stage.phase()
	case p.learn != nil:
		return p.learn.stage.phase()
	}
	return PhaseElection
}

// State returns the member's role, as Ready.State last reported it.
func (p *Peer) State() SoftState {
	s := SoftState{Role: p.role, Phase: p.phase(), Leader: p.leaderID, Elections: p.elections}
	switch {
	case p.lead != nil:
		s.Epoch = p.lead.epoch
	case p.learn != nil:
		s.Epoch = p.learn.newEpoch
	}
	return s
}

// Epochs returns the member's acceptedEpoch and currentEpoch.
func (p *Peer) Epochs() (accepted, current int64) { return p.acceptedEpoch, p.currentEpoch }

// Step feeds one event to the Peer at time now.
func (p *Peer) Step(now Time, ev Event) {
	if now.Mono > p.now.Mono {
		p.now.Mono = now.Mono
	}
	p.now.Wall = now.Wall
	switch e := ev.(type) {
	case ConnOpened:
		p.openConn(e.Conn, datatree.Client{Addr: e.Addr, HasCert: e.HasCert, CertSubject: e.CertSubject})
	case ConnectReceived:
		p.handleConnect(e)
	case RequestReceived:
		p.handleRequest(e)
	case ConnClosed:
		p.dropConn(e.Conn)
	case LogDurable:
		p.handleDurable(e.Zxid)
	case SnapshotWritten:
		p.snap.written(e)
		p.syncSnapshotWritten(e)
	case PeerPacket:
		p.stepPeerPacket(e)
	case PeerVote:
		p.stepVote(e)
	case PeerUnreachable:
		p.stepUnreachable(e)
	case PeerDisconnected:
		p.stepPeerGone(e)
	case Tick:
	default:
		p.warn("%s: ignoring a nil event", p.role) // Event is sealed: only nil is unknown
	}
	p.roleTick()
	p.expireSessions()
	p.reapContainers()
}

// Ready hands over the effects accumulated since the last call.
func (p *Peer) Ready() Ready {
	p.snap.advance(p)
	p.advanceSnapStreams()
	rd := p.out
	var held []datatree.Txn
	if p.snapInstall.pending {
		held, rd.Appends = rd.Appends, nil // see installedSnapshot
	}
	if n := len(rd.Appends); n > 0 {
		p.handedOver = rd.Appends[n-1].Header.Zxid
	}
	rd.Wakeup = p.roleWakeup()
	if p.lead != nil && p.lead.stage == leaderBroadcasting {
		// Only an established leader expires sessions and reaps
		// containers; a learner's copies of those deadlines pass
		// unheeded and must not ask for ticks.
		rd.Wakeup = min(rd.Wakeup, p.sessions.NextExpiry(), p.nextReap)
	}
	if p.snap.running != nil || p.streaming() {
		// A snapshot (or a SNAP to a learner) is serialized a bounded
		// step per Ready: ask for the next Step at once, or a snapshot
		// begun just before the writes stopped would advance only as
		// often as timers and pings come.
		rd.Wakeup = p.now.Mono
	}
	// The caller owns rd's slices now; start the next ones at the size
	// this one reached, so a steady load does not regrow them. A slice
	// that stayed empty is not handed over but kept for the next Ready:
	// most Steps (a tick, an ACK) produce nothing of a kind.
	p.appendsHint = max(len(rd.Appends), p.appendsHint/2)
	p.messagesHint = max(len(rd.Messages), p.messagesHint/2)
	p.peerMessagesHint = max(len(rd.PeerMessages), p.peerMessagesHint/2)
	p.out = Ready{
		Appends:      nextOut(&rd.Appends, &p.spare.Appends, p.appendsHint),
		Messages:     nextOut(&rd.Messages, &p.spare.Messages, p.messagesHint),
		PeerMessages: nextOut(&rd.PeerMessages, &p.spare.PeerMessages, p.peerMessagesHint),
	}
	p.out.Appends = append(p.out.Appends, held...)
	return rd
}

// nextOut is the slice the next Ready collects into, after *handed was
// collected into: *handed's own storage if it stayed empty (then the caller
// gets nil instead), or a slice the shell released, or a new one with room
// for hint.
func nextOut[T any](handed, spare *[]T, hint int) []T {
	if len(*handed) == 0 {
		kept := *handed
		*handed = nil
		return kept
	}
	if *spare != nil {
		reused := *spare
		*spare = nil
		return reused
	}
	return make([]T, 0, hint)
}

// Release hands back the slices of rd, a Ready this Peer returned, once the
// shell has carried it out and keeps nothing that points into them (it may
// keep what their elements point to: bodies, packets' data): later Readys
// collect into them instead of allocating. rd is emptied. A shell need not
// call it; the simulator does, as a Ready comes with nearly every Step.
func (p *Peer) Release(rd *Ready) {
	release(&rd.Appends, &p.spare.Appends)
	release(&rd.Messages, &p.spare.Messages)
	release(&rd.PeerMessages, &p.spare.PeerMessages)
	*rd = Ready{}
}

// release keeps *handed's storage, cleared, as the spare for its kind.
func release[T any](handed, spare *[]T) {
	if cap(*handed) == 0 {
		return
	}
	clear(*handed) // drop what the elements point to
	*spare = (*handed)[:0]
}

// LastZxid returns the zxid of the last txn applied to the tree.
func (p *Peer) LastZxid() int64 { return p.tree.LastZxid() }

// Digest returns the tree digest.
func (p *Peer) Digest() int64 { return p.tree.Digest() }

// Tree returns the replica's tree, for inspection by tests and tools; it
// must not be changed.
func (p *Peer) Tree() *datatree.Tree { return p.tree }

// SessionExpiry returns the expiry schedule of the sessions this member
// expires, bucket by bucket (monotonic times), for ZooKeeper's dump.
func (p *Peer) SessionExpiry() []sessions.Bucket { return p.sessions.ExpiryBuckets() }

// OutstandingRequests counts the requests received and not yet answered
// (ZooKeeper's outstanding_requests), the server's own included.
func (p *Peer) OutstandingRequests() int {
	n := len(p.inflight) - p.inflightHead // proposals, answered or not
	for _, q := range p.queues {
		for _, pd := range q.items[q.head:] {
			if pd.kind != kindWrite && pd.kind != kindConnect {
				n++ // waiting reads and syncs; their writes are counted above
			}
		}
	}
	return n
}

// SessionTable returns the sessions whose creation has been applied, by id.
func (p *Peer) SessionTable() []sessions.Session { return p.sessions.Table() }

func (p *Peer) send(m Message) { p.out.Messages = append(p.out.Messages, m) }
