package zab

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

// This file is what followers and observers share (ZooKeeper's Learner):
// registering with the leader (discovery), synchronizing with it, and then
// taking its proposals and commits (broadcast). follower.go and
// observer.go hold what differs.

// learnerStage is how far a follower or an observer has come with its
// leader: one step of Zab's phases each, in order. A learner only moves
// forward; it goes back to looking instead (leaveEpoch).
type learnerStage uint8

const (
	// learnerDiscovery: discovery, FOLLOWERINFO (or OBSERVERINFO) sent with
	// the acceptedEpoch; waiting for LEADERINFO (Zab.tla
	// ConnectAndFollowerSendCEPOCH).
	learnerDiscovery learnerStage = iota
	// learnerEpochAccepted: synchronization, the leader's epoch accepted
	// (durable as acceptedEpoch) and ACKEPOCH sent; waiting for DIFF,
	// TRUNC or SNAP (Zab.tla FollowerProcessNEWEPOCH).
	learnerEpochAccepted
	// learnerSyncing: synchronization, DIFF, TRUNC or SNAP taken (syncMode);
	// logging the txns that follow until NEWLEADER.
	learnerSyncing
	// learnerNewLeaderSeen: synchronization, NEWLEADER taken: the log is
	// the leader's history up to newLeaderEnd; its ACK waits until that
	// history (and a SNAP's snapshot: Peer.snapInstall) is durable
	// (Zab.tla FollowerProcessNEWLEADER, which takes the history).
	learnerNewLeaderSeen
	// learnerNewLeaderAcked: synchronization, currentEpoch is the new epoch
	// (durable) and NEWLEADER ACKed; proposals after it are ACKed too;
	// waiting for UPTODATE (Zab.tla FollowerProcessNEWLEADER's ACKLD).
	learnerNewLeaderAcked
	// learnerUpToDate: broadcast, UPTODATE taken: what is committed is
	// applied, and clients are served (Zab.tla FollowerProcessCOMMITLD).
	learnerUpToDate
)

func (s learnerStage) String() string {
	switch s {
	case learnerDiscovery:
		return "discovery"
	case learnerEpochAccepted:
		return "epoch accepted"
	case learnerSyncing:
		return "syncing"
	case learnerNewLeaderSeen:
		return "NEWLEADER seen"
	case learnerNewLeaderAcked:
		return "NEWLEADER acknowledged"
	case learnerUpToDate:
		return "up to date"
	}
	return fmt.Sprintf("learnerStage(%d)", s)
}

// phase is the Zab phase the stage belongs to.
func (s learnerStage) phase() Phase {
	switch s {
	case learnerDiscovery:
		return PhaseDiscovery
	case learnerUpToDate:
		return PhaseBroadcast
	}
	return PhaseSync
}

// learnerState is the FOLLOWING or OBSERVING role's state, reset when the
// role is entered.
type learnerState struct {
	leader   int64
	observer bool
	stage    learnerStage
	since    time.Duration // when the role began: discovery and sync must end within initLimit
	// lastHeard is when the leader was last heard from; syncLimit ticks of
	// silence in broadcast end the role.
	lastHeard time.Duration
	// leaderGone: the shell reported the connection with the leader gone
	// (PeerDisconnected), so leaving the role has no connection to close.
	// A close asked for now would be carried out on whatever connection
	// the shell holds with the leader by then: a shell that steps several
	// events before it takes a Ready (zabd's loop), or holds a Ready's
	// sends behind a disk job (zab/member), may have taken the peer's
	// next connection meanwhile, and the close would end that one while
	// this member holds its FOLLOWERINFO (resetRole).
	leaderGone bool

	newEpoch int64 // from LEADERINFO
	// syncMode is how the leader synchronizes this learner (DIFF, TRUNC or
	// SNAP), from learnerSyncing on.
	syncMode wire.PacketType
	// keptThrough, after a SNAP below what this member had applied, is
	// that last applied zxid: the member kept its tree and skips the
	// leader's txns up to it (keepTreeAtSnap).
	keptThrough int64
	// newLeaderEnd is the last zxid of the synchronized history, from
	// learnerNewLeaderSeen on.
	newLeaderEnd int64
	// toAck are a follower's proposals after NEWLEADER not yet ACKed, in
	// zxid order: each gets its own ACK once durable (maybeAckProposals).
	toAck []int64
	// committed is the highest zxid the leader said is committed (COMMIT,
	// INFORM, or the synchronized history at UPTODATE).
	committed int64

	// touches are the sessions served here since the last PING reply,
	// with their timeouts: ZooKeeper's LearnerSessionTracker.touchTable.
	touches map[int64]int32
	// syncs are the sessions whose sync was forwarded, in the order sent:
	// each SYNC from the leader answers the oldest.
	syncs []int64
	// revalidating maps a session being revalidated to its connection.
	revalidating map[int64]ConnID
}

