// Package peernet carries a zabd ensemble member's peer traffic over TCP,
// as ZooKeeper 3.8 servers carry it, so that zabd and ZooKeeper servers
// understand each other's connections:
//
//   - The election port (QuorumCnxManager). The dialler first sends an
//     InitialMessage: protocol version -65535, its server id, its election
//     address. Only a connection dialled by the larger id survives: a
//     server that receives a connection from a smaller id closes it and
//     dials that server itself. Notifications travel both ways on the one
//     connection as frames (int length, at most 512 KiB). Each peer has a
//     send slot of one notification, where the newest replaces an unsent
//     older one, and the last one sent is sent again on a new connection.
//   - The quorum port (Learner, LearnerHandler). A learner dials its
//     leader when the Peer sends FOLLOWERINFO or OBSERVERINFO, and the
//     leader knows the connection by that first packet. Packets are jute
//     QuorumPackets back to back with no framing; a SNAP is followed by
//     the snapshot stream. Every buffer and string is checked against
//     jute.maxbuffer's limit before it is read.
//
// The Net turns what arrives into zab events (PeerVote, PeerPacket,
// PeerDisconnected) on one channel, and carries out the Peer's Votes and
// PeerMessages. Each peer has its own send goroutine and bounded queue, so
// SendVotes and SendPeer never block the caller (the event loop). A
// connection that breaks is reported once, as PeerDisconnected, before
// anything from that peer's next connection; a close the Peer asked for
// (PeerClose, or the new connection a FOLLOWERINFO opens) is not reported.
//
// The rules of these links that other members can observe — which
// election connection survives, the send slot, redials and their backoff,
// a learner's dial window, the bound on a peer's queue — are package
// zab/peerlink's, which the simulator's network follows too.
//
// A learner's connection that reaches a member which is still looking is
// held until that member leads (ZooKeeper would refuse it until its leader
// listens, and the learner would retry a second later); a member that
// follows or observes refuses it. Garbage, an oversized record, a non-member
// or an address or server list that disagrees with the configuration drops
// that connection with a log line naming both sides; the member goes on.
package peernet
