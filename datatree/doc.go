// Package datatree is ZooKeeper 3.8's znode tree: znodes with their exact
// stats, ACLs, watches, sessions' ephemerals, containers, TTL nodes, quotas,
// the tree digest and fuzzy snapshots in ZooKeeper's format.
//
// The package mirrors the two halves of a ZooKeeper server's write path:
//
//   - Prepare (ZooKeeper's PrepRequestProcessor) validates a write request
//     against the tree plus every txn prepared but not yet applied (the
//     pending changes, ZooKeeper's outstandingChanges), checks ACLs and
//     versions, picks sequential names and turns the request into a Txn:
//     the txn record ZooKeeper would log, with the tree digest after it. A
//     write that fails still becomes a txn (an ErrorTxn, or a MultiTxn whose
//     failing op is an ErrorTxn), as in ZooKeeper. The txns it makes are the
//     ones ZooKeeper 3.8 logs, byte for byte (tested against the logs of the
//     golden traces in testdata/golden).
//   - Apply (ZooKeeper's DataTree.processTxn) applies a txn from any source
//     (this tree's Prepare, a leader's proposal, the txn log), returns the
//     result the client is answered with and the watch events it fires, in
//     a deterministic order, so the caller can queue them before any later
//     reply. Applying a txn that a fuzzy snapshot already contains is
//     harmless, as in ZooKeeper. Apply drops the pending changes of txns up
//     to the one applied; DiscardPending drops them all (leadership lost).
//
// Reads (Read and the typed getters) answer from the applied tree only and
// register watches for a WatcherID the caller picks (one per connection).
// Watch events reach a watcher only for nodes its identities may read
// (SetWatcherAuth; Read records them), as Debian's ZooKeeper 3.8.0 does.
//
// A pipeline uses it so:
//
//	tree := datatree.New(cfg)                         // or datatree.Load(cfg, decoder, snapZxid)
//	txn := tree.Prepare(&req, zxid, wallMillis)       // leader: make the txn, log it
//	res, events := tree.Apply(&txn, events[:0])       // every member, in zxid order
//	res, events = tree.Read(&req, watcher, events[:0]) // reads, watches, setWatches
//	reqs := tree.ReapCandidates(wallMillis, 0)        // container/TTL reaper: Prepare these
//	snap := tree.StartSnapshot(); for !snap.Step(enc, 1000) { /* flush enc, apply more */ }
//
// A Tree is deterministic and single-threaded: no goroutines, clocks, I/O or
// randomness; time arrives in txn headers and as arguments; no map order
// reaches any output (children, ephemerals, events and snapshots are
// sorted, or in an order ZooKeeper's own hash tables give, computed), nor
// does the seed of the path index's hash, which like Go's maps' is drawn
// per table and decides only where paths sit in it. It is
// not safe for concurrent use: its owner (the replica's event loop) calls
// it, snapshots included, which advance by Snapshot.Step between applies
// instead of on another goroutine.
//
// Paths are ZooKeeper's: the root is "/", every other path starts with "/"
// and has no trailing "/". Reads accept "" for the root, as ZooKeeper does.
//
// Stats come in two forms, as in ZooKeeper: the stored one (what snapshots
// and the digest hold: wire.StatPersisted, whose cversion counts children
// ever created and whose ephemeralOwner encodes containers and TTL nodes)
// and the visible one (wire.Stat: cversion = 2×stored − numChildren,
// ephemeralOwner 0 for containers and TTL nodes, dataLength, numChildren).
package datatree
