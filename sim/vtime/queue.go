package vtime

import (
	"container/heap"
	"time"
)

// Event is something that happens at a point of monotonic time.
type Event struct {
	At  time.Duration // monotonic time at which it runs
	Seq uint64        // order of scheduling; breaks ties between equal At
	Run func()
}

// Queue is the simulation's single event queue, bound to its clock. It is not
// safe for concurrent use: a simulation runs on one goroutine.
type Queue struct {
	clock *Clock
	items eventHeap
	next  uint64
}

// NewQueue returns an empty queue that advances clock as it hands out events.
func NewQueue(clock *Clock) *Queue { return &Queue{clock: clock} }

// Clock returns the clock the queue advances.
func (q *Queue) Clock() *Clock { return q.clock }

// At schedules run at monotonic time at; a time in the past means now.
func (q *Queue) At(at time.Duration, run func()) {
	if at < q.clock.mono {
		at = q.clock.mono
	}
	heap.Push(&q.items, Event{At: at, Seq: q.next, Run: run})
	q.next++
}

// After schedules run d after the current monotonic time.
func (q *Queue) After(d time.Duration, run func()) { q.At(q.clock.mono+d, run) }

// Len is the number of events waiting.
func (q *Queue) Len() int { return len(q.items) }

// NextAt is the time of the earliest waiting event; ok is false when the
// queue is empty.
func (q *Queue) NextAt() (at time.Duration, ok bool) {
	if len(q.items) == 0 {
		return 0, false
	}
	return q.items[0].At, true
}

// Step runs the earliest event, advancing the clock to its time first. It
// reports false when the queue was empty.
func (q *Queue) Step() bool {
	if len(q.items) == 0 {
		return false
	}
	ev := heap.Pop(&q.items).(Event)
	q.clock.advanceTo(ev.At)
	ev.Run()
	return true
}

// RunUntil runs every event due at or before limit, then moves the clock to
// limit. Events scheduled while running are included if they fall due in time.
func (q *Queue) RunUntil(limit time.Duration) {
	for {
		at, ok := q.NextAt()
		if !ok || at > limit {
			break
		}
		q.Step()
	}
	q.clock.advanceTo(limit)
}

// eventHeap orders events by (At, Seq); Seq is unique, so the order is total.
type eventHeap []Event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].At != h[j].At {
		return h[i].At < h[j].At
	}
	return h[i].Seq < h[j].Seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(Event)) }
func (h *eventHeap) Pop() any {
	old := *h
	ev := old[len(old)-1]
	old[len(old)-1] = Event{}
	*h = old[:len(old)-1]
	return ev
}
