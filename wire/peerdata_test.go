package wire

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// addPacketDataGenerators adds generators of the quorum packets' payloads
// to records (see genRecords). Payloads that run to the end of the data
// draw nil or a non-empty tail, since no bytes decode as nil.
func addPacketDataGenerators(records map[string]*rapid.Generator[Record]) {
	i32, i64 := rapid.Int32(), rapid.Int64()
	rec := func(f func(t *rapid.T) Record) *rapid.Generator[Record] { return rapid.Custom(f) }
	tail := func(t *rapid.T, label string) []byte {
		if rapid.Bool().Draw(t, label+"Empty") {
			return nil
		}
		return rapid.SliceOfN(rapid.Byte(), 1, 64).Draw(t, label)
	}
	entries := genTxnEntry(records)
	for name, gen := range map[string]*rapid.Generator[Record]{
		"LeaderInfo": rec(func(t *rapid.T) Record { return &LeaderInfo{ProtocolVersion: i32.Draw(t, "version")} }),
		"AckEpoch":   rec(func(t *rapid.T) Record { return &AckEpoch{CurrentEpoch: i32.Draw(t, "epoch")} }),
		"ForwardedRequest": rec(func(t *rapid.T) Record {
			return &ForwardedRequest{SessionID: i64.Draw(t, "session"), Cxid: i32.Draw(t, "cxid"),
				Type: genOp().Draw(t, "type"), Body: tail(t, "body")}
		}),
		"PingTouches": rec(func(t *rapid.T) Record {
			var p PingTouches
			for i := rapid.IntRange(0, 5).Draw(t, "touches"); i > 0; i-- {
				p.Touches = append(p.Touches, SessionTouch{SessionID: i64.Draw(t, "session"), Timeout: i32.Draw(t, "timeout")})
			}
			return &p
		}),
		"RevalidateRequest": rec(func(t *rapid.T) Record {
			return &RevalidateRequest{SessionID: i64.Draw(t, "session"), Timeout: i32.Draw(t, "timeout")}
		}),
		"RevalidateReply": rec(func(t *rapid.T) Record {
			return &RevalidateReply{SessionID: i64.Draw(t, "session"), Valid: rapid.Bool().Draw(t, "valid")}
		}),
		"NewLeaderConfig":   rec(func(t *rapid.T) Record { return &NewLeaderConfig{Config: tail(t, "config")} }),
		"CommitAndActivate": rec(func(t *rapid.T) Record { return &CommitAndActivate{DesignatedLeader: i64.Draw(t, "leader")} }),
		"InformAndActivate": rec(func(t *rapid.T) Record {
			return &InformAndActivate{DesignatedLeader: i64.Draw(t, "leader"), Txn: entries.Draw(t, "txn")}
		}),
	} {
		records[name] = gen
	}
}

// payloadTypes lists, per packet type with a payload, who sends it and the
// generator of its payload.
var payloadTypes = []struct {
	typ  PacketType
	from PacketSender
	gen  string
}{
	{PacketFollowerInfo, FromLearner, "LearnerInfo"},
	{PacketObserverInfo, FromLearner, "LearnerInfo"},
	{PacketLeaderInfo, FromLeader, "LeaderInfo"},
	{PacketAckEpoch, FromLearner, "AckEpoch"},
	{PacketNewLeader, FromLeader, "NewLeaderConfig"},
	{PacketProposal, FromLeader, "TxnEntry"},
	{PacketInform, FromLeader, "TxnEntry"},
	{PacketCommitAndActivate, FromLeader, "CommitAndActivate"},
	{PacketInformAndActivate, FromLeader, "InformAndActivate"},
	{PacketRequest, FromLearner, "ForwardedRequest"},
	{PacketPing, FromLearner, "PingTouches"},
	{PacketRevalidate, FromLearner, "RevalidateRequest"},
	{PacketRevalidate, FromLeader, "RevalidateReply"},
}

// TestDecodePacketDataRoundTrip: a payload of any type, put in its packet
// as its sender does, is what DecodePacketData gives back.
func TestDecodePacketDataRoundTrip(t *testing.T) {
	gens := genRecords()
	entries := genTxnEntry(gens)
	rapid.Check(t, func(t *rapid.T) {
		pt := rapid.SampledFrom(payloadTypes).Draw(t, "type")
		var want Record
		if pt.gen == "TxnEntry" {
			e := entries.Draw(t, "txn")
			want = &e
		} else {
			want = gens[pt.gen].Draw(t, "payload")
		}
		qp := QuorumPacket{Type: pt.typ, Zxid: rapid.Int64().Draw(t, "zxid"), Data: Marshal(want)}
		got, err := DecodePacketData(&qp, pt.from)
		require.NoError(t, err)
		require.Equal(t, want, got)
	})
}

// TestDecodePacketDataWithoutPayload: the packets that carry nothing
// decode to nil whatever their data, as ZooKeeper never reads it.
func TestDecodePacketDataWithoutPayload(t *testing.T) {
	for _, typ := range []PacketType{PacketAck} {
		r, err := DecodePacketData(&QuorumPacket{Type: typ, Data: []byte{1, 2}}, FromLearner)
		assert.NoError(t, err, "%s", typ)
		assert.Nil(t, r, "%s", typ)
	}
	for _, typ := range []PacketType{PacketCommit, PacketSync, PacketUpToDate, PacketDiff, PacketTrunc, PacketSnap} {
		r, err := DecodePacketData(&QuorumPacket{Type: typ}, FromLeader)
		assert.NoError(t, err, "%s", typ)
		assert.Nil(t, r, "%s", typ)
	}
	// A leader's ping carries no touches.
	r, err := DecodePacketData(&QuorumPacket{Type: PacketPing, Zxid: 7}, FromLeader)
	require.NoError(t, err)
	assert.Equal(t, &PingTouches{}, r)
}

