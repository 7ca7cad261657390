package sessions

import (
	"cmp"
	"slices"
	"time"
)

// ExpiryQueue groups ids into buckets by the tick boundary at which they
// expire, as ZooKeeper's ExpiryQueue does: touching an id moves it to the
// bucket of the first boundary after now+timeout, and Poll hands out whole
// buckets once their boundary has passed. Times are monotonic, measured
// from any fixed origin the caller chooses.
//
// Invariant: every id in elems is in exactly the bucket elems names, and
// nextBoundary is the earliest boundary not yet polled.
type ExpiryQueue struct {
	interval     time.Duration
	elems        map[int64]time.Duration
	buckets      map[time.Duration]map[int64]struct{}
	nextBoundary time.Duration
}

// NewExpiryQueue returns an empty queue with buckets interval apart; the
// first boundary polled is the first one after now.
func NewExpiryQueue(interval time.Duration, now time.Duration) *ExpiryQueue {
	if interval <= 0 {
		interval = time.Millisecond
	}
	q := &ExpiryQueue{
		interval: interval,
		elems:    make(map[int64]time.Duration),
		buckets:  make(map[time.Duration]map[int64]struct{}),
	}
	q.nextBoundary = q.roundUp(now)
	return q
}

// roundUp returns the first boundary strictly after t.
func (q *ExpiryQueue) roundUp(t time.Duration) time.Duration {
	return (t/q.interval + 1) * q.interval
}

// Update (re)schedules id to expire timeout after now, rounded up to the
// next boundary, and returns that boundary.
func (q *ExpiryQueue) Update(id int64, timeout time.Duration, now time.Duration) time.Duration {
	at := q.roundUp(now + timeout)
	if at < q.nextBoundary {
		// Only a caller whose clock ran backwards gets here; a bucket before
		// nextBoundary would never be polled.
		at = q.nextBoundary
	}
	prev, had := q.elems[id]
	if had && prev == at {
		return at
	}
	b := q.buckets[at]
	if b == nil {
		b = make(map[int64]struct{})
		q.buckets[at] = b
	}
	b[id] = struct{}{}
	q.elems[id] = at
	if had {
		q.dropFromBucket(prev, id)
	}
	return at
}

// dropFromBucket removes id from the bucket at, and the bucket once empty,
// so that an empty queue has no buckets (Poll relies on it to skip ahead).
func (q *ExpiryQueue) dropFromBucket(at time.Duration, id int64) {
	b := q.buckets[at]
	delete(b, id)
	if len(b) == 0 {
		delete(q.buckets, at)
	}
}

// Remove forgets id.
func (q *ExpiryQueue) Remove(id int64) {
	at, had := q.elems[id]
	if !had {
		return
	}
	delete(q.elems, id)
	q.dropFromBucket(at, id)
}

// Poll removes and returns, sorted by id, every id whose boundary is at or
// before now. Ids stay in the queue's bookkeeping only until returned.
func (q *ExpiryQueue) Poll(now time.Duration) []int64 {
	var out []int64
	for q.nextBoundary <= now {
		if _, ok := q.buckets[q.nextBoundary]; !ok {
			// Jump over empty boundaries instead of stepping through each
			// (a long pause could span millions of ticks).
			next, any := q.earliestBucket()
			if !any || next > now {
				q.nextBoundary = q.roundUp(now)
				break
			}
			q.nextBoundary = next
		}
		for id := range q.buckets[q.nextBoundary] {
			out = append(out, id)
			delete(q.elems, id)
		}
		delete(q.buckets, q.nextBoundary)
		q.nextBoundary += q.interval
	}
	slices.Sort(out)
	return out
}

// earliestBucket returns the earliest boundary that has a bucket. There are
// few buckets (about maxTimeout/interval), so a scan is cheap.
func (q *ExpiryQueue) earliestBucket() (at time.Duration, ok bool) {
	for b := range q.buckets {
		if !ok || b < at {
			at, ok = b, true
		}
	}
	return at, ok
}

// NextBoundary returns the monotonic time of the next boundary Poll will
// look at: the time a shell should next wake the owner up, at the latest.
func (q *ExpiryQueue) NextBoundary() time.Duration { return q.nextBoundary }

// Bucket is the ids that expire together at one boundary.
type Bucket struct {
	At  time.Duration // monotonic
	IDs []int64       // sorted
}

// Buckets returns the non-empty buckets in time order (for ZooKeeper's
// dump command).
func (q *ExpiryQueue) Buckets() []Bucket {
	out := make([]Bucket, 0, len(q.buckets))
	for at, set := range q.buckets {
		ids := make([]int64, 0, len(set))
		for id := range set {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		out = append(out, Bucket{At: at, IDs: ids})
	}
	slices.SortFunc(out, func(a, b Bucket) int { return cmp.Compare(a.At, b.At) })
	return out
}

// Len returns the number of ids scheduled.
func (q *ExpiryQueue) Len() int { return len(q.elems) }
