// Package tlatrace checks that what an ensemble's members do, step by step,
// is a behaviour of the TLA+ specification of Zab: trace validation, as
// SandTable (EuroSys'24) and Remix (EuroSys'25, on ZooKeeper) do it.
//
// # Trace validation
//
// A TLA+ spec is a state machine: variables (each member's role, epochs,
// history, the leader's records of its learners…) and actions, each a guard
// on the current state and the next state it makes. A model checker (TLC)
// explores every behaviour the actions allow, on a small ensemble. Trace
// validation goes the other way: it takes one behaviour of the real
// implementation — a simulated run — and asks whether the spec allows it:
// every step the implementation takes must be an action whose guard holds
// in the spec state reached so far, and must leave the state that action
// makes. The spec state is not read from the implementation; it is rebuilt
// from the steps, starting from the spec's initial state, the way TLC would
// have reached it. A step no action explains is a divergence: a bug in the
// implementation, or a place where it departs from the spec on purpose,
// which must then be named (below). Here the actions are re-encoded in Go,
// guard by guard, rather than run by TLC, so that the check is cheap enough
// for every seed of the simulator's sweeps.
//
// # The specs
//
// apache/zookeeper's zookeeper-specifications hold two: protocol-spec/Zab.tla
// models the protocol of the Zab paper (CEPOCH, NEWEPOCH, ACKEPOCH,
// NEWLEADER, ACKLD, COMMITLD, PROPOSE, ACK, COMMIT), and
// system-spec/zk-3.7/ZkV3_7_0.tla models ZooKeeper 3.7's implementation of it
// (FOLLOWERINFO, LEADERINFO, ACKEPOCH, DIFF, TRUNC, SNAP, NEWLEADER and its
// ACK, UPTODATE, PROPOSAL, ACK, COMMIT), with the leader's records
// (connectingFollowers, electingFollowers, newLeaderProposal, forwarding)
// and the learner's synchronization (syncMode, packetsNotCommitted). zabd
// follows ZooKeeper's implementation, so the system spec is the reference,
// and the action names below are its; Zab.tla's are used where the system
// spec only bounds its state space (LeaderProcessRequest).
//
// # The spec state the checker keeps
//
// For every member: its role and phase (state, zabState), its leader
// (connectInfo), acceptedEpoch and currentEpoch, its history (every txn it
// logged or holds from a snapshot, as runs of consecutive zxids: history.go)
// with how far it is durable, the last zxid it applied (lastProcessed) and
// the last it knows committed (lastCommitted). A learner keeps what its
// role took: the LEADERINFO's epoch, the sync mode, NEWLEADER and whether
// it acknowledged it, UPTODATE. A leader keeps its epoch (and the spec's
// tempMaxEpoch), and for each learner what its FOLLOWERINFO and ACKEPOCH
// said and how far it was sent the history and its commits; each voter's
// highest acknowledged zxid (the spec's ackSid) and the voters whose
// ACKEPOCH counts (electingFollowers) outlive their connections, as in the
// spec and in zabd's quorum tracker. The ghost variable epochLeader records
// who took each epoch to synchronization.
//
// # How a step is read
//
// The shell reports each member's steps (Step): the event it took (a
// packet from a peer, a connection gone, or anything else: a tick, an
// fsync done, a snapshot written, a client), then the Ready that followed
// as the Peer asked for it — the tree replaced by a SNAP, the log
// truncated, the epochs to write, the txns to append, the quorum messages
// — with what the Peer knows afterwards (how far its log is durable, the
// tree's zxid, its role). A shell carries a Ready out later than the Peer
// asks for it (zab/member: disk jobs, and sends held behind the epoch
// write before them), so it also reports the epoch files as each write is
// done (EpochsWritten) and each quorum packet as it leaves (Left), with
// what the disk holds durably then. Start and crash are steps too
// (Started, Crashed: the spec's NodeStart and NodeCrash).
//
// A packet taken records what the receiving action learns (a learner's
// LEADERINFO epoch, a leader's record of an ACKEPOCH or an ACK), with the
// guards on the packet itself. Every effect is then an action, checked
// against the state as rebuilt so far: an acceptedEpoch written, a
// currentEpoch written, an append, a txn applied, each message sent. A
// member may take several actions in one step (a PROPOSAL taken, its ACK
// sent once an fsync is reported, a COMMIT and the apply it allows), and it
// may leave its role in the same step (a timeout, a packet refused): the
// messages of the old role come before those of the new one, which begins
// with its FOLLOWERINFO or at the step's end, where the role and phase the
// member reports must be the spec's.
//
// The spec's actions are atomic: a learner takes LEADERINFO, sets
// acceptedEpoch and answers in one step, and its history is on stable
// storage the moment it holds it. An implementation asks for writes and
// sends together, then writes, fsyncs and sends. The refinement the checker
// holds it to: the steps are checked as the Peer asks for them, with the
// spec's acceptedEpoch and currentEpoch the epochs it asks to write; what
// the spec's actions set as they send must then be durable by the time the
// packet leaves — acceptedEpoch with ACKEPOCH and LEADERINFO, currentEpoch
// with a synchronization and the NEWLEADER ACK, the history with an ACK —
// and the history taken at NEWLEADER by the time currentEpoch is written
// (the executor writes a Ready's epochs before its appends); a leader counts
// itself in a commit's quorum for what its Peer heard its own log holds
// durably. A write or a send a crash comes before never happened, and the
// restarted member's history is what its disk holds: its snapshot's prefix
// of the history, then its log.
//
// # The actions
//
//	spec action                         zabd step checked
//	ConnectAndFollowerSendFOLLOWERINFO  FOLLOWERINFO/OBSERVERINFO, from LOOKING, zxid <<acceptedEpoch, 0>>
//	LeaderProcessFOLLOWERINFO           FOLLOWERINFO taken; the leader's acceptedEpoch written once
//	                                    voters' FOLLOWERINFO make a quorum, above each one's
//	                                    acceptedEpoch (tempMaxEpoch); LEADERINFO of that epoch,
//	                                    durable, once to each learner
//	FollowerProcessLEADERINFO           acceptedEpoch written only for an epoch above it; ACKEPOCH
//	                                    only for an epoch not below it (epochOk), once it is durable,
//	                                    with currentEpoch (-1 if accepted before) and the last zxid;
//	                                    synchronization entered
//	LeaderProcessACKEPOCH               the leader's currentEpoch written once a quorum's ACKEPOCH
//	                                    counts, none more recent than the leader (logOk), no other
//	                                    member having taken the epoch (Leadership)
//	LeaderSyncFollower (SyncFollower)   DIFF, TRUNC or SNAP after ACKEPOCH, by the spec's cases on
//	                                    the learner's last zxid against the leader's history and
//	                                    last committed zxid; then every txn after, in order
//	                                    (PROPOSAL, COMMIT), then NEWLEADER
//	FollowerProcessSyncMessage          DIFF, TRUNC, SNAP taken after ACKEPOCH; a truncation only to
//	                                    a TRUNC's zxid, a zxid of the history not below what it
//	                                    applied (truncOk); a tree replaced only by a SNAP, the
//	                                    history becoming the leader's up to its zxid
//	FollowerProcessPROPOSALInSync,      an append only of a PROPOSAL taken, the next zxid (isNext)
//	FollowerProcessPROPOSAL
//	FollowerProcessCOMMITInSync,        a COMMIT only of the next txn after the last committed
//	FollowerProcessCOMMIT               (match); nothing applied past what is committed
//	FollowerProcessNEWLEADER            currentEpoch written, and NEWLEADER ACKed, only for the
//	                                    accepted epoch and once the history taken is durable
//	LeaderProcessACKLD                  NEWLEADER ACK for the leader's epoch (match); established
//	                                    (broadcast, the initial history committed) once a quorum
//	                                    ACKed; UPTODATE only then, to those that ACKed
//	FollowerProcessUPTODATE             broadcast entered, and txns applied, only after UPTODATE,
//	                                    itself only after the NEWLEADER ACK; the initial history
//	                                    committed (Zab.tla's COMMITLD)
//	LeaderProcessRequest                a proposal only in broadcast, with the next zxid (IncZxid),
//	                                    sent to each synchronized follower in zxid order
//	FollowerProcessPROPOSAL (ACK)       an ACK only after the NEWLEADER ACK, of the next txn, once
//	                                    durable
//	LeaderProcessACK                    an ACK of the learner's next txn (exist, monotonicallyInc)
//	LeaderTryToCommit                   a txn applied (and COMMIT, INFORM sent) only once a quorum
//	                                    of voters acknowledged it (the leader by its durable log),
//	                                    in order to each learner
//	FLEHandleNotmsg, ZabTurnTo*,        a role begins only from LOOKING; the phase goes forward only
//	FollowerShutdown, LeaderShutdown    through the actions above; the reported role is the spec's
//	NodeCrash, NodeStart                the epoch files survive; the history is the disk's
//
// A member that is looking holds an introduction that reaches it (as zab's
// Peer does) and takes it, with the others it held and in the order they
// came, once it leads; the epoch it fixes is judged against the
// introductions taken up to the one that completed its quorum, as the
// spec's LeaderProcessFOLLOWERINFO takes them one at a time.
//
// Not modelled: fast leader election (which member leads is taken as the
// spec's election oracle: the checks on it are in package election and
// the invariants), timeouts, partitions and crashes (environment actions,
// always allowed), sessions, client requests and pings, the contents of
// txns and snapshots (package zab/invariant compares them), the leader's
// committed-log window (the spec's lastSnapshot: a SNAP is accepted for
// any learner behind the leader's committed history, as the spec allows
// for some window), and fuzzy snapshots (invisible to the history: a SNAP's
// history ends at its zxid, and the txns after it follow as PROPOSAL and
// COMMIT whatever the stream already held).
//
// # Named allowances
//
// Where zabd departs from the spec on purpose, the checker accepts the step
// only through an allowance (Allowance), counts it and tells the shell;
// docs/compatibility.md's points say more.
//
//   - **IntroductionToNonLeader**: FOLLOWERINFO sent to, or taken by, a
//     member that does not lead. The spec connects a learner to a leader in
//     one step; over a network, members learn the election's outcome at
//     different times. A member still looking holds the introduction and
//     takes it once it leads (as ZooKeeper's learner retries its connection
//     until the leader's acceptor runs); one that follows refuses it.
//   - **PacketFromFormerLeader**: a learner takes a packet its leader sent
//     before stepping down. The spec's LeaderShutdown sends its learners to
//     LOOKING in the same step; a real leader's learners learn of it from
//     the close of their connections, after the packets sent before, as
//     ZooKeeper's do.
//   - **PacketToAnotherRole**: a packet reaches a member whose role cannot
//     take it: a leader's packet at a member that does not follow it, a
//     learner's at one that does not lead it. A Ready's packets leave once
//     its disk operations are done, and by then the role that asked for
//     them may be over; a broken connection is dialled again to the peer's
//     next incarnation. The member refuses the packet, as the spec's
//     FilterNonexistentMessage discards it (the spec cleans a role's
//     channels at its shutdown); whatever it did with it would be refused
//     as a step of its own.
//   - **EpochAboveTempMax**: zabd's leader proposes an epoch above its own
//     currentEpoch and the epochs of its log too, and above the
//     acceptedEpoch of the observers introduced (ZooKeeper's
//     getEpochToPropose; the spec has no observers); only when one of
//     those is ahead is that above the spec's tempMaxEpoch. Any epoch
//     above every acceptedEpoch of the quorum is one no member accepted.
//   - **EpochFromConnectedLearners**: zabd's leader forgets the FOLLOWERINFO
//     of a learner whose connection went, where ZooKeeper's
//     connectingFollowers (and the spec's tempMaxEpoch) keep it. The epoch
//     is still above the acceptedEpoch of every voter counted; the
//     departed learner, back with a higher one, makes the leader look
//     again.
//   - **DiffCarriesCommitted**: DIFF's zxid is the leader's last committed
//     zxid (ZooKeeper 3.8, compatibility point 8); the spec's DIFF carries
//     the learner's zxid, which its learner does not read. The learner
//     takes what it holds up to there as committed, as the spec's takes
//     its whole history.
//   - **DiffFromEpochStart**: a learner at a new epoch's start (a counter-0
//     zxid, which names no txn) is sent a DIFF of what follows, not a TRUNC
//     (compatibility point 9): its state is the history of the epoch's
//     start, a prefix of the leader's.
//   - **SnapInsteadOfTrunc**: a learner past the leader's committed history
//     is sent a SNAP where the spec sends TRUNC: a learner at an epoch's
//     start (point 9), and, with Ensemble.ZooKeeperSync, a learner whose
//     diverged txn is of an older epoch than the leader's next (point 10).
//     A SNAP replaces the whole history with the leader's.
//   - **SnapBelowApplied**: a learner sent a SNAP of a zxid below the last
//     txn it applied (from a leader whose tree lags its log, under
//     Ensemble.ZooKeeperSync) keeps its tree and log up to that txn, as
//     after a TRUNC to it, and skips the leader's txns up to it; the
//     spec's learner replaces its history with the leader's. The txns it
//     keeps are committed, so the leader's history holds them; installing
//     the snapshot would take them back on disk until the txns after it
//     were durable again.
//   - **OutstandingAfterNewLeader**: the proposals outstanding when a
//     learner is synchronized follow NEWLEADER, as if proposed after it,
//     instead of preceding it (ZOOKEEPER-4394, point 16); the learner ACKs
//     them one by one.
//   - **LoggedBeforeNewLeader**: a learner logs a synchronization's txns as
//     they arrive; the spec holds them in packetsNotCommitted until
//     NEWLEADER. They are not applied before UPTODATE, and not acknowledged
//     before they are durable.
//   - **NoAckOfSyncTxns**: the learner's NEWLEADER ACK vouches for the txns
//     its DIFF sent; it does not also ACK each of them, as the spec's
//     learner does after NEWLEADER (ZOOKEEPER-4685, point 18).
//   - **EarlyAckOfSyncTxns**: a leader ignores a learner's ACK of a
//     synchronization's txn that comes before its NEWLEADER ACK (what a
//     ZooKeeper 3.8.0 learner sends, point 18), where the spec's leader
//     counts it.
//   - **ProposeOnceEstablished**: a leader proposes once a quorum ACKed
//     NEWLEADER, as Zab.tla's LeaderProcessRequest does, before a quorum of
//     its followers took UPTODATE, which the system spec also requires (a
//     bound on its state space; ZooKeeper's leader does not wait for it).
//   - **Observers**: the specs model no observers. An observer introduces
//     itself with OBSERVERINFO and is synchronized as a follower, takes
//     committed txns as INFORM (PROPOSAL and COMMIT in one, sent only once
//     committed), ACKs nothing but NEWLEADER, and counts in no quorum.
//   - **UpdatingEpoch**: a member starts with currentEpoch raised to its
//     log's last epoch by the updatingEpoch mark (ZooKeeper 3.8's
//     loadDataBase): it had logged a synchronization of that epoch.
//
// # Using it
//
// New with the ensemble's configuration; Started for each member as it
// starts from its disk; Step for each of its steps, as the member takes its
// Ready; EpochsWritten and Left as its disk writes the epoch files and its
// quorum packets leave; Crashed when its process dies. Each returns the
// first Violation: the spec action, the member and which guard failed. The checker is deterministic, and cheap
// enough for every step of every seed: a history grows by one run per epoch,
// and only a SNAP copies one (the leader's). Package sim
// feeds it every step of every ensemble run (docs/simulator.md, "Trace
// conformance against Zab.tla").
package tlatrace
