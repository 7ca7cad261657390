package sessions

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestExpiryQueueAgainstModel drives the queue with random touches,
// removals and polls on an advancing clock and compares each poll with a
// model that remembers only each id's last touch: an id is due once
// lastTouch+timeout, rounded up to the next tick boundary, has passed.
func TestExpiryQueueAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tick := time.Duration(rapid.IntRange(1, 50).Draw(t, "tickMs")) * time.Millisecond
		now := time.Duration(rapid.Int64Range(0, 1e12).Draw(t, "start"))
		q := NewExpiryQueue(tick, now)
		due := map[int64]time.Duration{} // model: id -> deadline
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			now += time.Duration(rapid.Int64Range(0, int64(3*tick)).Draw(t, "advance"))
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0, 1:
				id := rapid.Int64Range(1, 20).Draw(t, "id")
				timeout := time.Duration(rapid.IntRange(0, 200).Draw(t, "timeoutMs")) * time.Millisecond
				q.Update(id, timeout, now)
				due[id] = (now+timeout)/tick*tick + tick
			case 2:
				id := rapid.Int64Range(1, 20).Draw(t, "id")
				q.Remove(id)
				delete(due, id)
			case 3:
				var want []int64
				for id, d := range due {
					if d <= now {
						want = append(want, id)
						delete(due, id)
					}
				}
				slices.Sort(want)
				got := q.Poll(now)
				require.Equal(t, want, got, "poll at %v", now)
				require.Greater(t, q.NextBoundary(), now)
			}
			require.Equal(t, len(due), q.Len())
		}
	})
}

// TestExpiryWindow pins ZooKeeper's granularity: a session expires no
// sooner than its timeout after its last touch and less than a tick later.
func TestExpiryWindow(t *testing.T) {
	tick := 2 * time.Second
	start := 7300 * time.Millisecond
	q := NewExpiryQueue(tick, start)
	q.Update(42, 4*time.Second, start) // deadline 11.3 s rounds up to 12 s
	assert.Empty(t, q.Poll(start+4*time.Second-time.Nanosecond))
	assert.Empty(t, q.Poll(12*time.Second-time.Nanosecond))
	assert.Equal(t, []int64{42}, q.Poll(12*time.Second))
	assert.Empty(t, q.Poll(100*time.Second), "an id is handed out once")
}

func TestExpiryPollJumpsOverALongPause(t *testing.T) {
	q := NewExpiryQueue(time.Millisecond, 0)
	q.Update(1, time.Millisecond, 0)
	q.Update(2, 1000*time.Hour, 0)
	assert.Equal(t, []int64{1}, q.Poll(time.Hour))
	assert.Equal(t, []int64{2}, q.Poll(2000*time.Hour))
}

func TestExpiryPollSkipsAheadWhenEmpty(t *testing.T) {
	q := NewExpiryQueue(time.Second, 0)
	q.Poll(1000 * time.Hour)
	assert.Equal(t, 1000*time.Hour+time.Second, q.NextBoundary())
	q.Update(1, time.Second, 1000*time.Hour)
	assert.Equal(t, []int64{1}, q.Poll(1000*time.Hour+2*time.Second))
}

func TestExpiryBuckets(t *testing.T) {
	q := NewExpiryQueue(time.Second, 0)
	q.Update(9, 3*time.Second, 0)
	q.Update(4, 3*time.Second, 0)
	q.Update(7, time.Second, 0)
	assert.Equal(t, []Bucket{{At: 2 * time.Second, IDs: []int64{7}}, {At: 4 * time.Second, IDs: []int64{4, 9}}}, q.Buckets())
}
