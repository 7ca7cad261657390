package zabtest

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/zabd/zabd/zab"
)

// Interaction runs datadriven scripts (github.com/cockroachdb/datadriven,
// in the shape of etcd-io/raft's interaction tests) against a Cluster:
// each command of a script moves the ensemble (delivers, drops, ticks,
// crashes, partitions, client requests) and prints the Trace lines it
// produced, so that a script's expected output reads as the protocol
// running step by step. Commands are listed in handlers below; each
// handler's comment shows its syntax.
//
// After every command, Interaction checks what no run may ever show, and
// fails the test if it does, whatever the script's expected output says:
// two members that applied the same zxid with different trees
// (Agreement), and a member whose applied zxid went back (a txn undone).
type Interaction struct {
	C    *Cluster
	seed uint64
	// clients[i] is client i+1; its connection is c<i+1> in the Trace,
	// because every connection is opened through a connect command.
	clients []*ClusterClient
	// hidden are the kinds of Trace lines not printed (trace command).
	hidden map[string]bool
	// shownFrom is the first line of the Trace the current command
	// prints: where the Trace ended when it began, unless the command
	// moved it on past lines it does not show (bootstrap).
	shownFrom int

	// digestAt records, for every applied zxid seen, the tree digest and
	// the member that had it: every member applying that zxid must agree.
	digestAt map[int64]seenDigest
	// applied is each running Peer's last applied zxid, for monotonicity.
	applied map[*zab.Peer]int64

	// ConfigArgs are add-nodes arguments the test defines, for settings
	// only its own package can reach: each adjusts every member's Config
	// with the argument's value.
	ConfigArgs map[string]func(cfg *zab.Config, value int64)
}

type seenDigest struct {
	digest int64
	server int64
}

// NewInteraction returns an Interaction whose cluster (made by add-nodes)
// draws its Peers' randomness from seed.
func NewInteraction(seed uint64) *Interaction {
	return &Interaction{seed: seed, hidden: map[string]bool{}, digestAt: map[int64]seenDigest{}, applied: map[*zab.Peer]int64{}}
}

type handler func(e *Interaction, t testing.TB, d *datadriven.TestData) string

var handlers map[string]handler

func init() {
	// Set here rather than in the declaration: the handlers refer to
	// the table (help), which would make an initialization cycle.
	handlers = map[string]handler{
		"add-nodes": (*Interaction).addNodes,
		"bootstrap": (*Interaction).bootstrap,
		"trace":     (*Interaction).trace,
		"stabilize": (*Interaction).stabilize,
		"deliver":   (*Interaction).deliver,
		"advance":   (*Interaction).advance,
		"run":       (*Interaction).run,
		"crash":     (*Interaction).crash,
		"restart":   (*Interaction).restart,
		"hold":      (*Interaction).hold,
		"release":   (*Interaction).release,
		"partition": (*Interaction).partition,
		"heal":      (*Interaction).heal,
		"status":    (*Interaction).status,
		"logs":      (*Interaction).logs,
		"write-log": (*Interaction).writeLog,
		"inject":    (*Interaction).inject,
		"connect":   (*Interaction).connect,
		"create":    (*Interaction).create,
		"set":       (*Interaction).set,
		"delete":    (*Interaction).delete,
		"get":       (*Interaction).get,
		"sync":      (*Interaction).sync,
		"ping":      (*Interaction).ping,
		"close":     (*Interaction).closeSession,
		"hang-up":   (*Interaction).hangUp,
	}
}

