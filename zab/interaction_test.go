package zab_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// TestInteraction runs the scripts in testdata/interaction: each drives an
// ensemble step by step (elections, synchronization by DIFF, TRUNC and
// SNAP, crashes, partitions, bad packets) and compares the trace it
// prints with the file. testdata/interaction/README.md lists the commands
// and maps each step of Zab's phases to the scripts that show it. After a
// deliberate change of behaviour, regenerate them with
//
//	go test ./zab -run TestInteraction -rewrite
//
// and read the diff: the files are the record of what the protocol does.
func TestInteraction(t *testing.T) {
	for _, path := range interactionScripts(t) {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			datadriven.RunTestAny(t, path, newInteraction().Handle)
		})
	}
}

// interactionScripts are the scripts: the .txt files of the directory (its
// README.md is not one).
func interactionScripts(t *testing.T) []string {
	scripts, err := filepath.Glob(filepath.Join("testdata", "interaction", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	return scripts
}

// TestInteractionIndex: the README's index names every script, and only
// scripts that exist, so that each one is found from the phase step it
// shows.
func TestInteractionIndex(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("testdata", "interaction", "README.md"))
	require.NoError(t, err)
	linked := map[string]bool{}
	for _, m := range regexp.MustCompile(`\]\(([^)]+\.txt)\)`).FindAllStringSubmatch(string(readme), -1) {
		linked[m[1]] = true
	}
	for _, path := range interactionScripts(t) {
		name := filepath.Base(path)
		require.True(t, linked[name], "testdata/interaction/README.md does not name %s: add it where it belongs", name)
		delete(linked, name)
	}
	require.Empty(t, linked, "testdata/interaction/README.md names scripts that do not exist")
}

func newInteraction() *zabtest.Interaction {
	e := zabtest.NewInteraction(1)
	e.ConfigArgs = map[string]func(*zab.Config, int64){"counter-limit": zab.SetCounterLimit}
	return e
}

// run hands an Interaction one command line and returns what it printed.
func run(t *testing.T, e *zabtest.Interaction, line string) string {
	t.Helper()
	cmd, args, err := datadriven.ParseLine(line)
	require.NoError(t, err)
	return e.Handle(t, &datadriven.TestData{Pos: line, Cmd: cmd, CmdArgs: args})
}

// TestBootstrapIsAddNodesAndRun: bootstrap with its defaults leaves the
// ensemble exactly where add-nodes and run 100ms do, the whole trace of
// the election, discovery and synchronization included (it is not
// printed, not skipped), and it prints the members' starting state.
func TestBootstrapIsAddNodesAndRun(t *testing.T) {
	long := newInteraction()
	run(t, long, "add-nodes voters=3 observers=1 window=2")
	run(t, long, "run 100ms")
	short := newInteraction()
	out := run(t, short, "bootstrap voters=3 observers=1 window=2")
	require.Equal(t, "at 100ms\n"+
		"1: following leader=3 epoch=1 zxid=0x0\n"+
		"2: following leader=3 epoch=1 zxid=0x0\n"+
		"3: leading leader=3 epoch=1 zxid=0x0\n"+
		"4: observing leader=3 epoch=1 zxid=0x0\n", out)
	require.Equal(t, long.C.Trace, short.C.Trace)
	require.Equal(t, long.C.Now, short.C.Now)
	require.Equal(t, long.C.Status(), short.C.Status())
	require.Contains(t, strings.Join(short.C.Trace, "\n"), "3: notice: leader: epoch 1 established")
}

// TestBootstrapLeaderAndEpoch: leader and epoch are reached by elections
// and discoveries on the real core: the voters above the leader join its
// epoch once it serves, and every epoch below the one asked for was
// established before.
func TestBootstrapLeaderAndEpoch(t *testing.T) {
	e := newInteraction()
	out := run(t, e, "bootstrap voters=5 observers=1 leader=3 epoch=3")
	require.Equal(t, []string{
		"1: following leader=3 epoch=3 zxid=0x0",
		"2: following leader=3 epoch=3 zxid=0x0",
		"3: leading leader=3 epoch=3 zxid=0x0",
		"4: following leader=3 epoch=3 zxid=0x0",
		"5: following leader=3 epoch=3 zxid=0x0",
		"6: observing leader=3 epoch=3 zxid=0x0",
	}, strings.Split(strings.TrimSpace(out), "\n")[1:])
	trace := strings.Join(e.C.Trace, "\n")
	for _, epoch := range []string{"1", "2", "3"} {
		require.Contains(t, trace, "3: notice: leader: epoch "+epoch+" established with [3 1 2]")
	}
	require.NotContains(t, trace, "notice: leader: epoch 4")
	for _, n := range e.C.Nodes {
		acc, cur := n.Peer.Epochs()
		require.Equal(t, [2]int64{3, 3}, [2]int64{acc, cur}, "server %d", n.ID)
	}
	// The ensemble serves from there: a write commits.
	run(t, e, "connect node=4")
	run(t, e, "stabilize")
	run(t, e, "create client=1 path=/a")
	require.Contains(t, run(t, e, "stabilize"), "4: c1 reply xid=1 zxid=0x300000002 ok /a")
}

// TestBootstrapRefuses: what bootstrap cannot reach honestly is refused,
// naming why, rather than run as something else.
func TestBootstrapRefuses(t *testing.T) {
	for line, want := range map[string]string{
		"bootstrap voters=3 leader=1":      "leader=1: the voters 1..1 must be a quorum of the 3 voters",
		"bootstrap voters=3 leader=4":      "leader=4 is not a voter",
		"bootstrap voters=3 epoch=0":       "epoch must be at least 1",
		"bootstrap voters=3 down":          "down is add-nodes'",
		"bootstrap voters=3 counter-lim=3": `unknown argument "counter-lim"`,
	} {
		cmd, args, err := datadriven.ParseLine(line)
		require.NoError(t, err)
		f := &fatalTB{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			newInteraction().Handle(f, &datadriven.TestData{Pos: line, Cmd: cmd, CmdArgs: args})
		}()
		<-done
		require.Contains(t, f.fatal, want, line)
	}
}

// fatalTB records the first Fatalf and ends the goroutine that called it,
// as testing.T does, without failing the test.
type fatalTB struct {
	testing.TB
	fatal string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
