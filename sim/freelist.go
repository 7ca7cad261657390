package sim

// freeList hands out reused values: the messages in flight (quorum packets,
// client frames) are the bulk of a run's events, so each is put back once
// the queue has run it instead of being allocated anew.
type freeList[T any] struct{ spare []*T }

// get returns a spare *T holding v, or a new one.
func (l *freeList[T]) get(v T) *T {
	var p *T
	if n := len(l.spare); n > 0 {
		p = l.spare[n-1]
		l.spare = l.spare[:n-1]
	} else {
		p = new(T)
	}
	*p = v
	return p
}

// put takes p back, zeroed so that it holds on to nothing.
func (l *freeList[T]) put(p *T) {
	var zero T
	*p = zero
	l.spare = append(l.spare, p)
}
