package wire

import (
	"errors"
	"fmt"
)

// This file holds the payloads of QuorumPackets: what ZooKeeper 3.8 puts in
// a packet's Data for each type (Learner, LearnerHandler, Leader, Follower,
// Observer). Only FOLLOWERINFO's LearnerInfo and the txns are jute records
// in ZooKeeper; the rest are packed by hand with a ByteBuffer or a
// DataOutputStream, which write the same big-endian ints, longs and
// one-byte booleans, with no length prefixes and no framing of their own.
// The packet's Data buffer is their only bound, so each payload is decoded
// from exactly that buffer.

// ProtocolVersion is the Zab protocol version a 3.8 learner announces in
// its LearnerInfo and a 3.8 leader in LEADERINFO (Zab 1.0, "0x10000"). A
// leader that sees a lower version from a learner runs the pre-1.0
// discovery (no LEADERINFO, no config in NEWLEADER).
const ProtocolVersion int32 = 0x10000

// SnapshotSignature ends the snapshot stream that follows a SNAP packet.
// After SNAP (zxid: the leader's last processed zxid, no data) the leader
// writes, straight onto the quorum connection and outside any packet:
//
//	int session count, then per session: long id, int timeout (ms)
//	the DataTree: ACL cache, nodes, the "/" end marker (as in a snapshot file)
//	string "BenWasHere" (jute writeString, tag "signature")
//
// unlike a snapshot file: no file header, no checksum seals and no digest
// section. The learner refuses the sync when the signature differs.
const SnapshotSignature = "BenWasHere"

// SnapshotEnd is the jute string that ends a snapshot stream: Encode writes
// SnapshotSignature; Decode fails unless it reads exactly that.
type SnapshotEnd struct{}

func (*SnapshotEnd) Encode(e *Encoder) { e.WriteString(SnapshotSignature) }
func (*SnapshotEnd) Decode(d *Decoder) {
	if s := d.ReadString(); d.Err() == nil && s != SnapshotSignature {
		d.Fail("snapshot signature", fmt.Errorf("%q, want %q", s, SnapshotSignature))
	}
}

// LeaderInfo is a LEADERINFO packet's data: the leader's protocol version,
// a 4-byte int (ProtocolVersion in 3.8). The packet's zxid is the proposed
// epoch's first zxid (epoch<<32).
type LeaderInfo struct{ ProtocolVersion int32 }

func (r *LeaderInfo) Encode(e *Encoder) { e.WriteInt(r.ProtocolVersion) }
func (r *LeaderInfo) Decode(d *Decoder) { r.ProtocolVersion = d.ReadInt() }

// AckEpoch is an ACKEPOCH packet's data: a 4-byte int, the learner's
// currentEpoch, or -1 when its acceptedEpoch already equalled the proposed
// epoch (then the reply must not count as an acknowledgement of the epoch).
// The packet's zxid is the learner's last logged zxid.
type AckEpoch struct{ CurrentEpoch int32 }

func (r *AckEpoch) Encode(e *Encoder) { e.WriteInt(r.CurrentEpoch) }
func (r *AckEpoch) Decode(d *Decoder) { r.CurrentEpoch = d.ReadInt() }

// ForwardedRequest is a REQUEST packet's data, a client request a learner
// forwards to its leader: long session id, int cxid, int opcode, then the
// request's body exactly as the client sent it after its RequestHeader (no
// length prefix: the body runs to the end of the data). The session's
// identities travel in the packet's AuthInfo, and its zxid is -1.
//
// A learner also forwards requests no client sent as such: createSession
// (cxid 0, body: int timeout) when a client connects, closeSession (empty
// body), and sync (body: the path).
type ForwardedRequest struct {
	SessionID int64
	Cxid      int32
	Type      OpCode
	Body      []byte
}

func (r *ForwardedRequest) Encode(e *Encoder) {
	e.WriteLong(r.SessionID)
	e.WriteInt(r.Cxid)
	e.WriteInt(int32(r.Type))
	e.WriteRaw(r.Body)
}

// Decode reads the header and takes every remaining byte as the body, so d
// must hold exactly the packet's data. An empty body decodes as nil.
func (r *ForwardedRequest) Decode(d *Decoder) {
	r.SessionID = d.ReadLong()
	r.Cxid = d.ReadInt()
	r.Type = OpCode(d.ReadInt())
	r.Body = nil
	if n := d.Remaining(); n > 0 && d.Err() == nil {
		r.Body = d.ReadRaw(n)
	}
}

// DecodeBody decodes the forwarded body by the request's type, as the
// leader reads it. createSession's body, the negotiated timeout, has the
// layout of its txn and decodes as a CreateSessionTxn.
func (r *ForwardedRequest) DecodeBody() (Record, error) {
	if r.Type == OpCreateSession {
		var b CreateSessionTxn
		if err := Unmarshal(r.Body, &b); err != nil {
			return nil, fmt.Errorf("wire: forwarded createSession: %w", err)
		}
		return &b, nil
	}
	return DecodeRequest(r.Type, r.Body)
}

