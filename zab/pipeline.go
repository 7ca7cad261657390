package zab

import (
	"slices"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

// pendingKind says how a request travels through the pipeline.
type pendingKind uint8

const (
	kindRead    pendingKind = iota // answered from the tree when its turn comes
	kindWrite                      // a txn: answered once applied
	kindConnect                    // a new session's createSession txn: answered with a ConnectResponse
	kindSync                       // answered once every txn proposed before it is applied
)

// pending is a request waiting for its turn to be answered.
type pending struct {
	conn ConnID
	kind pendingKind
	req  datatree.Request
	// zxid: for a write, the zxid it was proposed with; for a sync, the
	// zxid that must be applied before it is answered.
	zxid    int64
	done    bool  // a write's txn has been applied (its result is p.applied)
	waiting bool  // a sync heading its queue is in syncWaiters
	timeout int32 // kindConnect: the negotiated timeout
}

// sessionQueue holds a session's requests in arrival order until they are
// answered: ZooKeeper answers each session's requests in the order it sent
// them, so a read waits behind that session's pending writes.
type sessionQueue struct {
	items []*pending
	head  int
}

func (q *sessionQueue) empty() bool      { return q == nil || q.head == len(q.items) }
func (q *sessionQueue) front() *pending  { return q.items[q.head] }
func (q *sessionQueue) push(pd *pending) { q.items = append(q.items, pd) }

func (q *sessionQueue) pop() {
	q.items[q.head] = nil
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
}

// firstUnfinishedWrite returns the oldest write of the queue whose txn has
// not been applied: the one the next applied txn of this session answers.
func (q *sessionQueue) firstUnfinishedWrite() *pending {
	for _, pd := range q.items[q.head:] {
		if (pd.kind == kindWrite || pd.kind == kindConnect) && !pd.done {
			return pd
		}
	}
	return nil
}

// requestKinds classifies the opcodes ZooKeeper 3.8 accepts from a client
// (Request.isValid): those that become txns, and those answered locally.
var requestKinds = map[wire.OpCode]pendingKind{
	wire.OpCreate: kindWrite, wire.OpCreate2: kindWrite, wire.OpCreateTTL: kindWrite,
	wire.OpCreateContainer: kindWrite, wire.OpDelete: kindWrite, wire.OpDeleteContainer: kindWrite,
	wire.OpSetData: kindWrite, wire.OpSetACL: kindWrite, wire.OpCheck: kindWrite,
	wire.OpMulti: kindWrite, wire.OpReconfig: kindWrite, wire.OpCloseSession: kindWrite,
	wire.OpExists: kindRead, wire.OpGetData: kindRead, wire.OpGetChildren: kindRead,
	wire.OpGetChildren2: kindRead, wire.OpGetACL: kindRead, wire.OpGetAllChildrenNumber: kindRead,
	wire.OpGetEphemerals: kindRead, wire.OpMultiRead: kindRead, wire.OpAddWatch: kindRead,
	wire.OpCheckWatches: kindRead, wire.OpRemoveWatches: kindRead, wire.OpSetWatches: kindRead,
	wire.OpSetWatches2: kindRead, wire.OpPing: kindRead, wire.OpWhoAmI: kindRead,
	wire.OpSync: kindSync,
}

// authenticatedBy reports whether auth holds an identity of one of schemes.
func authenticatedBy(auth []wire.Id, schemes []string) bool {
	for _, id := range auth {
		if slices.Contains(schemes, id.Scheme) {
			return true
		}
	}
	return false
}

// handleRequest takes a request frame from an established connection into
// the pipeline.
func (p *Peer) handleRequest(e RequestReceived) {
	c := p.conns[e.Conn]
	if c == nil {
		return // closed meanwhile: nobody to answer
	}
	switch c.state {
	case connRevalidating:
		c.held = append(c.held, e)
		return
	case connAwaitingConnect:
		p.closeConn(c) // a request before the session is established
		return
	case connCreating:
		c.held = append(c.held, e)
		return
	}
	switch e.Op {
	case wire.OpAuth:
		p.handleAuth(c, e)
		return
	case wire.OpSASL:
		// zabd offers no SASL mechanism: the client cannot authenticate
		// this way, so the connection goes, as when ZooKeeper's SASL fails.
		p.closeConn(c)
		return
	}
	if schemes := p.cfg.EnforceAuthSchemes; len(schemes) > 0 && !authenticatedBy(c.auth, schemes) {
		// ZooKeeper answers with zxid 0 and closes the connection; the
		// session is left to expire.
		p.notice("session 0x%x: request %s without an identity of %v (enforce.auth.schemes): closing the connection", c.session, e.Op, schemes)
		p.send(Message{Conn: c.id, Header: wire.ReplyHeader{Xid: e.Xid, Err: wire.ErrSessionClosedRequireSASL}})
		p.closeConn(c)
		return
	}
	kind, valid := requestKinds[e.Op]
	if !valid {
		// ZooKeeper's UnimplementedRequestProcessor: zxid -1, then close.
		p.send(Message{Conn: c.id, Header: wire.ReplyHeader{Xid: e.Xid, Zxid: -1, Err: wire.ErrUnimplemented}})
		p.closeConn(c)
		return
	}
	// pd stays on the stack when answered at once (the common read);
	// only a request that must wait is copied to the heap.
	pd := pending{conn: c.id, kind: kind, req: datatree.Request{
		Session: c.session,
		Cxid:    e.Xid,
		Op:      e.Op,
		Body:    treeBody(e.Body),
		Auth:    c.auth,
	}}
	if kind == kindWrite && datatree.FailsBeforeTxn(&pd.req) {
		// Answered in its turn without a txn, as a read is, by whichever
		// member the client uses: a learner does not forward it.
		kind, pd.kind = kindRead, kindRead
	}
	if !p.sessions.Touch(c.session, p.now.Mono) {
		// The session is closing or gone; ZooKeeper drops the request and
		// the session's close closes the connection.
		return
	}
	p.learnerTouch(c.session, c.timeout)
	if kind != kindWrite && p.sessions.Check(c.session, p.self) != nil {
		// Another member serves the session now (the session is live: the
		// touch succeeded, so Check can only say SessionMoved). ZooKeeper
		// checks reads, pings and syncs in prepare too, and tears the
		// connection down without a reply; a write's check is its error
		// txn (see checkSession).
		p.closeConn(c)
		return
	}
	q := p.queues[c.session]
	switch kind {
	case kindWrite:
		if p.learn != nil {
			p.forwardWrite(heapCopy(&pd), marshalBody(e.Body))
			return
		}
		p.submitWrite(heapCopy(&pd))
	case kindSync:
		if p.learn != nil {
			// The leader answers a forwarded sync once every write it
			// proposed before has committed (ZooKeeper's sync is not a
			// quorum operation: ZOOKEEPER-1675).
			pd.zxid = syncForwarded
			p.enqueue(heapCopy(&pd))
			p.learn.syncs = append(p.learn.syncs, c.session)
			p.forwardRequest(&pd.req, marshalBody(e.Body))
			return
		}
		pd.zxid = p.lastProposed
		if q.empty() && p.tree.LastZxid() >= pd.zxid {
			p.answer(&pd)
			return
		}
		p.enqueue(heapCopy(&pd))
		p.drain(c.session)
	default:
		if q.empty() || p.cfg.Bugs.ReadOvertakesWrite {
			p.answer(&pd)
			return
		}
		p.enqueue(heapCopy(&pd))
	}
}

func heapCopy(pd *pending) *pending {
	c := *pd
	return &c
}

// treeBody adapts the records wire decodes to what datatree takes. A body
// that failed to decode stays nil: the tree answers MarshallingError.
func treeBody(b wire.Record) wire.Record {
	switch b := b.(type) {
	case *wire.MultiRequest:
		return datatree.NewMultiRequest(b)
	case *wire.RawPathRequest:
		return &wire.PathRequest{Path: b.Path}
	}
	return b
}

func (p *Peer) enqueue(pd *pending) {
	q := p.queues[pd.req.Session]
	if q == nil {
		q = &sessionQueue{}
		p.queues[pd.req.Session] = q
	}
	q.push(pd)
}

// submitWrite prepares a write (this member leads), proposes its txn and
// queues the request to be answered once the txn is applied.
func (p *Peer) submitWrite(pd *pending) {
	if pd.zxid = p.propose(&pd.req, p.self); pd.zxid == 0 {
		// No zxid left: the client's connection goes (it is gone already
		// if the leader gave up its epoch).
		p.closeConn(p.conns[pd.conn])
		return
	}
	p.enqueue(pd)
	if p.cfg.Bugs.ReplyBeforeDurable && pd.zxid != 0 {
		p.ackOwnLog(pd.zxid) // as if the log were durable already
	}
}

// forwardWrite sends a write to the leader (this member learns) and queues
// the request to be answered once the leader's txn for it is applied here,
// matched by session and cxid.
func (p *Peer) forwardWrite(pd *pending, body []byte) {
	p.enqueue(pd)
	p.forwardRequest(&pd.req, body)
}

// marshalBody re-encodes a decoded request body for forwarding; a body
// that did not decode is forwarded empty, and the leader answers it
// MarshallingError as it would have here.
func marshalBody(b wire.Record) []byte {
	if b == nil {
		return nil
	}
	return wire.Marshal(b)
}

// propose turns a request that came through member owner into the next
// txn, hands it to the log and sends it to the followers. Only a leader
// calls it. When the counter would reach 0xffffffff the leader gives up
// the epoch instead (a new election starts a new epoch, as ZooKeeper
// does), and the request is dropped: its client gets ConnectionLoss.
func (p *Peer) propose(req *datatree.Request, owner int64) int64 {
	zxid := p.lastProposed + 1
	if p.lead == nil {
		return 0 // it gave up the lead while proposing a batch
	}
	if p.lead.epoch != 0 && epochOf(zxid) < p.lead.epoch {
		// The first proposal of the epoch: whatever counter the initial
		// history reached in its own epoch, this one starts from 1.
		zxid = makeZxid(p.lead.epoch, 1)
	}
	if counterOf(zxid) > p.maxCounter() {
		if p.standalone() {
			// Epoch 0 is a standalone server's only epoch.
			p.warn("standalone: zxid counter exhausted at %s: refusing writes", zxidHex(p.lastProposed))
			return 0
		}
		p.warn("leader: zxid counter exhausted in epoch %d at %s: looking again for a new epoch", epochOf(zxid), zxidHex(p.lastProposed))
		p.becomeLooking()
		return 0
	}
	var txn datatree.Txn
	if err := p.checkSession(req, owner); err != wire.ErrOK {
		txn = errorTxn(req, zxid, p.now.Wall, err)
	} else {
		txn = p.tree.Prepare(req, zxid, p.now.Wall)
	}
	if req.Op == wire.OpCloseSession {
		// No more touches; and an expiry of this session is moot now.
		p.sessions.SetClosing(req.Session)
	}
	p.appendProposal(txn)
	if p.lead != nil && len(p.lead.handlers) > 0 {
		p.forwardProposal(&p.inflight[len(p.inflight)-1].txn)
	}
	return zxid
}

// maxCounter is the last counter a proposal may use.
func (p *Peer) maxCounter() int64 {
	if p.cfg.counterLimit > 0 {
		return p.cfg.counterLimit
	}
	return maxCounter
}

// appendProposal takes a txn into the log and the pipeline: it waits for
// its commit, and is applied then.
func (p *Peer) appendProposal(txn datatree.Txn) {
	p.lastProposed = txn.Header.Zxid
	p.inflight = append(p.inflight, proposal{txn: txn})
	p.out.Appends = append(p.out.Appends, txn)
}

// checkSession applies ZooKeeper's checkSession to a client's write: the
// session must be live and served through owner, the member it came
// through.
func (p *Peer) checkSession(req *datatree.Request, owner int64) wire.ErrCode {
	if req.Internal || req.Op == wire.OpCreateSession || req.Op == wire.OpCloseSession {
		return wire.ErrOK
	}
	if err := p.sessions.Check(req.Session, owner); err != nil {
		if code, ok := err.(wire.ErrCode); ok {
			return code
		}
		return wire.ErrSystemError
	}
	return wire.ErrOK
}

// errorTxn is the txn of a write refused before the tree saw it.
func errorTxn(req *datatree.Request, zxid, wall int64, code wire.ErrCode) datatree.Txn {
	return datatree.Txn{
		Header: wire.TxnHeader{ClientID: req.Session, Cxid: req.Cxid, Zxid: zxid, Time: wall, Type: wire.OpError},
		Body:   &wire.ErrorTxn{Err: code},
	}
}

// handleDurable takes the shell's report that its log is durable up to
// zxid. The log can only hold what Ready has handed over, so a report
// beyond that (a confused shell, or one that Steps this report before it
// takes the Ready with the appends) counts only up to there: nothing is
// applied that the shell has not even been given.
func (p *Peer) handleDurable(zxid int64) {
	zxid = min(zxid, p.handedOver)
	p.durable = max(p.durable, zxid)
	switch {
	case p.lead != nil:
		p.ackOwnLog(zxid)
		p.maybeEpochAcked()
		p.maybeEstablish()
	case p.learn != nil:
		p.maybeAckNewLeader()
		p.maybeAckProposals()
	}
}

// ackOwnLog records the leader's own log as durable up to zxid, which is
// its acknowledgement of every proposal up to there, and commits and
// applies what a quorum now holds.
func (p *Peer) ackOwnLog(zxid int64) {
	p.quorum.ack(p.self, zxid)
	p.applyCommittedProposals()
}

// applyCommittedProposals applies, in zxid order, every proposal a quorum
// has acknowledged. Applying can submit new requests (those a connection
// held until its session existed), which can reach here again; the inner
// call returns at once and the outer loop, which re-reads the commit
// point, applies what it would have.
func (p *Peer) applyCommittedProposals() {
	if p.applying {
		return
	}
	p.applying = true
	for p.inflightHead < len(p.inflight) && p.mayApply(p.inflight[p.inflightHead].txn.Header.Zxid) {
		head := &p.inflight[p.inflightHead]
		if p.lead != nil && len(p.lead.handlers) > 0 {
			p.forwardCommit(&head.txn)
		}
		txn := head.txn
		*head = proposal{}
		p.inflightHead++
		p.applyCommitted(&txn)
		// A learner's sync waiting for this txn is answered before the
		// next COMMIT leaves, so that the learner answers it before it
		// applies anything proposed after the sync.
		p.answerLearnerSyncs()
	}
	if p.inflightHead > len(p.inflight)/2 {
		// Mostly applied: move the rest to the front, so that a pipeline
		// that never empties reuses its array instead of growing it.
		n := copy(p.inflight, p.inflight[p.inflightHead:])
		clear(p.inflight[n:])
		p.inflight, p.inflightHead = p.inflight[:n], 0
	}
	p.applying = false
}

// mayApply reports whether the proposal zxid is committed and this member
// serves (a leader once established, a learner once up to date: before,
// nothing of the new epoch is applied).
func (p *Peer) mayApply(zxid int64) bool {
	switch {
	case p.lead != nil:
		return p.lead.stage == leaderBroadcasting && zxid <= p.quorum.committed()
	case p.learn != nil:
		return p.learn.stage == learnerUpToDate && zxid <= p.learn.committed
	}
	return false
}

// serving reports whether the member answers clients: a leader whose epoch
// is established, a learner that is up to date.
func (p *Peer) serving() bool {
	return p.lead != nil && p.lead.stage == leaderBroadcasting || p.learn != nil && p.learn.stage == learnerUpToDate
}

// applyCommitted applies a committed txn and answers what it completes:
// the watch events it fires first, then the reply to its request, then
// whatever waited behind that request.
func (p *Peer) applyCommitted(txn *datatree.Txn) {
	res := p.applyTxn(txn)
	var late []datatree.WatchEvent // the EventAfterReply bug's events
	if p.cfg.Bugs.EventAfterReply {
		late = slices.Clone(p.events)
		p.events = p.events[:0]
	} else {
		p.deliverEvents()
	}
	hdr := &txn.Header
	if q := p.queues[hdr.ClientID]; !q.empty() {
		if pd := q.firstUnfinishedWrite(); pd != nil && answers(hdr, pd) {
			// A write is answered in the drain that follows its apply:
			// everything queued before it is a read, a sync on an earlier
			// zxid, or a write already answered. So its result need not be
			// kept in the request; it waits in p.applied for this drain.
			pd.done, p.applied = true, res
			p.drain(hdr.ClientID)
		}
	}
	if late != nil {
		p.events = append(p.events[:0], late...)
		p.deliverEvents()
	}
	if hdr.Type == wire.OpCloseSession {
		if c, ok := p.connOf[hdr.ClientID]; ok {
			p.closeConn(p.conns[c])
		}
		delete(p.queues, hdr.ClientID)
	}
	p.wakeSyncWaiters()
	p.snap.advance(p)
}

// answers reports whether an applied txn is the one pd waits for: by zxid
// when this member proposed it; by (session, cxid), as ZooKeeper's
// CommitProcessor matches, when the request was forwarded to another
// member (zxid unknown until its commit arrives).
func answers(hdr *wire.TxnHeader, pd *pending) bool {
	if pd.zxid != 0 {
		return pd.zxid == hdr.Zxid
	}
	return pd.req.Cxid == hdr.Cxid
}

// applyTxn applies a txn to the tree and the session table, whatever its
// source (this member's proposal, a leader's, the log at start-up), and
// keeps it in the committed window. The events it fires are left in
// p.events.
func (p *Peer) applyTxn(txn *datatree.Txn) datatree.Result {
	res, events := p.tree.Apply(txn, p.events[:0])
	p.events = events
	switch txn.Header.Type {
	case wire.OpCreateSession:
		if b, ok := txn.Body.(*wire.CreateSessionTxn); ok {
			p.sessions.Add(txn.Header.ClientID, b.TimeOut, p.now.Mono)
		}
	case wire.OpCloseSession:
		p.sessions.Remove(txn.Header.ClientID)
	}
	p.window.add(*txn)
	p.snap.txnsSinceSnapshot++
	return res
}

// deliverEvents queues the watch events in p.events to their connections.
func (p *Peer) deliverEvents() {
	for i := range p.events {
		ev := &p.events[i]
		id := ConnID(ev.Watcher)
		if _, ok := p.conns[id]; !ok {
			continue
		}
		body := ev.Event
		p.send(Message{Conn: id, Header: wire.ReplyHeader{Xid: wire.XidNotification, Zxid: -1}, Body: &body})
	}
	p.events = p.events[:0]
}

// drain answers the requests at the head of a session's queue until one
// must still wait: an unapplied write, or a sync whose zxid is not applied.
func (p *Peer) drain(session int64) {
	q := p.queues[session]
	for !q.empty() {
		pd := q.front()
		switch pd.kind {
		case kindWrite, kindConnect:
			if !pd.done {
				return
			}
		case kindSync:
			if p.tree.LastZxid() < pd.zxid {
				if !pd.waiting {
					pd.waiting = true
					p.syncWaiters = append(p.syncWaiters, session)
				}
				return
			}
		}
		q.pop()
		p.answer(pd)
	}
}

// wakeSyncWaiters answers the syncs whose zxid has now been applied.
func (p *Peer) wakeSyncWaiters() {
	if len(p.syncWaiters) == 0 {
		return
	}
	waiters := p.syncWaiters
	p.syncWaiters = nil
	for _, s := range waiters {
		q := p.queues[s]
		if q.empty() {
			continue
		}
		if pd := q.front(); pd.kind == kindSync && p.tree.LastZxid() >= pd.zxid {
			p.drain(s)
		} else {
			p.syncWaiters = append(p.syncWaiters, s)
		}
	}
}

// answer replies to a request whose turn has come. Reads are answered from
// the tree now; every reply header carries the last applied zxid, as
// ZooKeeper's FinalRequestProcessor sets it.
func (p *Peer) answer(pd *pending) {
	c := p.conns[pd.conn]
	if c == nil || c.session != pd.req.Session {
		return // the connection is gone (or now serves another session)
	}
	hdr := wire.ReplyHeader{Xid: pd.req.Cxid, Zxid: p.tree.LastZxid()}
	switch pd.kind {
	case kindConnect:
		p.establish(c, pd.timeout)
		return
	case kindWrite:
		if p.applied.Err == wire.ErrSessionMoved {
			// ZooKeeper tears such a connection down instead of answering.
			p.closeConn(c)
			return
		}
		hdr.Err = p.applied.Err
		p.send(Message{Conn: c.id, Header: hdr, Body: responseBody(&p.applied)})
		if pd.req.Op == wire.OpCloseSession {
			p.closeConn(c)
		}
		return
	}
	switch pd.req.Op {
	case wire.OpPing:
		hdr.Xid = wire.XidPing
		p.send(Message{Conn: c.id, Header: hdr})
	case wire.OpWhoAmI:
		p.send(Message{Conn: c.id, Header: hdr, Body: whoAmI(pd.req.Auth)})
	default:
		var res datatree.Result
		res, p.events = p.tree.Read(&pd.req, datatree.WatcherID(c.id), p.events[:0])
		p.deliverEvents()
		hdr.Err = res.Err
		p.send(Message{Conn: c.id, Header: hdr, Body: responseBody(&res)})
	}
}

// expireSessions turns every session whose timeout has passed into a
// closeSession txn of the server's own. Only the leader decides expiry.
func (p *Peer) expireSessions() {
	if p.lead == nil || p.lead.stage != leaderBroadcasting || p.sessions.NextExpiry() > p.now.Mono {
		return
	}
	for _, id := range p.sessions.Expire(p.now.Mono) {
		if p.cfg.Bugs.ExpireWithoutTxn {
			p.sessions.Remove(id)
			if c, ok := p.connOf[id]; ok {
				p.closeConn(p.conns[c])
			}
			continue
		}
		req := datatree.Request{Session: id, Op: wire.OpCloseSession}
		p.propose(&req, p.self)
	}
}

// reapContainers, every ContainerCheckInterval, submits the server's own
// deleteContainer / delete requests for empty containers and expired TTL
// nodes, as ZooKeeper's ContainerManager does; they go through the
// pipeline like any write, so a node that changed meanwhile survives.
func (p *Peer) reapContainers() {
	if p.lead == nil || p.lead.stage != leaderBroadcasting || p.now.Mono < p.nextReap {
		return
	}
	p.nextReap = p.now.Mono + p.cfg.ContainerCheckInterval
	for _, req := range p.tree.ReapCandidates(p.now.Wall, p.cfg.ContainerMaxNeverUsed.Milliseconds()) {
		p.propose(&req, p.self)
	}
}
