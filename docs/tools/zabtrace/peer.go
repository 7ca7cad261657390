package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/zabd/zabd/wire"
)

// stream is one direction of one recorded connection. capture.sh runs the
// two servers' election and quorum connections through recording proxies;
// "out" is what the dialling server sent, "in" what it received. Server 2
// dialled server 1's election port (of two election connections ZooKeeper
// keeps the one the higher id opened) and server 1, the follower, dialled
// leader 2's quorum port.
type stream struct {
	file     string
	from, to string
	election bool // an election connection (else a quorum one)
	initial  bool // starts with the dialler's InitialMessage
}

var peerStreams = []stream{
	{file: "election-to1-1.out.bin", from: "server 2", to: "server 1", election: true, initial: true},
	{file: "election-to1-1.in.bin", from: "server 1", to: "server 2", election: true},
	{file: "quorum-to2-1.out.bin", from: "follower 1", to: "leader 2"},
	{file: "quorum-to2-1.in.bin", from: "leader 2", to: "follower 1"},
}

// renderPeerCaptures decodes every recorded stream in full, in order, and
// fails on any byte it cannot account for.
func renderPeerCaptures(w io.Writer, dir string) error {
	for i, s := range peerStreams {
		raw, err := os.ReadFile(filepath.Join(dir, s.file))
		if err != nil {
			return fmt.Errorf("peer captures: %w", err)
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "== %s: %s -> %s, %d bytes\n", s.file, s.from, s.to, len(raw))
		if s.election {
			err = renderElectionStream(w, s, raw)
		} else {
			err = renderQuorumStream(w, raw)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.file, err)
		}
	}
	return nil
}

// renderElectionStream prints an election connection: the dialler's
// InitialMessage (raw, no length prefix), then length-prefixed
// notifications.
func renderElectionStream(w io.Writer, s stream, raw []byte) error {
	off := 0
	if s.initial {
		d := wire.NewDecoder(raw)
		var m wire.InitialMessage
		m.Decode(d)
		if err := d.Err(); err != nil {
			return fmt.Errorf("initial message: %w", err)
		}
		fmt.Fprintf(w, "%5d  HELLO  protocol=%d sid=%d electionAddr=%s\n", off, m.ProtocolVersion, m.ServerID, m.Address)
		off = d.Offset()
	}
	fr := wire.NewFrameReader(bytes.NewReader(raw[off:]), wire.ElectionMaxMessage)
	for off < len(raw) {
		msg, err := fr.ReadFrame()
		if err != nil {
			return fmt.Errorf("notification at offset %d: %w", off, err)
		}
		var n wire.Notification
		if err := wire.Unmarshal(msg, &n); err != nil {
			return fmt.Errorf("notification at offset %d: %w", off, err)
		}
		fmt.Fprintf(w, "%5d  VOTE   %s round=%d vote=(peerEpoch=%d, zxid=%s, sid=%d)\n",
			off, n.State, n.ElectionEpoch, n.PeerEpoch, zxid(n.Zxid), n.Leader)
		fmt.Fprintf(w, "              config: %s\n", strings.ReplaceAll(string(n.Config), "\n", " | "))
		off += 4 + len(msg)
	}
	return nil
}

