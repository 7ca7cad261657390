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
	// ClosingSurvivesStepDown (zabd's own, hunt seed 54063) keeps a
	// leader's closing marks and session owners when it steps down: a
	// session whose closeSession was lost with the leadership stays
	// closing there, so leading again the member tells its client
	// Expired and never closes it (its ephemerals outlive it), and
	// following it drops the session's requests.
	ClosingSurvivesStepDown bool

	// The historical bugs of ZooKeeper's ensemble, put back one at a time.

	// DiffInsteadOfTrunc (ZOOKEEPER-1154) synchronizes a learner that
	// holds txns the leader does not with a DIFF instead of a TRUNC: it
	// keeps txns that were never committed.
	DiffInsteadOfTrunc bool
	// EpochNotPersisted (ZOOKEEPER-335) never asks the shell to write the
	// epoch files: after a restart a member has forgotten the epochs it
	// accepted and joined, so an epoch (and its zxids) can be used twice.
	EpochNotPersisted bool
	// AckNewLeaderBeforeDurable (ZOOKEEPER-3911, ZOOKEEPER-4643) ACKs
	// NEWLEADER, and makes the new epoch current, before the synchronized
	// txns are durable: a crash then loses txns a quorum acknowledged.
	AckNewLeaderBeforeDurable bool
}