// becomeLearner enters FOLLOWING or OBSERVING under leader: it introduces
// itself with FOLLOWERINFO (or OBSERVERINFO) carrying its acceptedEpoch.
func (p *Peer) becomeLearner(leader int64, observer bool) {
	role := RoleFollowing
	infoType := wire.PacketFollowerInfo
	if observer {
		role, infoType = RoleObserving, wire.PacketObserverInfo
	}
	p.refuseHeld(true, "this server is "+role.String())
	p.resetRole(role, leader)
	p.learn = &learnerState{
		leader:       leader,
		observer:     observer,
		stage:        learnerDiscovery,
		since:        p.now.Mono,
		lastHeard:    p.now.Mono,
		touches:      map[int64]int32{},
		revalidating: map[int64]ConnID{},
	}
	p.reportState()
	info := wire.LearnerInfo{ServerID: p.self, ProtocolVersion: wire.ProtocolVersion, ConfigVersion: 0}
	p.sendPeer(leader, wire.QuorumPacket{Type: infoType, Zxid: makeZxid(p.acceptedEpoch, 0), Data: wire.Marshal(&info)}, nil)
}

// stepLearner handles a packet from the leader.
func (p *Peer) stepLearner(from int64, qp *wire.QuorumPacket, snap []byte) {
	l := p.learn
	if from != l.leader {
		p.warn("%s: ignoring %s from server %d, which is not our leader %d", p.role, qp.Type, from, l.leader)
		p.closeConnection(from)
		return
	}
	if qp.Type == wire.PacketFollowerInfo || qp.Type == wire.PacketObserverInfo {
		// The member this one follows introduces itself to it as its
		// leader: their elections decided differently (on votes of
		// different rounds). That is no packet of a leader's, and no
		// fault of the peer's. It came on a connection the peer opened,
		// not on the one this member's own introduction opens: a shell
		// closes it when it carries that introduction out (the Ready
		// being built holds it, or a disk job's barrier does), or reports
		// it gone once the introduction's connection replaces it (zabd's
		// peernet, when it came while the dial was under way). Closing it
		// from here would close whichever connection with the leader the
		// shell holds by then: this member's own, once its introduction
		// is out. So the member ignores it and waits for LEADERINFO, as a
		// ZooKeeper follower does: only a leader listens on its quorum
		// port (Leader's LearnerCnxAcceptor), the peer's connection is
		// refused and retried, and the follower waits for its leader
		// until initLimit. (Simulator seed 128406: a batch of events
		// stepped the peer's FOLLOWERINFO after the election that queued
		// this member's.)
		p.warn("%s: ignoring %s %s from server %d, our leader, which takes this member for its own: the elections disagree", p.role, qp.Type, zxidHex(qp.Zxid), from)
		return
	}
	l.lastHeard = p.now.Mono
	switch {
	case qp.Type == wire.PacketLeaderInfo && l.stage == learnerDiscovery:
		p.learnerLeaderInfo(qp)
	case l.stage.phase() == PhaseSync:
		p.learnerSyncPacket(qp, snap)
	case l.stage == learnerUpToDate:
		p.learnerBroadcastPacket(qp)
	default:
		p.leaveEpoch(qp, "not expected in this phase")
	}
}

// leaveEpoch abandons the leader after a packet that breaks the protocol:
// the member goes back to looking.
func (p *Peer) leaveEpoch(qp *wire.QuorumPacket, why string) {
	p.peerFault("%s: leaving leader %d after %s %s in phase %s: %s", p.role, p.learn.leader, qp.Type, zxidHex(qp.Zxid), p.phase(), why)
	p.becomeLooking()
}

