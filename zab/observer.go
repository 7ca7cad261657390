package zab

// This file is the OBSERVING role (ZooKeeper's Observer): a learner that
// never votes and never counts in a quorum. It registers with
// OBSERVERINFO, is synchronized like a follower, and then learns each
// committed txn at once from INFORM, which carries the txn (it is sent no
// PROPOSAL and no COMMIT, and ACKs nothing but NEWLEADER). It serves reads
// and forwards writes like a follower (learner.go).

// becomeObserving enters OBSERVING under leader.
func (p *Peer) becomeObserving(leader int64) { p.becomeLearner(leader, true) }
