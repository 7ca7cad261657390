package wire

import (
	"encoding/binary"
	"fmt"
)

// This file holds the shapes of ZooKeeper 3.8's peer protocol: the jute
// records learners and leaders exchange (QuorumPacket, LearnerInfo,
// QuorumAuthPacket) and the hand-packed messages of leader election
// (QuorumCnxManager's connection handshake, FastLeaderElection's
// notifications).

// PacketType is the type of a QuorumPacket (the constants of Leader.java).
type PacketType int32

// Quorum packet types.
const (
	PacketRequest           PacketType = 1
	PacketProposal          PacketType = 2
	PacketAck               PacketType = 3
	PacketCommit            PacketType = 4
	PacketPing              PacketType = 5
	PacketRevalidate        PacketType = 6
	PacketSync              PacketType = 7
	PacketInform            PacketType = 8
	PacketCommitAndActivate PacketType = 9
	PacketNewLeader         PacketType = 10
	PacketFollowerInfo      PacketType = 11
	PacketUpToDate          PacketType = 12
	PacketDiff              PacketType = 13
	PacketTrunc             PacketType = 14
	PacketSnap              PacketType = 15
	PacketObserverInfo      PacketType = 16
	PacketLeaderInfo        PacketType = 17
	PacketAckEpoch          PacketType = 18
	PacketInformAndActivate PacketType = 19
)

var packetNames = map[PacketType]string{
	PacketRequest: "REQUEST", PacketProposal: "PROPOSAL", PacketAck: "ACK", PacketCommit: "COMMIT",
	PacketPing: "PING", PacketRevalidate: "REVALIDATE", PacketSync: "SYNC", PacketInform: "INFORM",
	PacketCommitAndActivate: "COMMITANDACTIVATE", PacketNewLeader: "NEWLEADER",
	PacketFollowerInfo: "FOLLOWERINFO", PacketUpToDate: "UPTODATE", PacketDiff: "DIFF",
	PacketTrunc: "TRUNC", PacketSnap: "SNAP", PacketObserverInfo: "OBSERVERINFO",
	PacketLeaderInfo: "LEADERINFO", PacketAckEpoch: "ACKEPOCH",
	PacketInformAndActivate: "INFORMANDACTIVATE",
}

// String gives the name ZooKeeper's logs use.
func (t PacketType) String() string {
	if s, ok := packetNames[t]; ok {
		return s
	}
	return fmt.Sprintf("PacketType(%d)", int32(t))
}

// QuorumPacket is the unit of the leader–learner protocol.
type QuorumPacket struct {
	Type     PacketType
	Zxid     int64
	Data     []byte // meaning depends on Type; null for many types
	AuthInfo []Id   // the session's identities, for forwarded requests
}

func (r *QuorumPacket) Encode(e *Encoder) {
	e.WriteInt(int32(r.Type))
	e.WriteLong(r.Zxid)
	e.WriteBuffer(r.Data)
	e.WriteIds(r.AuthInfo)
}

func (r *QuorumPacket) Decode(d *Decoder) {
	r.Type = PacketType(d.ReadInt())
	r.Zxid = d.ReadLong()
	r.Data = d.ReadBuffer()
	r.AuthInfo = d.ReadIds()
}

// LearnerInfo is the data of a FOLLOWERINFO or OBSERVERINFO packet.
type LearnerInfo struct {
	ServerID        int64
	ProtocolVersion int32
	ConfigVersion   int64
}

func (r *LearnerInfo) Encode(e *Encoder) {
	e.WriteLong(r.ServerID)
	e.WriteInt(r.ProtocolVersion)
	e.WriteLong(r.ConfigVersion)
}

func (r *LearnerInfo) Decode(d *Decoder) {
	r.ServerID = d.ReadLong()
	r.ProtocolVersion = d.ReadInt()
	r.ConfigVersion = d.ReadLong()
}

// QuorumAuthPacket carries SASL tokens between peers when quorum
// authentication is on.
type QuorumAuthPacket struct {
	Magic  int64
	Status int32
	Token  []byte
}

func (r *QuorumAuthPacket) Encode(e *Encoder) {
	e.WriteLong(r.Magic)
	e.WriteInt(r.Status)
	e.WriteBuffer(r.Token)
}

func (r *QuorumAuthPacket) Decode(d *Decoder) {
	r.Magic = d.ReadLong()
	r.Status = d.ReadInt()
	r.Token = d.ReadBuffer()
}

// Limits and versions of the election connections (QuorumCnxManager).
const (
	// ElectionMaxMessage is the largest election message a peer accepts.
	ElectionMaxMessage = 512 * 1024
	// ElectionMaxAddress is the largest address string of an InitialMessage.
	ElectionMaxAddress = 2048
	// ElectionProtocolV1 announces one election address "host:port".
	ElectionProtocolV1 int64 = -65536
	// ElectionProtocolV2 announces several, joined by "|".
	ElectionProtocolV2 int64 = -65535
	// NotificationVersion is the notification format 3.8 sends, with config.
	NotificationVersion int32 = 2
)

