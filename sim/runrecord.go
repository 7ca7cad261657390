package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/sim/simclient"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/runlog"
)

// The run record (Options.Record): what runview draws. Each hook is one
// nil check when recording is off; nothing here decides anything.

func newRunRecord(sched *faults.Schedule) *runlog.Run {
	r := &runlog.Run{Title: fmt.Sprintf("seed %d", sched.Seed)}
	for i := range sched.Servers {
		r.Members = append(r.Members, int64(i+1))
	}
	for i := 1; i <= sched.Clients; i++ {
		r.Clients = append(r.Clients, i)
	}
	return r
}

func (w *world) now() int64 { return runlog.Micros(w.clock.Mono()) }

func (w *world) recordRole(sid int64, st zab.SoftState) {
	if w.rec.On() {
		w.rec.Add(runlog.Event{At: w.now(), Kind: runlog.KindRole, Member: sid, Name: st.Role.String(), Text: st.Phase.String(), Epoch: st.Epoch, Peer: st.Leader})
	}
}

func (w *world) recordUpDown(sid int64, k runlog.Kind, why string) {
	w.rec.Add(runlog.Event{At: w.now(), Kind: k, Member: sid, Text: why})
}

func (w *world) recordMessage(from, to int, sent time.Duration, pkt *wire.QuorumPacket) {
	if w.rec.On() {
		w.rec.Add(runlog.Event{At: w.now(), Kind: runlog.KindMessage, Member: int64(from + 1), Peer: int64(to + 1),
			Sent: runlog.Micros(sent), Name: pkt.Type.String(), Zxid: pkt.Zxid})
	}
}

func (w *world) recordVote(from, to int, sent time.Duration, n *wire.Notification) {
	if w.rec.On() {
		w.rec.Add(runlog.Event{At: w.now(), Kind: runlog.KindVote, Member: int64(from + 1), Peer: int64(to + 1),
			Sent: runlog.Micros(sent), Text: runlog.DescribeVote(n), Zxid: n.Zxid, Epoch: n.PeerEpoch})
	}
}

func (w *world) recordFsync(sid int64, began time.Duration) {
	w.rec.Add(runlog.Event{At: w.now(), Kind: runlog.KindFsync, Member: sid, Sent: runlog.Micros(began)})
}

func (w *world) recordDurable(sid, zxid int64) {
	w.rec.Add(runlog.Event{At: w.now(), Kind: runlog.KindDurable, Member: sid, Zxid: zxid})
}

// recordFault records an injected fault, on the lane of the server it
// strikes (member), or on the network's (0: clients' and links' faults).
func (w *world) recordFault(f faults.Fault, member int64) {
	if w.rec.On() {
		w.rec.Add(runlog.Event{At: w.now(), Kind: runlog.KindFault, Member: member, Name: string(f.Kind), Text: f.String()})
	}
}

func (w *world) recordPartition(k runlog.Kind, id int, what string) {
	w.rec.Add(runlog.Event{At: w.now(), Kind: k, Name: fmt.Sprint(id), Text: what})
}

// recordEntry records a history entry: an operation (ID its index in the
// history) or a watch or session event.
func (w *world) recordEntry(id int, e *simclient.Entry) {
	if !w.rec.On() {
		return
	}
	if e.Kind == "event" {
		name, text := e.Type.String(), e.Path
		if e.Type == wire.EventNone {
			name, text = e.State.String(), wire.SessionString(e.Session)
		}
		w.rec.Add(runlog.Event{At: runlog.Micros(e.Return), Kind: runlog.KindNotice, Client: e.Client, ID: id, Name: name, Text: text})
		return
	}
	text := e.Op.Path
	if e.Op.Data != "" {
		text += fmt.Sprintf(" %q", e.Op.Data)
	}
	w.rec.Add(runlog.Event{At: runlog.Micros(e.Return), Sent: runlog.Micros(e.Call), Kind: runlog.KindOp, Client: e.Client,
		ID: id, Name: e.Op.Name, Text: text, Outcome: runlog.Outcome(e.Result.Err, e.Result.Unknown), Zxid: e.Result.Zxid, Member: e.Server})
}

func (w *world) recordFailure(f *Failure, ops []int, attachment string) {
	w.rec.Add(runlog.Event{At: runlog.Micros(f.At), Kind: runlog.KindFailure, Name: f.Kind, Text: f.Msg, Ops: ops, Attachment: attachment})
}

// historyIndexes maps a violation's entries (pointers into h) back to
// their indexes in the history, the culprit first.
func historyIndexes(h linearizability.History, entries []*linearizability.Entry) []int {
	at := make(map[*linearizability.Entry]int, len(entries))
	for _, e := range entries {
		at[e] = -1
	}
	for i := range h {
		if _, ok := at[&h[i]]; ok {
			at[&h[i]] = i
		}
	}
	var out []int
	for _, e := range entries {
		if i := at[e]; i >= 0 {
			out = append(out, i)
		}
	}
	return out
}

// recordViolation records a history checker's failure with the operations
// involved and, when the write or read replay found no legal order,
// Porcupine's view of that partition of the history.
func (w *world) recordViolation(h linearizability.History, f *Failure, v linearizability.Violation) {
	var page strings.Builder
	if v.Failure != nil {
		if err := linearizability.Visualize(v.Failure, &page); err != nil {
			page.Reset()
		}
	}
	ops := historyIndexes(h, v.Entries)
	marked := *f
	if len(ops) > 0 {
		// Found when the history was checked, at the end; it happened
		// where its culprit did.
		marked.At = entryTime(&h[ops[0]])
	}
	w.recordFailure(&marked, ops, page.String())
}

// entryTime is when a history entry ended: an operation's return, an
// event's arrival.
func entryTime(e *linearizability.Entry) time.Duration {
	if e.Return != nil {
		return time.Duration(*e.Return)
	}
	return time.Duration(e.At)
}