// learnerLeaderInfo: the leader proposes a new epoch. The learner accepts
// it only if it is not below its acceptedEpoch; a greater one is made its
// acceptedEpoch, durable before the ACKEPOCH leaves (the Ready contract).
// ACKEPOCH carries the last logged zxid and currentEpoch (-1 if the epoch
// was accepted already, so that the leader does not count it twice).
func (p *Peer) learnerLeaderInfo(qp *wire.QuorumPacket) {
	l := p.learn
	var info wire.LeaderInfo
	if err := wire.Unmarshal(qp.Data, &info); err != nil {
		p.leaveEpoch(qp, "its data does not decode")
		return
	}
	epoch := epochOf(qp.Zxid)
	ack := wire.AckEpoch{CurrentEpoch: int32(p.currentEpoch)}
	switch {
	case epoch > p.acceptedEpoch:
		p.setAcceptedEpoch(epoch)
	case epoch == p.acceptedEpoch:
		ack.CurrentEpoch = -1
	default:
		// Not a fault of the leader's: it fixed its epoch from a quorum
		// before this member promised a later one to another leader.
		// The promise stands; the member looks again, as ZooKeeper's
		// learner does.
		p.warn("%s: leaving leader %d after %s %s in phase %s: its epoch is below our acceptedEpoch", p.role, l.leader, qp.Type, zxidHex(qp.Zxid), p.phase())
		p.becomeLooking()
		return
	}
	l.newEpoch, l.stage = epoch, learnerEpochAccepted
	p.announce(epoch)
	p.reportState()
	p.sendPeer(l.leader, wire.QuorumPacket{Type: wire.PacketAckEpoch, Zxid: p.lastProposed, Data: wire.Marshal(&ack)}, nil)
}

// learnerSyncPacket handles synchronization: DIFF, TRUNC or SNAP first,
// then the leader's txns (PROPOSAL, COMMIT), NEWLEADER, and UPTODATE.
// Nothing is applied before UPTODATE (except a SNAP's tree, which holds
// only committed txns): the learner serves nothing of the new epoch before.
func (p *Peer) learnerSyncPacket(qp *wire.QuorumPacket, snap []byte) {
	l := p.learn
	if qp.Type == wire.PacketPing {
		// A ZooKeeper leader pings from the moment NEWLEADER is queued
		// and takes the learner's next packet for the NEWLEADER ACK,
		// dropping the learner if it is anything else; ZooKeeper's
		// learners ignore PING while synchronizing. Touches wait for the
		// first PING after the ACK.
		if l.stage == learnerNewLeaderAcked {
			p.learnerPing(qp)
		}
		return
	}
	if l.stage == learnerEpochAccepted {
		switch qp.Type {
		case wire.PacketDiff:
			// Its zxid is the leader's last committed txn (ZooKeeper's
			// Zab 1.0 rule): what this member holds up to it is committed.
			l.committed = max(l.committed, min(qp.Zxid, p.lastProposed))
		case wire.PacketTrunc:
			if !p.truncateLog(qp.Zxid) {
				p.leaveEpoch(qp, "it would truncate txns this member has applied")
				return
			}
			// The leader never cuts below what it committed.
			l.committed = max(l.committed, min(qp.Zxid, p.lastProposed))
		case wire.PacketSnap:
			if applied := p.tree.LastZxid(); qp.Zxid < applied {
				p.keepTreeAtSnap(qp.Zxid, applied)
				break
			}
			if err := p.installSnapshot(qp.Zxid, snap); err != nil {
				p.leaveEpoch(qp, err.Error())
				return
			}
		default:
			p.leaveEpoch(qp, "synchronization must begin with DIFF, TRUNC or SNAP")
			return
		}
		l.syncMode, l.stage = qp.Type, learnerSyncing
		p.notice("%s: synchronizing with leader %d by %s to %s", p.role, l.leader, qp.Type, zxidHex(qp.Zxid))
		return
	}
	switch qp.Type {
	case wire.PacketProposal:
		p.learnerProposal(qp)
	case wire.PacketCommit:
		p.learnerSyncCommit(qp)
	case wire.PacketInform:
		// A txn committed after NEWLEADER, before this observer's ACK
		// reached the leader (ZooKeeper's learners take INFORM while
		// synchronizing too): logged, and applied at UPTODATE.
		if !l.observer || l.stage < learnerNewLeaderSeen {
			p.leaveEpoch(qp, "INFORM is for observers, after NEWLEADER")
			return
		}
		p.observerInform(qp)
	case wire.PacketNewLeader:
		if l.stage >= learnerNewLeaderSeen || epochOf(qp.Zxid) != l.newEpoch || counterOf(qp.Zxid) != 0 {
			p.leaveEpoch(qp, "NEWLEADER twice, or for another epoch")
			return
		}
		l.stage, l.newLeaderEnd = learnerNewLeaderSeen, p.lastProposed
		p.maybeAckNewLeader()
	case wire.PacketUpToDate:
		if l.stage != learnerNewLeaderAcked {
			p.leaveEpoch(qp, "UPTODATE before our NEWLEADER ACK")
			return
		}
		p.learnerUpToDate()
	default:
		p.leaveEpoch(qp, "not a synchronization packet")
	}
}

