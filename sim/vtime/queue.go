package vtime

import "time"

// event is something that happens at a point of monotonic time. What it
// runs waits in the queue's slots, so that the heap holds no pointers:
// moving its entries costs the garbage collector no write barriers.
type event struct {
	at   time.Duration // monotonic time at which it runs
	seq  uint64        // order of scheduling; breaks ties between equal at
	slot int32         // index of its Runner in Queue.slots
}

// Runner is what an event does. A pointer to a struct that carries the
// event's data is a Runner without the closure allocation a method value
// costs; At takes a plain func.
type Runner interface{ Run() }

// runFunc makes a func a Runner (a func value fits an interface without an
// allocation).
type runFunc func()

func (f runFunc) Run() { f() }

// Queue is the simulation's single event queue, bound to its clock. It is not
// safe for concurrent use: a simulation runs on one goroutine.
type Queue struct {
	clock *Clock
	items eventHeap
	next  uint64
	slots []Runner // the Runner of each waiting event, by slot
	free  []int32  // slots not in use
}

// NewQueue returns an empty queue that advances clock as it hands out events.
func NewQueue(clock *Clock) *Queue { return &Queue{clock: clock} }

// Clock returns the clock the queue advances.
func (q *Queue) Clock() *Clock { return q.clock }

// At schedules run at monotonic time at; a time in the past means now.
func (q *Queue) At(at time.Duration, run func()) { q.Schedule(at, runFunc(run)) }

// Schedule schedules r.Run at monotonic time at; a time in the past means
// now. At and Schedule share one order: (time, order of scheduling).
func (q *Queue) Schedule(at time.Duration, r Runner) {
	if at < q.clock.mono {
		at = q.clock.mono
	}
	var slot int32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
		q.slots[slot] = r
	} else {
		slot = int32(len(q.slots))
		q.slots = append(q.slots, r)
	}
	q.items.push(event{at: at, seq: q.next, slot: slot})
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
	return q.items[0].at, true
}

// Step runs the earliest event, advancing the clock to its time first. It
// reports false when the queue was empty.
func (q *Queue) Step() bool {
	if len(q.items) == 0 {
		return false
	}
	ev := q.items.pop()
	r := q.slots[ev.slot]
	q.slots[ev.slot] = nil // let it go
	q.free = append(q.free, ev.slot)
	q.clock.advanceTo(ev.at)
	r.Run()
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

// eventHeap is a binary min-heap of events ordered by (at, seq); seq is
// unique, so the order is total. It is written out rather than built on
// container/heap, whose interface boxes every popped event into an
// allocation: the queue hands out one event per simulated step.
type eventHeap []event

func (h eventHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}

func (h *eventHeap) push(ev event) {
	*h = append(*h, ev)
	a := *h
	for i := len(a) - 1; i > 0; {
		parent := (i - 1) / 2
		if !a.less(i, parent) {
			break
		}
		a[i], a[parent] = a[parent], a[i]
		i = parent
	}
}

func (h *eventHeap) pop() event {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < len(a) && a.less(l, small) {
			small = l
		}
		if r < len(a) && a.less(r, small) {
			small = r
		}
		if small == i {
			break
		}
		a[i], a[small] = a[small], a[i]
		i = small
	}
	*h = a
	return top
}
