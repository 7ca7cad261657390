package zab

import (
	"fmt"
	"slices"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/wire"
)

// This file is Zab's synchronization phase on the leader's side: how a
// learner that has acknowledged the new epoch is brought to exactly the
// leader's history (ZooKeeper's LearnerHandler.syncFollower).

// syncMode is how a learner is synchronized.
type syncMode uint8

const (
	syncDiff  syncMode = iota // the learner's log is a prefix of the leader's: send what follows
	syncTrunc                 // the learner holds txns the leader does not: cut them, then send what follows
	syncSnap                  // the learner is too far behind: send the whole tree
)

func (m syncMode) String() string {
	return [...]string{"DIFF", "TRUNC", "SNAP"}[m]
}

// syncPlan is the decision for one learner: the mode, and the zxid after
// which the leader's txns are sent as proposals (for TRUNC, also the zxid
// the learner truncates its log to).
type syncPlan struct {
	mode  syncMode
	after int64
}

// syncHistory is what the leader can send from memory: every txn after
// knownFrom, in zxid order (zxids); last is the last of them a learner may
// keep as committed (txns after it are proposals still outstanding). knownFrom is the
// oldest zxid the leader can vouch for: the oldest txn of its committed
// window, or, with an empty window, the last txn applied to its tree (what
// a snapshot would carry).
type syncHistory struct {
	knownFrom int64
	zxids     []int64 // ascending, all > knownFrom... or = knownFrom for the window's oldest
	last      int64
}

// decideSync chooses how to synchronize a learner whose last logged zxid
// is peerLast. The rules, in order, are ZooKeeper 3.8's
// (LearnerHandler.syncFollower and queueCommittedProposals), with the txn
// log replay left out: beyond the window zabd sends a snapshot.
//   - the learner is at the leader's last zxid: an empty DIFF;
//   - it is past the leader's last zxid: TRUNC to that zxid, unless
//     peerLast is a new-epoch zxid (counter 0): SNAP;
//   - it is behind what the leader can vouch for: SNAP;
//   - its last zxid is in the leader's history: DIFF of what follows;
//   - it is a new-epoch zxid (counter 0, no txn of its own): DIFF of what
//     follows;
//   - otherwise it holds a txn the leader does not (a proposal of an epoch
//     that never committed it): TRUNC to the last zxid the two share, then
//     what follows — unless, with zooKeeperRules, the leader's next txn is
//     of another epoch than the learner's: SNAP.
//
// A new-epoch zxid is what a ZooKeeper member reports after a DIFF or SNAP
// that brought it to a new epoch's start with no txn of that epoch yet (its
// last processed zxid becomes epoch<<32), and so does a zabd member that a
// ZooKeeper leader's SNAP left there. It names no txn: a TRUNC to the txn
// before it would ask a member with no log behind its snapshot to cut its
// log (ZooKeeper's learner exits, "No log files found to truncate"; zabd's
// leaves the epoch, again at every attempt). Its state is the history of
// the epoch's start, a prefix of any later leader's, so what follows is sent.
//
// A ZooKeeper leader never sends a TRUNC across epochs ("the learner will
// crash"): a ZooKeeper learner replays every txn of its log at start-up,
// committed or not, and on a TRUNC cuts its log files and reloads its tree
// from its newest snapshot, so it relies on the truncation point lying in
// its log files and at or after that snapshot. A zabd learner applies
// nothing uncommitted and refuses to truncate what it applied, so zabd's
// own rule truncates across epochs, cheaper than a snapshot;
// zooKeeperRules (Ensemble.ZooKeeperSync, for ensembles with ZooKeeper
// members) sends the SNAP a ZooKeeper leader would. A diverged txn is
// always followed in the leader's history by a txn of a later epoch (one
// leader per epoch), so with zooKeeperRules a learner holding an orphan
// proposal is truncated only when it is past the leader's whole history.
func decideSync(peerLast int64, h syncHistory, zooKeeperRules bool) syncPlan {
	switch {
	case peerLast == h.last:
		return syncPlan{mode: syncDiff, after: peerLast}
	case peerLast > h.last && counterOf(peerLast) == 0:
		return syncPlan{mode: syncSnap}
	case peerLast > h.last:
		return syncPlan{mode: syncTrunc, after: h.last}
	case peerLast < h.knownFrom:
		return syncPlan{mode: syncSnap}
	case peerLast == h.knownFrom:
		return syncPlan{mode: syncDiff, after: peerLast}
	}
	i, found := slices.BinarySearch(h.zxids, peerLast)
	if found || counterOf(peerLast) == 0 {
		return syncPlan{mode: syncDiff, after: peerLast}
	}
	if zooKeeperRules && i < len(h.zxids) && epochOf(h.zxids[i]) != epochOf(peerLast) {
		return syncPlan{mode: syncSnap}
	}
	common := h.knownFrom
	if i > 0 && h.zxids[i-1] > common {
		common = h.zxids[i-1]
	}
	return syncPlan{mode: syncTrunc, after: common}
}

