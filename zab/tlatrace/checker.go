package tlatrace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// Config is the ensemble a Checker follows.
type Config struct {
	// Voters and Observers are the members' ids.
	Voters, Observers []int64
	// Quorum decides which sets of voters are quorums (the ensemble's).
	Quorum election.QuorumVerifier
	// Note, if set, is told of every allowance the checker takes, with the
	// member and the zxid or epoch concerned.
	Note func(a Allowance, member, zxid int64)
}

// Packet is what the checker reads of a quorum packet.
type Packet struct {
	Type wire.PacketType
	Zxid int64
	// Epoch is an ACKEPOCH's currentEpoch (-1: the learner had accepted
	// the epoch before); 0 for other packets.
	Epoch int64
}

// Send is one of a Ready's quorum messages, as it left: a packet to a
// peer, or the close of the connection with it.
type Send struct {
	To     int64
	Close  bool
	Packet Packet
}

// Step is what one member did in one step: the event it took, then the
// Ready that followed, as the Peer asked for it — the truncation, the
// epochs, the appends and the quorum messages, in order — with its tree
// and role once it was taken. A shell whose disk writes and sends lag the
// Ready reports those as they happen (EpochsWritten, Left).
type Step struct {
	Member int64
	// The event, if it came from a peer: a packet (Received) or the end
	// of the connection with From (Gone). Other events (ticks, fsyncs
	// done, snapshots written, clients) leave both unset.
	From     int64
	Received bool
	Packet   Packet
	Gone     bool
	// Installed: a SNAP replaced the tree at InstalledAt. Truncated: the
	// log lost every txn after TruncatedAt.
	Installed   bool
	InstalledAt int64
	Truncated   bool
	TruncatedAt int64
	// Appends are the zxids the Ready appends to the log, in order.
	Appends []int64
	// Epochs: the Ready writes the epoch files, Accepted and Current (the
	// epochs the spec's acceptedEpoch and currentEpoch become). Durable is
	// how far the Peer has heard its log is durable; Snapshot, the zxid of
	// the newest snapshot written.
	Epochs            bool
	Accepted, Current int64
	Durable, Snapshot int64
	// Applied is the tree's last zxid and State the Peer's role, after the
	// step.
	Applied int64
	State   zab.SoftState
	// Sends are the Ready's quorum messages, in order.
	Sends []Send
}

// Reset empties s for reuse, keeping its slices' storage.
func (s *Step) Reset(member int64) {
	appends, sends := s.Appends[:0], s.Sends[:0]
	*s = Step{Member: member, Appends: appends, Sends: sends}
}

// Disk is what a member's disk holds when it starts.
type Disk struct {
	Accepted, Current int64
	// Snapshot is the newest durable snapshot's zxid and Log the zxids
	// the log holds after it, ascending.
	Snapshot int64
	Log      []int64
	// Applied is the zxid of the tree the member starts with.
	Applied int64
}

// Durability is what a member's disk holds durably at one moment: the
// epoch files, the log up to Log, and the newest snapshot (up to
// Snapshot).
type Durability struct {
	Accepted, Current int64
	Log, Snapshot     int64
}

// holds is how far the disk holds the member's history durably.
func (d Durability) holds() int64 { return max(d.Log, d.Snapshot) }

// Violation is a step the spec does not allow: the spec action the step
// was taken for, the member, and what happened with the guard that failed.
type Violation struct {
	Action string
	Member int64
	Detail string
}

func (v *Violation) Error() string { return v.Action + ": " + v.Detail }

// Checker follows an ensemble's members step by step, keeping the spec's
// state as the steps build it, and refuses the first step no action allows.
// It is deterministic and allocates little per step.
type Checker struct {
	cfg     Config
	members []*member // by id; nil for ids that are no member
	// epochLeader is the spec's ghost variable: the member that took each
	// epoch to synchronization.
	epochLeader map[int64]int64
	allowed     Counts
	ids         []int64 // scratch
}

// New returns a Checker of an ensemble whose members have not started.
func New(cfg Config) *Checker {
	c := &Checker{cfg: cfg, epochLeader: map[int64]int64{}}
	top := int64(0)
	for _, id := range slices.Concat(cfg.Voters, cfg.Observers) {
		top = max(top, id)
	}
	c.members = make([]*member, top+1)
	for _, id := range cfg.Voters {
		c.members[id] = &member{id: id, voter: true}
	}
	for _, id := range cfg.Observers {
		c.members[id] = &member{id: id, observer: true}
	}
	for _, m := range c.members {
		if m != nil {
			m.ld.l = make([]learnerRec, top+1)
			m.ld.acks = make([]int64, top+1)
			m.ld.epochAcks = make([]bool, top+1)
			m.due = make([][]sendDue, top+1)
		}
	}
	return c
}

// Allowed returns how often each allowance was taken so far.
func (c *Checker) Allowed() Counts { return c.allowed }

func (c *Checker) member(id int64) *member {
	if id <= 0 || id >= int64(len(c.members)) {
		return nil
	}
	return c.members[id]
}

func (c *Checker) allow(a Allowance, m *member, zxid int64) {
	c.allowed[a]++
	if c.cfg.Note != nil {
		c.cfg.Note(a, m.id, zxid)
	}
}

func (c *Checker) fail(m *member, action, format string, args ...any) *Violation {
	return &Violation{Action: action, Member: m.id, Detail: fmt.Sprintf("server %d ", m.id) + fmt.Sprintf(format, args...)}
}

// member is the spec's state of one member, as the steps built it.
type member struct {
	id              int64
	voter, observer bool
	up              bool
	started         bool // it started before: its disk must hold what it wrote

	// The spec's acceptedEpoch and currentEpoch: the epoch files as the
	// member's steps ask to write them; wroteAccepted and wroteCurrent,
	// as they were last written (a crash loses a write not yet done, with
	// the packets that waited for it).
	accepted, current           int64
	wroteAccepted, wroteCurrent int64
	// hist is the spec's history: every txn the member logged (or holds
	// from a snapshot), durable or not. durable is how far it is durable;
	// installing: a SNAP replaced it at installAt, and the snapshot of the
	// new tree is not durable yet, so none of it is.
	hist       history
	durable    int64
	installing bool
	installAt  int64
	// applied is the tree's last zxid (the system spec's lastProcessed);
	// committed, the last zxid it knows committed (lastCommitted).
	applied, committed int64
	// expect are the zxids of the PROPOSALs (INFORMs) taken and not yet
	// appended, in order: a Ready appends them, or holds them until the
	// snapshot of a tree a SNAP installed is durable.
	expect []int64
	// inSnap is the SNAP the leader last sent it: the leader's history up
	// to the SNAP's zxid, which the member's history becomes.
	inSnap struct {
		from, zxid int64
		hist       history
	}

	// held are the introductions (FOLLOWERINFO, OBSERVERINFO) taken while
	// looking, by arrival, which the member takes as leader if it leads.
	held []heldInfo
	// closed are the peers whose connection the member closed (a Close
	// among its sends) and that have not opened a new one since (an
	// introduction to it, or a LEADERINFO on the connection it opened),
	// nor been reported gone: what else comes from them was on the closed
	// connection, and the spec's FilterNonexistentMessage discards it.
	closed []int64

	// The role: the spec's state, zabState and (for learners) the leader.
	role      zab.Role
	phase     zab.Phase
	leader    int64
	elections int64 // the Peer's election count (SoftState.Elections) last seen
	// leaves is how many times the member goes back to LOOKING in the
	// step being checked and has not yet been seen to (its election count
	// tells how many).
	leaves int64
	ln     learnerRole
	ld     leaderRole

	// What the disk must hold when a write or a send the Ready asked for
	// is carried out (EpochsWritten, Left): epochsDue in order, due by
	// destination, each in the order the Readys asked.
	epochsDue []epochDue
	due       [][]sendDue
}

// epochDue: when currentEpoch becomes epoch on disk, the history must be
// durable up to history (the spec's FollowerProcessNEWLEADER sets both at
// once).
type epochDue struct{ epoch, history int64 }

// sendDue: when the packet leaves, the epoch files must hold at least
// accepted and current, and the disk the history up to history.
type sendDue struct {
	typ                        wire.PacketType
	zxid                       int64
	accepted, current, history int64
}

// heldInfo is an introduction from a learner, held while the member looks.
type heldInfo struct {
	from int64
	p    Packet
}

