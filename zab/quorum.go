package zab

import "slices"

// quorumTracker decides which proposals are committed. ZAB members log
// proposals in zxid order and acknowledge them in that order, so one number
// per voter — the highest zxid it has acknowledged — says everything: a zxid
// is committed once a majority of voters have acknowledged it or a later one.
// The leader counts itself only after its own fsync. With one voter, a
// proposal commits when the member's own log makes it durable.
type quorumTracker struct {
	voters  []int64         // member ids, sorted
	acked   map[int64]int64 // voter -> highest zxid acknowledged
	scratch []int64         // committed's sort buffer, kept to avoid allocating
}

func newQuorumTracker(voters []int64) *quorumTracker {
	return &quorumTracker{voters: slices.Sorted(slices.Values(voters)), acked: make(map[int64]int64, len(voters))}
}

// ack records that voter has logged everything up to zxid. Acks from
// non-voters (observers) and stale acks change nothing.
func (q *quorumTracker) ack(voter int64, zxid int64) {
	if _, ok := slices.BinarySearch(q.voters, voter); !ok {
		return
	}
	if zxid > q.acked[voter] {
		q.acked[voter] = zxid
	}
}

// committed returns the highest zxid that a majority of voters have
// acknowledged: sorted descending, the majority-th voter's ack.
func (q *quorumTracker) committed() int64 {
	acks := q.scratch[:0]
	for _, v := range q.voters {
		acks = append(acks, q.acked[v])
	}
	q.scratch = acks
	slices.Sort(acks)
	majority := len(acks)/2 + 1
	return acks[len(acks)-majority]
}
