package member

import (
	"math/rand"
	randv2 "math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// recorder is a shell that runs nothing by itself: the test runs each disk
// job and finishes each snapshot when it chooses, and sees every send and
// every write in order.
type recorder struct {
	NoObserver
	jobs    []*DiskJob
	sent    []string
	events  []string
	streams []*recordedStream
}

type recordedStream struct {
	j     *SnapshotJob
	bytes int
	ended bool
}

func (r *recorder) SendClient(m *zab.Message)           { r.sent = append(r.sent, "client") }
func (r *recorder) SendVotes([]zab.Vote)                { r.sent = append(r.sent, "votes") }
func (r *recorder) SendPeer([]zab.PeerMessage)          { r.sent = append(r.sent, "peer") }
func (r *recorder) Fsync(l *storage.Log) (int64, error) { return l.Sync() }
func (r *recorder) RunDisk(j *DiskJob)                  { r.jobs = append(r.jobs, j) }
func (r *recorder) BeginSnapshot(j *SnapshotJob) SnapshotStream {
	st := &recordedStream{j: j}
	r.streams = append(r.streams, st)
	return st
}
func (st *recordedStream) Chunk(p []byte)  { st.bytes += len(p) }
func (st *recordedStream) End()            { st.ended = true }
func (st *recordedStream) Abort(err error) { st.ended = true }

func (r *recorder) EpochsWritten(e zab.EpochWrite, _ zab.Role) bool {
	r.events = append(r.events, "epochs")
	return false
}

func (r *recorder) Synced(zxid int64, txns int) bool {
	r.events = append(r.events, "fsync")
	return false
}

// openMember starts a standalone member on a simulated disk.
func openMember(t *testing.T, r *recorder) *Member {
	t.Helper()
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
	m, _, err := Open(Options{
		Storage:  storage.Options{FS: fsys, Dir: "/d", Rand: rand.New(rand.NewSource(2))},
		Config:   zab.Config{ServerID: zab.StandaloneServerID},
		Now:      zab.Time{},
		Rand:     randv2.New(randv2.NewPCG(3, 4)),
		Leaves:   r,
		Observer: r,
	})
	require.NoError(t, err)
	return m
}

func sessionTxn(zxid int64) datatree.Txn {
	return datatree.Txn{Header: wire.TxnHeader{ClientID: zxid, Zxid: zxid, Type: wire.OpCreateSession},
		Body: &wire.CreateSessionTxn{TimeOut: 30000}}
}

// finish runs the oldest job and hands it back.
func finish(t *testing.T, m *Member, r *recorder) {
	t.Helper()
	require.NotEmpty(t, r.jobs, "a job is running")
	j := r.jobs[0]
	r.jobs = r.jobs[1:]
	j.Run()
	require.NoError(t, m.DiskDone(zab.Time{}, j))
}

// Rule 8: a Ready's sends wait for its epoch write, and a later Ready's
// sends wait behind them; rule 6: the appends queued before the epoch
// write are durable before it.
func TestSendsWaitForTheirBarrierAndTheStreamIsDurableInOrder(t *testing.T) {
	r := &recorder{}
	m := openMember(t, r)
	m.enqueueAppends([]datatree.Txn{sessionTxn(1), sessionTxn(2)})
	gate := m.enqueue(diskOp{kind: opEpochs, epochs: zab.EpochWrite{Accepted: 1}})
	m.kick()
	m.outbox = append(m.outbox, sendBatch{gate: gate, peer: []zab.PeerMessage{{To: 2}}})
	m.outbox = append(m.outbox, sendBatch{messages: []zab.Message{{Kind: zab.Close}}})
	m.releaseSends()
	require.Empty(t, r.sent, "nothing leaves before the epoch write is done")
	require.True(t, m.EpochsPending())

	finish(t, m, r)
	require.Equal(t, []string{"peer", "client"}, r.sent, "in order, once it is done")
	require.Equal(t, []string{"fsync", "epochs"}, r.events, "the appends before the epoch write are durable first")
	require.False(t, m.EpochsPending())
	require.Equal(t, int64(2), m.Durable())
	accepted, _, err := m.Store.AcceptedEpoch()
	require.NoError(t, err)
	require.Equal(t, int64(1), accepted)
}

// The sends held for a peer whose connection is gone are lost with it;
// those to the others, and to it once it is connected again, leave.
func TestHeldSendsToAPeerWhoseConnectionWentAreDropped(t *testing.T) {
	r := &recorder{}
	m := openMember(t, r)
	var sent []zab.PeerMessage
	m.leaves = &peerRecorder{recorder: r, sent: &sent}
	gate := m.enqueue(diskOp{kind: opEpochs, epochs: zab.EpochWrite{Accepted: 1}})
	m.kick()
	m.outbox = append(m.outbox, sendBatch{gate: gate, peer: []zab.PeerMessage{{To: 2, Packet: wire.QuorumPacket{Type: wire.PacketLeaderInfo}}, {To: 3, Packet: wire.QuorumPacket{Type: wire.PacketLeaderInfo}}}})
	m.ConnectionGone(2)
	m.outbox = append(m.outbox, sendBatch{gate: gate, peer: []zab.PeerMessage{{To: 2, Packet: wire.QuorumPacket{Type: wire.PacketLeaderInfo, Zxid: 1}}}})
	finish(t, m, r)
	require.Equal(t, []zab.PeerMessage{{To: 3, Packet: wire.QuorumPacket{Type: wire.PacketLeaderInfo}}, {To: 2, Packet: wire.QuorumPacket{Type: wire.PacketLeaderInfo, Zxid: 1}}}, sent)
}

// peerRecorder also keeps the quorum messages sent.
type peerRecorder struct {
	*recorder
	sent *[]zab.PeerMessage
}

func (p *peerRecorder) SendPeer(msgs []zab.PeerMessage) { *p.sent = append(*p.sent, msgs...) }

// Rule 8: a job ends with the first barrier it takes, so the sends held
// behind it leave before a later barrier is carried out.
func TestAJobEndsAtItsFirstBarrier(t *testing.T) {
	r := &recorder{}
	m := openMember(t, r)
	first := m.enqueue(diskOp{kind: opEpochs, epochs: zab.EpochWrite{Accepted: 5, Current: 3}})
	m.outbox = append(m.outbox, sendBatch{gate: first, peer: []zab.PeerMessage{{To: 3}}})
	m.enqueue(diskOp{kind: opEpochs, epochs: zab.EpochWrite{Accepted: 6, Current: 3}})
	m.kick()
	finish(t, m, r)
	require.Equal(t, []string{"peer"}, r.sent)
	accepted, _, err := m.Store.AcceptedEpoch()
	require.NoError(t, err)
	require.Equal(t, int64(5), accepted, "the ACKEPOCH of epoch 5 left before acceptedEpoch 6 was written")
	finish(t, m, r)
	accepted, _, err = m.Store.AcceptedEpoch()
	require.NoError(t, err)
	require.Equal(t, int64(6), accepted)
}

// Rule 6: appends queued while a job runs go together into the next job,
// behind one fsync.
func TestAppendsWhileAJobRunsShareTheNextFsync(t *testing.T) {
	r := &recorder{}
	m := openMember(t, r)
	m.enqueueAppends([]datatree.Txn{sessionTxn(1)})
	m.kick()
	m.enqueueAppends([]datatree.Txn{sessionTxn(2)})
	m.enqueueAppends([]datatree.Txn{sessionTxn(3)})
	m.kick()
	require.Len(t, r.jobs, 1, "one job at a time")
	finish(t, m, r)
	require.Len(t, r.jobs, 1, "the next job starts at once")
	finish(t, m, r)
	require.Equal(t, []string{"fsync", "fsync"}, r.events)
	require.Equal(t, int64(3), m.Durable())
}

// A job's report of what it made durable covers nothing a later
// truncation, still queued, cuts: the Peer has already cut it, and what it
// appended since under the same zxids is not on disk yet.
func TestDurableReportStopsAtAQueuedTruncation(t *testing.T) {
	r := &recorder{}
	m := openMember(t, r)
	m.enqueueAppends([]datatree.Txn{sessionTxn(1), sessionTxn(2), sessionTxn(3)})
	m.kick()
	m.enqueue(diskOp{kind: opTruncate, zxid: 1})
	m.enqueueAppends([]datatree.Txn{sessionTxn(2)})
	finish(t, m, r)
	require.Equal(t, int64(1), m.Durable(), "0x2 was truncated and appended again after the job that made it durable")
	finish(t, m, r) // the truncation: a job ends with its barrier
	require.Equal(t, int64(1), m.Durable())
	finish(t, m, r)
	require.Equal(t, int64(2), m.Durable())
}

// Rule 9: a snapshot of the member's own tree is finished only once the log
// holds every txn in it durably; until then its stream waits.
func TestSnapshotWaitsForTheLogToHoldItsTxns(t *testing.T) {
	r := &recorder{}
	m := openMember(t, r)
	m.enqueueAppends([]datatree.Txn{sessionTxn(1), sessionTxn(2)})
	m.kick()
	m.snapshotChunk(&zab.SnapshotChunk{Zxid: 1, First: true, Data: []byte{1, 2, 3}, Last: true,
		Digest: zab.SnapshotDigest{Zxid: 2}})
	require.Len(t, r.streams, 1)
	st := r.streams[0]
	require.Equal(t, 3, st.bytes)
	require.False(t, st.ended, "its txns up to 0x2 are not durable yet")
	finish(t, m, r)
	require.True(t, st.ended, "the log holds 0x2 durably now")
}

// Rule 7: the snapshot of a SNAP is installed in its place in the stream,
// once its last chunk came: no job passes it before.
func TestInstallWaitsForItsLastChunkInItsPlace(t *testing.T) {
	r := &recorder{}
	m := openMember(t, r)
	m.snapshotChunk(&zab.SnapshotChunk{Zxid: 5, First: true, Installed: true, Data: []byte{1}})
	m.enqueueAppends([]datatree.Txn{sessionTxn(6)})
	m.kick()
	require.Empty(t, r.jobs, "the install is not whole: nothing after it runs")
	m.snapshotChunk(&zab.SnapshotChunk{Zxid: 5, Installed: true, Data: []byte{2}, Last: true, Digest: zab.SnapshotDigest{Zxid: 5}})
	m.kick()
	require.Len(t, r.jobs, 1)
	require.Equal(t, opInstall, r.jobs[0].ops[0].kind)
	require.Equal(t, []byte{1, 2}, r.jobs[0].ops[0].tree)
	require.Equal(t, opAppend, r.jobs[0].ops[1].kind)
}
