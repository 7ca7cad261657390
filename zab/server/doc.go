// Package server is zabd's real-process shell (docs/architecture.md, shell A): it wraps
// the deterministic replica (zab.Peer) in TCP listeners, files with fsync,
// the wall clock and goroutines.
//
// # Goroutines and who owns what
//
//   - The accept loop admits connections (maxClientCnxns per client IP)
//     and starts one reader and one writer per connection.
//   - A connection's reader decodes frames: a four-letter word in place of
//     the first frame's length is answered at once (package fourlw); every
//     other frame becomes a zab event. A frame over the limit, garbage or a
//     truncated request closes that connection (its session survives).
//   - The event loop is the only goroutine that touches the Peer: it steps
//     events, collects Ready and hands its effects out — txns to the disk
//     goroutine, messages to connection queues, snapshot chunks to the
//     snapshot writer — and it owns the table of connections.
//   - A connection's writer writes what the Peer emitted for it, in order,
//     batching whatever is queued into one write. The queue is bounded in
//     bytes: a client that does not read its replies is disconnected rather
//     than allowed to hold the server's memory.
//   - The disk goroutine appends txns to the log and fsyncs once for every
//     txn appended meanwhile (group commit); it reports the durable zxid to
//     the event loop, which only then lets the Peer answer those writes.
//   - The snapshot writer writes snapshots in the background.
//
// No goroutine ever waits on one that may be waiting on it: the disk
// goroutine reports durability through a coalescing signal, and connection
// queues never block the event loop.
package server
