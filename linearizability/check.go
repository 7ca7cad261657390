package linearizability

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Guarantees, as violations name them. Sync-then-read is its own guarantee:
// ZooKeeper promises it under one leader, not across leader changes
// (ZOOKEEPER-1675), which are reported apart, as not promised.
const (
	GuaranteeWrites           = "linearizable writes"
	GuaranteeSyncRead         = "sync then read"
	GuaranteeSyncLeaderChange = "sync across a leader change"
	GuaranteeReads            = "sequentially consistent reads"
	GuaranteeWatch            = "watch before data"
	GuaranteeSession          = "session expiry"
	GuaranteeDurability       = "durability"
)

// NotPromised reports whether ZooKeeper 3.8 does not promise guarantee g:
// its violations are reported, but do not fail a report (Report.OK).
func NotPromised(g string) bool { return g == GuaranteeSyncLeaderChange }

// Violation is one broken guarantee, explained in words.
type Violation struct {
	Guarantee   string
	Entries     []*Entry // the operations and events involved, the culprit first
	Explanation string
	// Failure is set when a write or read replay found no legal order; pass
	// it to WriteVisualization.
	Failure *Failure
}

func (v Violation) String() string { return v.Guarantee + ": " + v.Explanation }

// Options tune the checkers; the zero value is fine.
type Options struct {
	// Timeout bounds the Porcupine search of one checker over the whole
	// history (default DefaultTimeout). Running out counts as a violation.
	Timeout time.Duration
	// TouchLag is how late a request can reach the member that expires
	// sessions. In an ensemble the leader alone expires sessions, and a
	// learner reports the sessions its clients touched only in its next
	// PING reply (or not at all, once cut off from the leader, until its
	// syncLimit runs out): a session may expire although its client was
	// answered by a learner that recently. Zero (one server) counts every
	// answered request.
	TouchLag time.Duration
	// Reaping says that the server deletes containers and TTL nodes by
	// itself (ZooKeeper's ContainerManager, zabd's reaper): no history line
	// shows those deletions. A container without children that has had one
	// may then vanish at any point, and so may a TTL node without children
	// (its TTL bounds nothing: the reaper compares wall-clock times, which
	// may jump). Off (the simulator's reaper waits 24 h), a node vanishing
	// unasked is a violation.
	Reaping bool
	// Witness, when set, is the order the servers committed txns in (see
	// witness.go): the writes and reads checkers try it first and search
	// only when it does not explain the history. It decides histories the
	// search cannot; it never makes a failing history pass.
	Witness Witness
}

// DefaultTimeout is the Porcupine deadline when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

func (o Options) deadline() time.Time {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return time.Now().Add(o.Timeout)
}

// CheckWrites checks that every write (create, delete, setData, setACL,
// multi, close) is linearizable: replayed in zxid order on a model of the
// znode tree, each acknowledged write returns what the model says; writes of
// unknown outcome may take effect anywhere after every write acknowledged
// before their call and before their session's next reply, or never.
func CheckWrites(h History, opt Options) []Violation {
	vs, _ := checkWrites(h, opt)
	return vs
}

// checkWrites is CheckWrites, also saying why opt.Witness did not explain
// the writes ("" when it did, or when there is none).
func checkWrites(h History, opt Options) ([]Violation, string) {
	out := duplicateZxids(h)
	tl := buildTimeline(h, false, opt.Reaping)
	return checkTimelineWitnessed(tl, out, GuaranteeWrites, opt, func(*tlOp) bool { return true })
}

// checkTimelineWitnessed checks tl with opt.Witness's order, or searches
// when there is none or it does not explain tl; out are violations found
// before, kept in front.
func checkTimelineWitnessed(tl *timeline, out []Violation, guarantee string, opt Options, keep func(*tlOp) bool) ([]Violation, string) {
	unexplained := ""
	if opt.Witness != nil {
		if unexplained = tl.replayWitnessed(opt.Witness); unexplained == "" {
			return out, "" // the witness's order is a legal one
		}
	}
	return append(out, checkTimeline(tl, guarantee, opt.deadline(), keep)...), unexplained
}

// CheckReads checks sequential consistency of plain reads: a session's
// replies carry non-decreasing zxids, and each read returns exactly the state
// of its path after every write up to its reply's zxid. A history whose
// writes are not linearizable is reported by CheckWrites, not here.
func CheckReads(h History, opt Options) []Violation {
	vs, _ := checkReads(h, opt)
	return vs
}

// checkReads is CheckReads, also saying why opt.Witness did not explain
// the history ("" when it did, or when there is none).
func checkReads(h History, opt Options) ([]Violation, string) {
	out := sessionOrder(h)
	tl := buildTimeline(h, true, opt.Reaping)
	return checkTimelineWitnessed(tl, out, GuaranteeReads, opt, func(op *tlOp) bool { return op.kind == tlRead })
}

// sessionOrder reports replies whose zxid goes backwards within a session.
func sessionOrder(h History) []Violation {
	var out []Violation
	last := map[int64]*Entry{}
	for _, e := range bySeq(h) {
		if e.Kind != KindOp || !e.Returned() || e.Zxid == nil || *e.Zxid <= 0 || e.OutcomeUnknown() ||
			e.Err == ErrSessionExpired || e.Err == ErrConnectionLoss {
			continue
		}
		s := e.Session.int()
		if prev := last[s]; prev != nil && *e.Zxid < *prev.Zxid {
			out = append(out, Violation{
				Guarantee: GuaranteeReads, Entries: []*Entry{e, prev},
				Explanation: fmt.Sprintf("%s came after %s in session %v, yet its zxid is lower: a session never sees an older view than one it has seen", e.describe(), prev.describe(), e.Session),
			})
		}
		if prev := last[s]; prev == nil || *e.Zxid >= *prev.Zxid {
			last[s] = e
		}
	}
	return out
}

