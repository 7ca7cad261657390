package zab

import (
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/wire"
)

// Ready is what the Peer asks of its shell after some Steps. Ready hands it
// over and starts afresh: the slices belong to the caller.
//
// Both shells carry a Ready out through package zab/member, whose ready.go
// states the contract the Peer relies on: one ordered stream of disk
// operations (truncation, epochs, appends, a SNAP's snapshot), LogDurable
// and SnapshotWritten only once they are durable, and every send held
// behind the epoch or truncation before it.
type Ready struct {
	// Appends are txns to write to the log, in zxid order, after every txn
	// of earlier Readys. Each must be made durable and reported with
	// LogDurable; one fsync may cover many (group commit).
	Appends []datatree.Txn
	// Messages are the replies, notifications, connect responses and
	// closes to carry out, in order; each connection's messages must be
	// written in the order they appear here.
	Messages []Message
	// Snapshots are pieces of snapshot streams to write, in order.
	Snapshots []SnapshotChunk
	// Installed, if set, is the zxid of a SNAP from the leader that
	// replaced the tree and the session table in this Ready's Steps: the
	// member's tree is the leader's at that zxid, except that a leader's
	// SNAP is fuzzy (it may hold some later txns, which apply again before
	// the member serves). The snapshot of it follows in chunks marked
	// Installed.
	Installed *int64
	// Truncate, if set, is the zxid after which the log loses every txn
	// (a TRUNC from the leader, or a SNAP that replaces the history).
	Truncate *int64
	// Epochs, if set, are the epoch files' new contents.
	Epochs *EpochWrite
	// PeerMessages are the quorum channel's sends and closes, in order per
	// peer.
	PeerMessages []PeerMessage
	// Votes are the election's notifications, in order.
	Votes []Vote
	// State, if set, is the member's new role or phase.
	State *SoftState
	// Notices are what the shell should log, in order.
	Notices []Notice
	// DamageRepaired: this member started with a damaged log
	// (Restored.LogDamaged), and a leader has synchronized it, so its log
	// holds durably what the damage cut. The shell forgets the damage
	// durably (storage's Store.ClearDamage); until then every restart must
	// pass LogDamaged again.
	DamageRepaired bool
	// Wakeup is the monotonic time by which the shell must Step a Tick.
	// While a snapshot is being serialized (to a file, or to a learner
	// after a SNAP) it is the Step's own time: step again as soon as the
	// effects are carried out, so that it completes even when nothing else
	// happens.
	Wakeup time.Duration
}

// MessageKind says what a Message asks the shell to do.
type MessageKind uint8

const (
	// Reply writes Header and, unless nil, Body as one frame (notifications
	// are replies with xid -1 and a *wire.WatcherEvent body).
	Reply MessageKind = iota
	// Connect writes Body, a *wire.ConnectResponse, as one frame with no
	// reply header.
	Connect
	// Close closes the connection once everything before it is written.
	Close
)

// Message is one output for one connection.
type Message struct {
	Conn   ConnID
	Kind   MessageKind
	Header wire.ReplyHeader
	Body   wire.Record
}

// AppendFrame appends the message's frame (length prefix included) to buf;
// a Close has no frame and appends nothing.
func (m *Message) AppendFrame(buf []byte) []byte {
	switch m.Kind {
	case Reply:
		if m.Body == nil {
			return wire.AppendFrame(buf, &m.Header)
		}
		return wire.AppendFrame(buf, &m.Header, m.Body)
	case Connect:
		return wire.AppendFrame(buf, m.Body)
	}
	return buf
}