// history gathers the leader's sync history: its committed window, then
// the proposals not yet applied.
func (p *Peer) history() syncHistory {
	h := syncHistory{knownFrom: p.tree.LastZxid(), last: p.lastProposed}
	if lo, ok := p.window.oldest(); ok {
		h.knownFrom = lo
		h.zxids = make([]int64, 0, p.window.n+len(p.inflight)-p.inflightHead)
		for i := 0; i < p.window.n; i++ {
			h.zxids = append(h.zxids, p.window.at(i).Header.Zxid)
		}
	}
	for i := p.inflightHead; i < len(p.inflight); i++ {
		h.zxids = append(h.zxids, p.inflight[i].txn.Header.Zxid)
	}
	return h
}

// txnsAfter returns the leader's txns after zxid, from the window and the
// unapplied proposals, in zxid order.
func (p *Peer) txnsAfter(zxid int64) []*datatree.Txn {
	var out []*datatree.Txn
	for i := 0; i < p.window.n; i++ {
		if t := p.window.at(i); t.Header.Zxid > zxid {
			out = append(out, t)
		}
	}
	for i := p.inflightHead; i < len(p.inflight); i++ {
		if t := &p.inflight[i].txn; t.Header.Zxid > zxid {
			out = append(out, t)
		}
	}
	return out
}

// syncLearner sends a learner that acknowledged the epoch everything that
// makes its log the leader's: DIFF, TRUNC or SNAP (streamed: snapstream.go),
// then what finishSync sends. An observer is sent only what is committed,
// or will be at the epoch's establishment; it learns later commits by
// INFORM.
func (p *Peer) syncLearner(h *learnerHandler) {
	committed := p.syncCommitted()
	hist := p.history()
	hist.last = committed
	plan := decideSync(h.lastZxid, hist, p.cfg.Ensemble.ZooKeeperSync)
	if plan.mode == syncTrunc && p.cfg.Bugs.DiffInsteadOfTrunc {
		plan = syncPlan{mode: syncDiff, after: h.lastZxid}
	}
	var fromLog []datatree.Txn
	if plan.mode == syncSnap {
		if txns, ok := p.readLogForSync(h.lastZxid, hist.knownFrom); ok {
			plan, fromLog = syncPlan{mode: syncDiff, after: hist.knownFrom}, txns
		}
	}
	h.stage = handlerSyncing
	switch plan.mode {
	case syncDiff:
		p.sendToLearner(h, wire.PacketDiff, committed, nil)
	case syncTrunc:
		p.sendToLearner(h, wire.PacketTrunc, plan.after, nil)
	case syncSnap:
		p.notice("leader: synchronizing server %d by SNAP from %s (its last zxid %s, committed %s, ours %s), streaming the tree %d znodes a step",
			h.sid, zxidHex(p.tree.LastZxid()), zxidHex(h.lastZxid), zxidHex(committed), zxidHex(p.lastProposed), p.cfg.SnapshotStepNodes)
		p.startSnapStream(h, committed)
		return
	}
	var txns []syncTxn
	for i := range fromLog {
		txns = append(txns, syncTxn{zxid: fromLog[i].Header.Zxid, entry: EncodeTxnEntry(&fromLog[i])})
	}
	txns = p.appendTxnsAfter(txns, plan.after, p.lastSentTo(h, committed))
	source := "memory"
	if fromLog != nil {
		source = fmt.Sprintf("the txn log (%d txns) and memory", len(fromLog))
	}
	p.notice("leader: synchronizing server %d by %s from %s (its last zxid %s, committed %s, ours %s) from %s",
		h.sid, plan.mode, zxidHex(plan.after), zxidHex(h.lastZxid), zxidHex(committed), zxidHex(p.lastProposed), source)
	p.finishSync(h, txns)
}

// syncTxn is a txn a synchronization sends, encoded as its PROPOSAL
// carries it.
type syncTxn struct {
	zxid  int64
	entry []byte
}

// syncCommitted is what a learner synchronized now may take as committed:
// before establishment, the whole history (the initial history, which
// establishment commits); after, what a quorum acknowledged.
func (p *Peer) syncCommitted() int64 {
	if p.lead.stage == leaderBroadcasting {
		return p.commitPoint()
	}
	return p.lastProposed
}

