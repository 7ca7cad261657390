// Package storage keeps a zabd server's durable state in ZooKeeper 3.8's
// on-disk format: the txn log (version-2/log.<hex zxid>), snapshots
// (version-2/snapshot.<hex zxid>) and the epoch files (acceptedEpoch,
// currentEpoch), so that ZooKeeper's own tools read zabd's files and zabd
// starts from a data directory ZooKeeper wrote. As in ZooKeeper, the log may
// live in a directory of its own (Options.LogDir, ZooKeeper's dataLogDir):
// log files in LogDir/version-2, snapshots and epochs in Dir/version-2.
//
// It is split in two: package vfs is the file-system interface with the real
// implementation and the fault-injecting simulated one; this package is
// everything that gives the files meaning (log framing and group commit,
// snapshot files, epochs, recovery, retention). The split keeps the
// simulator's disk model free of ZooKeeper's formats and lets other shells
// use vfs alone.
//
// # Who calls it
//
// Only the shells (zab/server, sim) call storage; the core packages never
// do. The core emits effects and the shell maps them here:
//
//	append txn entries       Log.Append(entry) for each, in zxid order
//	make durable up to zxid  Log.Sync() — one fsync for all appended so far
//	                         (group commit); returns the durable zxid, which
//	                         the shell reports back to the core
//	truncate to zxid         Log.Truncate(zxid)
//	persist an epoch         Store.SetAcceptedEpoch / SetCurrentEpoch
//	install a snapshot       Store.InstallSnapshot(log, snap) (SNAP sync)
//	take a snapshot          Store.WriteSnapshot(snap) from the tree's stream
//	read old txns (DIFF)     Log.Iterator(fromZxid)
//
// At start the shell calls Open, then Recover with the tree's snapshot
// loader, replays Log.Iterator(snapshot zxid + 1) into the tree, and hands
// the core Recovery.LastZxid and the epochs. Both shells do the Recover and
// replay steps through package zab/restore.
//
// # Durability rules
//
//   - A txn is durable once Log.Sync returned a zxid at least its own; a
//     learner ACKs and a leader counts itself only then. Txns are applied to
//     the tree only once durable, so a snapshot never holds a txn the log
//     could lose (recovery relies on it).
//   - A failing write or fsync of the log or an epoch file returns an error
//     wrapping ErrFailed: the shell must stop the process, never retry.
//   - New files, renames and removals are followed by an fsync of
//     version-2 before they are relied on; a log file is complete and
//     durable before its successor is created.
//
// # Recovery
//
// See Store.Recover and docs/storage.md, which argues from how the log is
// written (once, front to back, into preallocated zeros, at most writeChunk
// bytes unsynced) what a crash can leave and what it cannot. In short: the
// newest snapshot that passes its checksums wins (corrupt ones are skipped
// with a warning, but only if the log takes the older snapshot's state up to
// the corrupt one's zxid without a gap). At the first damage in the log,
// read twice to rule out a flaky read, recovery cuts a torn tail — damage a
// crash can explain in the newest file — moving the bytes after it to a
// quarantine file with a warning; anything else refuses start-up with a
// *DataLossError (wrapping ErrDataLoss and a *CorruptError) naming file,
// offset, the txns at stake and the repairs: one flipped bit in a record,
// damage no crash leaves, valid records too far past the damage, a file cut
// short, damage in a file that has successors, a missing log file, a log
// that ends before the snapshot's zxid or does not reach back to it.
// Options.AllowDataLoss (zabd: -allow-data-loss) turns the refusals into
// warnings. Recovery run again on what it left gives the same result and no
// warning.
//
// # Retention
//
// Store.Purge(n) keeps the newest n complete snapshots and the log files
// recovery from the oldest of them needs, as ZooKeeper's autopurge does
// (which keeps at least 3). Quarantine files are left for the operator.
package storage
