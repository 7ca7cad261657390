package zab

import "github.com/zabd/zabd/datatree"

// committedWindow keeps the most recently committed txns, oldest first, up
// to a fixed count (ZooKeeper's committedLog, 500 by default): a learner
// whose last zxid falls inside it is synchronized with a DIFF from memory.
type committedWindow struct {
	ring  []datatree.Txn
	start int // index of the oldest
	n     int
}

func newCommittedWindow(size int) *committedWindow {
	if size < 1 {
		size = 1
	}
	return &committedWindow{ring: make([]datatree.Txn, size)}
}

// add appends a committed txn, dropping the oldest when full.
func (w *committedWindow) add(t datatree.Txn) {
	if w.n < len(w.ring) {
		w.ring[(w.start+w.n)%len(w.ring)] = t
		w.n++
		return
	}
	w.ring[w.start] = t
	w.start = (w.start + 1) % len(w.ring)
}

// bounds returns the zxids of the oldest and newest txns held; ok is false
// when empty.
func (w *committedWindow) bounds() (min, max int64, ok bool) {
	if w.n == 0 {
		return 0, 0, false
	}
	return w.at(0).Header.Zxid, w.at(w.n - 1).Header.Zxid, true
}

func (w *committedWindow) at(i int) *datatree.Txn { return &w.ring[(w.start+i)%len(w.ring)] }

// since returns the txns with zxids greater than after, oldest first, and
// whether the window can serve them: as in ZooKeeper's sync, only when
// after is at least the oldest zxid held (zxids are not contiguous across
// epochs, so nothing older can be vouched for), or nothing newer exists.
func (w *committedWindow) since(after int64) ([]datatree.Txn, bool) {
	lo, hi, ok := w.bounds()
	if !ok || after >= hi {
		return nil, true
	}
	if after < lo {
		return nil, false
	}
	var out []datatree.Txn
	for i := 0; i < w.n; i++ {
		if t := w.at(i); t.Header.Zxid > after {
			out = append(out, *t)
		}
	}
	return out, true
}
