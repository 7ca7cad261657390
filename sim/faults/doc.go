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
// After the safety phase comes the liveness phase: no more faults, every
// server that is down restarts with its faults cleared, and every client must
// finish its work.
package faults
