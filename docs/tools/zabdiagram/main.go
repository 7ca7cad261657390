// Command zabdiagram replays an interaction script of package zab
// (zab/testdata/interaction/*.txt, run by zabtest.Interaction: the real zab
// core, in-memory FIFO links, fake disks, a virtual clock, seed 1 as
// TestInteraction uses) and prints what the script shows as a mermaid
// sequence diagram, which GitHub renders: every delivered packet, vote and
// client message is an arrow, every step a member takes on its own (a role
// or phase change, epochs persisted, an append, a truncation, a crash, a
// notice) is a note. The diagrams in docs/zab-walkthrough.md are its
// output; its test fails when they differ.
//
//	go run ./docs/tools/zabdiagram [-from CMD] [-to CMD] SCRIPT
//
// -from and -to draw only the commands from the first whose line is CMD
// to the first such line after it (inclusive); the whole script runs
// either way. The script is the one source of a scenario: zabdiagram
// refuses one whose recorded output is no longer what the run prints
// (regenerate it with `go test ./zab -run TestInteraction -rewrite`), and
// draws what the script's own trace command lets it print. Packet sends
// are never drawn: each packet is drawn where it is delivered. A script
// that needs a setting only zab's own test can make (an add-nodes argument
// of its Interaction.ConfigArgs, such as counter-limit) is refused by name.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zabd/zabd/zab/zabtest"
)

func main() {
	fs := flag.NewFlagSet("zabdiagram", flag.ContinueOnError)
	from := fs.String("from", "", "draw from the first command whose line is this")
	to := fs.String("to", "", "draw up to the first command at or after -from whose line is this")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: zabdiagram [-from CMD] [-to CMD] SCRIPT")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	// datadriven asks testing.Verbose, which needs the default command
	// line parsed: parse it empty, leaving datadriven's own flags (-rewrite
	// among them) at their defaults; zabdiagram never rewrites a script.
	_ = flag.CommandLine.Parse(nil)
	if fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	if err := render(os.Stdout, fs.Arg(0), *from, *to); err != nil {
		fmt.Fprintln(os.Stderr, "zabdiagram:", err)
		os.Exit(1)
	}
}

// step is one command of a script and what it printed.
type step struct {
	cmd string
	out string
}

// render replays the script and writes the diagram of its commands from
// from to to.
func render(w io.Writer, script, from, to string) error {
	if _, err := os.Stat(script); err != nil {
		return err
	}
	e := zabtest.NewInteraction(1)
	steps, err := replay(script, e)
	if err != nil {
		return err
	}
	drawn, err := selectSteps(steps, from, to)
	if err != nil {
		return fmt.Errorf("%s: %w", script, err)
	}
	var observers []int64
	var servers []int64
	for _, n := range e.C.Nodes {
		servers = append(servers, n.ID)
		if n.Observer {
			observers = append(observers, n.ID)
		}
	}
	_, err = io.WriteString(w, mermaid(drawn, servers, observers))
	return err
}

// replay runs the script as TestInteraction does, and fails if a command
// prints something other than what the script records.
func replay(script string, e *zabtest.Interaction) (steps []step, err error) {
	t := &scriptT{}
	defer func() {
		if r := recover(); r != nil {
			if r != t {
				panic(r)
			}
			err = t.err
		}
	}()
	datadriven.RunTestAny(t, script, func(tb testing.TB, d *datadriven.TestData) string {
		out := e.Handle(tb, d)
		steps = append(steps, step{cmd: d.FullCmd(), out: out})
		return out
	})
	if t.err != nil {
		return nil, t.err
	}
	return steps, nil
}

// scriptT lets datadriven run a script outside `go test`: the first
// failure (an output that differs from the script's, an invariant the
// Interaction checks, a bad command) becomes replay's error. Only the
// methods datadriven and zabtest call are implemented; the embedded
// testing.TB is nil.
type scriptT struct {
	testing.TB
	err error
}

func (t *scriptT) Helper()                          {}
func (t *scriptT) Log(...any)                       {}
func (t *scriptT) Logf(string, ...any)              {}
func (t *scriptT) Name() string                     { return "zabdiagram" }
func (t *scriptT) Failed() bool                     { return t.err != nil }
func (t *scriptT) Fail()                            { t.Errorf("failed") }
func (t *scriptT) FailNow()                         { t.Fatalf("failed") }
func (t *scriptT) Error(args ...any)                { t.Errorf("%s", fmt.Sprint(args...)) }
func (t *scriptT) Fatal(args ...any)                { t.Fatalf("%s", fmt.Sprint(args...)) }
func (t *scriptT) Skip(...any)                      { t.Fatalf("a script that skips cannot be drawn") }
func (t *scriptT) Skipf(string, ...any)             { t.Skip() }
func (t *scriptT) SkipNow()                         { t.Skip() }
func (t *scriptT) Skipped() bool                    { return false }
func (t *scriptT) Run(_ string, f func(testing.TB)) { f(t) }

func (t *scriptT) Errorf(format string, args ...any) {
	if t.err == nil {
		msg := strings.TrimSpace(fmt.Sprintf(format, args...))
		if strings.Contains(msg, "output didn't match expected") || strings.Contains(msg, "expected:") {
			msg += "\n(the script no longer records what the run prints: `go test ./zab -run TestInteraction -rewrite`, then read the diff)"
		}
		t.err = fmt.Errorf("%s", msg)
	}
}

func (t *scriptT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	panic(t)
}