// renderQuorumStream prints a quorum connection: QuorumPackets back to back.
func renderQuorumStream(w io.Writer, raw []byte) error {
	d := wire.NewDecoder(raw)
	for d.Remaining() > 0 {
		off := d.Offset()
		var qp wire.QuorumPacket
		qp.Decode(d)
		if err := d.Err(); err != nil {
			return fmt.Errorf("quorum packet at offset %d: %w", off, err)
		}
		what, err := describePacket(&qp)
		if err != nil {
			return fmt.Errorf("%s at offset %d: %w", qp.Type, off, err)
		}
		line := fmt.Sprintf("%5d  %-12s zxid=%-21s %s", off, qp.Type, zxid(qp.Zxid), what)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	return nil
}

// describePacket decodes a packet's data as its type defines it
// (ZooKeeper's Learner, LearnerHandler and Leader).
func describePacket(qp *wire.QuorumPacket) (string, error) {
	switch qp.Type {
	case wire.PacketFollowerInfo, wire.PacketObserverInfo:
		var li wire.LearnerInfo
		if err := wire.Unmarshal(qp.Data, &li); err != nil {
			return "", err
		}
		return fmt.Sprintf("acceptedEpoch=%d sid=%d protocol=%#x configVersion=%d",
			qp.Zxid>>32, li.ServerID, li.ProtocolVersion, li.ConfigVersion), nil
	case wire.PacketLeaderInfo:
		v, err := int32Data(qp.Data)
		return fmt.Sprintf("proposed new epoch=%d protocol=%#x", qp.Zxid>>32, v), err
	case wire.PacketAckEpoch:
		v, err := int32Data(qp.Data)
		return fmt.Sprintf("follower's lastLoggedZxid=%s currentEpoch=%d", zxid(qp.Zxid), v), err
	case wire.PacketDiff:
		return "sync by DIFF: the txns after the follower's last zxid follow as PROPOSAL+COMMIT (here none)", nil
	case wire.PacketTrunc:
		return "sync by TRUNC: drop every logged txn after this zxid", nil
	case wire.PacketSnap:
		return "sync by SNAP: a whole snapshot follows", nil
	case wire.PacketNewLeader:
		return fmt.Sprintf("epoch %d established; config: %s", qp.Zxid>>32, strings.ReplaceAll(string(qp.Data), "\n", " | ")), nil
	case wire.PacketUpToDate:
		return "synchronized: start serving clients", nil
	case wire.PacketProposal:
		t, err := wire.DecodeTxnEntry(qp.Data)
		if err != nil {
			return "", err
		}
		return describeTxn(&t), nil
	case wire.PacketRequest:
		return describeRequest(qp)
	case wire.PacketPing:
		return describePing(qp.Data)
	case wire.PacketAck, wire.PacketCommit:
		return "", nil
	}
	return fmt.Sprintf("%d bytes of data", len(qp.Data)), nil
}

func describeTxn(t *wire.TxnEntry) string {
	s := fmt.Sprintf("txn %s session=%s cxid=%d", t.Header.Type, sessionID(t.Header.ClientID), t.Header.Cxid)
	switch b := t.Body.(type) {
	case *wire.CreateSessionTxn:
		s += fmt.Sprintf(" timeout=%dms", b.TimeOut)
	case *wire.CreateTxn:
		s += fmt.Sprintf(" path=%s data=%q", b.Path, b.Data)
	case *wire.SetDataTxn:
		s += fmt.Sprintf(" path=%s data=%q", b.Path, b.Data)
	case *wire.DeleteTxn:
		s += fmt.Sprintf(" path=%s", b.Path)
	case *wire.CloseSessionTxn:
		s += fmt.Sprintf(" ephemerals=%v", b.Paths2Delete)
	}
	if t.Digest != nil {
		s += fmt.Sprintf(" digest=%#x", t.Digest.TreeDigest)
	}
	return s
}

// describeRequest decodes a forwarded client request: session id, cxid,
// opcode, then the request body.
func describeRequest(qp *wire.QuorumPacket) (string, error) {
	if len(qp.Data) < 16 {
		return "", fmt.Errorf("%d bytes of data, a forwarded request needs at least 16", len(qp.Data))
	}
	session := int64(binary.BigEndian.Uint64(qp.Data))
	cxid := int32(binary.BigEndian.Uint32(qp.Data[8:]))
	op := wire.OpCode(int32(binary.BigEndian.Uint32(qp.Data[12:])))
	s := fmt.Sprintf("forwarded %s session=%s cxid=%d", op, sessionID(session), cxid)
	if op == wire.OpCreateSession {
		// A server makes this request itself when a client connects; its
		// body is just the negotiated timeout.
		timeout, err := int32Data(qp.Data[16:])
		return s + fmt.Sprintf(" timeout=%dms", timeout), err
	}
	body, err := wire.DecodeRequest(op, qp.Data[16:])
	if err != nil {
		return "", err
	}
	switch b := body.(type) {
	case *wire.CreateRequest:
		s += fmt.Sprintf(" path=%s data=%q", b.Path, b.Data)
	}
	return s, nil
}

// describePing decodes a ping's data: none from the leader; from a
// follower, the sessions it serves (id, timeout) so that the leader, which
// alone expires sessions, keeps them alive.
func describePing(data []byte) (string, error) {
	if len(data) == 0 {
		return "", nil
	}
	if len(data)%12 != 0 {
		return "", fmt.Errorf("%d bytes of session data, not a multiple of 12", len(data))
	}
	var parts []string
	for b := data; len(b) > 0; b = b[12:] {
		parts = append(parts, fmt.Sprintf("%s/%dms", sessionID(int64(binary.BigEndian.Uint64(b))), int32(binary.BigEndian.Uint32(b[8:]))))
	}
	return "sessions touched: " + strings.Join(parts, " "), nil
}

func int32Data(b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("%d bytes of data, want 4", len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

// zxid prints a zxid in hex, as ZooKeeper's logs do, with its two halves
// (epoch.counter) after it, the way to read it.
func zxid(z int64) string {
	if z == -1 {
		return "-1"
	}
	return fmt.Sprintf("%#x(%d.%d)", z, z>>32, z&0xffffffff)
}

// sessionID prints a session id with all 16 hex digits, so that its top
// byte, the id of the server that created it, is plain to see.
func sessionID(id int64) string { return fmt.Sprintf("0x%016x", uint64(id)) }
