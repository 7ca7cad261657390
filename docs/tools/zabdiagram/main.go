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
// Two things keep a diagram light. A notice is drawn as its gist (see
// gist): no "notice:" mark, no role prefix, no parenthesised details, no
// elapsed time, nothing after its first clause. And a vote is drawn only
// while its receiver is still electing: from the receiver's decision
// (its "becomes following", "leading" or "observing") to its next
// "becomes looking", the votes it receives change nothing and are left
// out. The votes a decided member sends to members still looking are
// drawn, since they are what those members decide on.
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
	first, last, err := selectSteps(steps, from, to)
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
	_, err = io.WriteString(w, mermaid(steps[:last+1], first, servers, observers))
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

// selectSteps returns the indexes of the first step whose command is from
// (the first step if from is empty) and of the first at or after it whose
// command is to (the last step if to is empty).
func selectSteps(steps []step, from, to string) (first, last int, err error) {
	if from != "" {
		for first < len(steps) && steps[first].cmd != from {
			first++
		}
		if first == len(steps) {
			return 0, 0, fmt.Errorf("-from %q: no such command in the script", from)
		}
	}
	last = len(steps) - 1
	if to != "" {
		for last = first; last < len(steps) && steps[last].cmd != to; last++ {
		}
		if last == len(steps) {
			return 0, 0, fmt.Errorf("-to %q: no such command at or after -from", to)
		}
	}
	return first, last, nil
}

var (
	delivery = regexp.MustCompile(`^(\d+)->(\d+) (.*)$`)
	broken   = regexp.MustCompile(`^(\d+)<->(\d+) (.*)$`)
	send     = regexp.MustCompile(`^\d+: (send to|close the connection to) \d+`)
	client   = regexp.MustCompile(`^(\d+): c(\d+) (.*)$`)
	local    = regexp.MustCompile(`^(\d+): (.*)$`)
	clock    = regexp.MustCompile(`^at \d`)
	// role is a member's role change; a vote's receiver has decided from
	// its "becomes following", "leading" or "observing" on.
	role = regexp.MustCompile(`^(\d+): becomes (looking|following|leading|observing) `)
	// lost are the ways a delivery fails, with what the packet was.
	lost = regexp.MustCompile(`^(dropped|lost on a closed connection:|lost: no such server:|injected but nobody receives it:) (.*)$`)
)

// ownOutput are the commands whose output is a report per member, not a
// trace: their lines are drawn as notes named after the command.
var ownOutput = map[string]string{"status": "status", "logs": "log", "write-log": "disk written"}

// mermaid draws the lines of steps[first:]; the steps before first only
// tell it which members have decided their election. Servers are
// participants in id order, then the clients drawn, in the order they
// appear.
func mermaid(steps []step, first int, servers, observers []int64) string {
	d := &canvas{all: fmt.Sprintf("S%d,S%d", servers[0], servers[len(servers)-1]), decided: map[string]bool{}}
	if len(servers) == 1 {
		d.all = fmt.Sprintf("S%d", servers[0])
	}
	var clients []string
	seen := map[string]bool{}
	for i, st := range steps {
		cmd, _, _ := strings.Cut(st.cmd, " ")
		for _, line := range strings.Split(strings.TrimSuffix(st.out, "\n"), "\n") {
			if m := client.FindStringSubmatch(line); m != nil && i >= first && !seen[m[2]] {
				seen[m[2]] = true
				clients = append(clients, m[2])
			}
			d.line(line, ownOutput[cmd], i >= first)
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
	b.WriteString(d.body.String())
	return b.String()
}

// canvas is a mermaid body being drawn, and what it needs to remember of
// the lines before: which members have decided their election.
type canvas struct {
	body    strings.Builder
	all     string          // the span of a note over every server
	decided map[string]bool // by server id: its last role change was a decision
}

// line takes one line of a command's output, drawing it if draw is set;
// report, if set, names the command whose per-member report the line is.
func (d *canvas) line(line, report string, draw bool) {
	if draw && !d.hiddenVote(line) {
		drawLine(&d.body, line, report, d.all)
	}
	if m := role.FindStringSubmatch(line); m != nil {
		d.decided[m[1]] = m[2] != "looking"
	}
}

// hiddenVote reports whether line is a vote (delivered or lost) whose
// receiver has already decided.
func (d *canvas) hiddenVote(line string) bool {
	m := delivery.FindStringSubmatch(line)
	if m == nil || !d.decided[m[2]] {
		return false
	}
	what := m[3]
	if l := lost.FindStringSubmatch(what); l != nil {
		what = l[2]
	}
	return strings.HasPrefix(strings.TrimPrefix(what, "injected "), "vote ")
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
		fmt.Fprintf(b, "    Note over S%s: %s\n", m[1], escape(gist(m[2])))
	default:
		fmt.Fprintf(b, "    Note over %s: %s\n", all, escape(line))
	}
}

var (
	// notice is how the core's log lines begin: their level, then
	// usually the role that wrote them.
	notice = regexp.MustCompile(`^(notice|warning): (?:[a-z]+: )?`)
	// aside is a parenthesised detail, such as the vote an election
	// decided on or the zxids a synchronization was chosen from.
	aside = regexp.MustCompile(` \([^()]*\)`)
	// elapsed is the time something took, as a Go duration prints.
	elapsed = regexp.MustCompile(` after [0-9][0-9.]*(?:ns|µs|ms|s|m|h)(?:[0-9][0-9.]*(?:ns|µs|ms|s|m|h))*\b`)
)

// gist shortens a notice or warning to what a diagram needs: the notice
// mark and the role prefix go (the note stands over the member, whose
// role the notes around it show), and so do parenthesised details, the
// elapsed time, and whatever follows the first clause ("; serving",
// ", streaming ..."). A warning keeps its mark: something failed. Any
// other line is returned as it is.
func gist(s string) string {
	m := notice.FindStringSubmatch(s)
	if m == nil {
		return s
	}
	s = s[len(m[0]):]
	for {
		t := aside.ReplaceAllString(s, "")
		if t == s {
			break
		}
		s = t
	}
	s = elapsed.ReplaceAllString(s, "")
	if i := strings.Index(s, "; "); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ", "); i >= 0 {
		s = s[:i]
	}
	if m[1] == "warning" {
		s = "warning: " + s
	}
	return s
}

// escape keeps a label on one mermaid line: no ';' or '#' (mermaid reads
// them as statement and entity marks).
func escape(s string) string {
	return strings.NewReplacer(";", ",", "#", "no.").Replace(s)
}