// learnerProposal logs a proposal. Its zxid must follow the last one
// without a gap (the first of a new epoch has counter 1), or the learner
// leaves the epoch. zabd is stricter here than ZooKeeper 3.8.0, whose
// learners only log a warning on a gap and log the proposal anyway
// (Follower.processPacket, Learner.syncWithLeader).
func (p *Peer) learnerProposal(qp *wire.QuorumPacket) {
	txn, err := DecodeTxnEntry(qp.Data)
	if err != nil || txn.Header.Zxid != qp.Zxid {
		p.leaveEpoch(qp, "its txn does not decode or has another zxid")
		return
	}
	if qp.Zxid <= p.learn.keptThrough {
		return // applied before a SNAP below it: one txn per zxid
	}
	if !follows(p.lastProposed, qp.Zxid) {
		p.leaveEpoch(qp, "its zxid does not follow our last one "+zxidHex(p.lastProposed))
		return
	}
	p.appendProposal(txn)
	if l := p.learn; l.stage >= learnerNewLeaderSeen && !l.observer {
		l.toAck = append(l.toAck, txn.Header.Zxid)
	}
}

// follows reports whether zxid may come right after last in a log: the
// next counter of the same epoch, or any later epoch (synchronization
// sends the history of older epochs, whose counters may jump there).
func follows(last, zxid int64) bool {
	if epochOf(zxid) == epochOf(last) {
		return zxid == last+1
	}
	return zxid > last
}

// learnerSyncCommit marks the txns a synchronization sends committed up to
// a zxid, which may name any txn the learner holds; they are applied at
// UPTODATE. (In broadcast a follower takes COMMIT in followerCommit.)
func (p *Peer) learnerSyncCommit(qp *wire.QuorumPacket) {
	l := p.learn
	if qp.Zxid > p.lastProposed {
		p.leaveEpoch(qp, "it commits a txn we do not hold, or one committed already")
		return
	}
	l.committed = max(l.committed, qp.Zxid)
}

// maybeAckNewLeader ACKs NEWLEADER once the synchronized txns are durable
// (and a SNAP's snapshot written): then currentEpoch becomes the new epoch,
// durable before the ACK leaves (the Ready contract). Only then may
// proposal ACKs follow (ZOOKEEPER-4685).
func (p *Peer) maybeAckNewLeader() {
	l := p.learn
	if l.stage != learnerNewLeaderSeen || p.snapInstall.pending {
		return
	}
	if p.durableZxid() < l.newLeaderEnd && !p.cfg.Bugs.AckNewLeaderBeforeDurable {
		return
	}
	p.setCurrentEpoch(l.newEpoch)
	l.stage = learnerNewLeaderAcked
	p.sendPeer(l.leader, wire.QuorumPacket{Type: wire.PacketAck, Zxid: makeZxid(l.newEpoch, 0)}, nil)
	p.maybeAckProposals()
}

// learnerUpToDate ends synchronization: the leader's initial history is
// committed (every txn of an older epoch the learner holds), and the
// learner applies what is committed and serves clients.
func (p *Peer) learnerUpToDate() {
	l := p.learn
	for i := p.inflightHead; i < len(p.inflight); i++ {
		if z := p.inflight[i].txn.Header.Zxid; epochOf(z) < l.newEpoch {
			l.committed = max(l.committed, z)
		}
	}
	l.stage = learnerUpToDate
	if d := p.damaged; d != nil {
		p.notice("%s: the log damaged after zxid %s (%s) is recovered: synchronized by %s from leader %d, now holding up to %s; voting again",
			p.role, zxidHex(d.AfterZxid), d.What, l.syncMode, l.leader, zxidHex(p.lastProposed))
		p.damaged = nil
		p.election.SetAbstain(false)
		// UPTODATE follows the leader's receipt of this learner's
		// NEWLEADER ACK, which it sends once the synchronized txns are
		// durable: the damage is repaired on disk too.
		p.out.DamageRepaired = true
	}
	p.notice("%s: up to date with leader %d in epoch %d after %v; serving", p.role, l.leader, l.newEpoch, p.now.Mono-l.since)
	p.reportState()
	p.applyCommittedProposals()
}