// learnerRole is a following or observing member's view of its leader in
// the current role.
type learnerRole struct {
	// leaderInfo is the epoch of the LEADERINFO taken (0: none yet), and
	// acceptedBefore the acceptedEpoch when it came.
	leaderInfo, acceptedBefore int64
	ackEpochSent               bool
	// syncMode is the DIFF, TRUNC or SNAP taken (0: none yet); truncTo,
	// the TRUNC's zxid; snapTo, the SNAP's.
	syncMode        wire.PacketType
	truncTo, snapTo int64
	// keptThrough: the learner kept its history through this zxid at a
	// SNAP below it (SnapBelowApplied).
	keptThrough int64
	// syncProposals: PROPOSALs of a DIFF came before NEWLEADER (the spec's
	// learner ACKs them after its NEWLEADER ACK).
	syncProposals bool
	// newLeader is NEWLEADER's epoch (0: none yet), newLeaderEnd the last
	// zxid the member held then: what its NEWLEADER ACK vouches for.
	newLeader, newLeaderEnd int64
	newLeaderAcked          bool
	lastAcked               int64 // the last zxid its ACKs covered
	upToDate                bool
}

// leaderRole is a leading member's view of its learners in the current
// role.
type leaderRole struct {
	// epoch is the epoch proposed (0: FOLLOWERINFO not yet from a quorum).
	// seq numbers the introductions taken; departed are those of voters
	// gone before the epoch was fixed (the spec's tempMaxEpoch still
	// counts them).
	epoch, seq int64
	departed   []intro
	// initialEnd is the last zxid of the initial history (from
	// synchronization on); committed, the spec's lastCommitted.
	initialEnd, committed int64
	l                     []learnerRec // by id
	// acks is each voter's highest acknowledged zxid (the spec's ackSid):
	// kept when its connection goes, forgotten when it introduces itself
	// again. epochAcks: the voters whose ACKEPOCH counts (the spec's
	// electing with inQuorum), kept when their connection goes.
	acks      []int64
	epochAcks []bool
}

// intro is one introduction a leader took: in which order, and the
// acceptedEpoch it carried.
type intro struct{ seq, epoch int64 }

// learnerRec is a leader's record of one learner on its current connection.
type learnerRec struct {
	connected      bool // it sent FOLLOWERINFO (OBSERVERINFO) on the connection
	observer       bool
	seq            int64 // when, among the leader's introductions
	infoEpoch      int64 // its acceptedEpoch, from FOLLOWERINFO
	leaderInfoSent bool
	// From its ACKEPOCH: its last zxid and currentEpoch; tooRecent: its
	// history is more recent than the leader's (the spec's logOk fails).
	ackEpoch            bool
	peerLast, peerEpoch int64
	tooRecent           bool
	// synced: DIFF, TRUNC or SNAP sent (the spec's forwarding); syncEnd is
	// the leader's last zxid then. sentUpTo and commitUpTo are the last
	// zxids it was sent (or held) and told committed.
	synced               bool
	syncEnd              int64
	sentUpTo, commitUpTo int64
	newLeaderSent        bool
	syncedUpTo           int64 // what its NEWLEADER ACK vouches for
	newLeaderAcked       bool
	ackedUpTo            int64
	upToDateSent         bool
}

func (m *member) learning() bool {
	return m.role == zab.RoleFollowing || m.role == zab.RoleObserving
}

// durableTo is how far the member's history is durable.
func (m *member) durableTo() int64 {
	if m.installing {
		return 0
	}
	return m.durable
}

// queuedLast is the last zxid of the history with the PROPOSALs taken and
// not yet appended: the spec's LastQueued.
func (m *member) queuedLast() int64 {
	if n := len(m.expect); n > 0 {
		return m.expect[n-1]
	}
	return m.hist.last()
}

// queuedNext is the first zxid above z in the queued history (0: none).
func (m *member) queuedNext(z int64) int64 {
	if n := m.hist.next(z); n != 0 {
		return n
	}
	for _, e := range m.expect {
		if e > z {
			return e
		}
	}
	return 0
}

// queuedBelow is the last zxid under z in the queued history (0: none).
func (m *member) queuedBelow(z int64) int64 {
	for i := len(m.expect) - 1; i >= 0; i-- {
		if m.expect[i] < z {
			return m.expect[i]
		}
	}
	return m.hist.below(z)
}

// dropExpectAbove forgets the PROPOSALs taken above z (a truncation or a
// SNAP cut them off, as the Peer drops the appends it had not handed over).
func (m *member) dropExpectAbove(z int64) {
	m.expect = slices.DeleteFunc(m.expect, func(e int64) bool { return e > z })
}

// isNext is the spec's IsNextZxid: the next counter of the same epoch, or
// the first of a later one.
func isNext(cur, next int64) bool {
	if counterOf(next) == 1 {
		return epochOf(cur) < epochOf(next)
	}
	return counterOf(next) > 1 && epochOf(cur) == epochOf(next) && cur+1 == next
}

// Started: member id recovered from disk and is about to run (the spec's
// NodeStart, after the NodeCrash of its previous run, if any).
func (c *Checker) Started(id int64, d Disk) *Violation {
	m := c.member(id)
	if m == nil {
		return nil
	}
	m.up = true
	c.leaveRole(m)
	m.elections, m.leaves = 0, 0
	m.expect, m.installing, m.held, m.closed = m.expect[:0], false, m.held[:0], m.closed[:0]
	m.inSnap.from, m.inSnap.zxid = 0, 0
	first := !m.started
	m.started = true
	switch {
	case first:
		// The checker begins here: the disk is the spec's initial state.
	case d.Accepted < m.wroteAccepted || d.Current < m.wroteCurrent:
		return c.fail(m, "NodeStart", "starts with acceptedEpoch %d and currentEpoch %d, below the %d and %d it wrote: the spec's epochs survive a crash", d.Accepted, d.Current, m.wroteAccepted, m.wroteCurrent)
	case d.Accepted > m.wroteAccepted:
		return c.fail(m, "NodeStart", "starts with acceptedEpoch %d, above the %d it wrote", d.Accepted, m.wroteAccepted)
	case d.Current > m.wroteCurrent:
		c.allow(UpdatingEpoch, m, d.Current)
	}
	m.accepted, m.current = d.Accepted, d.Current
	m.wroteAccepted, m.wroteCurrent = d.Accepted, d.Current
	// What the disk holds: the history up to its snapshot (the snapshot
	// holds a prefix of the history it was taken of, whatever the member
	// did since), then the log.
	m.hist.cut(d.Snapshot)
	for _, z := range d.Log {
		if z > m.hist.last() {
			m.hist.add(z)
		}
	}
	m.durable = m.hist.last()
	m.applied, m.committed = d.Applied, d.Applied
	return nil
}

// Crashed: member id's process died; what it had not yet written or sent
// is lost.
func (c *Checker) Crashed(id int64) {
	m := c.member(id)
	if m == nil || !m.up {
		return
	}
	c.leaveRole(m)
	m.up = false
	m.epochsDue = m.epochsDue[:0]
	for i := range m.due {
		m.due[i] = m.due[i][:0]
	}
}

// Step checks one step of a member (see Step).
func (c *Checker) Step(st *Step) *Violation {
	m := c.member(st.Member)
	if m == nil || !m.up {
		return nil
	}
	return c.step(m, st)
}

func (c *Checker) step(m *member, st *Step) *Violation {
	// The member goes back to LOOKING during the step as many times as its
	// election count rose (the spec's FollowerShutdown, LeaderShutdown or a
	// timeout); the steps of its old role come before that, those of the
	// new one after.
	m.leaves = max(0, st.State.Elections-m.elections)
	changed := m.leaves > 0
	if st.Received {
		if v := c.receive(m, st.From, &st.Packet); v != nil {
			return v
		}
	}
	if st.Gone {
		if m.role == zab.RoleLeading {
			c.removeLearner(m, st.From)
		}
		c.forgetHeld(m, st.From)
		m.closed = slices.DeleteFunc(m.closed, func(id int64) bool { return id == st.From })
	}
	if !changed && m.role == zab.RoleLooking && st.State.Role == zab.RoleLeading {
		// Elected in this step: it leads before anything else it does
		// (ZabTurnToLeading), and takes the introductions it held.
		if v := c.enterLeading(m); v != nil {
			return v
		}
	}
	if st.Installed {
		if v := c.install(m, st.InstalledAt); v != nil {
			return v
		}
	}
	if st.Truncated {
		if v := c.truncate(m, st); v != nil {
			return v
		}
	}
	c.durability(m, st)
	if v := c.epochs(m, st, changed); v != nil {
		return v
	}
	for _, z := range st.Appends {
		if v := c.appendTxn(m, z); v != nil {
			return v
		}
	}
	if v := c.apply(m, st); v != nil {
		return v
	}
	if !changed {
		if v := c.samePhase(m, st); v != nil {
			return v
		}
	}
	for i := range st.Sends {
		if v := c.send(m, &st.Sends[i]); v != nil {
			return v
		}
	}
	return c.settle(m, st)
}

// leaveRole is the spec's FollowerShutdown and LeaderShutdown for the
// member itself: its learners learn of it from their connections'
// closes (PacketFromFormerLeader).
func (c *Checker) leaveRole(m *member) {
	m.role, m.phase, m.leader = zab.RoleLooking, zab.PhaseElection, 0
	m.ln = learnerRole{}
	c.resetLeader(m)
}

