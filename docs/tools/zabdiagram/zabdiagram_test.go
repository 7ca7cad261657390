package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var block = regexp.MustCompile("(?s)<!-- zabdiagram ([a-z-]+) -->\n```mermaid\n(.*?)```")

// TestWalkthroughDiagramsAreWhatTheCommandPrints: every diagram in the
// walkthrough marked with its scenario is exactly what
// `go run ./docs/tools/zabdiagram SCENARIO` prints today, and every
// scenario has its diagram there.
func TestWalkthroughDiagramsAreWhatTheCommandPrints(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "zab-walkthrough.md"))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, m := range block.FindAllStringSubmatch(string(doc), -1) {
		name, inDoc := m[1], m[2]
		require.Contains(t, scenarios, name, "the walkthrough names an unknown scenario")
		var out bytes.Buffer
		require.NoError(t, render(&out, name))
		assert.Equal(t, out.String(), inDoc, "docs/zab-walkthrough.md's %s diagram is stale: paste `go run ./docs/tools/zabdiagram %s`", name, name)
		seen[name] = true
	}
	for _, name := range scenarioNames() {
		assert.True(t, seen[name], "scenario %s has no diagram in the walkthrough", name)
	}
}

func TestDiagramsShowEachPhase(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, render(&out, "elect-and-write"))
	d := out.String()
	for _, step := range []string{"vote LOOKING", "FOLLOWERINFO", "LEADERINFO", "ACKEPOCH", "DIFF", "NEWLEADER", "UPTODATE", "PROPOSAL", "COMMIT", "create /a"} {
		assert.Contains(t, d, step)
	}
	out.Reset()
	require.NoError(t, render(&out, "diff-after-restart"))
	d = out.String()
	assert.Contains(t, d, "crashed")
	i := strings.Index(d, "restarting")
	require.Positive(t, i)
	assert.Regexp(t, `S\d->>S\d: DIFF 0x100000002\n(.*\n)*.*PROPOSAL 0x100000002 create /b`, d[i:], "after its restart the member gets the missed write by DIFF")
}
