package member

import (
	"slices"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/storage"
)

// The Ready contract: how a Ready is carried out, and what the Peer relies
// on. This is the one statement of it; zab.Ready and both shells link here.
//
//  1. One ordered stream of disk operations. Truncate, Epochs,
//     DamageRepaired, Appends and the snapshot a SNAP installed go, in that
//     order within a Ready and in Ready order across Readys, into one
//     queue that disk jobs (DiskJob) carry out strictly in order, one job
//     at a time. A later Ready's operations never overtake an earlier
//     one's: the log is one stream, and a truncation cuts exactly what
//     was appended before it.
//  2. Truncate cuts the log after its zxid, durably (storage.Log.Truncate).
//  3. Epochs writes acceptedEpoch, then currentEpoch, each durably
//     (storage.Store.SetAcceptedEpoch, SetCurrentEpoch; the latter also
//     removes the updatingEpoch mark once currentEpoch covers it).
//  4. DamageRepaired forgets the damage a start cut, durably
//     (storage.Store.ClearDamage).
//  5. Appends: before a batch of txns of an epoch newer than currentEpoch,
//     the updatingEpoch mark is written (storage.Store.CoverEpoch); then
//     each txn is appended, in zxid order.
//  6. Group commit: a job appends every batch queued when it starts and
//     fsyncs once at its end (and before any other operation between
//     them, so that the stream is durable in its order: a barrier's
//     sends vouch for every append before it); appends queued while it
//     runs wait for the next job, which starts as soon as this one is
//     done. Only then does
//     the Peer hear LogDurable (the log's durable zxid, which a truncation
//     may have lowered): it ACKs a proposal, ACKs NEWLEADER and answers a
//     client only for txns a LogDurable covered.
//  7. A SNAP's snapshot (its chunks are marked Installed) is gathered
//     until its last chunk and installed in its place in the stream
//     (storage.Store.InstallSnapshot: the updatingEpoch mark covers its
//     epoch, the log is cut to it, the snapshot is written, the old log
//     files removed); the Peer hears SnapshotWritten for it once the job is
//     done, and only then sends the NEWLEADER ACK that vouches for it.
//  8. Sends wait for the barriers before them: the Messages, Votes and
//     PeerMessages of a Ready with Truncate, Epochs or DamageRepaired leave
//     only once the job that carried those out is done, so that no ACKEPOCH
//     leaves before its acceptedEpoch is durable nor a NEWLEADER ACK
//     before its currentEpoch; and no send overtakes an earlier Ready's.
//     A job ends with the first such barrier it takes, so those sends
//     leave before any later barrier is carried out (an ACKEPOCH never
//     leaves once a later acceptedEpoch is on disk).
//     A Ready's sends leave in this order: client messages, votes (a
//     member that has just decided tells the others before it introduces
//     itself to its leader, who may need that vote to know it leads), then
//     quorum packets. Quorum packets held for a peer whose connection goes
//     meanwhile are lost with it (ConnectionGone, which the shell calls as
//     it steps PeerDisconnected): they were asked for on that connection.
//  9. Snapshots of the member's own tree (chunks not marked Installed)
//     stream to a snapshot file as the Peer serializes them, beside the
//     disk jobs; the file is finished only once the log holds every txn in
//     the (fuzzy) snapshot durably, up to its digest's zxid (storage's
//     WriteSnapshot contract), and the Peer hears SnapshotWritten when it is.
//     A failed snapshot is not fatal: the log still holds every txn.
//  10. A failed disk job is fatal to the process (storage must not be
//     retried): DiskDone returns its error and the shell stops.
//  11. Wakeup: the shell steps a Tick by the time Flush returns.

// Leaves are what a Member needs of the world. A shell's event loop calls
// every Member method; the leaves may hand work elsewhere, but report back
// to the event loop (DiskDone, SnapshotDone).
type Leaves interface {
	// SendClient writes one message to its client connection (a reply,
	// a connect response, or a close after what came before).
	SendClient(m *zab.Message)
	// SendVotes and SendPeer carry an ensemble member's election
	// notifications and quorum packets, in order.
	SendVotes(votes []zab.Vote)
	SendPeer(msgs []zab.PeerMessage)
	// Fsync makes the log durable (storage.Log.Sync), inside a job: zabd
	// times it, the simulator may fail it.
	Fsync(l *storage.Log) (int64, error)
	// RunDisk runs j.Run away from the event loop (or at once) and then
	// hands j to Member.DiskDone on the event loop. At most one job is
	// running at a time.
	RunDisk(j *DiskJob)
	// BeginSnapshot starts writing one snapshot of the member's own tree:
	// the Member hands it the tree's bytes (Chunk, in order), then End
	// once the file may be finished (the log holds its txns durably): the
	// leaves then call j.Write with the bytes as the tree and hand j to
	// Member.SnapshotDone on the event loop.
	BeginSnapshot(j *SnapshotJob) SnapshotStream
}

// SnapshotStream carries one snapshot's tree bytes to SnapshotJob.Write.
type SnapshotStream interface {
	// Chunk is the next piece of the tree; the stream must be done with p
	// before it returns (the Peer reuses it).
	Chunk(p []byte)
	// End: every piece is in, and the file may be finished.
	End()
	// Abort gives the snapshot up: j.Write must fail with err (or never
	// run), and SnapshotDone report it.
	Abort(err error)
}

