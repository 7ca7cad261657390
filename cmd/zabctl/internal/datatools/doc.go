// Package datatools is zabctl's look inside a data directory: it dumps and
// verifies txn logs, dumps snapshots and their digests, and truncates a log
// for an operator's repair. It reads zabd's files and ZooKeeper 3.8's alike
// (they are the same format: package zab/storage reads both), and leaves
// every judgement about damage to zab/storage: ScanLogFile says where a
// file's valid records end and why, and verify asks Store.Recover, run on a
// copy, whether that damage is a torn tail recovery cuts or corruption that
// would lose durable txns.
package datatools
