// Package linearizability reads and writes history files (JSON Lines, one
// completed operation or received event per line, see docs/history-format.md)
// and checks them against the guarantees ZooKeeper 3.8 gives its clients.
//
// The package knows histories and Porcupine models of the znode tree; it knows
// nothing of zab. It imports wire only for the names of error codes, create
// modes, event types and states, so that a history spells them exactly as
// ZooKeeper does.
//
// # Checkers
//
// Every checker is usable alone and returns []Violation, each naming its
// guarantee, the entries involved and, in words, why they break it. CheckAll
// runs them all; CheckFile reads a file, runs them all, prints the report and
// writes Porcupine's HTML visualisation next to the file for every failed
// replay.
//
//   - CheckWrites (linearizable writes): every acknowledged write carries its
//     txn's zxid, so the writes are replayed in zxid order on a model of the
//     tree and each reply (error, created name, stat) must be the model's —
//     linear time. A write of unknown outcome (no reply, ConnectionLoss,
//     OperationTimeout) may take effect anywhere after every write
//     acknowledged before it was called and after its session's earlier
//     replies, before its session's later writes (and, in a history from
//     one server, its later reads: see History.SingleServer; an ensemble's
//     client may reconnect to a member that has not applied it yet), or
//     never; so may the expiry of a session that held ephemerals and was
//     not seen to close. Once an Expired event or SessionExpired reply shows
//     the expiry, it must precede the writes called after it, and be
//     applied by the syncs called after it, that the server (an ensemble's
//     leader) which decided it ordered with no restart or leader change in
//     between: those answered in the same term (Entry.Term) when the
//     history names terms; else those answered by the server that showed
//     it while a connection to that server, opened before it was shown,
//     stayed up (in a history from one server, any server is that one).
//     The client is told before the closeSession txn is durable, and a
//     crash (or, in an ensemble, a lost leadership) loses that txn and
//     brings the session back, to expire again later; plain reads called
//     after it may be answered before the txn is applied. Such operations make the
//     replay carry a set of possible states, each with the uncertain
//     operations still pending; a pending one is settled (taken effect, in any order the windows allow,
//     or not) only when an exact operation depends on what it changes or
//     changes what it depends on, so unrelated ones never multiply the
//     states. A session's requests take effect in the order sent, and one
//     whose window lies between two acknowledged writes needs a free zxid
//     there. Segments holding at most 8 uncertain operations are checked
//     again by Porcupine (a NondeterministicModel seeded with the states at
//     the segment's start, with a deadline); an Unknown verdict or a
//     deadline run out is a violation ("undecided") of every checker that
//     replays the component. Beyond 8192 possible states (or 2^15 search
//     steps before one exact operation) the replay goes on with a
//     deterministic sample of 256 states, up to three different samples: a
//     legal order found in a sample is a legal order, but a sample that
//     explains nothing leaves the component undecided, never failed. Two
//     shortcuts keep the set small without changing a verdict: a failed
//     acknowledged write orders no pending operation, and data no read of
//     the component returns is kept as its length only. Once a
//     session has ended in a possible state, its pending expiry, close and
//     writes leave that state (they can no longer change it). The history
//     is partitioned only where no reply ties paths together: a create or
//     delete ties a path to its parent if some operation names the parent
//     (its cversion, pzxid and children show them) or the create is
//     sequential; a multi ties its paths; a close or expiry ties its
//     session's ephemerals. Two acknowledged writes with one zxid are a
//     violation.
//   - CheckReads (sequentially consistent reads): a session's replies carry
//     non-decreasing zxids, and every read returns exactly the state of its
//     path after every txn up to its reply's zxid (same replay, reads placed
//     after the txn with their zxid). ZooKeeper 3.8 answers a read with the
//     server's latest zxid, possibly a txn the client never saw (a session's
//     creation or expiry, a failed write's error txn): the replay does not
//     care whose txn it is. A component whose writes fail is left to
//     CheckWrites.
//   - CheckSyncRead (sync then read, its own guarantee: ZooKeeper keeps it
//     under one leader, not across leader changes, ZOOKEEPER-1675): a read
//     after a sync has a zxid at least that of every write acknowledged
//     before the sync was called, and does not show its path older than the
//     last of them. A violation whose sync was answered in an older epoch
//     than the write it misses is reported as "sync across a leader change",
//     which is not promised (NotPromised) and does not fail a report. A node that an ephemeral create made — acknowledged, or of
//     unknown outcome when no acknowledged create made it — may have gone
//     with its session since.
//   - CheckWatches (watch before data): once a read leaves a one-shot watch,
//     no reply to that client with a zxid at or past the first write that
//     fires the watch arrives before the watch's event. Notifications carry
//     zxid -1 in 3.8, so the firing write is found from the writes' zxids.
//     Removals (removeWatches, …WatchRemoved events) end watches; a
//     persistent watch on a path replaces the standard ones there, also when
//     a reconnecting client re-registers both. Until a recorded setWatches
//     reply, watches held across a disconnection and fired by writes it
//     covers may trail replies (go-zookeeper does not send SetWatches before
//     its queued requests). Not checked: persistent watches themselves, and
//     events fired by session closes.
//   - CheckSessions (session expiry): no operation of a session succeeds after
//     its close or after its expiry was shown; no read shows an ephemeral of
//     a session already closed, or at a zxid at or past a write its shown
//     expiry must precede or a sync it must be applied by (see
//     CheckWrites); an ephemeral is not missing
//     while its owner is demonstrably alive and nothing deleted it; a session
//     is not expired while its client stayed connected, nor sooner than its
//     timeout after the client's last answered request.
//   - CheckDurability: the final state — reads called after every write was
//     issued and every answered write returned — shows, for each path, the
//     last acknowledged write in zxid order, or the effect of a write of
//     unknown outcome that may have come after it, or (for an ephemeral,
//     including one a create of unknown outcome may have made) its
//     session's end.
//
// # Witnesses
//
// A search over writes of unknown outcome can outgrow every bound: tens of
// lost writes on a few paths (a slow fsync that times every client out)
// leave thousands of possible trees. A witness (Options.Witness, witness.go,
// docs/history-format.md) is the order the servers committed txns in, each
// named by its request's session and xid (Entry.Xid). The writes and reads
// checkers place every uncertain operation where it says and replay the
// history once, linearly, under the same rules; an order that explains every
// reply proves the history legal, whoever found it, and one that does not is
// dropped for the search. So a witness decides what the search cannot and
// never passes what it fails (TestWitnessNeverPassesAFailure). The simulator
// supplies one for every run and also requires it to explain the history
// (Witness.Explains): a correct server's committed order always does.
//
// # Model
//
// The tree model knows data, version, cversion, aversion, czxid, mzxid,
// pzxid, the ephemeral owner, children and the sequential counter (creates
// ever made under a parent). It predicts ok, NoNode, NodeExists, BadVersion,
// NotEmpty, NoChildrenForEphemerals and a multi's RuntimeInconsistency; any
// other error (NoAuth, BadArguments, …) depends on what a history does not
// record and is accepted as a write without effect. With Options.Reaping the
// server's own deletions of containers and TTL nodes are uncertain
// operations too (see reap.go). Stat times are not
// compared. A history is assumed to start on a fresh tree.
package linearizability