// lastSentTo is the last txn a synchronization sends h: an observer is
// sent only what is committed (it learns later commits by INFORM), a
// follower also what was proposed since.
func (p *Peer) lastSentTo(h *learnerHandler, committed int64) int64 {
	if h.observer {
		return committed
	}
	return p.lastProposed
}

// appendTxnsAfter appends to txns, encoded, the leader's txns after zxid
// up to end, from the window and the unapplied proposals, in zxid order.
func (p *Peer) appendTxnsAfter(txns []syncTxn, zxid, end int64) []syncTxn {
	for _, t := range p.txnsAfter(zxid) {
		if z := t.Header.Zxid; z <= end {
			txns = append(txns, syncTxn{zxid: z, entry: EncodeTxnEntry(t)})
		}
	}
	return txns
}

// finishSync sends a learner, after its DIFF or TRUNC or the last piece of
// its SNAP, the txns that make its log the leader's, then NEWLEADER. The
// committed ones go first, each as PROPOSAL and COMMIT (ZooKeeper's
// learners apply a synchronization's txns through those COMMITs; a 3.8.0
// follower keeps a txn left without its COMMIT pending past NEWLEADER, and
// its process exits at the first later COMMIT of another zxid:
// FollowerZooKeeperServer.commit); TRUNC never cuts below them, and a
// learner applies nothing before UPTODATE (a SNAP's tree aside). The
// proposals still outstanding follow NEWLEADER as PROPOSAL alone, as if
// forwarded after it: ZooKeeper 3.8.0's learner logs and forgets at NEWLEADER the
// proposals it was sent before, and fails on a COMMIT that arrives before
// UPTODATE with nothing proposed since NEWLEADER (ZOOKEEPER-4394: a
// NullPointerException in Learner.syncWithLeader, and the follower drops
// out of the epoch). Its ACK of NEWLEADER then vouches for the committed
// history only; the outstanding proposals are ACKed one by one, like any
// forwarded later. From here on the learner is forwarded every new
// proposal (a follower) and commit.
func (p *Peer) finishSync(h *learnerHandler, txns []syncTxn) {
	l := p.lead
	committed := p.syncCommitted()
	sent := 0
	for ; sent < len(txns) && txns[sent].zxid <= committed; sent++ {
		p.sendToLearner(h, wire.PacketProposal, txns[sent].zxid, txns[sent].entry)
		p.sendToLearner(h, wire.PacketCommit, txns[sent].zxid, nil)
	}
	h.committedUpTo, h.syncedUpTo = committed, committed
	p.sendToLearner(h, wire.PacketNewLeader, makeZxid(l.epoch, 0), p.cfg.Ensemble.quorumConfig())
	h.stage = handlerNewLeaderSent
	end := p.lastSentTo(h, committed)
	for _, t := range txns[sent:] {
		if t.zxid <= end {
			p.sendToLearner(h, wire.PacketProposal, t.zxid, t.entry)
		}
	}
	h.proposedUpTo = end
}

// readLogForSync reads from the txn log what a learner behind the
// committed window lacks up to the window's oldest txn, if the log holds it
// contiguously and it is worth sending (the shell's judgement).
func (p *Peer) readLogForSync(after, upTo int64) ([]datatree.Txn, bool) {
	if p.cfg.TxnLog == nil || after < p.logFrom || after >= upTo {
		return nil, false
	}
	txns, ok := p.cfg.TxnLog.ReadAfter(after, upTo)
	if !ok || len(txns) == 0 || txns[len(txns)-1].Header.Zxid != upTo || txns[0].Header.Zxid <= after {
		return nil, false
	}
	return txns, true
}

func (e *Ensemble) quorumConfig() []byte {
	if e == nil {
		return nil
	}
	return e.Election.QuorumConfig
}

// decodeSyncSnapshot reads what follows a SNAP (snapStream writes it): a tree whose last
// zxid is zxid, and its session table.
func decodeSyncSnapshot(cfg datatree.Config, b []byte, zxid int64) (*datatree.Tree, []sessions.Session, error) {
	d := wire.NewDecoder(b)
	n := d.ReadInt()
	if d.Err() != nil || n < 0 || int(n) > d.Remaining()/12 {
		return nil, nil, fmt.Errorf("snapshot from the leader: bad session count %d", n)
	}
	table := make([]sessions.Session, n)
	for i := range table {
		table[i] = sessions.Session{ID: d.ReadLong(), Timeout: d.ReadInt()}
	}
	tree, err := datatree.Load(cfg, d, zxid)
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot from the leader: %w", err)
	}
	if sig := d.ReadString(); d.Err() != nil || sig != wire.SnapshotSignature {
		return nil, nil, fmt.Errorf("snapshot from the leader: missing signature %q after the tree", wire.SnapshotSignature)
	}
	return tree, table, nil
}