// Member is one running member: its Peer, its storage, and the disk
// operations and sends on their way.
type Member struct {
	Peer   *zab.Peer
	Store  *storage.Store
	Log    *storage.Log
	leaves Leaves
	obs    Observer

	// queue holds the disk operations no job has taken yet, in order;
	// running is the job in flight.
	queue   []diskOp
	running *DiskJob
	// lastOp numbers the operations queued; doneOp is the last one a
	// finished job carried out.
	lastOp, doneOp uint64
	// installing numbers the operation that gathers the chunks of a SNAP's
	// snapshot (0: none); it stays queued, and no job passes it, until
	// its last chunk arrives.
	installing uint64
	// outbox holds sends waiting for a barrier (contract rule 8).
	outbox []sendBatch
	// durable is the log's durable zxid as the Peer last heard it.
	durable int64

	// The snapshot of the member's own tree being streamed, and one whose
	// stream is whole but waits for the log to make its txns durable.
	snap        *SnapshotJob
	snapStream  SnapshotStream
	snapWaiting bool

	// spare is a finished job's txn buffer, reused by the next.
	spare []datatree.Txn
	// stopped: the process is gone (a crash or a stop); nothing more is
	// carried out.
	stopped bool
}

// sendBatch is one Ready's sends, held until the operation gate is done.
type sendBatch struct {
	gate     uint64
	messages []zab.Message
	votes    []zab.Vote
	peer     []zab.PeerMessage
}

// Stop ends the member: nothing more is carried out or sent, and a job's
// completion is ignored. The shell closes the log once no job runs.
func (m *Member) Stop() { m.stopped = true }

// Stopped reports whether Stop was called.
func (m *Member) Stopped() bool { return m.stopped }

// Busy reports whether a disk job is running.
func (m *Member) Busy() bool { return m.running != nil }

// EpochsPending reports whether an epoch write is queued or under way: until
// it is done the epoch files may hold older epochs than the Peer works
// with, and nothing after it has been sent.
func (m *Member) EpochsPending() bool {
	for i := range m.queue {
		if m.queue[i].kind == opEpochs {
			return true
		}
	}
	if m.running != nil {
		for i := range m.running.ops {
			if m.running.ops[i].kind == opEpochs {
				return true
			}
		}
	}
	return false
}

// Durable is the log's durable zxid as the Peer last heard it.
func (m *Member) Durable() int64 { return m.durable }

// Flush carries out what the Peer asked in its Steps since the last Flush
// (its Ready), by the contract above, and returns when the shell must step
// a Tick.
func (m *Member) Flush() time.Duration {
	if m.stopped {
		return 0
	}
	rd := m.Peer.Ready()
	m.obs.Ready(&rd)
	if m.stopped {
		return rd.Wakeup
	}
	var gate uint64
	role := m.Peer.State().Role
	if rd.Truncate != nil {
		gate = m.enqueue(diskOp{kind: opTruncate, zxid: *rd.Truncate})
	}
	if rd.Epochs != nil {
		gate = m.enqueue(diskOp{kind: opEpochs, epochs: *rd.Epochs, role: role})
	}
	if rd.DamageRepaired {
		gate = m.enqueue(diskOp{kind: opClearDamage})
	}
	if len(rd.Appends) > 0 {
		m.enqueueAppends(rd.Appends)
	}
	for i := range rd.Snapshots {
		m.snapshotChunk(&rd.Snapshots[i])
	}
	m.kick()
	if m.stopped {
		return rd.Wakeup
	}
	m.obs.Carried()
	if m.stopped {
		return rd.Wakeup
	}
	if gate > m.doneOp || len(m.outbox) > 0 {
		m.outbox = append(m.outbox, sendBatch{gate: gate,
			messages: append([]zab.Message(nil), rd.Messages...),
			votes:    append([]zab.Vote(nil), rd.Votes...),
			peer:     append([]zab.PeerMessage(nil), rd.PeerMessages...)})
		m.releaseSends()
	} else {
		m.send(rd.Messages, rd.Votes, rd.PeerMessages)
	}
	wakeup := rd.Wakeup
	if !m.stopped {
		m.Peer.Release(&rd) // the queue and the outbox copied what they keep
	}
	return wakeup
}

// send carries out one Ready's sends in the contract's order, stopping if
// a leaf stopped the member.
func (m *Member) send(msgs []zab.Message, votes []zab.Vote, peer []zab.PeerMessage) {
	for i := range msgs {
		if m.stopped {
			return
		}
		m.leaves.SendClient(&msgs[i])
	}
	if len(votes) > 0 && !m.stopped {
		m.leaves.SendVotes(votes)
	}
	if len(peer) > 0 && !m.stopped {
		m.leaves.SendPeer(peer)
	}
}

// ConnectionGone: the shell's quorum connection with peer is gone, and it is
// about to step zab.PeerDisconnected for it. The sends to peer still held
// behind a disk operation were asked for on that connection, and are lost
// with it, as what was in flight on it is: sent later, they would leave on
// the peer's next connection, where they mean nothing (a leader's
// LEADERINFO to a learner's earlier connection reaching its new one, which
// it takes for its own; simulator seed 595, found by trace conformance).
func (m *Member) ConnectionGone(peer int64) {
	for i := range m.outbox {
		b := &m.outbox[i]
		b.peer = slices.DeleteFunc(b.peer, func(p zab.PeerMessage) bool { return p.To == peer })
	}
}

// releaseSends sends the held batches whose barriers are done, in order.
func (m *Member) releaseSends() {
	n := 0
	for n < len(m.outbox) && m.outbox[n].gate <= m.doneOp && !m.stopped {
		b := &m.outbox[n]
		m.send(b.messages, b.votes, b.peer)
		n++
	}
	m.outbox = append(m.outbox[:0], m.outbox[n:]...)
}