// learnerBroadcastPacket handles the leader's traffic once up to date: the
// txns, as a follower or an observer takes them (follower.go,
// observer.go), and what both share.
func (p *Peer) learnerBroadcastPacket(qp *wire.QuorumPacket) {
	switch qp.Type {
	case wire.PacketProposal, wire.PacketCommit, wire.PacketInform:
		if p.learn.observer {
			p.observerBroadcastTxn(qp)
		} else {
			p.followerBroadcastTxn(qp)
		}
	case wire.PacketPing:
		p.learnerPing(qp)
	case wire.PacketSync:
		p.learnerSyncAnswered(qp)
	case wire.PacketRevalidate:
		p.learnerRevalidated(qp)
	default:
		p.leaveEpoch(qp, "not a broadcast packet")
	}
}

// learnerPing answers the leader's PING with the sessions served here
// since the last one, in id order.
func (p *Peer) learnerPing(qp *wire.QuorumPacket) {
	l := p.learn
	var touches []wire.SessionTouch
	for _, id := range slices.Sorted(maps.Keys(l.touches)) {
		touches = append(touches, wire.SessionTouch{SessionID: id, Timeout: l.touches[id]})
	}
	clear(l.touches)
	p.sendPeer(l.leader, wire.PingReply(qp, touches), nil)
}

// learnerTouch records that a session was active here, for the next PING.
func (p *Peer) learnerTouch(session int64, timeout int32) {
	if p.learn != nil {
		p.learn.touches[session] = timeout
	}
}

// learnerSyncAnswered: the leader has committed everything proposed before
// the oldest forwarded sync; it is answered once this member has applied
// as much (the commits came first on the same connection).
func (p *Peer) learnerSyncAnswered(qp *wire.QuorumPacket) {
	l := p.learn
	if len(l.syncs) == 0 {
		p.leaveEpoch(qp, "SYNC without a sync request of ours")
		return
	}
	session := l.syncs[0]
	l.syncs = l.syncs[1:]
	q := p.queues[session]
	if q.empty() {
		return
	}
	for _, pd := range q.items[q.head:] {
		if pd.kind == kindSync && pd.zxid == syncForwarded {
			pd.zxid = l.committed
			break
		}
	}
	p.drain(session)
	p.wakeSyncWaiters()
}

// syncForwarded marks a sync whose zxid the leader's SYNC will set.
const syncForwarded = int64(1<<63 - 1)

// learnerTick: without a word from the leader for syncLimit ticks in
// broadcast (initLimit ticks before), the learner goes back to looking.
func (p *Peer) learnerTick() {
	l := p.learn
	if p.now.Mono >= p.learnerDeadline() {
		p.warn("%s: leader %d silent or not synchronized in time (phase %s): looking again", p.role, l.leader, p.phase())
		p.becomeLooking()
	}
}

func (p *Peer) learnerDeadline() time.Duration {
	l := p.learn
	if l.stage == learnerUpToDate {
		return l.lastHeard + ticks(p.members.syncLimit, p.cfg.Tick)
	}
	return l.since + ticks(p.members.initLimit, p.cfg.Tick)
}

// forwardRequest sends a client request to the leader as REQUEST, with the
// connection's identities.
func (p *Peer) forwardRequest(req *datatree.Request, body []byte) {
	fr := wire.ForwardedRequest{SessionID: req.Session, Cxid: req.Cxid, Type: req.Op, Body: body}
	p.sendPeer(p.learn.leader, wire.QuorumPacket{Type: wire.PacketRequest, Zxid: -1, Data: wire.Marshal(&fr), AuthInfo: req.Auth}, nil)
}

// truncateLog drops every logged txn after zxid (a TRUNC). Only proposals
// not yet applied can go: it reports false if the tree holds a txn past
// zxid (a leader asking to undo a commit, which Zab never does).
func (p *Peer) truncateLog(zxid int64) bool {
	if p.tree.LastZxid() > zxid {
		return false
	}
	keep := p.inflightHead
	for keep < len(p.inflight) && p.inflight[keep].txn.Header.Zxid <= zxid {
		keep++
	}
	clear(p.inflight[keep:])
	p.inflight = p.inflight[:keep]
	p.dropUnhandedAppends(zxid)
	p.lastProposed = min(p.lastProposed, zxid)
	p.handedOver = min(p.handedOver, zxid)
	p.durable = min(p.durable, zxid)
	p.out.Truncate = &zxid
	return true
}

