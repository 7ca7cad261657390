// Package zab is one replica of a zabd ensemble as a deterministic state
// machine: the Peer. It composes the session tracker (package sessions) and
// the znode tree (package datatree) behind ZooKeeper's request pipeline, and
// it is where ZAB's phases (discovery, synchronization, broadcast) live. A
// standalone server is an ensemble of one: the same pipeline with a quorum of
// one member, never a separate path.
//
// # Shape
//
// The Peer is driven like etcd's raft.RawNode. The shell (zab/server for a
// real process, sim for the simulator) feeds it events with Step, each with
// the current time, and collects the effects with Ready:
//
//	p.Step(now, zab.RequestReceived{Conn: c, Xid: 7, Op: wire.OpSetData, Body: req})
//	rd := p.Ready()
//	// append rd.Appends to the txn log and make them durable, then
//	//   p.Step(now, zab.LogDurable{Zxid: <last zxid made durable>})
//	// write rd.Messages to their connections, in slice order
//	// write rd.Snapshots to the snapshot file (or, marked Installed, in
//	//   place of the log), then step SnapshotWritten
//	// deliver a Tick no later than rd.Wakeup
//
// The Peer never reads a clock, sleeps, starts a goroutine, touches a file or
// a socket, or uses global randomness. Time arrives with every Step as two
// clocks (Time: monotonic for ticks and session expiry, wall for txn
// timestamps and TTLs); randomness comes from the Rand the shell hands in.
// Given the same events at the same times, a Peer produces byte-identical
// effects: nothing iterates a map into an output.
//
// # Durability contract
//
// Every message in a Ready may be written at once: the Peer answers a write
// only after the shell has reported (LogDurable) that its txn, and every txn
// before it, is durable, and after the txn has been applied. Appends must be
// written in slice order, Ready after Ready.
//
// # Request pipeline
//
// Requests are values (datatree.Request: session, cxid, opcode, body, the
// connection's auth ids): what a follower will forward to its leader. A write
// is prepared (validated and turned into a txn against the tree plus every
// txn not yet applied) only where the member leads, proposed with the next
// zxid, logged, committed once a quorum (here: the member itself, after its
// own fsync) has acknowledged it, applied to the tree, and answered. Applying
// matches committed txns from any source to pending requests by (session,
// cxid). Each session's requests are answered in the order they arrived:
// a read waits behind the same session's pending writes, while other
// sessions' reads are answered at once. The watch events a txn fires are
// queued to their connections before any later reply (watch before data).
//
// # Storage, snapshots and restart
//
// The Peer never calls storage; the shell maps its effects (zab/storage's
// doc lists the calls): each of Ready.Appends is encoded with EncodeTxnEntry
// and appended to the log, one fsync covers a batch, and the durable zxid
// comes back as LogDurable. Snapshots start every SnapCount txns or so; the
// Peer serializes the tree a bounded step at a time between applies and
// hands the pieces over as SnapshotChunks (the first with the session table,
// the last with the digest), which the shell streams into its snapshot file
// (storage.Snapshot's Sessions, WriteTree and Digest) before stepping
// SnapshotWritten.
//
// At start the shell recovers the newest valid snapshot (datatree.Load for
// the tree, its session table and digest), hands them to New as Restored,
// and feeds every logged txn after the snapshot's zxid, decoded with
// DecodeTxnEntry, to Replay; Replay checks the snapshot's digest when it
// reaches its zxid (package zab/restore does these steps for both shells).
// Sessions get a fresh full timeout from the start time.
// A standalone member stays in epoch 0, so its zxids continue from the last
// logged one.
//
// # The ensemble: roles and phases
//
// With Config.Ensemble set, the Peer is a member of a replicated ensemble
// and Zab's phases run inside it, one role at a time, each entered through
// a becomeX function that resets the role's state (etcd-io/raft's shape),
// in files named after ZooKeeper's classes:
//
//   - looking.go: LOOKING runs package election; its notifications travel
//     as PeerVote events in and Ready.Votes out. A decision enters one of
//     the roles below. Every role answers looking members with its vote.
//   - leader.go: LEADING. Discovery: FOLLOWERINFO from a quorum fixes the
//     new epoch (above every acceptedEpoch among them), LEADERINFO proposes
//     it, ACKEPOCH from a quorum (with each learner's last zxid) lets the
//     leader make it its currentEpoch. Synchronization (sync.go, per
//     learner, with learner_handler.go's record of each): DIFF, TRUNC or
//     SNAP (a fuzzy stream of the live tree, a bounded step per Ready,
//     while the leader serves: snapstream.go), the txns that follow,
//     NEWLEADER; a quorum's NEWLEADER ACKs
//     commit the initial history and establish the epoch, and UPTODATE
//     lets each learner serve. Broadcast: PROPOSAL, ACK, COMMIT (INFORM to
//     observers) strictly in zxid order; PINGs every half tick, and a
//     leader that has not heard a quorum within syncLimit ticks looks
//     again.
//   - learner.go (follower.go, observer.go): FOLLOWING and OBSERVING.
//     FOLLOWERINFO or OBSERVERINFO, LEADERINFO accepted only if not below
//     acceptedEpoch, synchronization, NEWLEADER ACKed once the synced txns
//     (and a SNAP's snapshot) are durable, then broadcast. Writes, syncs and
//     reconnects of existing sessions go to the leader (REQUEST,
//     REVALIDATE); the sessions served here are reported in PING replies.
//
// Quorum packets travel as PeerPacket events and Ready.PeerMessages; a
// broken quorum connection is the PeerDisconnected event. Ready's comment
// states the durability contract a shell keeps (truncation, then epochs,
// before the Ready's sends; appends acknowledged only through LogDurable).
// A member in election or synchronization serves no client: its
// connections are closed, and clients move to another member.
//
// An ensemble member never applies a txn it does not know committed: the
// txns its log holds beyond its snapshot at start-up wait as proposals
// until a leader's synchronization commits them (DIFF, then UPTODATE) or
// cuts them off (TRUNC), so no txn ever has to be undone in the tree.
//
// # Where zabd differs from ZooKeeper 3.8, on purpose
//
//   - A standalone ZooKeeper runs every request, reads included, through its
//     sync processor, so a read waits for any session's pending fsync. zabd
//     is an ensemble of one with a leader's pipeline: only the same
//     session's earlier writes hold a read back (ZooKeeper's
//     CommitProcessor order). Differential tests keep one op in flight per
//     session, where the two agree.
//   - A reconnect with a wrong password does not close the session's
//     current connection (ZooKeeper closes it before checking the password;
//     see docs/sessions.md).
//   - A plain check (opcode 13) is answered; ZooKeeper 3.8 never answers it.
//   - SASL (opcode 102) closes the connection: zabd offers no mechanism.
//   - A client-sent createSession opcode is Unimplemented, then closed.
package zab
