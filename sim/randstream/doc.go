// Package randstream turns the simulator's one int64 seed into independent
// random streams, one per named subsystem ("faults", "workload/3", "disk/1" …).
//
// Each stream's state is derived from (seed, name) alone, so drawing more or
// fewer numbers from one stream — a longer workload, an extra client — never
// shifts what another stream draws: the faults of a seed stay the same when its
// workload changes, which is what makes shrinking a failing run meaningful.
package randstream