// dropUnhandedAppends forgets the appends of the Ready being built that
// come after zxid: they never reached the log, so truncation need not
// undo them.
func (p *Peer) dropUnhandedAppends(zxid int64) {
	a := p.out.Appends
	n := len(a)
	for n > 0 && a[n-1].Header.Zxid > zxid {
		n--
	}
	clear(a[n:])
	p.out.Appends = a[:n]
}

// keepTreeAtSnap takes a SNAP of snapZxid below applied, the last txn
// this member applied. It comes from a leader whose tree lags its log (its
// txns of earlier epochs are applied once its epoch is established) that
// synchronizes by ZooKeeper's rule (Ensemble.ZooKeeperSync) a learner
// holding a txn of an epoch it lacks. Installing it would take back, on
// disk too, txns this member delivered and perhaps acknowledged until the
// leader's txns after the snapshot were durable again: a crash between
// would leave fewer members holding a committed txn than its commit
// counted (a ZooKeeper learner writes nothing of a SNAP before NEWLEADER,
// so a crash leaves its old state). The leader's history holds every txn
// up to applied (they are committed), so the member keeps its tree, as
// after a TRUNC to applied, and skips the leader's txns up to it.
func (p *Peer) keepTreeAtSnap(snapZxid, applied int64) {
	p.truncateLog(applied) // never below the tree: applied is its last zxid
	l := p.learn
	l.committed = max(l.committed, applied)
	l.keptThrough = applied
	p.notice("%s: leader %d's SNAP is of %s, below %s, the last txn this member applied: keeping its tree and log up to %s, as after a TRUNC",
		p.role, l.leader, zxidHex(snapZxid), zxidHex(applied), zxidHex(applied))
}

// installSnapshot replaces the learner's tree and session table with the
// leader's (a SNAP): its log is truncated to the snapshot's zxid, and a
// snapshot of the new tree is written before NEWLEADER is ACKed, so that a
// restart finds the history it acknowledged.
func (p *Peer) installSnapshot(zxid int64, data []byte) error {
	tree, table, err := decodeSyncSnapshot(p.cfg.Tree, data, zxid)
	if err != nil {
		return err
	}
	// The old log's txns after the snapshot are not the leader's: they go.
	// Those before stay until the new snapshot is durable, and are
	// skipped by any later recovery, which starts from the snapshot.
	if p.lastProposed > zxid {
		p.out.Truncate = &zxid
	}
	p.dropUnhandedAppends(zxid)
	clear(p.inflight)
	p.inflight, p.inflightHead = p.inflight[:0], 0
	p.snap.forceInstalled(p) // finishes a snapshot of the old tree first
	p.tree = tree
	p.sessions = p.newSessionTracker()
	for _, s := range table {
		p.sessions.Add(s.ID, s.Timeout, p.now.Mono)
	}
	p.window = newCommittedWindow(p.cfg.CommittedWindow)
	p.lastProposed, p.handedOver, p.durable, p.logFrom = zxid, zxid, zxid, zxid
	p.learn.committed = zxid
	p.snapInstall = installedSnapshot{zxid: zxid, pending: true}
	p.out.Installed = &zxid
	return nil
}

// installedSnapshot is a tree a SNAP installed whose snapshot is not yet
// durable. Until it is, NEWLEADER is not ACKed, and no txn after it
// reaches the log, whatever role the member has meanwhile: a crash would
// leave a log that skips the snapshot's txns, and a member replaying it
// would apply a later txn without the earlier ones (ZOOKEEPER-3642's class
// of bug).
type installedSnapshot struct {
	zxid    int64
	pending bool
}

// syncSnapshotWritten: the snapshot a SNAP installed is durable, so the
// txns after it may be logged and NEWLEADER ACKed; a failed write is tried
// again.
func (p *Peer) syncSnapshotWritten(e SnapshotWritten) {
	if !p.snapInstall.pending || e.Zxid != p.snapInstall.zxid {
		return
	}
	if e.Err != nil {
		p.warn("%s: writing the snapshot of the leader's tree at %s failed: %v; trying again", p.role, zxidHex(e.Zxid), e.Err)
		p.snap.forceInstalled(p)
		return
	}
	p.snapInstall.pending = false
	p.handleDurable(p.durable) // what the member holds is durable now
}