// leave is leaveRole for one of the step's returns to LOOKING.
func (c *Checker) leave(m *member) {
	c.leaveRole(m)
	m.leaves = max(0, m.leaves-1)
}

func (c *Checker) resetLeader(m *member) {
	ld := &m.ld
	clear(ld.l)
	clear(ld.acks)
	clear(ld.epochAcks)
	ld.epoch, ld.seq, ld.initialEnd, ld.committed = 0, 0, 0, 0
	ld.departed = ld.departed[:0]
}

// enterLeading is the spec's ZabTurnToLeading.
func (c *Checker) enterLeading(m *member) *Violation {
	if !m.voter {
		return c.fail(m, "ZabTurnToLeading", "leads, but it is an observer")
	}
	m.role, m.phase, m.leader = zab.RoleLeading, zab.PhaseDiscovery, m.id
	c.resetLeader(m)
	m.ld.committed = m.applied
	for i := range m.held {
		c.introduced(m, m.held[i].from, &m.held[i].p)
	}
	m.held = m.held[:0]
	return nil
}

// forgetHeld drops the introduction held from a learner (its connection
// went, or the member refused it).
func (c *Checker) forgetHeld(m *member, from int64) {
	m.held = slices.DeleteFunc(m.held, func(h heldInfo) bool { return h.from == from })
}

// removeLearner is the spec's RemoveLearner: the leader forgets learner j's
// connection (its acknowledgements stay).
func (c *Checker) removeLearner(m *member, j int64) {
	if j <= 0 || j >= int64(len(m.ld.l)) {
		return
	}
	if rec := &m.ld.l[j]; rec.connected && m.ld.epoch == 0 && c.isVoter(j) {
		m.ld.departed = append(m.ld.departed, intro{seq: rec.seq, epoch: rec.infoEpoch})
	}
	m.ld.l[j] = learnerRec{}
}

// receive takes the packet of the step: the receiving action's guards on
// what was sent, and the role's record of it. Its effects on the disk
// (epochs, the log) are checked as they show.
func (c *Checker) receive(m *member, from int64, p *Packet) *Violation {
	if i := slices.Index(m.closed, from); i >= 0 {
		if !zab.OpensConnection(p.Type) {
			return nil // on the connection the member closed
		}
		m.closed = slices.Delete(m.closed, i, i+1)
	}
	switch p.Type {
	case wire.PacketFollowerInfo, wire.PacketObserverInfo:
		switch m.role {
		case zab.RoleLeading:
			c.introduced(m, from, p)
		case zab.RoleLooking:
			// Held until the member leads: the spec's learner connects
			// to a member that already leads, as ZooKeeper's retries
			// its connection until the leader's acceptor runs.
			c.allow(IntroductionToNonLeader, m, p.Zxid)
			c.forgetHeld(m, from)
			m.held = append(m.held, heldInfo{from: from, p: *p})
		default:
			c.allow(IntroductionToNonLeader, m, p.Zxid) // refused
		}
		return nil
	case wire.PacketAckEpoch, wire.PacketAck:
		if m.role != zab.RoleLeading || !m.ld.l[from].connected {
			c.allow(PacketToAnotherRole, m, p.Zxid)
			return nil
		}
		if p.Type == wire.PacketAckEpoch {
			c.ackEpoch(m, from, p)
			return nil
		}
		return c.ack(m, from, p)
	case wire.PacketLeaderInfo, wire.PacketDiff, wire.PacketTrunc, wire.PacketSnap, wire.PacketProposal,
		wire.PacketCommit, wire.PacketInform, wire.PacketNewLeader, wire.PacketUpToDate:
		if !m.learning() || m.leader != from {
			c.allow(PacketToAnotherRole, m, p.Zxid)
			return nil
		}
		if l := c.member(from); l.role != zab.RoleLeading {
			c.allow(PacketFromFormerLeader, m, p.Zxid)
		}
		return c.learnerReceive(m, p)
	}
	return nil // PING, REQUEST, REVALIDATE, SYNC: not Zab's
}

// introduced is the spec's LeaderProcessFOLLOWERINFO for learner j: its
// record starts afresh, and its acknowledgements from an earlier
// connection no longer count.
func (c *Checker) introduced(m *member, j int64, p *Packet) {
	ld := &m.ld
	c.removeLearner(m, j) // a new connection replaces its earlier one
	ld.seq++
	ld.l[j] = learnerRec{connected: true, observer: p.Type == wire.PacketObserverInfo, seq: ld.seq, infoEpoch: epochOf(p.Zxid)}
	ld.acks[j] = 0
}

// ackEpoch is the spec's LeaderProcessACKEPOCH taking j's ACKEPOCH: it
// counts towards the quorum that ends discovery unless j had accepted the
// epoch before (-1), and a learner more recent than the leader (logOk
// false) must make it look again.
func (c *Checker) ackEpoch(m *member, j int64, p *Packet) {
	rec := &m.ld.l[j]
	rec.ackEpoch, rec.peerLast, rec.peerEpoch = true, p.Zxid, p.Epoch
	if p.Epoch == -1 || m.phase != zab.PhaseDiscovery {
		return
	}
	if p.Epoch > m.current || p.Epoch == m.current && p.Zxid > m.hist.last() {
		rec.tooRecent = true
		return
	}
	if c.isVoter(j) {
		m.ld.epochAcks[j] = true
	}
}

// ack is the spec's LeaderProcessACKLD (an ACK of NEWLEADER, counter 0)
// and LeaderProcessACK (of a proposal).
func (c *Checker) ack(m *member, j int64, p *Packet) *Violation {
	ld := &m.ld
	rec := &ld.l[j]
	z := p.Zxid
	if counterOf(z) == 0 {
		switch {
		case epochOf(z) != ld.epoch:
			return c.fail(m, "LeaderProcessACKLD", "takes a NEWLEADER ACK %s from server %d, for another epoch than its %d (match)", hex(z), j, ld.epoch)
		case !rec.newLeaderSent:
			return c.fail(m, "LeaderProcessACKLD", "takes a NEWLEADER ACK from server %d, which it sent no NEWLEADER", j)
		case rec.newLeaderAcked:
			return nil // ZooKeeper's learner ACKs again after UPTODATE; the leader ignores it
		}
		rec.newLeaderAcked, rec.ackedUpTo = true, rec.syncedUpTo
		if c.isVoter(j) {
			ld.acks[j] = max(ld.acks[j], rec.syncedUpTo)
		}
		return nil
	}
	if !rec.newLeaderAcked {
		if rec.newLeaderSent && z <= rec.syncedUpTo {
			c.allow(EarlyAckOfSyncTxns, m, z)
			return nil
		}
		return c.fail(m, "LeaderProcessACK", "takes ACK %s from server %d before its NEWLEADER ACK", hex(z), j)
	}
	if rec.observer {
		c.allow(Observers, m, z)
		return nil // an observer's ACK counts for nothing
	}
	if want := m.hist.next(rec.ackedUpTo); z != want {
		return c.fail(m, "LeaderProcessACK", "takes ACK %s from server %d, whose next ACK is of %s, the txn after %s in its history (exist, monotonicallyInc)", hex(z), j, hex(want), hex(rec.ackedUpTo))
	}
	rec.ackedUpTo = z
	ld.acks[j] = max(ld.acks[j], z)
	return nil
}

