// Package vfs is the small file-system interface that zabd's storage runs on,
// with two implementations: OS, over the real file system, and Sim, an
// in-memory disk for the simulator that injects the faults real disks show
// (lost and torn unsynced sectors after a crash, flipped bits on read, full
// disk, failing or slow fsync), deterministically from a seeded *rand.Rand.
//
// The interface has exactly what the txn log, snapshots and epoch files need:
// create, open, positional read and write, truncate (also to extend, which is
// how preallocation zero-fills), fsync of a file, fsync of a directory (which
// makes creates, renames and removes in it durable), rename, remove and list.
// Paths use forward slashes; callers build them with path.Join.
package vfs
