package zab

import (
	"maps"
	"slices"
)

// quorumTracker is where a leader asks every one of its quorum questions,
// each answered by the ensemble's one quorum definition (the election's
// too), in the order the paper's phases ask them:
//
//  1. gathered: do the voters that have sent FOLLOWERINFO, the leader
//     included, form a quorum, so that the new epoch can be fixed?
//     (discovery; Zab.tla CepochRecvQuorumFormed, ZooKeeper's
//     Leader.getEpochToPropose)
//  2. epochAcked: do the voters that acknowledged the new epoch (ACKEPOCH,
//     recorded with ackEpoch) form a quorum? (discovery's end; Zab.tla
//     AckeRecvQuorumFormed, ZooKeeper's Leader.waitForEpochAck)
//  3. newLeaderAcked: do the voters whose logs hold the initial history
//     durably (their ACK of NEWLEADER, the leader's own log) form a quorum?
//     (synchronization's end; Zab.tla AckldRecvQuorumFormed, ZooKeeper's
//     Leader.waitForNewLeaderAck)
//  4. committed: which proposals has a quorum acknowledged (ack)?
//     (broadcast; Zab.tla LeaderTryToCommit, ZooKeeper's
//     Leader.tryToCommit)
//  5. heard: do the voters heard from within syncLimit form a quorum?
//     (broadcast's liveness; ZooKeeper's Leader.lead, its syncedAckSet)
//
// Questions 1, 3 and 5 are about the learners connected now, which the
// leader's handlers know: the leader passes the members in question.
// Questions 2 and 4 keep their acknowledgements here, as data.
//
// Proposals: ZAB members log proposals in zxid order and acknowledge them
// in that order, so one number per voter — the highest zxid it has
// acknowledged — says everything: a zxid is committed once the voters that
// acknowledged it (or a later one) form a quorum. The leader counts itself
// only after its own fsync. With one voter, a proposal commits when the
// member's own log makes it durable.
type quorumTracker struct {
	m *members
	// epochAcks are the voters whose acknowledgement of the new epoch
	// counts (the leader's own included once it proposed the epoch). A
	// voter's ACKEPOCH keeps counting when its connection goes: it has
	// made the epoch its acceptedEpoch durably, whatever happens to it.
	epochAcks map[int64]bool
	acked     map[int64]int64 // voter -> highest zxid acknowledged
	// floor is the highest commit point returned: a commit is never
	// undone, even when a voter's acknowledgement is withdrawn (forget).
	floor   int64
	scratch []int64 // committed's buffers, kept to avoid allocating
	ids     []int64
}

func newQuorumTracker(m *members) *quorumTracker {
	return &quorumTracker{m: m, epochAcks: map[int64]bool{}, acked: make(map[int64]int64, len(m.voters))}
}

// contains reports whether ids (any order, non-voters and repeats ignored)
// hold a quorum of voters: the one test behind every question.
func (q *quorumTracker) contains(ids []int64) bool {
	vs := make([]int64, 0, len(ids))
	for _, id := range ids {
		if q.m.isVoter(id) {
			vs = append(vs, id)
		}
	}
	slices.Sort(vs)
	return q.m.quorum.ContainsQuorum(slices.Compact(vs))
}

// gathered is question 1: ids are the leader and the voters that have sent
// FOLLOWERINFO on their current connections.
func (q *quorumTracker) gathered(ids []int64) bool { return q.contains(ids) }

// ackEpoch records that id acknowledged the new epoch (question 2).
func (q *quorumTracker) ackEpoch(id int64) { q.epochAcks[id] = true }

// epochAcked is question 2: have a quorum acknowledged the new epoch?
func (q *quorumTracker) epochAcked() bool {
	return q.contains(slices.Sorted(maps.Keys(q.epochAcks)))
}

// newLeaderAcked is question 3: ids are the voters whose logs hold the
// initial history durably.
func (q *quorumTracker) newLeaderAcked(ids []int64) bool { return q.contains(ids) }

// heard is question 5: ids are the members heard from within syncLimit.
func (q *quorumTracker) heard(ids []int64) bool { return q.contains(ids) }

// ack records that voter has logged everything up to zxid (question 4).
// Acks from non-voters (observers) and stale acks change nothing.
func (q *quorumTracker) ack(voter int64, zxid int64) {
	if !q.m.isVoter(voter) {
		return
	}
	if zxid > q.acked[voter] {
		q.acked[voter] = zxid
	}
}

// forget withdraws a voter's acknowledgements of proposals: its connection
// was replaced, and the synchronization that follows may truncate what it
// had logged (an ACK from an earlier connection must not count for a txn
// the voter no longer holds).
func (q *quorumTracker) forget(voter int64) { delete(q.acked, voter) }

// commitThrough records that every proposal up to zxid is committed,
// whatever acknowledgements are withdrawn later: a leader's initial
// history at establishment (question 3's quorum holds it durably).
func (q *quorumTracker) commitThrough(zxid int64) { q.floor = max(q.floor, zxid) }

// committed is question 4: the highest zxid whose acknowledgers form a
// quorum (trying the acknowledged zxids from the highest down, the first
// that a quorum has reached), and never less than it returned before.
func (q *quorumTracker) committed() int64 {
	q.floor = max(q.floor, q.quorumAcked())
	return q.floor
}

func (q *quorumTracker) quorumAcked() int64 {
	acks := q.scratch[:0]
	for _, v := range q.m.voters {
		acks = append(acks, q.acked[v])
	}
	q.scratch = acks
	slices.Sort(acks)
	for i := len(acks) - 1; i >= 0; i-- {
		z := acks[i]
		if i < len(acks)-1 && acks[i+1] == z {
			continue
		}
		ids := q.ids[:0]
		for _, v := range q.m.voters {
			if q.acked[v] >= z {
				ids = append(ids, v)
			}
		}
		q.ids = ids
		// contains' test, without its copy: ids are voters, sorted, distinct.
		if q.m.quorum.ContainsQuorum(ids) {
			return z
		}
	}
	return 0
}
