package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/runlog"
)

// runRecorder writes this member's share of a run record (zab/runlog, JSON
// Lines; zoo.cfg runRecordFile) as it serves: its roles, the quorum
// packets and votes it sends and receives, the points its log becomes
// durable, its clients' operations, in wall-clock microseconds. zabctl view
// merges the members' files, aligning their clocks from the packets, into
// runview's page. Only the event loop writes to it; a nil recorder records
// nothing, which is all that recording off costs.
type runRecorder struct {
	f      *os.File
	w      *bufio.Writer
	enc    *json.Encoder
	member int64
	failed bool
}

// openRunRecorder appends to path: a restarted member goes on in the same
// file, after a line break if a kill cut its last line short (the reader
// skips such a line: runlog.ReadMember).
func openRunRecorder(path string, member int64) (*runRecorder, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("runRecordFile: %w", err)
	}
	r := &runRecorder{f: f, w: bufio.NewWriterSize(f, 64<<10), member: member}
	r.enc = json.NewEncoder(r.w)
	st, err := f.Stat()
	if err == nil && st.Size() == 0 {
		err = r.enc.Encode(&runlog.Run{Title: fmt.Sprintf("zabd member %d", member), Members: []int64{member}})
	} else if err == nil {
		last := make([]byte, 1)
		if _, err = f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			err = r.w.WriteByte('\n')
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("runRecordFile %s: %w", path, err)
	}
	return r, nil
}

// add records e as happening now at this member.
func (r *runRecorder) add(e runlog.Event) {
	if r == nil || r.failed || r.f == nil {
		return
	}
	e.At, e.Member = time.Now().UnixMicro(), r.member
	if r.enc.Encode(&e) != nil {
		r.failed = true // the write error shows at flush
	}
}

func (r *runRecorder) sentPeer(msgs []zab.PeerMessage) {
	if r == nil {
		return
	}
	for i := range msgs {
		if m := &msgs[i]; m.Kind == zab.PeerSend {
			r.add(runlog.Event{Kind: runlog.KindSend, Peer: m.To, Name: m.Packet.Type.String(), Zxid: m.Packet.Zxid})
		}
	}
}

func (r *runRecorder) sentVotes(votes []zab.Vote) {
	if r == nil {
		return
	}
	for i := range votes {
		n := &votes[i].Notification
		r.add(runlog.Event{Kind: runlog.KindSend, Peer: votes[i].To, Name: "vote", Zxid: n.Zxid, Text: runlog.DescribeVote(n)})
	}
}

func (r *runRecorder) received(ev zab.Event) {
	if r == nil {
		return
	}
	switch e := ev.(type) {
	case zab.PeerPacket:
		r.add(runlog.Event{Kind: runlog.KindReceive, Peer: e.From, Name: e.Packet.Type.String(), Zxid: e.Packet.Zxid})
	case zab.PeerVote:
		r.add(runlog.Event{Kind: runlog.KindReceive, Peer: e.From, Name: "vote", Zxid: e.Notification.Zxid, Text: runlog.DescribeVote(&e.Notification)})
	}
}

func (r *runRecorder) role(st zab.SoftState) {
	r.add(runlog.Event{Kind: runlog.KindRole, Name: st.Role.String(), Text: st.Phase.String(), Epoch: st.Epoch, Peer: st.Leader})
}

// reply records an operation of session, called at called, as its reply
// leaves.
func (r *runRecorder) reply(session int64, op wire.OpCode, called time.Time, h *wire.ReplyHeader) {
	if r == nil {
		return
	}
	r.add(runlog.Event{Kind: runlog.KindOp, Session: session, Sent: called.UnixMicro(), Name: op.String(), Outcome: runlog.Outcome(h.Err, false), Zxid: h.Zxid})
}

// flush writes what was recorded; after a write error it reports the error
// once and records nothing more.
func (r *runRecorder) flush() error {
	if r == nil || r.f == nil {
		return nil
	}
	err := r.w.Flush()
	if err == nil && !r.failed {
		return nil
	}
	if err == nil {
		err = errors.New("an event could not be encoded")
	}
	r.f.Close()
	r.f, r.failed = nil, true
	return fmt.Errorf("runRecordFile: recording stopped: %w", err)
}

func (r *runRecorder) close() error {
	if r == nil || r.f == nil {
		return nil
	}
	err := errors.Join(r.w.Flush(), r.f.Close())
	r.f, r.failed = nil, true
	return err
}
