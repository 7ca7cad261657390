// Package faults describes a simulation run as data: a Schedule names how many
// servers and clients take part, how much work the clients do, how long the
// fault phase lasts, and a list of timed faults.
//
// A schedule is either generated from a seed (Generate) or written by hand as
// JSON for a named scenario; a failing seed's schedule is shrunk and saved as
// JSON, and `zabsim -schedule FILE` replays it. The JSON uses milliseconds for
// every time so that a file is easy to read and to edit.
//
// # Fault model
//
// Only faults that a single ZooKeeper server claims to survive are injected
// during the safety phase:
//
//   - crash: the server process stops at once; its simulated disk keeps or
//     loses each unsynced sector independently and may tear the last sector
//     written (Torn); the server restarts after Down ms and must recover every
//     txn it reported durable.
//   - bitflip: reads of the server's files return flipped bits from the next
//     restart on (the fault is transient, as a bad cable or a misdirected read
//     is); a restart that reads corrupt durable data must refuse to start with
//     an error naming file and offset, and starts normally once the fault is
//     cleared.
//   - nospace: writes fail with "no space left on device" for For ms.
//   - slowfsync: each fsync takes Delay ms longer for For ms.
//   - failfsync: the next fsync fails; the server must stop without
//     acknowledging what that fsync covered (fsync failure is fatal, never
//     retried).
//   - drop: the client's connection is closed by the network; its outstanding
//     requests end in ConnectionLoss and it reconnects with the same session.
//   - pause: the client stops (no requests, no pings) for For ms, as a long GC
//     pause would; past the session timeout the server must expire it.
//   - clockjump: the wall clock moves by Jump ms (negative: back); monotonic
//     time, and so session expiry, must not notice.
//   - intrude: an adversarial client presents client Client's live session
//     id: with a wrong or an empty password it must be answered as ZooKeeper
//     answers (timeout 0, session 0, then close) and the owner's connection
//     and session stay untouched; with the stolen password the session moves
//     to it for For ms (the owner's connection on that server is closed, as
//     ZooKeeper closes it), then it hangs up without closing the session.
//     The simulator draws these from a stream of their own (AdversaryKinds).
//
// # Aimed faults
//
// A timed fault lands at a random moment, so a window that lasts a few
// microseconds of a member's life (between a durable write and the send
// that depends on it) is hit by luck or not at all. An aimed fault fires on
// an event of the run instead. A schedule switches a kind on with an Aimed
// entry: each event that can trigger it fires it with probability Chance,
// at most Max times, from FromMs to the end of the safety phase; some
// kinds fire on several moments, and a switch may aim at a subset of them
// (Moments). Generate switches each kind on for an ensemble with even
// odds, with a chance of 1/16 to 1, up to three firings, a subset of the
// moments, and half the time armed only from a point in the first half of
// the safety phase, when members have histories to lose (swarm testing,
// as for the timed kinds). The simulator draws each firing, and what it
// draws (a down time, a hold, a delay), from the kind's own stream in the
// order the events happen, so a schedule replays exactly. The kinds, and
// the rules each targets:
//
//   - sync-write-crash: a member crashes right after a durable write of
//     discovery or synchronization and before the sends that follow it —
//     a leader's epoch files (lead), a learner's with only acceptedEpoch
//     new (accepted) or with a new currentEpoch (current), the
//     updatingEpoch mark (mark), an fsync done in discovery or
//     synchronization (fsync), the snapshot a SNAP installed (snapshot) —
//     or right after it sent ACKEPOCH or a NEWLEADER ACK (ack); down for
//     up to MaxMs. Rules: acceptedEpoch is durable before ACKEPOCH leaves;
//     currentEpoch is written only once the synchronized txns are durable;
//     the epoch files stay consistent with the log across the
//     updatingEpoch window; a SNAP's NEWLEADER ACK waits for its snapshot.
//   - hold-fsync: when DIFF or TRUNC (diff: the hold spans the NEWLEADER
//     that follows), NEWLEADER, UPTODATE or a SNAP reaches a synchronizing
//     learner (newleader, uptodate, snap), no fsync of it begins, nor a
//     snapshot write (that of a SNAP's tree included), for up to MaxMs.
//     Rules: NEWLEADER, and proposals, are ACKed (and currentEpoch
//     written, and clients answered) only once what they vouch for is
//     durable.
//   - duel: as a member starts to lead, a bridge partition cuts it, with up
//     to half of the others, from the rest, one other voter seeing both
//     sides, for up to MaxMs (it heals during discovery); packets that
//     meet the cut are refused, so both ends learn of it at once; half the
//     time, before it heals, the shared voter's connection with the
//     would-be leader breaks. Two would-be leaders in discovery at once,
//     sharing a voter.
//     Rules: one leader per epoch; a learner refuses a LEADERINFO below its
//     acceptedEpoch; an epoch is above every acceptedEpoch its leader
//     counted.
//   - late-followerinfo: a learner's FOLLOWERINFO (OBSERVERINFO), and what
//     follows it on its connection, arrives initLimit to MaxMs late, after
//     the learner gave up and elected again. Rules: a leader counts a
//     learner only on the connection it holds now, and its epoch rises
//     above an acceptedEpoch it learns of late.
//   - fanout-crash: a leader crashes right before it sends a packet it
//     fans out to several learners in one go — a PROPOSAL or a COMMIT
//     (INFORM) of one zxid, a NEWLEADER, an UPTODATE, a LEADERINFO — after
//     the same packet to those before; what it sent before arrives; down
//     for up to MaxMs. Rules: a txn a member was told is committed
//     survives any leader change; a proposal only the crashed leader (or a
//     minority) logged is cut by TRUNC when that member comes back, never
//     kept by a DIFF (ZOOKEEPER-1154); learners that did and did not take
//     NEWLEADER or UPTODATE end in one history.
//
// The trace prints each firing as a fault line marked aimed:KIND, followed
// by what the member had just done; the header lists the switches.
//
// After the safety phase comes the liveness phase: no more faults, every
// server that is down restarts with its faults cleared, and every client must
// finish its work.
package faults