// learnerReceive is the learner's receiving action for a packet from its
// leader.
func (c *Checker) learnerReceive(m *member, p *Packet) *Violation {
	l := &m.ln
	z := p.Zxid
	switch p.Type {
	case wire.PacketLeaderInfo:
		if l.leaderInfo != 0 {
			return c.fail(m, "FollowerProcessLEADERINFO", "takes a second LEADERINFO %s on one connection (stateOk)", hex(z))
		}
		l.leaderInfo, l.acceptedBefore = epochOf(z), m.accepted
	case wire.PacketDiff, wire.PacketTrunc, wire.PacketSnap:
		if !l.ackEpochSent || l.syncMode != 0 {
			return c.fail(m, "FollowerProcessSyncMessage", "takes %s %s before its ACKEPOCH or after another DIFF, TRUNC or SNAP (stateOk)", p.Type, hex(z))
		}
		l.syncMode = p.Type
		switch p.Type {
		case wire.PacketDiff:
			// What it holds up to the leader's last committed zxid is
			// committed (the Zab 1.0 rule; the spec: the whole history).
			m.committed = max(m.committed, min(z, m.queuedLast()))
		case wire.PacketTrunc:
			// Its history is the spec's with the PROPOSALs it took and
			// has not logged yet (held behind a SNAP's install, or queued
			// for the disk): the spec logs them on receipt.
			if !m.hist.contains(z) && !slices.Contains(m.expect, z) {
				return c.fail(m, "FollowerProcessSyncMessage", "is sent TRUNC %s, a zxid its history does not hold (truncOk)", hex(z))
			}
			if z < m.applied {
				return c.fail(m, "FollowerProcessSyncMessage", "is sent TRUNC %s, below %s, the last txn it applied (truncOk)", hex(z), hex(m.applied))
			}
			l.truncTo = z
			m.committed = max(m.committed, z)
		case wire.PacketSnap:
			if m.inSnap.from != m.leader || m.inSnap.zxid != z {
				return c.fail(m, "FollowerProcessSyncMessage", "takes SNAP %s, which its leader %d did not send it", hex(z), m.leader)
			}
			l.snapTo = z
		}
	case wire.PacketProposal, wire.PacketInform:
		if l.syncMode == 0 {
			return c.fail(m, "FollowerProcessPROPOSALInSync", "takes %s %s before DIFF, TRUNC or SNAP (stateOk)", p.Type, hex(z))
		}
		if p.Type == wire.PacketInform {
			c.allow(Observers, m, z)
		}
		inform := p.Type == wire.PacketInform
		takes := !m.observer && !inform || // a follower's PROPOSAL
			m.observer && !inform && !l.upToDate || // an observer's, in synchronization
			m.observer && inform && (l.newLeader != 0 || l.upToDate) // an observer's INFORM, after NEWLEADER
		if !takes {
			return nil // it leaves the epoch; the leader's send is checked in forward
		}
		if !isNext(m.queuedLast(), z) {
			if l.upToDate {
				return c.fail(m, "FollowerProcessPROPOSAL", "takes %s %s after %s: not the next zxid (isNext)", p.Type, hex(z), hex(m.queuedLast()))
			}
			return nil // the spec's learner ignores it in synchronization
		}
		m.expect = append(m.expect, z)
		if l.syncMode == wire.PacketDiff && l.newLeader == 0 {
			l.syncProposals = true
		}
		if p.Type == wire.PacketInform {
			m.committed = max(m.committed, z)
		}
	case wire.PacketCommit:
		if l.syncMode == 0 {
			return c.fail(m, "FollowerProcessCOMMITInSync", "takes COMMIT %s before DIFF, TRUNC or SNAP (stateOk)", hex(z))
		}
		next := m.queuedNext(m.committed)
		switch {
		case !l.upToDate && z <= l.keptThrough:
			return nil // a txn it kept at a SNAP below it (SnapBelowApplied)
		case l.upToDate && next == 0:
			return nil // the spec warns of a commit without its txn and goes on
		case l.upToDate && next != z:
			return c.fail(m, "FollowerProcessCOMMIT", "takes COMMIT %s, but its first pending txn is %s (match)", hex(z), hex(next))
		case next != z:
			return c.fail(m, "FollowerProcessCOMMITInSync", "takes COMMIT %s, but the txn after its last committed %s is %s (exist, match)", hex(z), hex(m.committed), hex(next))
		}
		m.committed = z
	case wire.PacketNewLeader:
		if l.syncMode == 0 || l.newLeader != 0 {
			return c.fail(m, "FollowerProcessNEWLEADER", "takes NEWLEADER %s before DIFF, TRUNC or SNAP, or a second time", hex(z))
		}
		l.newLeader, l.newLeaderEnd = epochOf(z), m.queuedLast()
	case wire.PacketUpToDate:
		if !l.newLeaderAcked {
			return c.fail(m, "FollowerProcessUPTODATE", "takes UPTODATE before it ACKed NEWLEADER")
		}
		l.upToDate = true
		// The initial history is committed (Zab.tla's COMMITLD): every txn
		// of an older epoch it holds.
		m.committed = max(m.committed, m.queuedBelow(makeZxid(l.newLeader, 0)))
	}
	return nil
}

// install: a SNAP replaced the member's tree (FollowerProcessSyncMessage's
// SNAP branch): its history is the leader's up to the SNAP's zxid, durable
// once the snapshot of the new tree is.
func (c *Checker) install(m *member, z int64) *Violation {
	if !m.learning() || m.ln.syncMode != wire.PacketSnap || m.ln.snapTo != z {
		return c.fail(m, "FollowerProcessSyncMessage", "replaces its tree with a snapshot at %s without a SNAP of it", hex(z))
	}
	m.hist.copyUpTo(&m.inSnap.hist, z)
	m.installing, m.installAt = true, z
	m.applied = z
	m.committed = max(m.committed, z)
	m.dropExpectAbove(z)
	return nil
}

// truncate: the log lost every txn after a zxid, at a TRUNC, or at a SNAP
// replacing the history.
func (c *Checker) truncate(m *member, st *Step) *Violation {
	z := st.TruncatedAt
	trunc := m.learning() && m.ln.syncMode == wire.PacketTrunc && m.ln.truncTo == z
	snap := st.Installed && st.InstalledAt == z
	kept := m.learning() && m.ln.syncMode == wire.PacketSnap && !st.Installed && m.ln.snapTo < z && z == m.applied
	if !trunc && !snap && !kept {
		return c.fail(m, "FollowerProcessSyncMessage", "truncates its log after %s without a TRUNC or SNAP to it", hex(z))
	}
	if kept {
		// Its history up to the SNAP's zxid must be the leader's; what it
		// applied after is committed, and so in the leader's history too
		// (each later txn the leader sends is checked as it comes).
		if !m.hist.samePrefix(&m.inSnap.hist, m.ln.snapTo) {
			return c.fail(m, "FollowerProcessSyncMessage", "keeps its history at SNAP %s, but its history up to there is not its leader's", hex(m.ln.snapTo))
		}
		c.allow(SnapBelowApplied, m, z)
		m.ln.keptThrough = z
		m.committed = max(m.committed, z)
	}
	m.hist.cut(z)
	m.durable = min(m.durable, z)
	m.dropExpectAbove(z)
	return nil
}

// durability takes what the disk made durable: the log's txns, and the
// snapshot of a tree a SNAP installed.
func (c *Checker) durability(m *member, st *Step) {
	if m.installing && st.Snapshot >= m.installAt {
		m.installing, m.durable = false, m.installAt
	}
	if !m.installing {
		m.durable = max(m.durable, min(st.Durable, m.hist.last()))
	}
}

// epochs takes the epoch files' writes. In the spec a member sets
// acceptedEpoch and currentEpoch in the action that sends what depends on
// them; here they must be durable before those sends leave, and each write
// must be one an action makes.
func (c *Checker) epochs(m *member, st *Step, changed bool) *Violation {
	if !st.Epochs {
		return nil
	}
	for _, which := range [...]bool{false, true} {
		now, was := st.Accepted, m.accepted
		if which {
			now, was = st.Current, m.current
		}
		if now == was {
			continue
		}
		if now < was {
			return c.fail(m, "EpochWrite", "writes an epoch file back from %d to %d: the spec only raises acceptedEpoch and currentEpoch", was, now)
		}
		write := c.acceptedWrite
		if which {
			write = c.currentWrite
		}
		v := write(m, now)
		if v != nil && changed && m.voter && m.role != zab.RoleLeading {
			// A member that began to lead in this very step and fixed its
			// epoch at once (a quorum of one voter, or the introductions it
			// held), whether or not it still leads at the step's end.
			if m.role != zab.RoleLooking {
				c.leave(m)
			}
			// The returns to LOOKING the step counts came before this
			// lead (a member's first election counts one while it was
			// looking already), but for one after it if the step ends
			// in another role.
			m.leaves = 0
			if st.State.Role != zab.RoleLeading {
				m.leaves = 1
			}
			if v = c.enterLeading(m); v == nil {
				v = write(m, now)
			}
		}
		if v != nil {
			return v
		}
		if which {
			m.current = now
		} else {
			m.accepted = now
		}
	}
	return nil
}

// acceptedWrite checks a new acceptedEpoch e: a leader's, once a quorum's
// FOLLOWERINFO fixed its epoch (LeaderProcessFOLLOWERINFO), or a learner's,
// from its leader's LEADERINFO (FollowerProcessLEADERINFO).
func (c *Checker) acceptedWrite(m *member, e int64) *Violation {
	switch {
	case m.role == zab.RoleLeading && m.ld.epoch == 0:
		// The spec takes one FOLLOWERINFO per action and fixes the epoch
		// at the one that completes a quorum: the voters introduced up to
		// there (in the order they were taken, the leader first) must be
		// a quorum, and the epoch above each one's acceptedEpoch.
		ids, cut, hi := c.quorumIntroduced(m)
		if cut < 0 {
			return c.fail(m, "LeaderProcessFOLLOWERINFO", "fixes epoch %d with FOLLOWERINFO from %v only, not a quorum (WaitingForNewEpochTurnToFalse)", e, ids)
		}
		if e <= hi {
			return c.fail(m, "LeaderProcessFOLLOWERINFO", "fixes epoch %d, not above the acceptedEpoch %d of one of %v (tempMaxEpoch)", e, hi, ids)
		}
		tempMax := hi
		for _, d := range m.ld.departed {
			if d.seq <= cut {
				tempMax = max(tempMax, d.epoch)
			}
		}
		switch tempMax++; {
		case e > tempMax:
			c.allow(EpochAboveTempMax, m, e)
		case e < tempMax:
			c.allow(EpochFromConnectedLearners, m, e)
		}
		m.ld.epoch = e
		return nil
	case m.learning() && m.phase == zab.PhaseDiscovery && m.ln.leaderInfo == e && e > m.accepted:
		return nil
	}
	return c.fail(m, "FollowerProcessLEADERINFO", "writes acceptedEpoch %d in role %s (%s) without a LEADERINFO of that epoch above its acceptedEpoch %d, nor as a leader fixing its epoch", e, m.role, m.phase, m.accepted)
}

