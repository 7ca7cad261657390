// Package restore is the start-up half of a shell: it turns what
// zab/storage recovered from disk into what the core starts from. Load runs
// Store.Recover with datatree.Load as the TreeLoader and returns the
// snapshot's tree, sessions and digest as a zab.Restored; after the shell has
// built its Peer with zab.New, Replay feeds it the txns logged after the
// snapshot, decoded with zab.DecodeTxnEntry, in order, before the first Step.
//
// Both shells (zab/server and sim) start this way, so the steps live here
// once. They cannot live in zab/storage, which knows the files but neither
// the tree nor the Peer (and must not: the simulator's disk model and other
// shells use storage without the core), nor in zab, which never touches
// storage. What differs between the shells stays with them: the
// storage.Options they open the Store with, the Peer's Config, how they log
// warnings and how they treat a refusal (storage.ErrDataLoss) — Load and
// Replay return storage's and the Peer's errors unchanged, so errors.Is and
// errors.As still see them.
//
// Package restore does I/O through the Store it is given, so the core
// packages must not import it.
package restore
