package zab

import "github.com/zabd/zabd/datatree"

// committedWindow keeps the most recently committed txns, oldest first, up
// to a fixed count (ZooKeeper's committedLog, 500 by default): a learner
// whose last zxid falls inside it is synchronized with a DIFF from memory.
// Whether it does is decideSync's to say, from the window's zxids
// (Peer.history); the window only holds them.
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

// oldest returns the zxid of the oldest txn held; ok is false when empty.
func (w *committedWindow) oldest() (zxid int64, ok bool) {
	if w.n == 0 {
		return 0, false
	}
	return w.at(0).Header.Zxid, true
}

func (w *committedWindow) at(i int) *datatree.Txn { return &w.ring[(w.start+i)%len(w.ring)] }