// selectSteps returns the steps from the first whose command is from
// (the first step if from is empty) to the first at or after it whose
// command is to (the last step if to is empty).
func selectSteps(steps []step, from, to string) ([]step, error) {
	i := 0
	if from != "" {
		for i < len(steps) && steps[i].cmd != from {
			i++
		}
		if i == len(steps) {
			return nil, fmt.Errorf("-from %q: no such command in the script", from)
		}
	}
	j := len(steps) - 1
	if to != "" {
		for j = i; j < len(steps) && steps[j].cmd != to; j++ {
		}
		if j == len(steps) {
			return nil, fmt.Errorf("-to %q: no such command at or after -from", to)
		}
	}
	return steps[i : j+1], nil
}

var (
	delivery = regexp.MustCompile(`^(\d+)->(\d+) (.*)$`)
	broken   = regexp.MustCompile(`^(\d+)<->(\d+) (.*)$`)
	send     = regexp.MustCompile(`^\d+: (send to|close the connection to) \d+`)
	client   = regexp.MustCompile(`^(\d+): c(\d+) (.*)$`)
	local    = regexp.MustCompile(`^(\d+): (.*)$`)
	clock    = regexp.MustCompile(`^at \d`)
	// lost are the ways a delivery fails, with what the packet was.
	lost = regexp.MustCompile(`^(dropped|lost on a closed connection:|lost: no such server:|injected but nobody receives it:) (.*)$`)
)

// ownOutput are the commands whose output is a report per member, not a
// trace: their lines are drawn as notes named after the command.
var ownOutput = map[string]string{"status": "status", "logs": "log", "write-log": "disk written"}

// mermaid draws the steps' lines. Servers are participants in id order,
// then clients in the order they appear.
func mermaid(steps []step, servers, observers []int64) string {
	var body strings.Builder
	var clients []string
	seen := map[string]bool{}
	all := fmt.Sprintf("S%d,S%d", servers[0], servers[len(servers)-1])
	if len(servers) == 1 {
		all = fmt.Sprintf("S%d", servers[0])
	}
	for _, st := range steps {
		cmd, _, _ := strings.Cut(st.cmd, " ")
		for _, line := range strings.Split(strings.TrimSuffix(st.out, "\n"), "\n") {
			if m := client.FindStringSubmatch(line); m != nil && !seen[m[2]] {
				seen[m[2]] = true
				clients = append(clients, m[2])
			}
			drawLine(&body, line, ownOutput[cmd], all)
		}
	}
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	for _, id := range servers {
		role := ""
		for _, o := range observers {
			if o == id {
				role = " (observer)"
			}
		}
		fmt.Fprintf(&b, "    participant S%d as server %d%s\n", id, id, role)
	}
	for _, c := range clients {
		fmt.Fprintf(&b, "    participant C%s as client c%s\n", c, c)
	}
	b.WriteString(body.String())
	return b.String()
}

// drawLine draws one line of a command's output; report, if set, names
// the command whose per-member report the line is.
func drawLine(b *strings.Builder, line, report, all string) {
	switch {
	case line == "" || line == "ok" || send.MatchString(line):
		// Sends are drawn where they are delivered.
	case report != "":
		if m := local.FindStringSubmatch(line); m != nil {
			fmt.Fprintf(b, "    Note over S%s: %s: %s\n", m[1], report, escape(m[2]))
		} else {
			fmt.Fprintf(b, "    Note over %s: %s: %s\n", all, report, escape(line))
		}
	case clock.MatchString(line):
		fmt.Fprintf(b, "    Note over %s: %s\n", all, escape(line))
	case delivery.MatchString(line):
		m := delivery.FindStringSubmatch(line)
		from, to, what := m[1], m[2], m[3]
		switch l := lost.FindStringSubmatch(what); {
		case l != nil:
			fmt.Fprintf(b, "    S%s-xS%s: %s (%s)\n", from, to, escape(l[2]), strings.TrimSuffix(l[1], ":"))
		case what == "connection closed":
			fmt.Fprintf(b, "    S%s--)S%s: connection closed\n", from, to)
		default:
			fmt.Fprintf(b, "    S%s->>S%s: %s\n", from, to, escape(strings.TrimPrefix(what, "injected ")))
		}
	case broken.MatchString(line):
		m := broken.FindStringSubmatch(line)
		fmt.Fprintf(b, "    Note over S%s,S%s: %s\n", m[1], m[2], escape(m[3]))
	case client.MatchString(line):
		m := client.FindStringSubmatch(line)
		s, c, what := "S"+m[1], "C"+m[2], m[3]
		switch {
		case strings.HasPrefix(what, "connects for a new session"):
			fmt.Fprintf(b, "    %s->>%s: connect (new session)\n", c, s)
		case strings.HasPrefix(what, "connects to resume session "):
			fmt.Fprintf(b, "    %s->>%s: connect (resume %s)\n", c, s, strings.TrimPrefix(what, "connects to resume session "))
		case strings.HasPrefix(what, "request "):
			fmt.Fprintf(b, "    %s->>%s: %s\n", c, s, escape(strings.TrimPrefix(what, "request ")))
		case what == "hung up":
			fmt.Fprintf(b, "    %s-x%s: hangs up\n", c, s)
		case what == "close":
			fmt.Fprintf(b, "    %s-x%s: closes the connection\n", s, c)
		default:
			fmt.Fprintf(b, "    %s->>%s: %s\n", s, c, escape(what))
		}
	case local.MatchString(line):
		m := local.FindStringSubmatch(line)
		fmt.Fprintf(b, "    Note over S%s: %s\n", m[1], escape(m[2]))
	default:
		fmt.Fprintf(b, "    Note over %s: %s\n", all, escape(line))
	}
}

// escape keeps a label on one mermaid line: no ';' or '#' (mermaid reads
// them as statement and entity marks).
func escape(s string) string {
	return strings.NewReplacer(";", ",", "#", "no.").Replace(s)
}
