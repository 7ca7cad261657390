// Package peerlink holds the rules of a member's peer transport that the
// other members can observe, as deterministic state with time as an input,
// so that zabd's transport (zab/server/peernet, over TCP) and the
// simulator's network (sim, over simulated connections) carry out the same
// rules rather than two copies of them:
//
//   - LeaderDial: a learner that introduces itself to its leader dials
//     until a window passes, with a growing backoff, before it reports the
//     connection lost (a leader restarting within the window is reached).
//   - Backlog: what waits to be sent to one peer on the quorum port is
//     bounded; a message that would pass the bound drops the peer's
//     connection and everything queued (the peer synchronizes again),
//     except the pieces of a SNAP's stream, which count as one message.
//   - Election: the election port's link with one peer, as ZooKeeper's
//     QuorumCnxManager keeps it: one connection per pair, the one dialled
//     by the larger id (a smaller id's dial only asks to be called back); a
//     send slot of one notification, where a newer one replaces an unsent
//     older one; the last one sent is sent again on a new connection; a
//     failed dial waits longer each time.
//
// Nothing here reads a clock, starts a goroutine or touches a socket: the
// transports report what happened (a dial failed, a connection came, a
// notification arrived) and ask what to do next.
package peerlink