// quorumIntroduced returns the leader and the voters it has taken
// introductions from, on their connections now, up to the first that makes
// them a quorum (ascending by id); the sequence number of that last one
// (-1: they make none, and all of them are returned); and the highest
// acceptedEpoch among them.
func (c *Checker) quorumIntroduced(m *member) ([]int64, int64, int64) {
	ld := &m.ld
	ids := append(c.ids[:0], m.id)
	hi, cut := m.accepted, int64(-1)
	if c.cfg.Quorum.ContainsQuorum(ids) {
		cut = 0 // a quorum of one voter
	}
	for next := int64(0); cut < 0; {
		// The voter introduced next after next (the records are few).
		j, seq := int64(-1), int64(0)
		for k := range ld.l {
			if rec := &ld.l[k]; rec.connected && c.isVoter(int64(k)) && rec.seq > next && (j < 0 || rec.seq < seq) {
				j, seq = int64(k), rec.seq
			}
		}
		if j < 0 {
			break
		}
		next = seq
		i, _ := slices.BinarySearch(ids, j)
		ids = slices.Insert(ids, i, j)
		hi = max(hi, ld.l[j].infoEpoch)
		if c.cfg.Quorum.ContainsQuorum(ids) {
			cut = seq
			break
		}
	}
	c.ids = ids
	return ids, cut, hi
}

// currentWrite checks a new currentEpoch e: a leader's, once a quorum
// acknowledged its epoch (LeaderProcessACKEPOCH), or a learner's at
// NEWLEADER (FollowerProcessNEWLEADER), which the spec sets with the
// history it takes: durable, here, before currentEpoch is.
func (c *Checker) currentWrite(m *member, e int64) *Violation {
	ld := &m.ld
	switch {
	case m.role == zab.RoleLeading && ld.epoch == e && m.phase == zab.PhaseDiscovery:
		ids := c.ids[:0]
		for j := range ld.epochAcks {
			if ld.epochAcks[j] || int64(j) == m.id {
				ids = append(ids, int64(j))
			}
		}
		c.ids = ids
		if !c.cfg.Quorum.ContainsQuorum(ids) {
			return c.fail(m, "LeaderProcessACKEPOCH", "makes epoch %d its currentEpoch with ACKEPOCH from %v only, not a quorum (ElectionFinished)", e, ids)
		}
		for j := range ld.l {
			if ld.l[j].connected && ld.l[j].tooRecent {
				return c.fail(m, "LeaderProcessACKEPOCH", "makes epoch %d its currentEpoch although server %d's ACKEPOCH (currentEpoch %d, last zxid %s) is more recent than its own (%d, %s): the spec's leader shuts down (logOk)",
					e, j, ld.l[j].peerEpoch, hex(ld.l[j].peerLast), m.current, hex(m.hist.last()))
			}
		}
		if l, ok := c.epochLeader[e]; ok && l != m.id {
			return c.fail(m, "LeaderProcessACKEPOCH", "establishes epoch %d, which server %d established before: two leaders in one epoch (Leadership)", e, l)
		}
		c.epochLeader[e] = m.id
		m.phase, ld.initialEnd = zab.PhaseSync, m.hist.last()
		return nil
	case m.learning() && m.ln.newLeader == e && m.ln.leaderInfo == e && m.accepted == e:
		// The history taken must be durable when currentEpoch is
		// (EpochsWritten): the Peer may ask for both at once, and its
		// executor orders the writes.
		m.epochsDue = append(m.epochsDue, epochDue{epoch: e, history: m.ln.newLeaderEnd})
		return nil
	}
	return c.fail(m, "FollowerProcessNEWLEADER", "writes currentEpoch %d in role %s (%s) without NEWLEADER of that epoch (its acceptedEpoch %d), nor as a leader acknowledged by a quorum", e, m.role, m.phase, m.accepted)
}

// appendTxn takes one append to the log: a proposal of the leader
// (LeaderProcessRequest), or a txn its leader sent (FollowerProcessPROPOSAL
// and its synchronization variant).
func (c *Checker) appendTxn(m *member, z int64) *Violation {
	switch {
	case len(m.expect) > 0 && m.expect[0] == z:
		m.expect = m.expect[1:]
		if m.learning() && m.phase == zab.PhaseSync && m.ln.newLeader == 0 {
			c.allow(LoggedBeforeNewLeader, m, z)
		}
	case m.role == zab.RoleLeading:
		if v := c.reach(m, zab.PhaseBroadcast); v != nil {
			v.Action = "LeaderProcessRequest"
			v.Detail += fmt.Sprintf("; it proposes %s", hex(z))
			return v
		}
		want := makeZxid(m.current, 1)
		if last := m.hist.last(); epochOf(last) == m.current {
			want = last + 1
		}
		if z != want {
			return c.fail(m, "LeaderProcessRequest", "proposes %s after %s, in epoch %d: the next zxid is %s (IncZxid)", hex(z), hex(m.hist.last()), m.current, hex(want))
		}
		if !c.quorumUpToDate(m) {
			c.allow(ProposeOnceEstablished, m, z)
		}
	default:
		return c.fail(m, "FollowerProcessPROPOSAL", "appends %s to its log without a PROPOSAL of it from its leader (expected: %v)", hex(z), hexes(m.expect))
	}
	if z <= m.hist.last() {
		return c.fail(m, "FollowerProcessPROPOSAL", "appends %s after %s", hex(z), hex(m.hist.last()))
	}
	m.hist.add(z)
	return nil
}

// quorumUpToDate is the system spec's guard on LeaderProcessRequest: a
// quorum of the learners it forwards to are in broadcast.
func (c *Checker) quorumUpToDate(m *member) bool {
	ids := c.ids[:0]
	for j := range m.ld.l {
		if o := c.member(int64(j)); m.ld.l[j].synced && o != nil && o.voter && o.leader == m.id && o.phase == zab.PhaseBroadcast {
			ids = append(ids, int64(j))
		}
	}
	c.ids = ids
	return c.cfg.Quorum.ContainsQuorum(ids)
}

// apply checks what the tree applied in the step: a leader commits
// (LeaderTryToCommit) what a quorum acknowledged; a learner applies what
// its leader said is committed (FollowerProcessCOMMIT, UPTODATE).
func (c *Checker) apply(m *member, st *Step) *Violation {
	a := st.Applied
	if a <= m.applied {
		m.applied = a
		return nil
	}
	switch {
	case m.role == zab.RoleLeading:
		if v := c.reach(m, zab.PhaseBroadcast); v != nil {
			v.Action = "LeaderTryToCommit"
			v.Detail += fmt.Sprintf("; it applies up to %s", hex(a))
			return v
		}
		if a > m.ld.committed {
			if !m.hist.contains(a) {
				return c.fail(m, "LeaderTryToCommit", "applies %s, which its history does not hold", hex(a))
			}
			if ids, ok := c.acked(m, a); !ok {
				return c.fail(m, "LeaderTryToCommit", "commits %s, acknowledged only by %v (its own log durable to %s): not a quorum (hasAllQuorums)", hex(a), ids, hex(m.durableTo()))
			}
			m.ld.committed = a
		}
	case m.learning():
		if a > m.committed {
			return c.fail(m, "FollowerProcessCOMMIT", "applies up to %s, past %s, the last txn its leader said is committed", hex(a), hex(m.committed))
		}
		if !m.ln.upToDate && !(st.Installed && a == st.InstalledAt) {
			return c.fail(m, "FollowerProcessUPTODATE", "applies up to %s before UPTODATE", hex(a))
		}
	default:
		return c.fail(m, "FollowerProcessCOMMIT", "applies up to %s in role %s", hex(a), m.role)
	}
	m.applied = a
	return nil
}