// TestDecodePacketDataRefuses: bad packets are errors that say what was
// wrong, never a panic or a shorter payload.
func TestDecodePacketDataRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		qp   QuorumPacket
		from PacketSender
		want string
	}{
		{"unknown type", QuorumPacket{Type: 20}, FromLeader, "unknown type 20"},
		{"LEADERINFO from a learner", QuorumPacket{Type: PacketLeaderInfo, Data: []byte{0, 1, 0, 0}}, FromLearner,
			"LEADERINFO from a learner"},
		{"ACK from a leader", QuorumPacket{Type: PacketAck}, FromLeader, "ACK from a leader"},
		{"no sender", QuorumPacket{Type: PacketPing}, 0, "PING from a PacketSender(0)"},
		{"short LEADERINFO", QuorumPacket{Type: PacketLeaderInfo, Data: []byte{0, 1, 0}}, FromLeader, "input ends"},
		{"ACKEPOCH with a trailing byte", QuorumPacket{Type: PacketAckEpoch, Data: []byte{0, 0, 0, 1, 9}}, FromLearner,
			"1 trailing bytes"},
		{"a torn touch", QuorumPacket{Type: PacketPing, Data: make([]byte, 13)}, FromLearner,
			"13 bytes is not a whole number of 12-byte touches"},
		{"a REQUEST shorter than its header", QuorumPacket{Type: PacketRequest, Data: make([]byte, 15)}, FromLearner,
			"input ends"},
		{"a REVALIDATE reply read as a request", QuorumPacket{Type: PacketRevalidate, Data: make([]byte, 9)},
			FromLearner, "input ends"},
		{"a PROPOSAL without data", QuorumPacket{Type: PacketProposal}, FromLeader, "input ends"},
		{"FOLLOWERINFO of an old learner", QuorumPacket{Type: PacketFollowerInfo, Data: make([]byte, 8)}, FromLearner,
			"input ends"},
	} {
		r, err := DecodePacketData(&c.qp, c.from)
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
		}
		assert.Nil(t, r, c.name)
	}
	_, err := DecodePacketData(&QuorumPacket{Type: PacketAck}, FromLeader)
	assert.True(t, errors.Is(err, ErrPacketDirection))
}

func TestForwardedRequestDecodeBody(t *testing.T) {
	body, err := (&ForwardedRequest{Type: OpCreateSession, Body: []byte{0, 0, 0x75, 0x30}}).DecodeBody()
	require.NoError(t, err)
	assert.Equal(t, &CreateSessionTxn{TimeOut: 30000}, body)
	body, err = (&ForwardedRequest{Type: OpCloseSession}).DecodeBody()
	require.NoError(t, err)
	assert.Equal(t, &Empty{}, body)
	body, err = (&ForwardedRequest{Type: OpSync, Body: Marshal(&PathRequest{Path: "/a"})}).DecodeBody()
	require.NoError(t, err)
	assert.Equal(t, &PathRequest{Path: "/a"}, body)
	_, err = (&ForwardedRequest{Type: OpCreateSession, Body: []byte{0, 0}}).DecodeBody()
	assert.ErrorContains(t, err, "forwarded createSession")
	_, err = (&ForwardedRequest{Type: OpCode(999)}).DecodeBody()
	assert.Error(t, err)
}

func TestSnapshotEnd(t *testing.T) {
	assert.Equal(t, append([]byte{0, 0, 0, 10}, "BenWasHere"...), Marshal(&SnapshotEnd{}))
	assert.ErrorContains(t, Unmarshal(Marshal(&InitialMessage{Address: "BenWasThere"})[16:], &SnapshotEnd{}),
		`"BenWasThere", want "BenWasHere"`)
}

// FuzzPacketData: whatever a packet's type, sender and data,
// DecodePacketData returns an error or a payload that is stable as
// checkStable says (a string with a character beyond the BMP changes once,
// as Java's jute changes it: testdata seed 7daefaa891520715, a txn path).
func FuzzPacketData(f *testing.F) {
	f.Add(int32(PacketPing), true, Marshal(&PingTouches{Touches: []SessionTouch{{SessionID: 1, Timeout: 30000}}}))
	f.Add(int32(PacketRevalidate), false, Marshal(&RevalidateReply{SessionID: 1, Valid: true}))
	f.Fuzz(func(t *testing.T, typ int32, fromLearner bool, data []byte) {
		from := FromLeader
		if fromLearner {
			from = FromLearner
		}
		checkStable(t, data, func(b []byte) (Record, error) {
			r, err := DecodePacketData(&QuorumPacket{Type: PacketType(typ), Data: b}, from)
			if err == nil && r == nil {
				err = errNoPayload
			}
			return r, err
		})
	})
}

// errNoPayload: a packet type that carries no payload decodes to nothing,
// which has nothing to re-encode.
var errNoPayload = errors.New("no payload")

func TestPingReply(t *testing.T) {
	ping := QuorumPacket{Type: PacketPing, Zxid: 0x100000007, AuthInfo: []Id{{Scheme: "ip", ID: "127.0.0.1"}}}
	reply := PingReply(&ping, nil)
	assert.Equal(t, QuorumPacket{Type: PacketPing, Zxid: 0x100000007, Data: []byte{}, AuthInfo: ping.AuthInfo}, reply)
	// Encoded, the empty data is a zero length, not jute's null (-1).
	assert.Equal(t, []byte{0, 0, 0, 0}, Marshal(&reply)[12:16])
	reply = PingReply(&ping, []SessionTouch{{SessionID: 1, Timeout: 2}})
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2}, reply.Data)
}
