package sim

// zxidMap maps zxids to values as a map[int64]V does. Each server keeps a
// value for nearly every zxid of a run (the digest each txn records, what
// it logged for the witness) and looks one up after every step, so
// each epoch's values sit in a slice indexed by the zxid's counter: a slice
// index costs a fraction of a hash map's lookup and growth. Zxids that are
// not positive or whose counter is beyond denseLimit go to a plain map.
// The zero value is empty and ready to use.
type zxidMap[V any] struct {
	epochs map[int64]*epochValues[V]
	// cur caches the epoch looked up last: a run works in one epoch at a
	// time.
	cur      *epochValues[V]
	curEpoch int64
	sparse   map[int64]V
}

// epochValues holds one epoch's values by counter.
type epochValues[V any] struct {
	vals []V
	has  []bool
}

// denseLimit bounds the counters kept in slices (a simulated run logs
// thousands of txns per epoch, not millions).
const denseLimit = 1 << 16

func splitZxid(z int64) (epoch, counter int64, dense bool) {
	epoch, counter = z>>32, z&0xffffffff
	return epoch, counter, z > 0 && counter < denseLimit
}

func (m *zxidMap[V]) epoch(e int64, create bool) *epochValues[V] {
	if m.cur != nil && m.curEpoch == e {
		return m.cur
	}
	ev := m.epochs[e]
	if ev == nil {
		if !create {
			return nil
		}
		if m.epochs == nil {
			m.epochs = map[int64]*epochValues[V]{}
		}
		ev = &epochValues[V]{}
		m.epochs[e] = ev
	}
	m.cur, m.curEpoch = ev, e
	return ev
}

// get returns the value of z and whether it has one.
func (m *zxidMap[V]) get(z int64) (v V, ok bool) {
	e, c, dense := splitZxid(z)
	if !dense {
		v, ok = m.sparse[z]
		return v, ok
	}
	ev := m.epoch(e, false)
	if ev == nil || c >= int64(len(ev.has)) || !ev.has[c] {
		return v, false
	}
	return ev.vals[c], true
}

// put sets the value of z.
func (m *zxidMap[V]) put(z int64, v V) {
	e, c, dense := splitZxid(z)
	if !dense {
		if m.sparse == nil {
			m.sparse = map[int64]V{}
		}
		m.sparse[z] = v
		return
	}
	ev := m.epoch(e, true)
	if n := c + 1 - int64(len(ev.has)); n > 0 {
		ev.vals, ev.has = append(ev.vals, make([]V, n)...), append(ev.has, make([]bool, n)...)
	}
	ev.vals[c], ev.has[c] = v, true
}

// deleteAbove removes every zxid greater than z.
func (m *zxidMap[V]) deleteAbove(z int64) {
	for e, ev := range m.epochs { // deletions only: the order cannot show
		lo := max(int64(0), z-e<<32+1) // the first counter above z in epoch e
		if lo >= int64(len(ev.has)) {
			continue
		}
		clear(ev.has[lo:])
		clear(ev.vals[lo:])
	}
	for k := range m.sparse {
		if k > z {
			delete(m.sparse, k)
		}
	}
}

// clear removes every zxid.
func (m *zxidMap[V]) clear() { *m = zxidMap[V]{} }
