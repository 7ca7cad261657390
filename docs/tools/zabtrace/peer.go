package main

import (
	"bytes"
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
	sender   wire.PacketSender
}

var peerStreams = []stream{
	{file: "election-to1-1.out.bin", from: "server 2", to: "server 1", election: true, initial: true},
	{file: "election-to1-1.in.bin", from: "server 1", to: "server 2", election: true},
	{file: "quorum-to2-1.out.bin", from: "follower 1", to: "leader 2", sender: wire.FromLearner},
	{file: "quorum-to2-1.in.bin", from: "leader 2", to: "follower 1", sender: wire.FromLeader},
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
			err = renderQuorumStream(w, s, raw)
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
func renderQuorumStream(w io.Writer, s stream, raw []byte) error {
	d := wire.NewDecoder(raw)
	for d.Remaining() > 0 {
		off := d.Offset()
		var qp wire.QuorumPacket
		qp.Decode(d)
		if err := d.Err(); err != nil {
			return fmt.Errorf("quorum packet at offset %d: %w", off, err)
		}
		what, err := describePacket(&qp, s.sender)
		if err != nil {
			return fmt.Errorf("%s at offset %d: %w", qp.Type, off, err)
		}
		line := fmt.Sprintf("%5d  %-12s zxid=%-21s %s", off, qp.Type, zxid(qp.Zxid), what)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	return nil
}

// describePacket describes a packet from its payload, which package wire
// decodes as its type and sender define it.
func describePacket(qp *wire.QuorumPacket, from wire.PacketSender) (string, error) {
	data, err := wire.DecodePacketData(qp, from)
	if err != nil {
		return "", err
	}
	switch d := data.(type) {
	case *wire.LearnerInfo:
		return fmt.Sprintf("acceptedEpoch=%d sid=%d protocol=%#x configVersion=%d",
			qp.Zxid>>32, d.ServerID, d.ProtocolVersion, d.ConfigVersion), nil
	case *wire.LeaderInfo:
		return fmt.Sprintf("proposed new epoch=%d protocol=%#x", qp.Zxid>>32, d.ProtocolVersion), nil
	case *wire.AckEpoch:
		return fmt.Sprintf("follower's lastLoggedZxid=%s currentEpoch=%d", zxid(qp.Zxid), d.CurrentEpoch), nil
	case *wire.NewLeaderConfig:
		// NEWLEADER proposes the leader's history as epoch e's initial
		// history; the epoch is established only once a quorum ACKs it.
		return fmt.Sprintf("epoch %d's initial history proposed (established once a quorum ACKs it); config: %s",
			qp.Zxid>>32, strings.ReplaceAll(string(d.Config), "\n", " | ")), nil
	case *wire.TxnEntry:
		return describeTxn(d), nil
	case *wire.ForwardedRequest:
		return describeRequest(d)
	case *wire.PingTouches:
		return describePing(d), nil
	case *wire.RevalidateRequest:
		return fmt.Sprintf("is session %s (timeout %dms) live?", sessionID(d.SessionID), d.Timeout), nil
	case *wire.RevalidateReply:
		return fmt.Sprintf("session %s valid=%t", sessionID(d.SessionID), d.Valid), nil
	case *wire.CommitAndActivate:
		return fmt.Sprintf("activate the config; leader %d", d.DesignatedLeader), nil
	case *wire.InformAndActivate:
		return fmt.Sprintf("activate the config; leader %d; %s", d.DesignatedLeader, describeTxn(&d.Txn)), nil
	}
	switch qp.Type {
	case wire.PacketDiff:
		return "sync by DIFF: the txns after the follower's last zxid follow as PROPOSAL+COMMIT (here none)", nil
	case wire.PacketTrunc:
		return "sync by TRUNC: drop every logged txn after this zxid", nil
	case wire.PacketSnap:
		return "sync by SNAP: a whole snapshot follows", nil
	case wire.PacketUpToDate:
		return "synchronized: start serving clients", nil
	}
	return "", nil
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

// describeRequest describes a client request a follower forwarded. A
// server makes the createSession request itself when a client connects;
// its body is just the negotiated timeout.
func describeRequest(r *wire.ForwardedRequest) (string, error) {
	s := fmt.Sprintf("forwarded %s session=%s cxid=%d", r.Type, sessionID(r.SessionID), r.Cxid)
	body, err := r.DecodeBody()
	if err != nil {
		return "", err
	}
	switch b := body.(type) {
	case *wire.CreateSessionTxn:
		s += fmt.Sprintf(" timeout=%dms", b.TimeOut)
	case *wire.CreateRequest:
		s += fmt.Sprintf(" path=%s data=%q", b.Path, b.Data)
	}
	return s, nil
}

// describePing describes a ping's touches: none from the leader; from a
// follower, the sessions it serves (id, timeout) so that the leader, which
// alone expires sessions, keeps them alive.
func describePing(p *wire.PingTouches) string {
	if len(p.Touches) == 0 {
		return ""
	}
	parts := make([]string, len(p.Touches))
	for i, t := range p.Touches {
		parts[i] = fmt.Sprintf("%s/%dms", sessionID(t.SessionID), t.Timeout)
	}
	return "sessions touched: " + strings.Join(parts, " ")
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
