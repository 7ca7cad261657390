package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func zabsim(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"-seed", "1", "-seeds", "1..2"}, {"-seeds", "5..1"}, {"-bugs", "nonsense", "-seed", "1"}, {"check"}} {
		code, _, _ := zabsim(args...)
		require.Equal(t, 2, code, "%q", args)
	}
}

// A scenario replays from its file, writes its history, and the history
// passes `zabsim check`.
func TestScheduleHistoryAndCheck(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "h.jsonl")
	code, out, errOut := zabsim("-schedule", "../../sim/testdata/scenarios/drops-keep-session.json", "-history", hist)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "ok\n")
	code, out, _ = zabsim("check", hist)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "ok    linearizable writes")
}

// A broken core fails, names the replay command and, with -shrink, prints a
// schedule that -schedule replays to the same failure.
func TestBugIsReportedShrunkAndReplayed(t *testing.T) {
	code, out, _ := zabsim("-seed", "1", "-bugs", "reply-before-fsync", "-shrink")
	require.Equal(t, 1, code)
	require.Contains(t, out, "replay: go run ./cmd/zabsim -seed 1 -bugs reply-before-fsync -v")
	start := bytes.LastIndex([]byte(out), []byte("\n{"))
	require.Positive(t, start, out)
	file := filepath.Join(t.TempDir(), "shrunk.json")
	require.NoError(t, os.WriteFile(file, []byte(out[start+1:]), 0o644))
	code, out, _ = zabsim("-schedule", file, "-bugs", "reply-before-fsync")
	require.Equal(t, 1, code)
	require.Contains(t, out, "before it was durable")
	code, _, _ = zabsim("-schedule", file)
	require.Equal(t, 0, code, "the shrunk schedule passes without the bug")
}

// Parallel workers give the same verdicts, reported in seed order.
func TestParallelSweepMatchesSerial(t *testing.T) {
	code1, serial, _ := zabsim("-seeds", "1..6", "-checkers=false", "-bugs", "reply-before-fsync")
	code2, parallel, _ := zabsim("-seeds", "1..6", "-checkers=false", "-bugs", "reply-before-fsync", "-j", "3")
	require.Equal(t, 1, code1)
	require.Equal(t, code1, code2)
	strip := func(s string) string { return s[:bytes.LastIndexByte([]byte(s[:len(s)-1]), '\n')+1] } // the timing line differs
	require.Equal(t, strip(serial), strip(parallel))
	require.Contains(t, serial, "seed 1: FAILED")
}
