package peerlink

import (
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// DefaultMaxQueuedBytes bounds what waits to be sent to one peer on the
// quorum port: a peer that falls further behind loses its connection (and
// synchronizes again) rather than hold the sender's memory.
const DefaultMaxQueuedBytes = 256 << 20

// MessageSize is what a message counts for in a Backlog: its payload and a
// fixed overhead for the packet's header.
func MessageSize(m *zab.PeerMessage) int { return 32 + len(m.Packet.Data) + len(m.Snapshot) }

// Backlog counts what waits to be sent to one peer.
//
// Invariant: Bytes is the sum of MessageSize over the messages added and
// not yet removed since the last Reset, and Count their number; Syncing
// holds from a LEADERINFO added until the UPTODATE that ends its
// synchronization.
type Backlog struct {
	Bytes, Count int
	Syncing      bool
}

// Overflows reports whether queueing m would pass bound
// (DefaultMaxQueuedBytes when not positive): then the transport drops the
// peer's connection and everything queued (Reset), and queues m behind
// them. The bound is for a learner in broadcast that does not keep up: a
// message alone may exceed it, and a synchronization (LEADERINFO to
// UPTODATE: the DIFF or TRUNC, the txns, a SNAP and its stream, the
// proposals that come meanwhile) is never cut short by it, as a learner
// whose synchronization overflowed would lose its connection and ask for
// the same synchronization again, for ever. What bounds a synchronization
// is the leader's choice of a SNAP over a DIFF larger than a third of its
// snapshot (zab.TxnLog).
func (b *Backlog) Overflows(m *zab.PeerMessage, bound int) bool {
	if bound <= 0 {
		bound = DefaultMaxQueuedBytes
	}
	return !b.Syncing && b.Count > 0 && b.Bytes+MessageSize(m) > bound && m.Kind != zab.PeerSnapshotPart
}

// Add counts m as queued.
func (b *Backlog) Add(m *zab.PeerMessage) {
	b.Bytes += MessageSize(m)
	b.Count++
	switch m.Packet.Type {
	case wire.PacketLeaderInfo:
		b.Syncing = true
	case wire.PacketUpToDate:
		b.Syncing = false
	}
}

// Remove counts m, queued before, as sent.
func (b *Backlog) Remove(m *zab.PeerMessage) { b.Bytes -= MessageSize(m); b.Count-- }

// Reset forgets everything queued: the connection that would have carried
// it is gone.
func (b *Backlog) Reset() { *b = Backlog{} }
