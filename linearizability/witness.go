package linearizability

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
)

// A witness is the order the servers say they committed txns in: for each
// txn its zxid, the session and xid of the request it came from (or, for
// the server's own deletion of a container or TTL node, the node), and its
// type. The simulator knows it exactly; a ZooKeeper txn log holds it too.
//
// The writes and reads checkers use it to place every operation of unknown
// outcome, every expiry and every server-made deletion at one zxid (or
// nowhere) and replay the whole history once, linearly, on one tree. That
// replay enforces every rule the search enforces — each placement lies in
// the operation's window, a session's requests keep their order, an expiry
// known to have happened is placed, every reply matches the model — so
// when it explains every reply it proves that a legal order exists, which
// is all a passing check says. Whoever found the order does not matter: a
// wrong or partial witness fails the replay, and the check then searches
// as without one. A witness therefore never turns a failure into a pass;
// it decides, in linear time, histories whose search outgrows its bounds
// (tens of writes of unknown outcome on a few paths).

// WitnessTxn is one committed txn.
type WitnessTxn struct {
	Zxid Hex64 `json:"zxid"`
	// Session and Xid name the request the txn came from (its header's
	// clientId and cxid); a history operation with the same session and
	// xid (Entry.Xid) is that request.
	Session Hex64 `json:"session"`
	Xid     int32 `json:"xid,omitempty"`
	// Op is the txn type's name as ZooKeeper spells it (create, delete,
	// setData, multi, closeSession, deleteContainer, error, …). An error
	// txn is a request that failed: it changed nothing.
	Op string `json:"op"`
	// Path is the node of a deleteContainer txn, which the server makes
	// itself to reap an empty container or an expired TTL node.
	Path string `json:"path,omitempty"`
}

// Witness is a run's committed txns in zxid order.
type Witness []WitnessTxn

// Witness txn types the replay treats specially.
const (
	witnessError        = "error"
	witnessCloseSession = "closeSession"
	witnessReap         = "deleteContainer"
)

// WriteWitness writes w as JSON Lines, one txn per line.
func WriteWitness(out io.Writer, w Witness) error {
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	for i := range w {
		if err := enc.Encode(&w[i]); err != nil {
			return fmt.Errorf("witness: txn %d: %w", i+1, err)
		}
	}
	return bw.Flush()
}

// ReadWitness reads a witness that WriteWitness wrote; name is used in
// errors. Lines must be in increasing zxid order.
func ReadWitness(r io.Reader, name string) (Witness, error) {
	var w Witness
	err := readLines(r, func(line int, b []byte) error {
		var t WitnessTxn
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		if err := d.Decode(&t); err != nil {
			return fmt.Errorf("witness %s:%d: %w", name, line, err)
		}
		if t.Op == "" {
			return fmt.Errorf("witness %s:%d: field \"op\": missing", name, line)
		}
		if n := len(w); n > 0 && t.Zxid <= w[n-1].Zxid {
			return fmt.Errorf("witness %s:%d: field \"zxid\": %v does not follow %v", name, line, t.Zxid, w[n-1].Zxid)
		}
		w = append(w, t)
		return nil
	}, func(line int, err error) error { return fmt.Errorf("witness %s:%d: %w", name, line, err) })
	if err != nil {
		return nil, err
	}
	return w, nil
}

// witnessIndex looks up what a witness says about requests and sessions.
type witnessIndex struct {
	byRequest map[[2]int64]*WitnessTxn // (session, xid) → its txn
	closes    map[int64]*WitnessTxn    // session → its first closeSession
	reaps     []*WitnessTxn
}

func indexWitness(w Witness) *witnessIndex {
	ix := &witnessIndex{byRequest: map[[2]int64]*WitnessTxn{}, closes: map[int64]*WitnessTxn{}}
	for i := range w {
		t := &w[i]
		s := int64(t.Session)
		if t.Op == witnessCloseSession && ix.closes[s] == nil {
			ix.closes[s] = t
		}
		if t.Xid > 0 {
			ix.byRequest[[2]int64{s, int64(t.Xid)}] = t
		} else if t.Op == witnessReap && t.Path != "" {
			ix.reaps = append(ix.reaps, t)
		}
	}
	return ix
}

// witnessSlot is where a txn with zxid z sits on the timeline: a zxid some
// reply carries has its write slot; any other sits after the reads of the
// highest carried zxid below it and before the next write slot.
func (tl *timeline) witnessSlot(sortedKnown []int64, z int64) int64 {
	if r, ok := tl.rank[z]; ok {
		return 4 * r
	}
	i := sort.Search(len(sortedKnown), func(i int) bool { return sortedKnown[i] > z })
	return 4*int64(i-1) + 3
}

// placedOp is an operation with the position a witness gives it.
type placedOp struct {
	op   *tlOp
	slot int64
	zxid int64
}