// InitialMessage is what the connecting peer of an election connection
// sends first: a protocol version, its server id and its election
// address(es). Each is written raw (no jute): long, long, int length, bytes.
type InitialMessage struct {
	ProtocolVersion int64 // ElectionProtocolV1 or V2
	ServerID        int64
	Address         string // "host:port", or several joined by "|" in V2
}

func (r *InitialMessage) Encode(e *Encoder) {
	e.WriteLong(r.ProtocolVersion)
	e.WriteLong(r.ServerID)
	e.WriteInt(int32(len(r.Address)))
	e.WriteRaw([]byte(r.Address)) // Java's getBytes, not jute's ustring
}

// Decode reads an initial message and checks what ZooKeeper checks: a known
// protocol version and an address of 1 to ElectionMaxAddress bytes. (A
// non-negative first long is a bare server id from before 3.5; the caller
// decides whether to accept that by peeking before decoding.)
func (r *InitialMessage) Decode(d *Decoder) {
	r.ProtocolVersion = d.ReadLong()
	if d.Err() == nil && r.ProtocolVersion != ElectionProtocolV1 && r.ProtocolVersion != ElectionProtocolV2 {
		d.Fail("election protocol version", fmt.Errorf("unknown version %d", r.ProtocolVersion))
		return
	}
	r.ServerID = d.ReadLong()
	n := int32(0)
	if p := d.take(4, "address length"); p != nil {
		n = int32(binary.BigEndian.Uint32(p))
	}
	if d.Err() != nil {
		return
	}
	if n <= 0 || n > ElectionMaxAddress {
		d.Fail("address length", fmt.Errorf("%d is not in 1..%d", n, ElectionMaxAddress))
		return
	}
	r.Address = string(d.take(int(n), "address"))
}

// PeerState is a server's state as announced in election notifications
// (QuorumPeer.ServerState, by ordinal).
type PeerState int32

// Peer states.
const (
	PeerLooking   PeerState = 0
	PeerFollowing PeerState = 1
	PeerLeading   PeerState = 2
	PeerObserving PeerState = 3
)

func (s PeerState) String() string {
	switch s {
	case PeerLooking:
		return "LOOKING"
	case PeerFollowing:
		return "FOLLOWING"
	case PeerLeading:
		return "LEADING"
	case PeerObserving:
		return "OBSERVING"
	}
	return fmt.Sprintf("PeerState(%d)", int32(s))
}

// Notification is a leader-election vote, packed by hand (not jute) into an
// election message: state int, leader long, zxid long, electionEpoch long,
// peerEpoch long, version int, config length int and the config's bytes.
type Notification struct {
	State         PeerState
	Leader        int64
	Zxid          int64
	ElectionEpoch int64
	PeerEpoch     int64
	Version       int32  // NotificationVersion in 3.8; the config is read only when > 1
	Config        []byte // the sender's quorum config, in zoo.cfg dynamic syntax
}

// Sizes of the notification layouts older peers send.
const (
	notificationSizeNoPeerEpoch = 28 // before peerEpoch existed
	notificationSizeNoVersion   = 40 // peerEpoch, and a version field that is not read
)

// Encode writes the full layout ZooKeeper 3.8 sends, config included
// whatever the Version (a reader ignores it when Version <= 1).
func (r *Notification) Encode(e *Encoder) {
	e.WriteInt(int32(r.State))
	e.WriteLong(r.Leader)
	e.WriteLong(r.Zxid)
	e.WriteLong(r.ElectionEpoch)
	e.WriteLong(r.PeerEpoch)
	e.WriteInt(r.Version)
	e.WriteInt(int32(len(r.Config)))
	e.WriteRaw(r.Config)
}

// Decode reads a notification from a Decoder holding exactly one election
// message, accepting the layouts ZooKeeper 3.8 accepts: 28 bytes (peerEpoch
// taken from the zxid's high half), 40 bytes (version 0), or the full layout.
// Like ZooKeeper it ignores bytes after what the version calls for, so the
// whole message is consumed.
func (r *Notification) Decode(d *Decoder) {
	size := d.Remaining()
	if size < notificationSizeNoPeerEpoch {
		d.Fail("notification", fmt.Errorf("%d bytes, at least %d needed: %w", size, notificationSizeNoPeerEpoch, ErrShort))
		return
	}
	*r = Notification{}
	defer func() { d.take(d.Remaining(), "rest of notification") }()
	r.State = PeerState(d.ReadInt())
	r.Leader = d.ReadLong()
	r.Zxid = d.ReadLong()
	r.ElectionEpoch = d.ReadLong()
	if size == notificationSizeNoPeerEpoch {
		r.PeerEpoch = r.Zxid >> 32
		return
	}
	r.PeerEpoch = d.ReadLong()
	if size == notificationSizeNoVersion {
		return
	}
	r.Version = d.ReadInt()
	if r.Version <= 1 || d.Err() != nil {
		return
	}
	n := d.ReadInt()
	if d.Err() == nil && (n < 0 || int(n) > d.Remaining()) {
		d.Fail("notification config length", fmt.Errorf("%d with %d bytes left", n, d.Remaining()))
		return
	}
	r.Config = append([]byte(nil), d.take(int(n), "notification config")...)
}
