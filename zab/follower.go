package zab

// This file is the FOLLOWING role (ZooKeeper's Follower): a learner that
// votes. It ACKs every proposal once durable, so that the leader can count
// it in quorums, and it takes COMMIT for each proposal in zxid order
// (learner.go holds the phases it shares with observers).

// becomeFollowing enters FOLLOWING under leader.
func (p *Peer) becomeFollowing(leader int64) { p.becomeLearner(leader, false) }