// acked returns the voters that have acknowledged z (the leader: once its
// own log holds it durably), and whether they are a quorum.
func (c *Checker) acked(m *member, z int64) ([]int64, bool) {
	ids := c.ids[:0]
	for j := range m.ld.acks {
		if ok := m.ld.acks[j] >= z && c.isVoter(int64(j)); ok || int64(j) == m.id && m.durableTo() >= z {
			ids = append(ids, int64(j))
		}
	}
	c.ids = ids
	return ids, c.cfg.Quorum.ContainsQuorum(ids)
}

// committedPoint is what a leader may send as committed: its lastCommitted
// once established; before, its whole history, the initial history that
// establishment commits (SendSyncMsgs' lastCommittedIndex).
func (m *member) committedPoint() int64 {
	if m.phase == zab.PhaseBroadcast {
		return m.ld.committed
	}
	return m.hist.last()
}

// reach advances the member's phase to p, each step through its action's
// guard: a leader's establishment (LeaderProcessACKLD's quorum), a
// learner's LEADERINFO (FollowerProcessLEADERINFO) and UPTODATE
// (FollowerProcessUPTODATE). A leader's synchronization begins with its
// currentEpoch write (currentWrite).
func (c *Checker) reach(m *member, p zab.Phase) *Violation {
	for m.phase < p {
		switch {
		case m.role == zab.RoleLeading && m.phase == zab.PhaseSync:
			ids := c.ids[:0]
			for j := range m.ld.l {
				if rec := &m.ld.l[j]; int64(j) == m.id || rec.connected && rec.newLeaderAcked && c.isVoter(int64(j)) {
					ids = append(ids, int64(j))
				}
			}
			c.ids = ids
			if !c.cfg.Quorum.ContainsQuorum(ids) {
				return c.fail(m, "LeaderProcessACKLD", "establishes epoch %d with NEWLEADER ACKs from %v only, not a quorum", m.ld.epoch, ids)
			}
			m.phase = zab.PhaseBroadcast
			m.ld.committed = max(m.ld.committed, m.ld.initialEnd)
		case m.role == zab.RoleLeading:
			return c.fail(m, "LeaderProcessACKEPOCH", "leaves discovery in epoch %d without making it its currentEpoch (%d)", m.ld.epoch, m.current)
		case m.learning() && m.phase == zab.PhaseDiscovery:
			if v := c.leaderInfoTaken(m, "synchronizes"); v != nil {
				return v
			}
			m.phase = zab.PhaseSync
		case m.learning() && m.phase == zab.PhaseSync:
			if !m.ln.upToDate {
				return c.fail(m, "FollowerProcessUPTODATE", "serves (broadcast) without UPTODATE from leader %d", m.leader)
			}
			m.phase = zab.PhaseBroadcast
		default:
			return c.fail(m, "FLEHandleNotmsg", "is in phase %s while %s", p, m.role)
		}
	}
	return nil
}

// samePhase: in a step that did not leave the role, the role is unchanged
// and the phase only goes forward.
func (c *Checker) samePhase(m *member, st *Step) *Violation {
	s := st.State
	if m.role == zab.RoleLooking {
		return nil // a role begins in the step's sends (FOLLOWERINFO) or at its end (settle)
	}
	if s.Role != m.role || m.learning() && s.Leader != m.leader {
		return c.fail(m, "FLEHandleNotmsg", "is %s under %d after being %s under %d, without going back to LOOKING", s.Role, s.Leader, m.role, m.leader)
	}
	if s.Phase < m.phase {
		return c.fail(m, "FLEHandleNotmsg", "goes back from %s to %s without going back to LOOKING", m.phase, s.Phase)
	}
	return c.reach(m, s.Phase)
}

// send checks one message of the step.
func (c *Checker) send(m *member, s *Send) *Violation {
	if s.Close {
		if !slices.Contains(m.closed, s.To) {
			m.closed = append(m.closed, s.To)
		}
		c.forgetHeld(m, s.To)
		switch {
		case m.role == zab.RoleLeading:
			c.removeLearner(m, s.To)
		case m.learning() && s.To == m.leader && m.leaves > 0:
			c.leave(m) // the learner gives its leader up
		}
		return nil
	}
	p := &s.Packet
	switch p.Type {
	case wire.PacketFollowerInfo, wire.PacketObserverInfo:
		return c.sendInfo(m, s.To, p)
	case wire.PacketAckEpoch, wire.PacketAck:
		if !m.learning() || s.To != m.leader {
			return c.fail(m, "FilterNonexistentMessage", "sends %s %s to server %d, which is not its leader (role %s, leader %d)", p.Type, hex(p.Zxid), s.To, m.role, m.leader)
		}
		if p.Type == wire.PacketAckEpoch {
			return c.sendAckEpoch(m, p)
		}
		return c.sendAck(m, p)
	case wire.PacketLeaderInfo, wire.PacketDiff, wire.PacketTrunc, wire.PacketSnap, wire.PacketProposal,
		wire.PacketCommit, wire.PacketInform, wire.PacketNewLeader, wire.PacketUpToDate:
		if m.role != zab.RoleLeading || !m.ld.l[s.To].connected {
			return c.fail(m, "FilterNonexistentMessage", "sends %s %s to server %d, which is not its learner (role %s)", p.Type, hex(p.Zxid), s.To, m.role)
		}
		return c.leaderSend(m, s.To, p)
	}
	return nil
}

// sendInfo is the spec's ConnectAndFollowerSendFOLLOWERINFO, with the
// learner's role change before it (FLEHandleNotmsg, ZabTurnToFollowing).
func (c *Checker) sendInfo(m *member, to int64, p *Packet) *Violation {
	if m.role != zab.RoleLooking {
		if m.leaves == 0 {
			return c.fail(m, "ConnectAndFollowerSendFOLLOWERINFO", "introduces itself to server %d while %s, without going back to LOOKING", to, m.role)
		}
		c.leave(m)
	}
	observer := p.Type == wire.PacketObserverInfo
	if observer != m.observer {
		return c.fail(m, "ConnectAndFollowerSendFOLLOWERINFO", "sends %s, but it is an observer: %v", p.Type, m.observer)
	}
	if p.Zxid != makeZxid(m.accepted, 0) {
		return c.fail(m, "ConnectAndFollowerSendFOLLOWERINFO", "sends %s %s; its acceptedEpoch is %d (mzxid = <<acceptedEpoch, 0>>)", p.Type, hex(p.Zxid), m.accepted)
	}
	m.held = m.held[:0] // refused: it follows
	m.role, m.phase, m.leader = zab.RoleFollowing, zab.PhaseDiscovery, to
	if observer {
		m.role = zab.RoleObserving
		c.allow(Observers, m, p.Zxid)
	}
	m.ln = learnerRole{}
	if l := c.member(to); l == nil || l.role != zab.RoleLeading {
		c.allow(IntroductionToNonLeader, m, p.Zxid)
	}
	return nil
}

// sendAckEpoch is the reply of FollowerProcessLEADERINFO: only for an
// epoch not below acceptedEpoch, once that epoch is durable, carrying
// currentEpoch (-1 if the epoch was accepted before) and the last zxid.
func (c *Checker) sendAckEpoch(m *member, p *Packet) *Violation {
	l := &m.ln
	if l.ackEpochSent {
		return c.fail(m, "FollowerProcessLEADERINFO", "sends ACKEPOCH %s a second time", hex(p.Zxid))
	}
	if v := c.leaderInfoTaken(m, "sends ACKEPOCH"); v != nil {
		return v
	}
	want := m.current
	if l.leaderInfo == l.acceptedBefore {
		want = -1
	}
	if p.Epoch != want {
		return c.fail(m, "FollowerProcessLEADERINFO", "sends ACKEPOCH with currentEpoch %d; the spec sends %d (its currentEpoch, or -1 for an epoch accepted before)", p.Epoch, want)
	}
	if p.Zxid != m.queuedLast() {
		return c.fail(m, "FollowerProcessLEADERINFO", "sends ACKEPOCH with last zxid %s; its history ends at %s", hex(p.Zxid), hex(m.queuedLast()))
	}
	c.owe(m, m.leader, sendDue{typ: wire.PacketAckEpoch, zxid: p.Zxid, accepted: l.leaderInfo})
	l.ackEpochSent = true
	return c.reach(m, zab.PhaseSync)
}

// owe records what the disk must hold when the packet the step sends to
// leaves.
func (c *Checker) owe(m *member, to int64, d sendDue) {
	if to > 0 && to < int64(len(m.due)) {
		m.due[to] = append(m.due[to], d)
	}
}

