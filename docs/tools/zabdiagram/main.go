// Command zabdiagram runs a named scenario on zab/zabtest's in-memory
// ensemble (the real zab core, three members, FIFO links, a fake disk) and
// prints its trace as a mermaid sequence diagram, which GitHub renders:
// every delivered packet or vote is an arrow, every local effect (epochs
// persisted, role changes, truncation, crashes) a note. The diagrams in
// docs/zab-walkthrough.md are its output; its test fails when they differ.
//
//	go run ./docs/tools/zabdiagram SCENARIO
//
// Scenarios: elect-and-write (election, discovery, an empty DIFF,
// broadcast of one write), diff-after-restart (a member that missed a write
// is brought up to date with DIFF).
package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/zabtest"
)

func main() {
	if len(os.Args) != 2 || scenarios[os.Args[1]] == nil {
		fmt.Fprintf(os.Stderr, "usage: zabdiagram %s\n", strings.Join(scenarioNames(), "|"))
		os.Exit(2)
	}
	if err := render(os.Stdout, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "zabdiagram:", err)
		os.Exit(1)
	}
}

// fatal makes the harness's failures an error of the tool.
type fatal struct{ err error }

func (f *fatal) Helper() {}
func (f *fatal) Fatalf(format string, args ...any) {
	f.err = fmt.Errorf(format, args...)
	panic(f)
}

// scenarios drive a cluster; only what they make happen is drawn.
var scenarios = map[string]func(c *zabtest.Cluster){
	"elect-and-write": func(c *zabtest.Cluster) {
		c.Run(2*time.Second, 50*time.Millisecond)
		cl := c.Connect(c.Leader(), 0, nil, 4000)
		c.Stabilize(1000)
		cl.Send(wire.OpCreate, &wire.CreateRequest{Path: "/a", Data: []byte("x"), ACL: wire.OpenACLUnsafe})
		c.Stabilize(1000)
	},
	"diff-after-restart": func(c *zabtest.Cluster) {
		c.Run(2*time.Second, 50*time.Millisecond)
		lagging := int64(3)
		if c.Leader() == lagging {
			lagging = 2
		}
		c.Crash(lagging)
		c.Stabilize(1000)
		cl := c.Connect(c.Leader(), 0, nil, 4000)
		c.Stabilize(1000)
		cl.Send(wire.OpCreate, &wire.CreateRequest{Path: "/b", Data: []byte("y"), ACL: wire.OpenACLUnsafe})
		c.Stabilize(1000)
		c.Restart(lagging)
		c.Run(2*time.Second, 50*time.Millisecond)
	},
}

func scenarioNames() []string {
	var names []string
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// render runs the scenario (seed 1, so the diagram is the same every run)
// and writes the diagram.
func render(w io.Writer, name string) (err error) {
	f := &fatal{}
	defer func() {
		if r := recover(); r != nil {
			if r != f {
				panic(r)
			}
			err = f.err
		}
	}()
	c := zabtest.NewCluster(f, zabtest.ClusterConfig{Voters: 3}, 1)
	scenarios[name](c)
	_, err = io.WriteString(w, mermaid(c.Trace))
	return err
}

var (
	arrow = regexp.MustCompile(`^(\d+)->(\d+) (.*)$`)
	local = regexp.MustCompile(`^(\d+): (.*)$`)
	// quiet are the trace lines a diagram leaves out: sends (each
	// delivery is an arrow), the disk, notices, client traffic.
	quiet = regexp.MustCompile(`^\d+: (send to|close the connection to|append|durable up to|notice:|warning:|c\d+ )`)
)

// mermaid turns trace lines into a sequence diagram. Pings carry no
// lesson, and sends, the disk, notices and client traffic would double
// the arrows, so they are left out and the diagram stays readable;
// everything else is drawn in trace order.
func mermaid(trace []string) string {
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	for _, id := range []string{"1", "2", "3"} {
		fmt.Fprintf(&b, "    participant S%s as server %s\n", id, id)
	}
	for _, line := range trace {
		switch m := arrow.FindStringSubmatch(line); {
		case m != nil:
			if strings.HasPrefix(m[3], "PING") {
				continue
			}
			fmt.Fprintf(&b, "    S%s->>S%s: %s\n", m[1], m[2], escape(m[3]))
		case quiet.MatchString(line):
		default:
			if m := local.FindStringSubmatch(line); m != nil {
				fmt.Fprintf(&b, "    Note over S%s: %s\n", m[1], escape(m[2]))
			}
		}
	}
	return b.String()
}

// escape keeps a label on one mermaid line: no ';' or '#' (mermaid reads
// them as statement and entity marks).
func escape(s string) string {
	return strings.NewReplacer(";", ",", "#", "no.").Replace(s)
}