// Handle runs one command of a script and returns what it printed: the
// Trace lines it produced (less the hidden kinds), then the command's own
// output, or "ok" if there is neither.
func (e *Interaction) Handle(t testing.TB, d *datadriven.TestData) string {
	h, ok := handlers[d.Cmd]
	if !ok {
		names := make([]string, 0, len(handlers))
		for n := range handlers {
			names = append(names, n)
		}
		slices.Sort(names)
		d.Fatalf(t, "unknown command %q; the commands are %s", d.Cmd, strings.Join(names, ", "))
	}
	if e.C == nil && d.Cmd != "add-nodes" && d.Cmd != "bootstrap" {
		d.Fatalf(t, "%s: no ensemble yet (start with add-nodes or bootstrap)", d.Cmd)
	}
	e.shownFrom = 0
	if e.C != nil {
		e.shownFrom = len(e.C.Trace)
	}
	extra := h(e, t, d)
	var b strings.Builder
	at := "" // a time line, printed only if a line it dates is
	for _, line := range e.C.Trace[e.shownFrom:] {
		switch kind := traceKind(line); {
		case kind == "time":
			at = line
		case !e.hidden[kind]:
			if at != "" {
				b.WriteString(at)
				b.WriteByte('\n')
				at = ""
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	b.WriteString(extra)
	for _, cl := range e.clients {
		cl.Take() // learn sessions from connect responses; the Trace has shown them
	}
	e.checkInvariants(t, d)
	if b.Len() == 0 {
		return "ok\n"
	}
	return b.String()
}

// checkInvariants fails the test on Agreement or monotonicity violations.
func (e *Interaction) checkInvariants(t testing.TB, d *datadriven.TestData) {
	t.Helper()
	for _, n := range e.C.Nodes {
		p := n.Peer
		if p == nil {
			continue
		}
		z, dg := p.LastZxid(), p.Digest()
		if prev, ok := e.applied[p]; ok && z < prev {
			t.Errorf("%s: server %d applied up to %s, after %s: a txn was undone", d.Pos, n.ID, hex(z), hex(prev))
		}
		e.applied[p] = z
		if seen, ok := e.digestAt[z]; !ok {
			e.digestAt[z] = seenDigest{digest: dg, server: n.ID}
		} else if seen.digest != dg {
			t.Errorf("%s: Agreement violated: server %d's tree at %s has digest %#x, server %d's had %#x",
				d.Pos, n.ID, hex(z), uint64(dg), seen.server, uint64(seen.digest))
		}
	}
}

// The kinds of Trace lines the trace command can hide.
var (
	votePattern = regexp.MustCompile(`^\d+(->\d+( dropped| lost on a closed connection:)?|: send to \d+:) vote `)
	pingPattern = regexp.MustCompile(`^\d+(->\d+( dropped| lost on a closed connection:)?|: send to \d+:) PING `)
	sendPattern = regexp.MustCompile(`^\d+: (send to|close the connection to) \d+`)
	diskPattern = regexp.MustCompile(`^\d+: (append|durable up to) `)
	timePattern = regexp.MustCompile(`^at \d`)
)

func traceKind(line string) string {
	switch {
	case votePattern.MatchString(line):
		return "votes"
	case pingPattern.MatchString(line) && !strings.Contains(line, "touch="):
		return "pings"
	case sendPattern.MatchString(line):
		return "sends"
	case diskPattern.MatchString(line):
		return "disk"
	case timePattern.MatchString(line):
		return "time"
	}
	return ""
}

// Argument helpers. A bad argument is the script's fault: Fatalf names it.

func argInt(t testing.TB, d *datadriven.TestData, key string, def int64) int64 {
	arg, ok := d.Arg(key)
	if !ok {
		return def
	}
	v, err := strconv.ParseInt(arg.SingleVal(t), 0, 64)
	if err != nil {
		d.Fatalf(t, "%s: %v", key, err)
	}
	return v
}

func argInts(t testing.TB, d *datadriven.TestData, key string) []int64 {
	arg, ok := d.Arg(key)
	if !ok {
		d.Fatalf(t, "missing argument %s", key)
	}
	var out []int64
	for _, s := range arg.Vals {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			d.Fatalf(t, "%s: %v", key, err)
		}
		out = append(out, v)
	}
	return out
}

func argString(d *datadriven.TestData, key, def string) string {
	if arg, ok := d.Arg(key); ok && len(arg.Vals) > 0 {
		return arg.Vals[0]
	}
	return def
}

// bareInts reads a command's bare numeric arguments ("crash 1 2").
func bareInts(t testing.TB, d *datadriven.TestData) []int64 {
	var out []int64
	for _, a := range d.CmdArgs {
		if len(a.Vals) != 0 {
			continue
		}
		v, err := strconv.ParseInt(a.Key, 0, 64)
		if err != nil {
			d.Fatalf(t, "%s: want server ids, got %q", d.Cmd, a.Key)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		d.Fatalf(t, "%s: name at least one server", d.Cmd)
	}
	return out
}

// bareDuration reads the duration a command takes as its first bare
// argument ("advance 200ms").
func bareDuration(t testing.TB, d *datadriven.TestData) time.Duration {
	if len(d.CmdArgs) == 0 || len(d.CmdArgs[0].Vals) != 0 {
		d.Fatalf(t, "%s: want a duration first", d.Cmd)
	}
	dur, err := time.ParseDuration(d.CmdArgs[0].Key)
	if err != nil {
		d.Fatalf(t, "%s: %v", d.Cmd, err)
	}
	return dur
}

// node returns the member a script names, failing on an unknown id.
func (e *Interaction) node(t testing.TB, d *datadriven.TestData, id int64) *Node {
	n := e.C.Node(id)
	if n == nil {
		d.Fatalf(t, "%s: there is no server %d", d.Cmd, id)
	}
	return n
}

func (e *Interaction) client(t testing.TB, d *datadriven.TestData) *ClusterClient {
	i := argInt(t, d, "client", 0)
	if i < 1 || i > int64(len(e.clients)) {
		d.Fatalf(t, "%s: there is no client %d", d.Cmd, i)
	}
	return e.clients[i-1]
}