// bySeq returns the entries of h ordered by client, then seq.
func bySeq(h History) []*Entry {
	out := make([]*Entry, len(h))
	for i := range h {
		out[i] = &h[i]
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Client != out[b].Client {
			return out[a].Client < out[b].Client
		}
		return out[a].Seq < out[b].Seq
	})
	return out
}

// Report is the outcome of CheckAll: the violations per guarantee.
type Report struct {
	Entries    int
	Violations map[string][]Violation
	// Unexplained says why Options.Witness's order did not explain the
	// history (nil when it did, or when there was none). It is no
	// violation of a guarantee (the checkers then searched), but a correct
	// server's committed order always explains its clients' history.
	Unexplained error
}

// OK reports whether no promised guarantee was violated.
func (r Report) OK() bool {
	for g, vs := range r.Violations {
		if len(vs) > 0 && !NotPromised(g) {
			return false
		}
	}
	return true
}

// Guarantees lists the guarantees in the order CheckAll runs them.
var Guarantees = []string{GuaranteeWrites, GuaranteeReads, GuaranteeSyncRead, GuaranteeSyncLeaderChange, GuaranteeWatch, GuaranteeSession, GuaranteeDurability}

// CheckAll runs every checker. Like each checker, it expects a history that
// ReadHistory accepts (History.Validate says so for one built in memory).
func CheckAll(h History, opt Options) Report {
	r := Report{Entries: len(h), Violations: map[string][]Violation{}}
	var writesWhy, readsWhy string
	r.Violations[GuaranteeWrites], writesWhy = checkWrites(h, opt)
	r.Violations[GuaranteeReads], readsWhy = checkReads(h, opt)
	if why := cmp.Or(writesWhy, readsWhy); why != "" {
		r.Unexplained = unexplainedBecause(why)
	}
	for _, v := range CheckSyncRead(h, opt) {
		r.Violations[v.Guarantee] = append(r.Violations[v.Guarantee], v)
	}
	r.Violations[GuaranteeWatch] = CheckWatches(h, opt)
	r.Violations[GuaranteeSession] = CheckSessions(h, opt)
	r.Violations[GuaranteeDurability] = CheckDurability(h, opt)
	return r
}

// Print writes the report in words, one paragraph per violation.
func (r Report) Print(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d entries\n", r.Entries)
	for _, g := range Guarantees {
		vs := r.Violations[g]
		switch {
		case len(vs) == 0:
			fmt.Fprintf(&b, "ok    %s\n", g)
			continue
		case NotPromised(g):
			fmt.Fprintf(&b, "note  %s (not promised by ZooKeeper): %d\n", g, len(vs))
		default:
			fmt.Fprintf(&b, "FAIL  %s: %d violation(s)\n", g, len(vs))
		}
		for _, v := range vs {
			fmt.Fprintf(&b, "  - %s\n", v.Explanation)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteVisualization writes Porcupine's HTML view of a failed replay.
func WriteVisualization(f *Failure, path string) error {
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write visualisation: %w", err)
	}
	if err := errors.Join(Visualize(f, file), file.Close()); err != nil {
		return fmt.Errorf("write visualisation %s: %w", path, err)
	}
	return nil
}

// CheckFile reads the history at path, runs every checker with opt and
// prints the report to out. For each failure of the write or read replay it writes
// Porcupine's visualisation to path + ".<n>.html" and names it in the
// report. ok is false when a guarantee is violated; err is for unreadable
// files and failed writes.
func CheckFile(path string, opt Options, out io.Writer) (ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("check: %w", err)
	}
	defer f.Close()
	h, err := ReadHistory(f, path)
	if err != nil {
		return false, err
	}
	r := CheckAll(h, opt)
	if err := r.Print(out); err != nil {
		return false, fmt.Errorf("check: print report: %w", err)
	}
	if opt.Witness != nil {
		what := "explains the history"
		if r.Unexplained != nil {
			what = r.Unexplained.Error()
		}
		if _, err := fmt.Fprintf(out, "witness: %s\n", what); err != nil {
			return false, fmt.Errorf("check: print report: %w", err)
		}
	}
	n := 0
	for _, g := range Guarantees {
		for _, v := range r.Violations[g] {
			if v.Failure == nil {
				continue
			}
			n++
			viz := fmt.Sprintf("%s.%d.html", path, n)
			if err := WriteVisualization(v.Failure, viz); err != nil {
				return false, err
			}
			if _, err := fmt.Fprintf(out, "visualisation of %s failure: %s\n", g, viz); err != nil {
				return false, fmt.Errorf("check: print report: %w", err)
			}
		}
	}
	return r.OK(), nil
}

// Visualize writes Porcupine's view of f (one HTML page) to w.
func Visualize(f *Failure, w io.Writer) error {
	if err := porcupine.Visualize(f.model, f.info, w); err != nil {
		return fmt.Errorf("visualise the failure: %w", err)
	}
	return nil
}