// EpochsWritten: member id's epoch files now hold d's epochs (a disk job
// wrote them), and d says how far its history is durable. A currentEpoch
// taken at NEWLEADER needs the history taken with it durable first.
func (c *Checker) EpochsWritten(id int64, d Durability) *Violation {
	m := c.member(id)
	if m == nil || !m.up {
		return nil
	}
	m.wroteAccepted, m.wroteCurrent = d.Accepted, d.Current
	for len(m.epochsDue) > 0 && m.epochsDue[0].epoch <= d.Current {
		due := m.epochsDue[0]
		m.epochsDue = m.epochsDue[1:]
		if d.holds() < due.history {
			return c.fail(m, "FollowerProcessNEWLEADER", "writes currentEpoch %d while its history is durable only to %s, short of %s, where it stood at NEWLEADER: the spec takes the history and currentEpoch in one step",
				due.epoch, hex(d.holds()), hex(due.history))
		}
	}
	return nil
}

// Left: member id's packet s leaves now, and d is its disk. What the
// spec's action set as it sent the packet (acceptedEpoch with ACKEPOCH and
// LEADERINFO, currentEpoch with a synchronization and the NEWLEADER ACK,
// the history with an ACK) must be durable by then.
func (c *Checker) Left(id int64, s Send, d Durability) *Violation {
	m := c.member(id)
	if m == nil || !m.up || s.Close || s.To <= 0 || s.To >= int64(len(m.due)) {
		return nil
	}
	q := m.due[s.To]
	for i := range q {
		due := &q[i]
		if due.typ != s.Packet.Type || due.zxid != s.Packet.Zxid {
			continue // one asked before never left (a SNAP's stream given up), or another packet
		}
		m.due[s.To] = q[i+1:]
		var what string
		switch {
		case d.Accepted < due.accepted:
			what = fmt.Sprintf("its acceptedEpoch file holds %d, not yet %d", d.Accepted, due.accepted)
		case d.Current < due.current:
			what = fmt.Sprintf("its currentEpoch file holds %d, not yet %d", d.Current, due.current)
		case d.holds() < due.history:
			what = fmt.Sprintf("its history is durable only to %s, short of %s", hex(d.holds()), hex(due.history))
		default:
			return nil
		}
		return c.fail(m, dueAction(due), "sends %s %s to server %d while %s: the spec's action sets it as it sends", s.Packet.Type, hex(s.Packet.Zxid), s.To, what)
	}
	return nil
}

// dueAction names the spec action that sends a packet a sendDue is for.
func dueAction(d *sendDue) string {
	switch d.typ {
	case wire.PacketAckEpoch:
		return "FollowerProcessLEADERINFO"
	case wire.PacketLeaderInfo:
		return "LeaderProcessFOLLOWERINFO"
	case wire.PacketAck:
		if counterOf(d.zxid) == 0 {
			return "FollowerProcessNEWLEADER"
		}
		return "FollowerProcessPROPOSAL"
	}
	return "LeaderSyncFollower"
}

// leaderInfoTaken checks that the member took its leader's LEADERINFO as
// FollowerProcessLEADERINFO does (epochOk, and the new acceptedEpoch
// durable) before it does what: acknowledges it, or synchronizes.
func (c *Checker) leaderInfoTaken(m *member, what string) *Violation {
	l := &m.ln
	switch {
	case l.leaderInfo == 0:
		return c.fail(m, "FollowerProcessLEADERINFO", "%s without a LEADERINFO from its leader %d", what, m.leader)
	case l.leaderInfo < l.acceptedBefore:
		return c.fail(m, "FollowerProcessLEADERINFO", "%s after LEADERINFO of epoch %d, below its acceptedEpoch %d: the spec's learner goes back to LOOKING (epochOk)", what, l.leaderInfo, l.acceptedBefore)
	case m.accepted != l.leaderInfo:
		return c.fail(m, "FollowerProcessLEADERINFO", "%s after LEADERINFO of epoch %d while its acceptedEpoch file holds %d: the spec accepts the epoch as it answers, so it must be durable first", what, l.leaderInfo, m.accepted)
	}
	return nil
}

// sendAck is a learner's ACK: of NEWLEADER (FollowerProcessNEWLEADER's
// ACKLD), once currentEpoch and the history it took are durable; or of a
// proposal (FollowerProcessPROPOSAL), once durable, in order.
func (c *Checker) sendAck(m *member, p *Packet) *Violation {
	l := &m.ln
	z := p.Zxid
	if counterOf(z) == 0 {
		switch {
		case l.newLeader == 0 || epochOf(z) != l.newLeader || l.newLeaderAcked:
			return c.fail(m, "FollowerProcessNEWLEADER", "sends NEWLEADER ACK %s without a NEWLEADER of that epoch to answer", hex(z))
		case l.newLeader != l.leaderInfo:
			return c.fail(m, "FollowerProcessNEWLEADER", "ACKs NEWLEADER of epoch %d after LEADERINFO of epoch %d: the spec's learner goes back to LOOKING (epochOk)", l.newLeader, l.leaderInfo)
		case m.current != l.newLeader:
			return c.fail(m, "FollowerProcessNEWLEADER", "ACKs NEWLEADER of epoch %d while its currentEpoch is %d: the spec sets currentEpoch as it ACKs", l.newLeader, m.current)
		}
		c.owe(m, m.leader, sendDue{typ: wire.PacketAck, zxid: z, current: l.newLeader, history: l.newLeaderEnd})
		l.newLeaderAcked, l.lastAcked = true, l.newLeaderEnd
		if l.syncProposals {
			c.allow(NoAckOfSyncTxns, m, z)
		}
		if m.observer {
			c.allow(Observers, m, z)
		}
		return nil
	}
	switch want := m.hist.next(l.lastAcked); {
	case m.observer:
		return c.fail(m, "FollowerProcessPROPOSAL", "ACKs %s, but it is an observer", hex(z))
	case !l.newLeaderAcked:
		return c.fail(m, "FollowerProcessPROPOSAL", "ACKs %s before its NEWLEADER ACK", hex(z))
	case z != want:
		return c.fail(m, "FollowerProcessPROPOSAL", "ACKs %s after %s; the next txn of its history is %s", hex(z), hex(l.lastAcked), hex(want))
	case z > m.durableTo():
		return c.fail(m, "FollowerProcessPROPOSAL", "ACKs %s while its log is durable only to %s: the spec's ACK follows the txn into its history", hex(z), hex(m.durableTo()))
	}
	c.owe(m, m.leader, sendDue{typ: wire.PacketAck, zxid: z, history: z})
	l.lastAcked = z
	return nil
}

// leaderSend checks a leader's packet to learner j.
func (c *Checker) leaderSend(m *member, j int64, p *Packet) *Violation {
	ld := &m.ld
	rec := &ld.l[j]
	z := p.Zxid
	if p.Type == wire.PacketLeaderInfo {
		switch {
		case ld.epoch == 0:
			return c.fail(m, "LeaderProcessFOLLOWERINFO", "sends LEADERINFO %s to server %d, but no epoch was fixed by a quorum's FOLLOWERINFO and written to its acceptedEpoch file (which holds %d)", hex(z), j, m.accepted)
		case z != makeZxid(ld.epoch, 0):
			return c.fail(m, "LeaderProcessFOLLOWERINFO", "sends LEADERINFO %s to server %d; its epoch is %d", hex(z), j, ld.epoch)
		case rec.leaderInfoSent:
			return c.fail(m, "LeaderProcessFOLLOWERINFO", "sends LEADERINFO to server %d a second time", j)
		}
		rec.leaderInfoSent = true
		c.owe(m, j, sendDue{typ: wire.PacketLeaderInfo, zxid: z, accepted: ld.epoch})
		return nil
	}
	if m.phase < zab.PhaseSync {
		return c.fail(m, "LeaderSyncFollower", "sends %s %s to server %d in discovery, before a quorum's ACKEPOCH made epoch %d its currentEpoch (%d)", p.Type, hex(z), j, ld.epoch, m.current)
	}
	switch p.Type {
	case wire.PacketDiff, wire.PacketTrunc, wire.PacketSnap:
		c.owe(m, j, sendDue{typ: p.Type, zxid: z, current: ld.epoch})
		return c.syncFollower(m, j, p)
	case wire.PacketNewLeader:
		c.owe(m, j, sendDue{typ: p.Type, zxid: z, current: ld.epoch})
		committed := m.committedPoint()
		switch {
		case !rec.synced || rec.newLeaderSent:
			return c.fail(m, "LeaderSyncFollower", "sends NEWLEADER to server %d before DIFF, TRUNC or SNAP, or a second time", j)
		case z != makeZxid(ld.epoch, 0) || m.current != ld.epoch:
			return c.fail(m, "LeaderSyncFollower", "sends NEWLEADER %s in epoch %d with currentEpoch %d", hex(z), ld.epoch, m.current)
		case rec.sentUpTo < committed || rec.commitUpTo < min(rec.sentUpTo, committed):
			return c.fail(m, "LeaderSyncFollower", "sends NEWLEADER to server %d after sending it txns up to %s and commits up to %s: its committed history ends at %s (SendSyncMsgs)", j, hex(rec.sentUpTo), hex(rec.commitUpTo), hex(committed))
		}
		rec.newLeaderSent, rec.syncedUpTo = true, rec.sentUpTo
	case wire.PacketUpToDate:
		if v := c.reach(m, zab.PhaseBroadcast); v != nil {
			v.Detail += fmt.Sprintf("; it sends UPTODATE to server %d", j)
			return v
		}
		if !rec.newLeaderAcked || rec.upToDateSent {
			return c.fail(m, "LeaderProcessACKLD", "sends UPTODATE to server %d before its NEWLEADER ACK, or a second time", j)
		}
		rec.upToDateSent = true
	case wire.PacketProposal, wire.PacketCommit, wire.PacketInform:
		return c.forward(m, j, p)
	}
	return nil
}

