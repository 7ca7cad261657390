// Package election is ZooKeeper's Fast Leader Election (FLE, electionAlg=3)
// as a deterministic state machine: notifications in, notifications out,
// and at the end a decision — the leader's server id and whether this
// server leads, follows or observes.
//
// The shape is etcd-io/raft's. Start begins a round of LOOKING, Step hands
// the machine one notification that arrived from a peer, Tick tells it the
// time, and Ready hands over what to send, the decision if one was just
// taken, and the time by which the next Tick is due. The machine never reads
// a clock, sleeps, starts a goroutine or draws a random number; everything it
// emits is in an order fixed by its inputs (peers are addressed in ascending
// server id, never in map order), so one sequence of calls always yields the
// same outputs.
//
// What a round does, in brief (docs/election.md walks through it):
//   - Each server proposes itself with its (currentEpoch, lastLoggedZxid) and
//     sends that vote to every voter, itself included.
//   - Votes are totally ordered by (peerEpoch, zxid, server id); a server that
//     hears a better vote in its round adopts it and tells every voter.
//   - A notification from a higher round (electionEpoch) moves the receiver
//     into that round: it forgets the votes it had, takes the better of the
//     sender's vote and its own initial vote, and tells every voter.
//   - Once a quorum of the votes received in this round equals its own, a
//     server waits for anything better. It decides as soon as nothing
//     better can arrive — every voter that may lead has been heard from in
//     this round and none with a better vote — and otherwise FinalizeWait
//     after the quorum formed. (Config.FixedFinalizeWait restores
//     ZooKeeper's rule: decide only after FinalizeWait without a better
//     vote, every other notification starting the wait again.)
//   - A server that is not LOOKING answers every LOOKING server with the
//     vote it decided on; a LOOKING server decides on such answers once a
//     quorum of them agree and the leader they name itself says it is
//     LEADING.
//   - With no notification for a while a LOOKING server sends its vote
//     again, waiting twice as long each time, up to MaxNotificationInterval.
//
// What a quorum is belongs to a QuorumVerifier: Majority (ZooKeeper's
// default) or Hierarchical (groups and weights; a voter of weight 0 never
// leads and adds nothing to a quorum).
//
// FLE on its own does not guarantee that all servers decide on one leader:
// a vote delayed past the final wait can make two servers lead in the same
// round (TestSplitDecisionWhenAVoteIsLate shows one). ZAB's discovery phase,
// which needs a quorum of followers to agree on a new epoch, is what keeps
// only one of them; a leader without a quorum goes back to LOOKING.
//
// Deliberate differences from ZooKeeper 3.8 are listed in docs/election.md;
// dynamic reconfiguration (a newer config inside a notification) and the
// two-server oracle (QuorumOracleMaj) are not implemented.
package election
