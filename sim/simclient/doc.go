// Package simclient is the simulator's ZooKeeper client: it speaks the client
// protocol's request and reply records directly to a simulated server (no
// TCP), keeps one session, runs a random workload over a small path space and
// records every completed operation and every received event as a history
// Entry.
//
// A Client is passive and single-threaded like everything in the simulator:
// its Env gives it the time, a way to schedule its own wake-ups and a
// connection to send on; the simulator calls it back with what the server
// sent. It behaves as ZooKeeper's Java client does where the guarantees
// depend on it:
//
//   - requests on one connection are answered in order; a reply whose xid is
//     not the oldest outstanding one is recorded as a protocol violation;
//   - when the connection drops, every outstanding request ends in
//     ConnectionLoss (a write's outcome is then unknown), a Disconnected event
//     is recorded, and the client reconnects with the same session id and
//     password and its last seen zxid, then re-registers its watches with
//     setWatches (setWatches2 when it holds persistent watches);
//   - a connect answered with timeout 0 means the session is gone: an Expired
//     event is recorded and the client carries on with a new session;
//   - it pings after a third of the session timeout without sending, and drops
//     a connection that has been silent for two thirds of it;
//   - while paused (a GC pause) it neither sends nor reads: what arrives waits
//     and is read on resume, in order.
package simclient
