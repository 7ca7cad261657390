package runview

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"

	"github.com/zabd/zabd/zab/runlog"
)

//go:embed assets/view.html
var pageSource string

//go:embed assets/view.js
var script string

//go:embed assets/view.css
var style string

var page = template.Must(template.New("run").Parse(pageSource))

// data is the run as the page's script reads it: one array per kind of
// mark, each row a short array (see assets/view.js for the columns),
// strings that repeat (packet types, op names) as indexes into a table.
type data struct {
	Title   string   `json:"title"`
	Members []int64  `json:"members"`
	Clients []int    `json:"clients"`
	End     int64    `json:"end"`
	Names   []string `json:"names"`
	Roles   [][]any  `json:"roles"`  // t, member, role, phase, epoch, leader
	UpDown  [][]any  `json:"updown"` // t, member, 1 start / 0 crash, text
	// Messages and Durable, the bulk of a run, are flat and delta-encoded
	// (see packMessages, packDurable) to keep a minute's page small.
	Messages []int64  `json:"msgs"`
	Votes    [][]any  `json:"votes"` // sent, arrived, from, to, text
	Durable  []int64  `json:"durable"`
	Fsyncs   []int64  `json:"fsyncs"`   // packed as Durable: end, member, length
	Faults   [][]any  `json:"faults"`   // t, member (0: the network), text
	Cuts     [][]any  `json:"cuts"`     // from, until, text
	Ops      [][]any  `json:"ops"`      // call, return, client, name, text, outcome, zxid, id
	Notices  [][]any  `json:"notices"`  // t, client, name, text, id
	Failures [][]any  `json:"failures"` // t, kind, text, op ids, attachment index or -1
	Attached []string `json:"attached"`
}

// Write writes r as one HTML page.
func Write(w io.Writer, r *runlog.Run) error {
	d := build(r)
	blob, err := json.Marshal(d) // escapes <, > and &: safe inside <script>
	if err != nil {
		return fmt.Errorf("runview: encode the run: %w", err)
	}
	err = page.Execute(w, struct {
		Title  string
		Style  template.CSS
		Script template.JS
		Data   template.JS
	}{d.Title, template.CSS(style), template.JS(script), template.JS(blob)})
	if err != nil {
		return fmt.Errorf("runview: write the page: %w", err)
	}
	return nil
}

func build(r *runlog.Run) *data {
	// Every list is there, if empty: the script iterates them all.
	d := &data{Title: r.Title, Members: nonNil(r.Members), Clients: nonNil(r.Clients), Names: []string{},
		Roles: [][]any{}, UpDown: [][]any{}, Votes: [][]any{}, Faults: [][]any{}, Cuts: [][]any{},
		Ops: [][]any{}, Notices: [][]any{}, Failures: [][]any{}, Attached: []string{}}
	index := map[string]int{}
	name := func(s string) int {
		i, ok := index[s]
		if !ok {
			i = len(d.Names)
			index[s] = i
			d.Names = append(d.Names, s)
		}
		return i
	}
	open := map[string]int64{} // partition name -> when it came into force
	var msgs [][6]int64
	var durable, fsyncs [][3]int64
	for i := range r.Events {
		e := &r.Events[i]
		d.End = max(d.End, e.At)
		switch e.Kind {
		case runlog.KindRole:
			d.Roles = append(d.Roles, []any{e.At, e.Member, e.Name, e.Text, e.Epoch, e.Peer})
		case runlog.KindStart, runlog.KindCrash:
			up := 0
			if e.Kind == runlog.KindStart {
				up = 1
			}
			d.UpDown = append(d.UpDown, []any{e.At, e.Member, up, e.Text})
		case runlog.KindMessage:
			msgs = append(msgs, [6]int64{e.Sent, e.At, e.Member, e.Peer, int64(name(e.Name)), e.Zxid})
		case runlog.KindVote:
			d.Votes = append(d.Votes, []any{e.Sent, e.At, e.Member, e.Peer, e.Text})
		case runlog.KindDurable:
			durable = append(durable, [3]int64{e.At, e.Member, e.Zxid})
		case runlog.KindFsync:
			fsyncs = append(fsyncs, [3]int64{e.At, e.Member, e.At - e.Sent})
		case runlog.KindFault:
			d.Faults = append(d.Faults, []any{e.At, e.Member, e.Text})
		case runlog.KindPartition:
			open[e.Name] = e.At
			d.Cuts = append(d.Cuts, []any{e.At, int64(-1), e.Text})
		case runlog.KindHeal:
			if from, ok := open[e.Name]; ok {
				delete(open, e.Name)
				for _, c := range d.Cuts {
					if c[0] == from && c[1] == int64(-1) {
						c[1] = e.At
						break
					}
				}
			}
		case runlog.KindOp:
			d.Ops = append(d.Ops, []any{e.Sent, e.At, e.Client, name(e.Name), e.Text, e.Outcome, e.Zxid, e.ID})
		case runlog.KindNotice:
			d.Notices = append(d.Notices, []any{e.At, e.Client, e.Name, e.Text, e.ID})
		case runlog.KindFailure:
			att := -1
			if e.Attachment != "" {
				att = len(d.Attached)
				d.Attached = append(d.Attached, e.Attachment)
			}
			ops := e.Ops
			if ops == nil {
				ops = []int{}
			}
			d.Failures = append(d.Failures, []any{e.At, e.Name, e.Text, ops, att})
		}
	}
	for _, c := range d.Cuts {
		if c[1] == int64(-1) {
			c[1] = d.End // still in force when the record ends
		}
	}
	d.Messages = packMessages(msgs)
	d.Durable = packDurable(durable)
	d.Fsyncs = packDurable(fsyncs)
	sort.SliceStable(d.Failures, func(i, j int) bool { return d.Failures[i][0].(int64) < d.Failures[j][0].(int64) })
	return d
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// packMessages lays messages (sent, arrived, from, to, name, zxid; in
// order of arrival) out flat, six numbers each: arrival as the change from
// the previous message's, sent as arrival minus it, zxid as the change
// from the previous message's. view.js's unpack reverses it.
func packMessages(msgs [][6]int64) []int64 {
	out := make([]int64, 0, 6*len(msgs))
	var at, zxid int64
	for _, m := range msgs {
		out = append(out, m[1]-at, m[1]-m[0], m[2], m[3], m[4], m[5]-zxid)
		at, zxid = m[1], m[5]
	}
	return out
}

// packDurable lays durable points (t, member, zxid; in time order) out
// flat, three numbers each: t as the change from the previous point's,
// zxid as the change from the previous point's. Disk jobs (end, member,
// length) go the same way.
func packDurable(points [][3]int64) []int64 {
	out := make([]int64, 0, 3*len(points))
	var at, zxid int64
	for _, p := range points {
		out = append(out, p[0]-at, p[1], p[2]-zxid)
		at, zxid = p[0], p[2]
	}
	return out
}
