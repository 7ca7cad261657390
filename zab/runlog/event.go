package runlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/zabd/zabd/wire"
)

// Kind says what an event is.
type Kind string

// The kinds of events.
const (
	// KindRole: Member took role Name (leading, following, observing,
	// looking) in phase Text, epoch Epoch, with leader Peer.
	KindRole Kind = "role"
	// KindStart and KindCrash: Member's process started or died (Text why).
	KindStart Kind = "start"
	KindCrash Kind = "crash"
	// KindMessage: a quorum packet of type Name from Member to Peer, sent
	// at Sent and delivered at At; Zxid is the packet's.
	KindMessage Kind = "msg"
	// KindVote: an election notification from Member to Peer (Text: the
	// vote), sent at Sent, delivered at At.
	KindVote Kind = "vote"
	// KindDurable: Member's log is durable up to Zxid.
	KindDurable Kind = "durable"
	// KindFsync: Member's disk job (appends and their fsync) ran from Sent
	// to At.
	KindFsync Kind = "fsync"
	// KindFault: a fault was injected (Text describes it; Member, if one
	// server is its target).
	KindFault Kind = "fault"
	// KindPartition and KindHeal: partition Name came into force (Text:
	// who is cut from whom) or healed.
	KindPartition Kind = "partition"
	KindHeal      Kind = "heal"
	// KindOp: client Client's operation Name (Text: its arguments) called
	// at Sent and answered at At with Outcome; Zxid is the reply's, ID its
	// index in the run's history.
	KindOp Kind = "op"
	// KindNotice: client Client received a watch event (Name its type,
	// Text the path) or a session state change (Name the state, Text the
	// session); ID is its index in the run's history, as an operation's.
	KindNotice Kind = "notice"
	// KindSend and KindReceive are the two halves of a message in a real
	// member's record, each on its own member's clock: Member sent packet
	// Name (or "vote") with Zxid to Peer, or received it from Peer. Merge
	// pairs them into KindMessage and KindVote.
	KindSend    Kind = "send"
	KindReceive Kind = "recv"
	// KindFailure: an invariant or a history checker failed (Name: which,
	// Text: why); Ops are the IDs of the operations involved, the culprit
	// first; Attachment, if set, is a page of its own (Porcupine's view
	// of the partition of the history that could not be linearized).
	KindFailure Kind = "failure"
)

// Outcomes of an operation other than an error code's name.
const (
	OutcomeOK      = "ok"
	OutcomeUnknown = "unknown" // the connection was lost before the reply: it may or may not have happened
)

// Outcome names an operation's outcome: OutcomeUnknown for one whose
// reply was lost, OutcomeOK, or the error code's name.
func Outcome(err wire.ErrCode, unknown bool) string {
	switch {
	case unknown:
		return OutcomeUnknown
	case err == wire.ErrOK:
		return OutcomeOK
	}
	return err.String()
}

// Event is one thing that happened in a run. Which fields mean something
// depends on Kind (see the kinds); the rest stay zero.
type Event struct {
	At         int64  `json:"t"`
	Kind       Kind   `json:"k"`
	Member     int64  `json:"m,omitempty"`
	Peer       int64  `json:"p,omitempty"`
	Client     int    `json:"c,omitempty"`
	Session    int64  `json:"sess,omitempty"` // a real member's operation: its session (Merge gives each a client lane)
	Sent       int64  `json:"s,omitempty"`
	Zxid       int64  `json:"z,omitempty"`
	Epoch      int64  `json:"e,omitempty"`
	ID         int    `json:"i,omitempty"`
	Name       string `json:"n,omitempty"`
	Text       string `json:"x,omitempty"`
	Outcome    string `json:"o,omitempty"`
	Ops        []int  `json:"ops,omitempty"`
	Attachment string `json:"att,omitempty"`
}

// Run is a recorded run: its lanes and its events in the order they were
// recorded. Messages and operations are recorded when they end, so At
// never decreases, but for failures found at the end of a run (by the
// history checkers), which are recorded at the time of their culprit.
type Run struct {
	Title   string  `json:"title"`
	Members []int64 `json:"members"`
	Clients []int   `json:"clients"`
	Events  []Event `json:"-"`
}

// Micros converts a duration on the run's clock to the events' unit.
func Micros(d time.Duration) int64 { return int64(d / time.Microsecond) }

// Add records e. A nil Run records nothing, so that callers can leave
// recording off at the cost of a nil check.
func (r *Run) Add(e Event) {
	if r == nil {
		return
	}
	r.Events = append(r.Events, e)
}

// On reports whether r records: callers test it before building an event
// that costs something to describe.
func (r *Run) On() bool { return r != nil }

// Write writes r as JSON Lines: a header line (title, members, clients),
// then one line per event.
func (r *Run) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("runlog: write the header: %w", err)
	}
	for i := range r.Events {
		if err := enc.Encode(&r.Events[i]); err != nil {
			return fmt.Errorf("runlog: write event %d: %w", i, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("runlog: write: %w", err)
	}
	return nil
}

// ReadMember reads what a real member recorded (zab/server's
// runRecordFile): a run, except that a line a kill cut short is skipped,
// and counted in skipped, rather than refused.
func ReadMember(rd io.Reader, name string) (r *Run, skipped int, err error) {
	return read(rd, name, true)
}

// Read reads a run written by Write. name names the input in errors,
// which give the line.
func Read(rd io.Reader, name string) (*Run, error) {
	r, _, err := read(rd, name, false)
	return r, err
}

func read(rd io.Reader, name string, skipCut bool) (*Run, int, error) {
	skipped := 0
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	var r Run
	line, header := 0, false
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		if !header {
			if err := json.Unmarshal(b, &r); err != nil {
				return nil, 0, fmt.Errorf("runlog: %s line %d (the header): %w", name, line, err)
			}
			header = true
			continue
		}
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			if skipCut && !json.Valid(b) {
				skipped++
				continue
			}
			return nil, 0, fmt.Errorf("runlog: %s line %d: %w", name, line, err)
		}
		if e.Kind == "" {
			return nil, 0, fmt.Errorf("runlog: %s line %d: an event without a kind", name, line)
		}
		if len(e.Ops) == 0 {
			e.Ops = nil // "ops":[] and no ops are the same: none
		}
		r.Events = append(r.Events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("runlog: %s after line %d: %w", name, line, err)
	}
	if !header {
		return nil, 0, fmt.Errorf("runlog: %s is empty: no header", name)
	}
	return &r, skipped, nil
}

// DescribeVote is one line for an election notification; an observer's
// vote for nobody (ZooKeeper sends Long.MIN_VALUE) reads as such.
func DescribeVote(n *wire.Notification) string {
	if n.Leader == math.MinInt64 {
		return fmt.Sprintf("vote %s for nobody (an observer) round=%d", n.State, n.ElectionEpoch)
	}
	return fmt.Sprintf("vote %s leader=%d zxid=0x%x round=%d peerEpoch=%d", n.State, n.Leader, n.Zxid, n.ElectionEpoch, n.PeerEpoch)
}

// WriteFile creates path and writes it with write (one of a run's forms:
// Run.Write, ShiViz, runview.Write), closing it whatever happens; the
// error names the file.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := errors.Join(write(f), f.Close()); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
