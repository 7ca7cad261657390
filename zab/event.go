package zab

import (
	"time"

	"github.com/zabd/zabd/wire"
)

// Time is the two clocks a Step happens at. Mono is monotonic (any fixed
// origin; it drives ticks and session expiry, so a wall-clock jump never
// expires a session); Wall is milliseconds since the Unix epoch (txn
// timestamps, TTL ages, new session ids).
type Time struct {
	Mono time.Duration
	Wall int64
}

// ConnID names a client connection. The shell picks it, unique for the
// Peer's lifetime; the Peer uses it as the connection's watcher id.
type ConnID int64

// Event is something that happened to the replica; Step takes one.
type Event interface{ isEvent() }

// ConnOpened: a client connected. Addr is its IP address as ZooKeeper's ip
// ACL scheme matches it ("127.0.0.1"). HasCert says its TLS client presented
// a certificate the shell verified, and CertSubject is that certificate's
// subject as ZooKeeper's x509 scheme names it (RFC 2253, as Java prints it;
// possibly empty): the connection is then authenticated as x509:CertSubject.
type ConnOpened struct {
	Conn        ConnID
	Addr        string
	HasCert     bool
	CertSubject string
}

// ConnectReceived: the connection's first frame, a ConnectRequest.
type ConnectReceived struct {
	Conn ConnID
	Req  wire.ConnectRequest
}

// RequestReceived: a later frame, a RequestHeader and its body. DecodeErr
// says the body did not decode (Body is then nil): an unknown opcode
// (*wire.UnknownOpError) or a malformed body. DecodeRequest builds it.
type RequestReceived struct {
	Conn      ConnID
	Xid       int32
	Op        wire.OpCode
	Body      wire.Record
	DecodeErr error
}

// ConnClosed: the connection is gone (the client hung up, or the shell
// closed it). Its session lives on until it expires or is closed.
type ConnClosed struct{ Conn ConnID }

// Tick: time has passed; the Peer expires sessions and reaps containers and
// TTL nodes that are due at the Step's time. Deliver one no later than each
// Ready's Wakeup.
type Tick struct{}

// LogDurable: every txn appended up to and including Zxid is durable. Only
// txns a Ready has handed over can be: a Zxid beyond the last of them counts
// as that last one.
type LogDurable struct{ Zxid int64 }

// SnapshotWritten: the snapshot that Ready.Snapshots streamed for Zxid is
// complete on disk (Err nil) or failed.
type SnapshotWritten struct {
	Zxid int64
	Err  error
}

// PeerPacket: a packet arrived on the quorum connection with From.
// Snapshot holds the stream that follows a SNAP packet.
type PeerPacket struct {
	From     int64
	Packet   wire.QuorumPacket
	Snapshot []byte
}

// PeerVote: a notification arrived on the election channel from From.
type PeerVote struct {
	From         int64
	Notification wire.Notification
}

// PeerDisconnected: the quorum connection with Peer broke; what was in
// flight on it is lost.
type PeerDisconnected struct{ Peer int64 }

// PeerUnreachable: the shell could not reach Peer's election port because
// nothing listens there (its dial was refused): Peer's process is gone, and
// the election stops waiting for its vote until a notification from it
// arrives or the round ends (election.Election.SetUnreachable). A shell that cannot tell a
// refusal from silence never sends it; a partition is silence.
type PeerUnreachable struct{ Peer int64 }

func (ConnOpened) isEvent()       {}
func (ConnectReceived) isEvent()  {}
func (RequestReceived) isEvent()  {}
func (ConnClosed) isEvent()       {}
func (Tick) isEvent()             {}
func (LogDurable) isEvent()       {}
func (SnapshotWritten) isEvent()  {}
func (PeerPacket) isEvent()       {}
func (PeerVote) isEvent()         {}
func (PeerDisconnected) isEvent() {}
func (PeerUnreachable) isEvent()  {}

// DecodeRequest turns a request frame (without its length prefix) into a
// RequestReceived: the header, then the body its opcode calls for. A frame
// too short for a header gives ok false: ZooKeeper closes such a connection.
func DecodeRequest(conn ConnID, frame []byte) (ev RequestReceived, ok bool) {
	d := wire.NewDecoder(frame)
	var h wire.RequestHeader
	h.Decode(d)
	if d.Err() != nil {
		return RequestReceived{}, false
	}
	body, err := wire.DecodeRequest(h.Type, d.Rest())
	ev = RequestReceived{Conn: conn, Xid: h.Xid, Op: h.Type, Body: body, DecodeErr: err}
	if err != nil {
		ev.Body = nil
	}
	return ev, true
}
