package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func zabsim(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"-seed", "1", "-seeds", "1..2"}, {"-seeds", "5..1"}, {"-bugs", "nonsense", "-seed", "1"},
		{"check"}, {"-nonsense"}, {"-seed", "0", "-schedule", "x.json"}} {
		code, _, errOut := zabsim(args...)
		require.Equal(t, 2, code, "%q", args)
		require.Regexp(t, `^(zabsim|usage|flag provided)`, errOut, "%q: a message saying what is wrong", args)
	}
}

// -h lists every way to call zabsim, the check subcommand included, and
// every flag, on stdout, and exits 0.
func TestHelpListsEverything(t *testing.T) {
	code, out, errOut := zabsim("-h")
	require.Equal(t, 0, code)
	require.Empty(t, errOut)
	for _, want := range []string{"zabsim -seed N", "zabsim -seeds A..B", "zabsim -schedule FILE", "zabsim check [-witness W] FILE",
		"-bugs", "-checkers", "-history", "-j", "-shrink", "-v", "h.seed17.jsonl"} {
		require.Contains(t, out, want)
	}
	code, out, _ = zabsim("check", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, out, "zabsim check FILE")
	require.Contains(t, out, "-witness")
}

func TestJobsBelowOneAreRefused(t *testing.T) {
	for _, j := range []string{"0", "-3"} {
		code, out, errOut := zabsim("-seeds", "1..2", "-j", j)
		require.Equal(t, 2, code, out)
		require.Contains(t, errOut, "-j "+j+": want at least 1")
	}
}

// A scenario replays from its file, writes its history, and the history
// passes `zabsim check`.
func TestScheduleHistoryAndCheck(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "h.jsonl")
	code, out, errOut := zabsim("-schedule", "../../sim/testdata/scenarios/drops-keep-session.json", "-history", hist)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "ok\n")
	require.Contains(t, out, "check: go run ./cmd/zabsim check -witness "+filepath.Join(filepath.Dir(hist), "h.witness.jsonl")+" "+hist+"\n",
		"the command that judges the history as the run was judged")
	code, out, _ = zabsim("check", hist)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "ok    linearizable writes")
	witness := filepath.Join(filepath.Dir(hist), "h.witness.jsonl")
	require.FileExists(t, witness, "-history writes the witness beside the history")
	code, out, _ = zabsim("check", "-witness", witness, hist)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "ok    linearizable writes")
	require.Contains(t, out, "witness: explains the history")
	require.NoError(t, os.WriteFile(witness, []byte(`{"zxid":"0x2","op":"create"}`+"\n"+`{"zxid":"0x1","op":"create"}`), 0o644))
	code, _, errOut = zabsim("check", "-witness", witness, hist)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `h.witness.jsonl:2: field "zxid": 0x1 does not follow 0x2`)
}

// A broken core fails, names the replay command and, by default (as the
// README promises), prints a shrunk schedule that -schedule replays to the
// same failure.
func TestBugIsReportedShrunkAndReplayed(t *testing.T) {
	code, out, _ := zabsim("-seed", "15", "-bugs", "reply-before-fsync")
	require.Equal(t, 1, code)
	require.Contains(t, out, "replay: go run ./cmd/zabsim -seed 15 -bugs reply-before-fsync -v")
	start := bytes.LastIndex([]byte(out), []byte("\n{"))
	require.Positive(t, start, out)
	file := filepath.Join(t.TempDir(), "shrunk.json")
	require.NoError(t, os.WriteFile(file, []byte(out[start+1:]), 0o644))
	code, out, _ = zabsim("-schedule", file, "-bugs", "reply-before-fsync")
	require.Equal(t, 1, code)
	require.Contains(t, out, "not durable on a quorum")
	code, _, _ = zabsim("-schedule", file)
	require.Equal(t, 0, code, "the shrunk schedule passes without the bug")
}