// SessionTouch is one session a learner served since its last ping, with
// the session's timeout in ms.
type SessionTouch struct {
	SessionID int64
	Timeout   int32
}

// sessionTouchSize is the encoded size of a SessionTouch.
const sessionTouchSize = 12

// PingTouches is the data of a PING a learner sends back to its leader:
// per touched session a long id and an int timeout, back to back with no
// count (a DataOutputStream; the leader reads until the data runs out). No
// touches is empty data, never null (see PingReply). A leader's PING
// carries no data; its zxid is the leader's last proposed zxid, which the
// reply echoes.
type PingTouches struct{ Touches []SessionTouch }

func (r *PingTouches) Encode(e *Encoder) {
	for _, t := range r.Touches {
		e.WriteLong(t.SessionID)
		e.WriteInt(t.Timeout)
	}
}

// Decode reads touches until d is empty, so d must hold exactly the
// packet's data; data that is not a whole number of touches is an error
// (ZooKeeper's leader would fail reading the last one). No touches decode
// as nil.
func (r *PingTouches) Decode(d *Decoder) {
	r.Touches = nil
	n := d.Remaining()
	if n%sessionTouchSize != 0 {
		d.Fail("ping session touches", fmt.Errorf("%d bytes is not a whole number of %d-byte touches", n, sessionTouchSize))
		return
	}
	if n > 0 && d.Err() == nil {
		r.Touches = make([]SessionTouch, 0, n/sessionTouchSize)
	}
	for d.Remaining() > 0 && d.Err() == nil {
		r.Touches = append(r.Touches, SessionTouch{SessionID: d.ReadLong(), Timeout: d.ReadInt()})
	}
}

// PingReply is the PING a learner answers its leader's PING with: the
// ping's zxid and auth info echoed, and the touches as data. The data is
// never null, even with no touches: a 3.8 leader reads it without a null
// check, and a null reply kills its handler of that learner.
func PingReply(ping *QuorumPacket, touches []SessionTouch) QuorumPacket {
	data := Marshal(&PingTouches{Touches: touches})
	if data == nil {
		data = []byte{}
	}
	return QuorumPacket{Type: PacketPing, Zxid: ping.Zxid, Data: data, AuthInfo: ping.AuthInfo}
}

// RevalidateRequest is the data of a REVALIDATE a learner sends when a
// client reconnects to it with an existing session: long session id, int
// timeout (ms). The packet's zxid is -1.
type RevalidateRequest struct {
	SessionID int64
	Timeout   int32
}

func (r *RevalidateRequest) Encode(e *Encoder) { e.WriteLong(r.SessionID); e.WriteInt(r.Timeout) }
func (r *RevalidateRequest) Decode(d *Decoder) {
	r.SessionID = d.ReadLong()
	r.Timeout = d.ReadInt()
}

// RevalidateReply is the data of the leader's answer to a REVALIDATE: long
// session id, then a one-byte boolean, true when the session is live (the
// leader then makes the asking learner the session's owner). The reply
// reuses the request's packet, so its zxid is the request's (-1).
type RevalidateReply struct {
	SessionID int64
	Valid     bool
}

func (r *RevalidateReply) Encode(e *Encoder) { e.WriteLong(r.SessionID); e.WriteBool(r.Valid) }
func (r *RevalidateReply) Decode(d *Decoder) {
	r.SessionID = d.ReadLong()
	r.Valid = d.ReadBool()
}

// NewLeaderConfig is a NEWLEADER packet's data from a 3.8 leader: the
// quorum config the leader runs, as the text of a dynamic config file
// ("server.N=...\n...version=N"), with no length prefix. The packet's zxid
// is the new epoch's first zxid. (A leader leaves the data null for a
// learner older than ProtocolVersion.)
type NewLeaderConfig struct{ Config []byte }

func (r *NewLeaderConfig) Encode(e *Encoder) { e.WriteRaw(r.Config) }

// Decode takes every remaining byte of d as the config (nil when none).
func (r *NewLeaderConfig) Decode(d *Decoder) {
	r.Config = nil
	if n := d.Remaining(); n > 0 {
		r.Config = d.ReadRaw(n)
	}
}

// CommitAndActivate is a COMMITANDACTIVATE packet's data: the commit of a
// reconfig txn (the packet's zxid) carrying a long, the id of the leader
// the new config designates.
type CommitAndActivate struct{ DesignatedLeader int64 }

func (r *CommitAndActivate) Encode(e *Encoder) { e.WriteLong(r.DesignatedLeader) }
func (r *CommitAndActivate) Decode(d *Decoder) { r.DesignatedLeader = d.ReadLong() }

// InformAndActivate is an INFORMANDACTIVATE packet's data, the observers'
// COMMITANDACTIVATE: a long, the designated leader's id, then the reconfig
// txn as a PROPOSAL carries it (header, body, digest).
type InformAndActivate struct {
	DesignatedLeader int64
	Txn              TxnEntry
}

