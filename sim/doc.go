// Package sim is zabd's deterministic simulator, the second shell around the
// replica: it runs the real zab.Peer over zab/storage on the simulated disk
// (zab/storage/vfs.Sim), with simulated clients (sim/simclient), a simulated
// network and a virtual clock (sim/vtime), all on one goroutine and all
// decided by one seed (sim/randstream).
//
// A run follows a schedule (sim/faults): generated from a seed by
// ScheduleForSeed, or hand-written JSON. It has a safety phase in which the
// schedule's faults fire (crashes with torn writes, corrupt durable data,
// full disk, slow and failing fsync, dropped connections, paused clients,
// wall-clock jumps, network faults between members, and intruders presenting
// another client's session), then a liveness phase in which every client must finish
// its work. Invariants are checked after every step — nothing is answered
// before it is durable, zxids strictly increase, recovery loses nothing
// reported durable and rebuilds the same digest, a refusal to start happens
// only over corrupt durable data and names file and offset — and at the end
// every checker of package linearizability judges the history the clients
// recorded.
//
// Run returns the failures; Shrink cuts a failing schedule down to a small
// one that fails the same way; the same schedule always gives the same run
// and the same trace. cmd/zabsim is the command-line front end, and
// docs/simulator.md describes the fault model, the invariants, replay and
// shrinking.
package sim