// SnapshotChunk is a piece of the snapshot named by Zxid (the last zxid
// applied when it began). The first chunk carries the session table, every
// chunk a piece of the tree's serialization (ZooKeeper's DataTree format:
// the ACL cache, then the nodes), the last one the digest to write after the
// tree. The shell frames them in its snapshot format (storage.Snapshot:
// Sessions, WriteTree, Digest) and reports SnapshotWritten.
type SnapshotChunk struct {
	Zxid     int64
	First    bool
	Sessions []sessions.Session // First only, sorted by id
	Data     []byte
	Last     bool
	Digest   SnapshotDigest // Last only
	// Installed (on every chunk of its stream): the snapshot is of the tree
	// a SNAP from the leader installed (Ready.Installed), and replaces the
	// log as this member's starting point (storage.Store.InstallSnapshot:
	// the log is cut to Zxid, the snapshot written, the old log files
	// removed), in order with the appends, which the Peer holds back until
	// it hears SnapshotWritten for it.
	Installed bool
}

// SnapshotDigest is the tree digest at the end of a fuzzy snapshot, with the
// zxid it belongs to: what ZooKeeper 3.8 writes after the tree, and what a
// restart checks once replay reaches that zxid.
type SnapshotDigest struct {
	Zxid    int64
	Version int32
	Digest  int64
}

// SoftState is the member's role as the shells show it (srvr's Mode, logs):
// it is not persisted.
type SoftState struct {
	Role   Role
	Phase  Phase
	Leader int64 // the leader's id; 0 while looking
	Epoch  int64 // the epoch being established or served
	// Elections counts the elections this member has begun (entries into
	// LOOKING) since it started. A whole election can begin and end
	// within one Ready — every vote it needs already queued, and no final
	// wait — so a shell that sees LOOKING only between Readys counts them
	// from this.
	Elections int64
}

// PeerMessageKind says what a PeerMessage asks of the shell.
type PeerMessageKind uint8

const (
	// PeerSend writes Packet on the quorum connection to To (opening one if
	// there is none), followed, for a SNAP, by Snapshot.
	PeerSend PeerMessageKind = iota
	// PeerClose closes the quorum connection with To once everything
	// before it is written; later sends go on a new connection. The Peer
	// sees no PeerDisconnected for a close it asked for.
	PeerClose
	// PeerSnapshotPart writes Snapshot, the next piece of the snapshot
	// stream of the SNAP sent to To before it, on the same connection.
	// Nothing else is sent to To between a SNAP and the piece that ends
	// its stream.
	PeerSnapshotPart
)

// PeerMessage is one output on the leader–learner (quorum) channel.
type PeerMessage struct {
	To     int64
	Kind   PeerMessageKind
	Packet wire.QuorumPacket
	// Snapshot is a piece of the stream that follows a SNAP packet (the
	// session table and the tree in ZooKeeper's serialization, then the
	// signature): the first with the SNAP, the others in the
	// PeerSnapshotParts that follow. The leader streams a large tree a
	// bounded step per Ready, serving meanwhile; concatenated, the pieces
	// are the bytes ZooKeeper 3.8 sends after SNAP.
	Snapshot []byte
	// SnapshotEnd: this piece ends the stream (set on the SNAP itself when
	// one step held the whole tree). A shell that hands the Peer whole
	// packets delivers the SNAP with the whole stream (PeerPacket.Snapshot)
	// once the piece that ends it has arrived.
	SnapshotEnd bool
}

// Vote is one output on the election channel: a notification to To.
type Vote = election.Message

// EpochWrite asks the shell to persist epochs (dataDir/version-2's
// acceptedEpoch and currentEpoch files); a zero field is unchanged.
type EpochWrite struct {
	Accepted int64
	Current  int64
}

// Notice is something the shell should log: a role change, a sync mode, a
// peer's packet refused. The Peer reports every event it does not expect
// here rather than dropping it silently.
type Notice struct {
	Warn bool
	// PeerFault: the notice reports a peer's packet that breaks the
	// protocol, over which this member left its leader or dropped a
	// learner's connection. Correct members on a network that keeps TCP's
	// promises never send one; a simulator fails a run on it.
	PeerFault bool
	Text      string
}