// syncFollower is the spec's LeaderSyncFollower: how a learner whose
// ACKEPOCH gave its last zxid is synchronized (SyncFollower's cases).
func (c *Checker) syncFollower(m *member, j int64, p *Packet) *Violation {
	rec := &m.ld.l[j]
	z, peer := p.Zxid, rec.peerLast
	committed := m.committedPoint()
	switch {
	case !rec.ackEpoch || rec.synced:
		return c.fail(m, "LeaderSyncFollower", "sends %s to server %d before its ACKEPOCH, or a second time", p.Type, j)
	case rec.tooRecent:
		return c.fail(m, "LeaderProcessACKEPOCH", "synchronizes server %d, whose ACKEPOCH (currentEpoch %d, last zxid %s) is more recent than its own history: the spec's leader shuts down (logOk)", j, rec.peerEpoch, hex(peer))
	}
	switch p.Type {
	case wire.PacketDiff:
		if z != committed {
			return c.fail(m, "LeaderSyncFollower", "sends DIFF %s to server %d; its last committed zxid is %s", hex(z), j, hex(committed))
		}
		c.allow(DiffCarriesCommitted, m, z)
		switch {
		case peer > committed:
			return c.fail(m, "LeaderSyncFollower", "sends DIFF to server %d, whose last zxid %s is past its last committed %s: SyncFollower sends TRUNC (case 2)", j, hex(peer), hex(committed))
		case !m.hist.contains(peer) && counterOf(peer) == 0:
			c.allow(DiffFromEpochStart, m, peer)
		case !m.hist.contains(peer):
			return c.fail(m, "LeaderSyncFollower", "sends DIFF to server %d, whose last zxid %s is not in its history: SyncFollower sends TRUNC to %s (case 3.2)", j, hex(peer), hex(m.hist.below(peer)))
		}
		rec.sentUpTo = peer
	case wire.PacketTrunc:
		switch {
		case !m.hist.contains(z) || z > committed:
			return c.fail(m, "LeaderSyncFollower", "sends TRUNC %s to server %d: not a zxid of its committed history (to %s)", hex(z), j, hex(committed))
		case peer > committed && z != committed:
			return c.fail(m, "LeaderSyncFollower", "sends TRUNC %s to server %d, whose last zxid %s is past its last committed %s: SyncFollower truncates to that (case 2)", hex(z), j, hex(peer), hex(committed))
		case peer <= committed && m.hist.contains(peer):
			return c.fail(m, "LeaderSyncFollower", "sends TRUNC %s to server %d, whose last zxid %s is in its history: SyncFollower sends DIFF (case 1, 3.1)", hex(z), j, hex(peer))
		case peer <= committed && z != m.hist.below(peer):
			return c.fail(m, "LeaderSyncFollower", "sends TRUNC %s to server %d, whose last zxid is %s: SyncFollower truncates to %s, the last zxid before it in its history (case 3.2)", hex(z), j, hex(peer), hex(m.hist.below(peer)))
		}
		rec.sentUpTo = z
	case wire.PacketSnap:
		if !m.hist.contains(z) || z > committed {
			return c.fail(m, "LeaderSyncFollower", "sends SNAP %s to server %d: not a zxid of its committed history (to %s)", hex(z), j, hex(committed))
		}
		if peer > committed {
			c.allow(SnapInsteadOfTrunc, m, peer)
		}
		rec.sentUpTo = z
		to := c.member(j)
		to.inSnap.from, to.inSnap.zxid = m.id, z
		to.inSnap.hist.copyUpTo(&m.hist, z)
	}
	rec.synced, rec.commitUpTo, rec.syncEnd = true, rec.sentUpTo, m.hist.last()
	return nil
}

// forward checks a txn a leader sends learner j: every txn of its history
// after what j holds, in order (SendSyncMsgs, then Broadcast), and a
// COMMIT (an observer's INFORM) only of what a quorum acknowledged
// (LeaderTryToCommit), in order.
func (c *Checker) forward(m *member, j int64, p *Packet) *Violation {
	rec := &m.ld.l[j]
	z := p.Zxid
	if !rec.synced {
		return c.fail(m, "LeaderProcessRequest", "sends %s %s to server %d, which it has not synchronized (forwarding)", p.Type, hex(z), j)
	}
	if p.Type != wire.PacketCommit {
		if want := m.hist.next(rec.sentUpTo); z != want {
			return c.fail(m, "LeaderProcessRequest", "sends %s %s to server %d, which holds its history up to %s: the next txn is %s (SendSyncMsgs, Broadcast)", p.Type, hex(z), j, hex(rec.sentUpTo), hex(want))
		}
		switch {
		case rec.observer && rec.newLeaderSent && p.Type == wire.PacketProposal:
			return c.fail(m, "LeaderProcessRequest", "sends PROPOSAL %s to observer %d after NEWLEADER", hex(z), j)
		case !rec.observer && p.Type == wire.PacketInform:
			return c.fail(m, "LeaderProcessRequest", "sends INFORM %s to follower %d", hex(z), j)
		case rec.newLeaderSent && z <= rec.syncEnd:
			c.allow(OutstandingAfterNewLeader, m, z)
		}
		rec.sentUpTo = z
		if p.Type == wire.PacketProposal {
			return nil
		}
		c.allow(Observers, m, z)
	} else if rec.observer && rec.newLeaderSent {
		return c.fail(m, "LeaderProcessACK", "sends COMMIT %s to observer %d after NEWLEADER", hex(z), j)
	}
	committed := m.committedPoint()
	switch want := m.hist.next(rec.commitUpTo); {
	case z > rec.sentUpTo:
		return c.fail(m, "LeaderProcessACK", "sends COMMIT %s to server %d before the txn itself (sent up to %s)", hex(z), j, hex(rec.sentUpTo))
	case z != want:
		return c.fail(m, "LeaderProcessACK", "sends COMMIT %s to server %d, told committed up to %s: the next is %s (ordered)", hex(z), j, hex(rec.commitUpTo), hex(want))
	case z > committed:
		ids, _ := c.acked(m, z)
		return c.fail(m, "LeaderTryToCommit", "sends %s %s to server %d; it has committed up to %s, and %v acknowledged %s (hasAllQuorums)", p.Type, hex(z), j, hex(committed), ids, hex(z))
	}
	rec.commitUpTo = z
	return nil
}

// settle ends a step whose State was observed: a role left and one entered
// in it (FLEHandleNotmsg: ZabTurnToLeading; a learner's role began with
// its FOLLOWERINFO), and the spec's role must be the one the member
// reports.
func (c *Checker) settle(m *member, st *Step) *Violation {
	s := st.State
	if m.leaves > 0 && m.role != zab.RoleLooking {
		c.leave(m)
	}
	if s.Role == zab.RoleLeading && m.role == zab.RoleLooking {
		if v := c.enterLeading(m); v != nil {
			return v
		}
	}
	if s.Role == m.role {
		if v := c.reach(m, s.Phase); v != nil {
			return v
		}
	}
	m.elections = s.Elections
	epoch := s.Epoch
	switch {
	case m.role == zab.RoleLeading:
		epoch = m.ld.epoch
	case m.learning() && m.phase >= zab.PhaseSync:
		epoch = m.ln.leaderInfo
	}
	if s.Role != m.role || s.Phase != m.phase || m.learning() && s.Leader != m.leader || epoch != s.Epoch {
		return c.fail(m, "FLEHandleNotmsg", "reports %s (%s) under %d in epoch %d; its steps made it %s (%s) under %d in epoch %d",
			s.Role, s.Phase, s.Leader, s.Epoch, m.role, m.phase, m.leader, epoch)
	}
	return nil
}

func (c *Checker) isVoter(id int64) bool {
	m := c.member(id)
	return m != nil && m.voter
}

func epochOf(zxid int64) int64      { return zxid >> 32 }
func counterOf(zxid int64) int64    { return zxid & 0xffffffff }
func makeZxid(epoch, c int64) int64 { return epoch<<32 | c }
func hex(z int64) string            { return fmt.Sprintf("0x%x", z) }

func hexes(zs []int64) string {
	parts := make([]string, len(zs))
	for i, z := range zs {
		parts[i] = hex(z)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