// -shrink=false reports the failure without shrinking it.
func TestShrinkCanBeSkipped(t *testing.T) {
	code, out, _ := zabsim("-seed", "15", "-bugs", "reply-before-fsync", "-shrink=false")
	require.Equal(t, 1, code)
	require.Contains(t, out, "replay: go run ./cmd/zabsim -seed 15 -bugs reply-before-fsync -v")
	require.NotContains(t, out, "shrunk")
}

// Parallel workers give the same verdicts, reported in seed order.
func TestParallelSweepMatchesSerial(t *testing.T) {
	code1, serial, _ := zabsim("-seeds", "13..18", "-checkers=false", "-shrink=false", "-bugs", "reply-before-fsync")
	code2, parallel, _ := zabsim("-seeds", "13..18", "-checkers=false", "-shrink=false", "-bugs", "reply-before-fsync", "-j", "3")
	require.Equal(t, 1, code1)
	require.Equal(t, code1, code2)
	strip := func(s string) string { // the timing line differs
		var kept []string
		for _, line := range strings.Split(s, "\n") {
			if !strings.Contains(line, "simulated seconds per wall second") {
				kept = append(kept, line)
			}
		}
		return strings.Join(kept, "\n")
	}
	require.Equal(t, strip(serial), strip(parallel))
	require.Contains(t, serial, "seed 15: FAILED")
	// The timing line says how fast the simulator went, against wall-clock
	// and CPU time.
	require.Regexp(t, `\n6 seeds, \d+ failed, [^,]+, [^ ]+ simulated: \d+ simulated seconds per wall second, \d+ per CPU second \(.* of CPU\)\n`, parallel)
}

// With -seeds, -history writes one history (and its witness) per failing
// seed, named after the file given, and none for a seed that passes.
func TestSweepWritesOneHistoryPerFailingSeed(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "h.jsonl")
	code, out, _ := zabsim("-seeds", "23..24", "-shrink=false", "-checkers=false", "-bugs", "reply-before-fsync", "-history", hist)
	require.Equal(t, 1, code, out)
	for _, seed := range []string{"23", "24"} {
		file := filepath.Join(dir, "h.seed"+seed+".jsonl")
		require.Contains(t, out, "history: "+file+"\n")
		code, _, errOut := zabsim("check", file)
		require.NotEqual(t, 2, code, "a readable history: %s", errOut)
	}
	code, out, _ = zabsim("-seeds", "1..2", "-checkers=false", "-history", filepath.Join(dir, "ok"))
	require.Equal(t, 0, code, out)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 4, "passing seeds write no history (failing ones a history and its witness)")
	require.Equal(t, filepath.Join("out", "h.seed7"), seedHistoryFile(filepath.Join("out", "h"), 7))
}

// The -v trace shows requests and replies as readable records: op names,
// paths, versions, zxids and session ids in hex; never a Go struct dump.
func TestVerboseTraceIsReadable(t *testing.T) {
	code, out, _ := zabsim("-seed", "42", "-v", "-checkers=false")
	require.Equal(t, 0, code)
	for _, dump := range []string{"&{", "{Path:", "Stat:{", "Czxid:", "0x-", "%!"} {
		require.NotContains(t, out, dump)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`client 1 -> xid=\d+ delete /\S+ version=-?\d+\n`),
		regexp.MustCompile(`client 1 -> xid=\d+ getData /\S+( watch)?\n`),
		regexp.MustCompile(`server \d+ -> client 1 xid=\d+ zxid=0x[0-9a-f]+ ok "[^"]*" \{czxid=0x[0-9a-f]+ mzxid=0x[0-9a-f]+ pzxid=0x[0-9a-f]+ `),
		regexp.MustCompile(`server \d+ -> client 1 xid=-1 zxid=-1 ok Node\w+ SyncConnected /`),
		regexp.MustCompile(`server \d+ -> client 1 connect session=0x[0-9a-f]{8,} timeout=\d+ms`),
		regexp.MustCompile(`client 1 -> xid=\d+ multi \[`),
	} {
		require.Regexp(t, want, out)
	}
}