// witnessOrder lays out the timeline's operations in the witness's order,
// or says why the witness cannot be that order.
func (tl *timeline) witnessOrder(w Witness) ([]placedOp, string) {
	ix := indexWitness(w)
	known := make([]int64, 0, len(tl.rank))
	for z := range tl.rank {
		known = append(known, z)
	}
	slices.Sort(known)
	ackedWrite := map[int64]bool{}
	for _, op := range tl.ops {
		if op.kind == tlWrite {
			ackedWrite[op.zxid] = true
		}
	}
	var out []placedOp
	lastOfSession := map[int64]*tlOp{} // the session's placed request sent last so far
	place := func(op *tlOp, t *WitnessTxn) string {
		z := int64(t.Zxid)
		if ackedWrite[z] {
			return fmt.Sprintf("it gives zxid %v of %s to %s", t.Zxid, "an acknowledged write", op.describe())
		}
		slot := tl.witnessSlot(known, z)
		if slot < op.lo || slot > op.hi {
			return fmt.Sprintf("it places %s at zxid %v, outside the window its calls and replies allow", op.describe(), t.Zxid)
		}
		out = append(out, placedOp{op: op, slot: slot, zxid: z})
		return ""
	}
	for _, op := range tl.ops {
		switch op.kind {
		case tlWrite, tlRead:
			out = append(out, placedOp{op: op, slot: op.lo, zxid: op.zxid})
		case tlUnknown:
			if op.e.Xid <= 0 {
				return nil, fmt.Sprintf("%s has no xid to find it by", op.describe())
			}
			t := ix.byRequest[[2]int64{op.session, int64(op.e.Xid)}]
			if t == nil || t.Op == witnessError {
				continue // never took effect, or failed: changed nothing
			}
			if why := place(op, t); why != "" {
				return nil, why
			}
		case tlExpire:
			t := ix.closes[op.session]
			if t == nil {
				if op.must {
					return nil, fmt.Sprintf("it holds no %s, which is known to have happened", op.describe())
				}
				continue
			}
			if why := place(op, t); why != "" {
				return nil, why
			}
		case tlReap:
			// replaced by the witness's own deletions below
		}
	}
	if len(ix.reaps) > 0 && !tl.reaping {
		return nil, fmt.Sprintf("it holds the server's deletion of %s, and the history is judged without reaping (Options.Reaping)", ix.reaps[0].Path)
	}
	for _, t := range ix.reaps {
		op := &tlOp{kind: tlReap, path: t.Path, lo: -1, hi: slotInfinity, zxid: int64(t.Zxid)}
		if why := place(op, t); why != "" {
			return nil, why
		}
	}
	slices.SortStableFunc(out, func(a, b placedOp) int {
		return cmp.Or(cmp.Compare(a.slot, b.slot), cmp.Compare(a.zxid, b.zxid))
	})
	// A session's requests take effect in the order it sent them.
	for _, p := range out {
		if p.op.kind != tlUnknown {
			continue
		}
		if prev := lastOfSession[p.op.session]; prev != nil && prev.e.Call > p.op.e.Call {
			return nil, fmt.Sprintf("it applies %s before %s, which its session sent first", p.op.describe(), prev.describe())
		}
		lastOfSession[p.op.session] = p.op
	}
	return out, ""
}

// replayWitnessed replays the timeline in the witness's order on one tree
// and reports the first operation the order cannot explain ("" when it
// explains them all, which proves the history legal).
func (tl *timeline) replayWitnessed(w Witness) string {
	order, why := tl.witnessOrder(w)
	if why != "" {
		return why
	}
	t := freshTree(nil, tl.reaping)
	for _, p := range order {
		op := p.op
		switch op.kind {
		case tlWrite, tlRead:
			next, why := stepExact(t, op, true)
			if why != "" {
				return fmt.Sprintf("%s: %s", op.describe(), why)
			}
			t = next
		case tlUnknown:
			if t.dead[op.session] {
				return fmt.Sprintf("it applies %s after its session ended", op.describe())
			}
			x, closes, _ := stepWrite(t, op.e, p.zxid, false)
			t = commitStep(t, x, closes, op.session, p.zxid)
		case tlExpire:
			t = closeSessionInto(t, op.session, p.zxid)
		case tlReap:
			n := t.nodes[op.path]
			if n == nil || !t.reapable(op.path, n) {
				return fmt.Sprintf("it reaps %s at zxid %v, where the model holds no empty container or TTL node", op.path, Hex64(p.zxid))
			}
			x := &txn{base: t, changed: map[string]*node{}}
			x.put(op.path, nil)
			x.removeChild(op.path, p.zxid)
			t = commitStep(t, x, false, 0, p.zxid)
		}
	}
	return ""
}

// Explains reports why w's order does not explain h (nil when it does)
// under the rules of the writes and the reads checkers, without searching
// (CheckAll reports the same in Report.Unexplained, and searches). The txns
// a correct server committed always explain its clients' history, so a
// simulator holds its runs to that: a check stronger than the guarantees,
// which ask only for some legal order.
func (w Witness) Explains(h History, opt Options) error {
	for _, reads := range []bool{false, true} {
		if why := buildTimeline(h, reads, opt.Reaping).replayWitnessed(w); why != "" {
			return unexplainedBecause(why)
		}
	}
	return nil
}

func unexplainedBecause(why string) error {
	return fmt.Errorf("the committed txns in zxid order do not explain the history: %s", why)
}
