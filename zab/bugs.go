package zab

// Bugs are deliberate defects a Peer can be built with, so that the
// simulator can show its checkers catch each one (a checker that never
// fails proves nothing). Each breaks one promise of ZooKeeper's; a real
// server never sets any.
type Bugs struct {
	// ReplyBeforeDurable commits and answers a write as soon as it is
	// proposed, before the log has made it durable: a crash can then lose
	// an acknowledged write.
	ReplyBeforeDurable bool
	// EventAfterReply queues the watch events a txn fires after the reply
	// that reflects it, breaking watch-before-data.
	EventAfterReply bool
	// ExpireWithoutTxn forgets an expired session without a closeSession
	// txn: its ephemerals outlive it.
	ExpireWithoutTxn bool
	// ReadOvertakesWrite answers a read at once even while its own
	// session's earlier writes are pending, breaking FIFO client order.
	ReadOvertakesWrite bool
}
