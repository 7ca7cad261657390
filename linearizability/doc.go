// Package linearizability reads and writes history files (JSON Lines, one
// completed operation or received event per line, see docs/history-format.md)
// and checks them against the guarantees ZooKeeper 3.8 gives its clients:
// linearizable writes, sync-then-read, sequentially consistent reads, watch
// before data, session expiry and durability.
//
// The package knows histories and Porcupine models of the znode tree; it knows
// nothing of zab. It imports wire only for the names of error codes, create
// modes, event types and states, so that a history spells them exactly as
// ZooKeeper does.
//
// Every checker is usable alone and returns []Violation, each explaining in
// words which operations broke which guarantee and why. CheckAll runs them all;
// CheckFile reads a file, runs them all, prints a report and writes Porcupine's
// HTML visualisation next to the file when writes are not linearizable.
package linearizability
