// Package member runs one zab.Peer over its storage: it starts the member
// from its data directory (Open) and carries out every Ready the Peer hands
// over, in the order the Peer's durability contract demands (ready.go).
//
// It is the one executor of a Ready. zabd's shell (zab/server) and the
// simulator (sim) both drive it; they differ only in the leaves they hand
// in (Leaves): the file system under storage (real files, or vfs.Sim),
// how a disk job runs away from the event loop (a goroutine, or the
// simulator's event queue with simulated fsync latency), how a snapshot
// stream reaches its file, and how messages reach clients and peers
// (sockets, or simulated connections). Hooks (Observer) let each shell log,
// measure, check invariants and inject faults at the points the contract
// names, without a second copy of the order itself.
//
// Like the core, a Member is single-threaded and deterministic: every
// method is called from the shell's event loop, except DiskJob.Run and
// SnapshotJob.Write, which the leaves run wherever they like (they touch
// only storage and the job). It never reads a clock, sleeps or starts a
// goroutine: time comes in with each call.
package member
