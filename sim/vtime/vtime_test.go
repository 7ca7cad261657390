package vtime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestWallJumpLeavesMonotonicAlone(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(start)
	q := NewQueue(c)
	q.After(5*time.Second, func() {})
	q.Step()
	c.JumpWall(-time.Hour)
	require.Equal(t, 5*time.Second, c.Mono())
	require.Equal(t, start.Add(5*time.Second-time.Hour), c.Wall())
	require.Equal(t, start.Add(5*time.Second-time.Hour).UnixMilli(), c.WallMillis())
}

func TestPastEventRunsNowWithoutMovingClockBack(t *testing.T) {
	c := NewClock(time.Unix(0, 0))
	q := NewQueue(c)
	q.RunUntil(10 * time.Second)
	var ranAt time.Duration
	q.At(time.Second, func() { ranAt = c.Mono() })
	require.True(t, q.Step())
	require.Equal(t, 10*time.Second, ranAt)
	require.False(t, q.Step())
}

// Property: events run in (time, scheduling order), and the clock never goes back.
func TestQueueOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := NewClock(time.Unix(0, 0))
		q := NewQueue(c)
		times := rapid.SliceOfN(rapid.IntRange(0, 20), 1, 50).Draw(t, "times")
		type ran struct {
			at  time.Duration
			idx int
		}
		var order []ran
		for i, at := range times {
			i, at := i, time.Duration(at)
			q.At(at, func() {
				order = append(order, ran{c.Mono(), i})
				if i%3 == 0 { // events scheduled while running join the order too
					q.After(0, func() { order = append(order, ran{c.Mono(), -1}) })
				}
			})
		}
		for q.Step() {
		}
		for k := 1; k < len(order); k++ {
			require.GreaterOrEqual(t, order[k].at, order[k-1].at)
		}
		// Among the original events, equal times keep scheduling order.
		last := map[time.Duration]int{}
		for _, r := range order {
			if r.idx < 0 {
				continue
			}
			if prev, ok := last[r.at]; ok {
				require.Less(t, prev, r.idx)
			}
			last[r.at] = r.idx
			require.Equal(t, time.Duration(times[r.idx]), r.at)
		}
	})
}

func TestRunUntilStopsAtLimit(t *testing.T) {
	c := NewClock(time.Unix(0, 0))
	q := NewQueue(c)
	var ran []int
	q.At(1, func() { ran = append(ran, 1) })
	q.At(3, func() { ran = append(ran, 3) })
	q.RunUntil(2)
	require.Equal(t, []int{1}, ran)
	require.Equal(t, time.Duration(2), c.Mono())
	require.Equal(t, 1, q.Len())
}