func (r *InformAndActivate) Encode(e *Encoder) {
	e.WriteLong(r.DesignatedLeader)
	r.Txn.Encode(e)
}

// Decode reads the leader id and takes the rest of d as the txn, so d must
// hold exactly the packet's data.
func (r *InformAndActivate) Decode(d *Decoder) {
	r.DesignatedLeader = d.ReadLong()
	r.Txn.Decode(d)
}

// PacketSender says which end of a leader–learner connection sent a
// packet: the two ends send different packet types, and a REVALIDATE's
// data reads differently in each direction.
type PacketSender int8

// Packet senders. A follower that serves observers (ObserverMaster) sends
// what a leader sends.
const (
	FromLearner PacketSender = iota + 1
	FromLeader
)

func (s PacketSender) String() string {
	switch s {
	case FromLearner:
		return "learner"
	case FromLeader:
		return "leader"
	}
	return fmt.Sprintf("PacketSender(%d)", int8(s))
}

// ErrPacketDirection means a packet arrived from the end of a connection
// that never sends its type (LEADERINFO from a learner, ACK from a leader).
var ErrPacketDirection = errors.New("wire: packet type not sent in this direction")

// packetSenders says who sends each packet type. Learners send their info,
// ACKEPOCH, ACKs, forwarded requests, ping replies and revalidations; the
// leader everything else, plus pings and revalidation replies.
var packetSenders = map[PacketType][]PacketSender{
	PacketRequest:           {FromLearner},
	PacketProposal:          {FromLeader},
	PacketAck:               {FromLearner},
	PacketCommit:            {FromLeader},
	PacketPing:              {FromLearner, FromLeader},
	PacketRevalidate:        {FromLearner, FromLeader},
	PacketSync:              {FromLeader},
	PacketInform:            {FromLeader},
	PacketCommitAndActivate: {FromLeader},
	PacketNewLeader:         {FromLeader},
	PacketFollowerInfo:      {FromLearner},
	PacketUpToDate:          {FromLeader},
	PacketDiff:              {FromLeader},
	PacketTrunc:             {FromLeader},
	PacketSnap:              {FromLeader},
	PacketObserverInfo:      {FromLearner},
	PacketLeaderInfo:        {FromLeader},
	PacketAckEpoch:          {FromLearner},
	PacketInformAndActivate: {FromLeader},
}

// DecodePacketData decodes the data of a packet that from sent, by the
// packet's type, and requires the payload to fill the data exactly:
//
//	FOLLOWERINFO, OBSERVERINFO  *LearnerInfo
//	LEADERINFO                  *LeaderInfo
//	ACKEPOCH                    *AckEpoch
//	NEWLEADER                   *NewLeaderConfig
//	PROPOSAL, INFORM            *TxnEntry (header, body, digest; as DecodeTxnEntry)
//	COMMITANDACTIVATE           *CommitAndActivate
//	INFORMANDACTIVATE           *InformAndActivate
//	REQUEST                     *ForwardedRequest
//	PING                        *PingTouches (from a leader: none)
//	REVALIDATE                  *RevalidateRequest from a learner, *RevalidateReply from a leader
//	ACK, COMMIT, SYNC, UPTODATE, DIFF, TRUNC, SNAP: nil, nil
//
// The last group carries nothing in its data (ZooKeeper sends null and
// never reads it), so their data is not looked at. An unknown type, or a
// type the sender never sends (ErrPacketDirection), is an error.
func DecodePacketData(qp *QuorumPacket, from PacketSender) (Record, error) {
	senders, ok := packetSenders[qp.Type]
	if !ok {
		return nil, fmt.Errorf("wire: packet of unknown type %d", int32(qp.Type))
	}
	if !sentBy(senders, from) {
		return nil, fmt.Errorf("%w: %s from a %s", ErrPacketDirection, qp.Type, from)
	}
	var r Record
	switch qp.Type {
	case PacketFollowerInfo, PacketObserverInfo:
		r = &LearnerInfo{}
	case PacketLeaderInfo:
		r = &LeaderInfo{}
	case PacketAckEpoch:
		r = &AckEpoch{}
	case PacketNewLeader:
		r = &NewLeaderConfig{}
	case PacketProposal, PacketInform:
		r = &TxnEntry{}
	case PacketCommitAndActivate:
		r = &CommitAndActivate{}
	case PacketInformAndActivate:
		r = &InformAndActivate{}
	case PacketRequest:
		r = &ForwardedRequest{}
	case PacketPing:
		r = &PingTouches{}
	case PacketRevalidate:
		if from == FromLearner {
			r = &RevalidateRequest{}
		} else {
			r = &RevalidateReply{}
		}
	default:
		return nil, nil
	}
	if err := Unmarshal(qp.Data, r); err != nil {
		return nil, fmt.Errorf("wire: %s data from a %s: %w", qp.Type, from, err)
	}
	return r, nil
}

func sentBy(senders []PacketSender, from PacketSender) bool {
	for _, s := range senders {
		if s == from {
			return true
		}
	}
	return false
}
