package zab

import "slices"

// quorumTracker decides which proposals are committed. ZAB members log
// proposals in zxid order and acknowledge them in that order, so one number
// per voter — the highest zxid it has acknowledged — says everything: a zxid
// is committed once the voters that acknowledged it (or a later one) form a
// quorum, by the ensemble's one quorum definition (the election's too).
// The leader counts itself only after its own fsync. With one voter, a
// proposal commits when the member's own log makes it durable.
type quorumTracker struct {
	m     *members
	acked map[int64]int64 // voter -> highest zxid acknowledged
	// floor is the highest commit point returned: a commit is never
	// undone, even when a voter's acknowledgement is withdrawn (forget).
	floor   int64
	scratch []int64 // committed's buffers, kept to avoid allocating
	ids     []int64
}

func newQuorumTracker(m *members) *quorumTracker {
	return &quorumTracker{m: m, acked: make(map[int64]int64, len(m.voters))}
}

// ack records that voter has logged everything up to zxid. Acks from
// non-voters (observers) and stale acks change nothing.
func (q *quorumTracker) ack(voter int64, zxid int64) {
	if !q.m.isVoter(voter) {
		return
	}
	if zxid > q.acked[voter] {
		q.acked[voter] = zxid
	}
}

// forget withdraws a voter's acknowledgements: its connection was replaced,
// and the synchronization that follows may truncate what it had logged
// (an ACK from an earlier connection must not count for a txn the voter no
// longer holds).
func (q *quorumTracker) forget(voter int64) { delete(q.acked, voter) }

// committed returns the highest zxid whose acknowledgers form a quorum
// (trying the acknowledged zxids from the highest down, the first that a
// quorum has reached), and never less than it returned before.
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
		if q.m.quorum.ContainsQuorum(ids) {
			return z
		}
	}
	return 0
}
