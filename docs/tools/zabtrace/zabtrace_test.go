package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests run in docs/tools/zabtrace; the repository root is three up.
var (
	root     = filepath.Join("..", "..", "..")
	captures = filepath.Join(root, "wire", "testdata", "golden", "peer")
)

func trace(t *testing.T, what string) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, run(&buf, what, captures))
	return buf.String()
}

// TestPeerTraceMatchesManifest: every vector the capture's manifest lists
// in a rendered stream appears in the trace at its offset with its kind,
// and the trace shows nothing the manifest does not list.
func TestPeerTraceMatchesManifest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(captures, "manifest.json"))
	require.NoError(t, err)
	var manifest []struct {
		Kind   string
		File   string
		Offset int64
		Length int
	}
	require.NoError(t, json.Unmarshal(raw, &manifest))

	// What the trace shows, per file: offset -> packet name.
	shown := map[string]map[int64]string{}
	file := ""
	header := regexp.MustCompile(`^== (\S+):`)
	entry := regexp.MustCompile(`^\s*(\d+)  (\S+)`)
	sc := bufio.NewScanner(strings.NewReader(trace(t, "peer")))
	for sc.Scan() {
		if m := header.FindStringSubmatch(sc.Text()); m != nil {
			file = m[1]
			shown[file] = map[int64]string{}
		} else if m := entry.FindStringSubmatch(sc.Text()); m != nil {
			var off int64
			fmt.Sscan(m[1], &off)
			shown[file][off] = m[2]
		}
	}
	names := map[string]string{"election/initial-message": "HELLO", "election/notification": "VOTE"}
	listed := 0
	for _, v := range manifest {
		if shown[v.File] == nil {
			continue // not a stream (frame logs, the txn log)
		}
		listed++
		want := names[v.Kind]
		if want == "" {
			want = strings.TrimPrefix(v.Kind, "quorum/")
		}
		assert.Equal(t, want, shown[v.File][v.Offset], "%s at offset %d", v.File, v.Offset)
	}
	total := 0
	for _, offs := range shown {
		total += len(offs)
	}
	assert.Equal(t, listed, total, "entries in the trace vs vectors in the manifest")
	assert.Len(t, shown, len(peerStreams))
}

// TestTracesAreDeterministic: the scenarios drive deterministic machines,
// so two runs print the same bytes.
func TestTracesAreDeterministic(t *testing.T) {
	for _, what := range []string{"election", "pipeline"} {
		assert.Equal(t, trace(t, what), trace(t, what), what)
	}
}

// TestElectionPicksLongestHistory: the scenario's outcome is FLE's rule,
// not an accident of timing: every server follows server 2, whose zxid is
// highest, though server 3 has the higher id.
func TestElectionPicksLongestHistory(t *testing.T) {
	out := trace(t, "election")
	assert.Contains(t, out, "s2 DECIDES LEADING, leader 2")
	assert.Contains(t, out, "s1 DECIDES FOLLOWING, leader 2")
	assert.Contains(t, out, "s3 DECIDES FOLLOWING, leader 2")
}

// TestWalkthroughQuotesCurrentOutput: each block of docs/zab-walkthrough.md
// introduced by a "go run ./docs/tools/zabtrace X" command is an excerpt of
// that command's output: its lines appear in the output in the same order
// ("..." lines mark what was left out).
func TestWalkthroughQuotesCurrentOutput(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "zab-walkthrough.md"))
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)\\$ go run \\./docs/tools/zabtrace (\\w+)\n(.*?)```")
	outputs := map[string][]string{}
	blocks := block.FindAllSubmatch(doc, -1)
	require.NotEmpty(t, blocks, "the walkthrough quotes no zabtrace output")
	for i, m := range blocks {
		what := string(m[1])
		if outputs[what] == nil {
			outputs[what] = strings.Split(trace(t, what), "\n")
		}
		out := outputs[what]
		at := 0
		for _, line := range strings.Split(strings.TrimRight(string(m[2]), "\n"), "\n") {
			if strings.TrimSpace(line) == "..." {
				continue
			}
			for at < len(out) && out[at] != line {
				at++
			}
			if !assert.Less(t, at, len(out), "block %d (%s): line not in the output, or out of order (run go run ./docs/tools/zabtrace %[2]s and update the excerpt):\n%[3]s", i+1, what, line) {
				break
			}
			at++
		}
	}
}

// TestNewLeaderIsAProposal: NEWLEADER proposes the leader's history as the
// new epoch's initial history; the epoch is established only when a quorum
// has ACKed it, so the trace must not call NEWLEADER itself the
// establishment.
func TestNewLeaderIsAProposal(t *testing.T) {
	var newLeader []string
	for _, line := range strings.Split(trace(t, "peer"), "\n") {
		if strings.Contains(line, " NEWLEADER ") {
			newLeader = append(newLeader, line)
		}
	}
	require.Len(t, newLeader, 1, "the capture holds one NEWLEADER")
	assert.Contains(t, newLeader[0], "epoch 1's initial history proposed (established once a quorum ACKs it)")
	assert.NotContains(t, newLeader[0], "epoch 1 established;")
}
