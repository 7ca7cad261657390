// Package sessions keeps ZooKeeper's client sessions: how ids are made, how
// passwords are derived from them, how a requested timeout is negotiated,
// and when a session that has gone quiet expires.
//
// It knows nothing of the network or of the clock: every method that needs
// the time takes it as an argument, the monotonic time for expiry (so a
// wall-clock jump never expires a session) and the wall time only where an
// id is minted. Nothing here iterates a map into an output: expired ids and
// session tables come out sorted by id, so one input gives one output.
//
// Expiry follows ZooKeeper's ExpiryQueue: a touch moves a session into the
// bucket of the first tick boundary after now+timeout, and a poll empties
// every bucket whose boundary has passed. A session therefore expires between
// timeout and timeout+tick after its last touch.
package sessions
