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

// The tests run in docs/tools/zabdiagram; the repository root is three up,
// and the walkthrough's commands name scripts from there.
var root = filepath.Join("..", "..", "..")

// diagram is what `go run ./docs/tools/zabdiagram ARGS` prints, run from
// the repository root.
func diagram(t *testing.T, args ...string) string {
	t.Helper()
	var from, to string
	var script string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-from":
			i++
			from = args[i]
		case "-to":
			i++
			to = args[i]
		default:
			require.Empty(t, script, "two scripts in %q", args)
			script = args[i]
		}
	}
	var out bytes.Buffer
	require.NoError(t, render(&out, filepath.Join(root, script), from, to))
	return out.String()
}

// shellWords splits a command line as sh would for the simple quoting the
// walkthrough uses: words separated by spaces, single quotes around words
// that hold spaces.
func shellWords(t *testing.T, s string) []string {
	var words []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '\'' {
			end := strings.IndexByte(s[1:], '\'')
			require.GreaterOrEqual(t, end, 0, "unbalanced quote in %q", s)
			words = append(words, s[1:end+1])
			s = s[end+2:]
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		words = append(words, w)
		s = rest
	}
	return words
}

var (
	commandAndDiagram = regexp.MustCompile("(?s)`go run \\./docs/tools/zabdiagram ([^`]*)`\n\n```mermaid\n(.*?)```")
	anyDiagram        = regexp.MustCompile("(?m)^```mermaid$")
)

// TestWalkthroughDiagramsAreWhatTheCommandPrints: every mermaid diagram in
// the walkthrough comes right after the command that prints it, and is
// exactly what that command prints today.
func TestWalkthroughDiagramsAreWhatTheCommandPrints(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "zab-walkthrough.md"))
	require.NoError(t, err)
	blocks := commandAndDiagram.FindAllStringSubmatch(string(doc), -1)
	require.NotEmpty(t, blocks, "the walkthrough has no diagram")
	assert.Equal(t, len(anyDiagram.FindAllString(string(doc), -1)), len(blocks),
		"every mermaid diagram in the walkthrough must follow the zabdiagram command that prints it, so that this test checks it")
	for _, m := range blocks {
		args, inDoc := m[1], m[2]
		assert.Equal(t, diagram(t, shellWords(t, args)...), inDoc,
			"docs/zab-walkthrough.md's diagram is stale: paste the output of `go run ./docs/tools/zabdiagram %s`", args)
	}
}

// TestDiagramsShowWhatTheWalkthroughSays: the facts the walkthrough's text
// reads off each diagram are in it, in the order the text gives.
func TestDiagramsShowWhatTheWalkthroughSays(t *testing.T) {
	const dir = "zab/testdata/interaction/"
	inOrder := func(d string, steps ...string) {
		t.Helper()
		at := 0
		for _, s := range steps {
			i := strings.Index(d[at:], s)
			if !assert.GreaterOrEqual(t, i, 0, "%q missing, or out of order, after position %d of\n%s", s, at, d) {
				return
			}
			at += i + len(s)
		}
	}

	d := diagram(t, dir+"election_3.txt")
	inOrder(d, "S1->>S2: vote LOOKING leader=1", "S3->>S1: vote LOOKING leader=3", "Note over S1: becomes following (discovery) leader=3",
		"S2->>S3: FOLLOWERINFO 0x0", "Note over S3: persist acceptedEpoch=1 currentEpoch=0", "S3->>S2: LEADERINFO 0x100000000",
		"Note over S2: persist acceptedEpoch=1 currentEpoch=0", "S2->>S3: ACKEPOCH", "Note over S3: persist acceptedEpoch=1 currentEpoch=1",
		"S3->>S2: DIFF 0x0", "S3->>S2: NEWLEADER 0x100000000", "Note over S2: persist acceptedEpoch=1 currentEpoch=1",
		"S2->>S3: ACK 0x100000000", "epoch 1 established", "S3->>S2: UPTODATE")
	assert.NotContains(t, d, "send to", "sends are drawn at delivery only")

	d = diagram(t, "-from", "create client=1 path=/a data=x", "-to", "stabilize", dir+"sync_diff.txt")
	inOrder(d, "C1->>S2: xid=1 create /a", "S2->>S3: REQUEST -1 create", "Note over S3: append 0x100000002",
		"S3->>S1: PROPOSAL 0x100000002", "Note over S1: durable up to 0x100000002", "S1->>S3: ACK 0x100000002",
		"S3->>S1: COMMIT 0x100000002", "S2->>C1: reply xid=1 zxid=0x100000002 ok /a")
	assert.NotContains(t, d, "crashed", "-to stops at the first stabilize after -from")

	d = diagram(t, "-from", "crash 1", "-to", "logs", dir+"sync_diff.txt")
	inOrder(d, "Note over S1: crashed", "S1->>S3: ACKEPOCH 0x100000002", "S3->>S1: DIFF 0x100000004",
		"S3->>S1: PROPOSAL 0x100000003", "S3->>S1: COMMIT 0x100000003", "S3->>S1: PROPOSAL 0x100000004",
		"S3->>S1: NEWLEADER", "S1->>S3: ACK 0x100000000", "S3->>S1: UPTODATE")

	d = diagram(t, "-from", "hold 3 1", "-to", "status", dir+"zk1154_follower_ahead.txt")
	inOrder(d, "S3->>S2: PROPOSAL 0x100000002 create /a", "Note over S2: durable up to 0x100000002",
		"Note over S2: crashed (durable up to 0x100000002)", "Note over S3: crashed (durable up to 0x100000001)",
		"S3->>S1: LEADERINFO 0x200000000", "S3->>S1: COMMIT 0x200000002",
		"S2->>S3: ACKEPOCH 0x100000002 currentEpoch=1", "S3->>S2: TRUNC 0x100000001", "Note over S2: truncate log after 0x100000001",
		"S3->>S2: PROPOSAL 0x200000001", "S3->>S2: NEWLEADER 0x200000000", "S3->>S2: UPTODATE")
	assert.NotContains(t, d, "S3->>S2: DIFF", "ZOOKEEPER-1154: the follower ahead must not be sent a DIFF")

	d = diagram(t, "-from", "crash 1", "-to", "status", dir+"sync_snap.txt")
	inOrder(d, "Note over S1: crashed (durable up to 0x100000002)", "S3->>S2: COMMIT 0x100000005",
		"S1->>S3: ACKEPOCH 0x100000002", "by SNAP", "S3->>S1: SNAP 0x100000005", "Note over S1: snapshot written at 0x100000005",
		"S3->>S1: NEWLEADER", "S1->>S3: ACK 0x100000000")
	assert.NotContains(t, d, "S3->>S1: PROPOSAL", "SNAP sends the tree, not the txns")

	d = diagram(t, "-from", "connect node=4", "-to", "get client=1 path=/a", dir+"observer.txt")
	assert.Contains(t, d, "participant S4 as server 4 (observer)")
	inOrder(d, "S4->>S3: REQUEST -1 create session", "S3->>S1: PROPOSAL 0x100000002 create /a", "S1->>S3: ACK 0x100000002",
		"S3->>S1: COMMIT 0x100000002", "S3->>S4: INFORM 0x100000002 create /a", "S4->>C1: reply xid=1 zxid=0x100000002 ok /a")
	assert.NotRegexp(t, `S3->>S4: (PROPOSAL|COMMIT)|S4->>S3: ACK`, d, "an observer is sent INFORM only and ACKs nothing")

	d = diagram(t, "-from", "connect node=1 timeout=1000", dir+"session_moves.txt")
	inOrder(d, "C1->>S1: connect (new session)", "S1->>S3: REQUEST -1 createSession session=0x18", "S3->>S1: PROPOSAL 0x100000001 createSession",
		"S1->>C1: connect session=0x18", "S1->>S3: PING 0x100000002 touch=0x18", "C1-xS1: hangs up",
		"C2->>S2: connect (resume 0x18", "S2->>S3: REVALIDATE -1 session=0x18", "S3->>S2: REVALIDATE -1 session=0x18bcfe568000000 valid=true",
		"S2->>C2: connect session=0x18", "S2->>S3: PING 0x100000002 touch=0x18", "C2-xS2: hangs up",
		"S3->>S1: PROPOSAL 0x100000003 closeSession session=0x18", "S3->>S2: COMMIT 0x100000003",
		"S3->>C3: reply xid=1 zxid=0x100000004 NoNode", "S3->>S1: REVALIDATE -1 session=0x18bcfe568000000 valid=false", "S1->>C4: connect refused")

	d = diagram(t, "-from", "get client=1 path=/a watch", dir+"watch_before_data.txt")
	inOrder(d, "S1->>C1: reply xid=1 zxid=0x100000003 ok \"v1\"", "S2->>S3: REQUEST -1 setData", "S1->>S3: REQUEST -1 create",
		"S3->>S1: PROPOSAL 0x100000004 setData /a", "S3->>S1: PROPOSAL 0x100000005 create /b",
		"S3->>S1: COMMIT 0x100000004", "S1->>C1: event NodeDataChanged /a", "S3->>S1: COMMIT 0x100000005",
		"S1->>C1: reply xid=2 zxid=0x100000005 ok /b", "S1->>C1: reply xid=3 zxid=0x100000005 ok \"v2\"")
}

// TestEveryLineKind: each kind of trace line becomes the arrow or note it
// stands for.
func TestEveryLineKind(t *testing.T) {
	for line, want := range map[string]string{
		"3->1 PROPOSAL 0x100000002 create /a":                   "S3->>S1: PROPOSAL 0x100000002 create /a",
		"3->1 dropped PING 0x0":                                 "S3-xS1: PING 0x0 (dropped)",
		"4->3 lost on a closed connection: PING 0x1 touch=0x4":  "S4-xS3: PING 0x1 touch=0x4 (lost on a closed connection)",
		"3->4 connection closed":                                "S3--)S4: connection closed",
		"2->1 injected LEADERINFO 0x100000000":                  "S2->>S1: LEADERINFO 0x100000000",
		"1<->2 connection broken":                               "Note over S1,S2: connection broken",
		"1: send to 3: FOLLOWERINFO 0x0":                        "",
		"3: close the connection to 4":                          "",
		"3: c1 connects for a new session":                      "C1->>S3: connect (new session)",
		"2: c2 connects to resume session 0x18":                 "C2->>S2: connect (resume 0x18)",
		"3: c1 request xid=1 create /a":                         "C1->>S3: xid=1 create /a",
		"3: c1 reply xid=1 zxid=0x2 ok /a":                      "S3->>C1: reply xid=1 zxid=0x2 ok /a",
		"1: c1 event NodeDataChanged /a":                        "S1->>C1: event NodeDataChanged /a",
		"1: c1 hung up":                                         "C1-xS1: hangs up",
		"4: c1 close":                                           "S4-xC1: closes the connection",
		"2: persist acceptedEpoch=1 currentEpoch=0":             "Note over S2: persist acceptedEpoch=1 currentEpoch=0",
		"3: notice: leader: established; serving":               "Note over S3: established",
		"2: warning: following: lost the leader: looking again": "Note over S2: warning: lost the leader: looking again",
		"at 150ms":                "Note over S1,S3: at 150ms",
		"partitioned [1] | [2 3]": "Note over S1,S3: partitioned [1] | [2 3]",
		"ok":                      "",
	} {
		var b strings.Builder
		drawLine(&b, line, "", "S1,S3")
		assert.Equal(t, want, strings.TrimSpace(b.String()), line)
	}
	var b strings.Builder
	drawLine(&b, "1: down (durable 0x2)", "status", "S1,S3")
	assert.Equal(t, "Note over S1: status: down (durable 0x2)", strings.TrimSpace(b.String()))
}

// TestBadInput: a missing script, a command the script lacks, and a script
// whose recorded output is not what the run prints are refused with an
// error saying so; nothing is drawn.
func TestBadInput(t *testing.T) {
	script := filepath.Join(root, "zab", "testdata", "interaction", "sync_diff.txt")
	var out bytes.Buffer
	assert.ErrorContains(t, render(&out, filepath.Join(t.TempDir(), "none.txt"), "", ""), "none.txt")
	assert.ErrorContains(t, render(&out, script, "crash 9", ""), `-from "crash 9": no such command`)
	assert.ErrorContains(t, render(&out, script, "crash 1", "add-nodes voters=3"), `-to "add-nodes voters=3": no such command at or after -from`)

	raw, err := os.ReadFile(script)
	require.NoError(t, err)
	stale := strings.Replace(string(raw), "3->1 DIFF 0x100000004", "3->1 DIFF 0x100000003", 1)
	require.NotEqual(t, string(raw), stale)
	path := filepath.Join(t.TempDir(), "stale.txt")
	require.NoError(t, os.WriteFile(path, []byte(stale), 0o644))
	assert.ErrorContains(t, render(&out, path, "", ""), "go test ./zab -run TestInteraction -rewrite")

	bad := filepath.Join(t.TempDir(), "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("add-nodes voters=3 down\n----\nok\n\ncrash 7\n----\nok\n"), 0o644))
	assert.ErrorContains(t, render(&out, bad, "", ""), "there is no server 7")

	// A setting only package zab's own test can make (Interaction.ConfigArgs)
	// is refused by name rather than run without, which would print
	// something else.
	testOnly := filepath.Join(t.TempDir(), "test-only.txt")
	require.NoError(t, os.WriteFile(testOnly, []byte("add-nodes voters=3 counter-limit=5\n----\nok\n"), 0o644))
	assert.ErrorContains(t, render(&out, testOnly, "", ""), `unknown argument "counter-limit"`)
	assert.Empty(t, out.String())
}

// TestNoticesAreDrawnAsTheirGist: the core's notices, as the scripts
// print them, lose their mark, role, parenthesised details, elapsed time
// and trailing clauses; a warning keeps its mark; other lines are kept.
func TestNoticesAreDrawnAsTheirGist(t *testing.T) {
	for line, want := range map[string]string{
		"notice: looking: elected server 3 (vote epoch 0, zxid 0x0, round 1) after 0s as FOLLOWING":                                                   "elected server 3 as FOLLOWING",
		"notice: looking: elected server 2 (vote epoch 1, zxid 0x0, round 2) after 1.05s as LEADING":                                                  "elected server 2 as LEADING",
		"notice: leader: synchronizing server 2 by DIFF from 0x0 (its last zxid 0x0, committed 0x0, ours 0x0) from memory":                            "synchronizing server 2 by DIFF from 0x0 from memory",
		"notice: leader: synchronizing server 1 by SNAP from 0x5 (its last zxid 0x2, committed 0x5, ours 0x5), streaming the tree 1024 znodes a step": "synchronizing server 1 by SNAP from 0x5",
		"notice: leader: epoch 1 established with [3 2] after 150ms; serving":                                                                         "epoch 1 established with [3 2]",
		"notice: following: up to date with leader 3 in epoch 1 after 2m0s; serving":                                                                  "up to date with leader 3 in epoch 1",
		"warning: leader: no quorum established epoch 2 within initLimit (10 ticks): looking again":                                                   "warning: no quorum established epoch 2 within initLimit: looking again",
		"warning: following: leaving leader 2 after LEADERINFO 0x100000000 in phase discovery: its epoch is below our acceptedEpoch":                  "warning: leaving leader 2 after LEADERINFO 0x100000000 in phase discovery: its epoch is below our acceptedEpoch",
		"warning: leading: dropping the connection of server 2: PacketType(99) 0x1 in phase broadcast: a leader never receives it":                    "warning: dropping the connection of server 2: PacketType(99) 0x1 in phase broadcast: a leader never receives it",
		"persist acceptedEpoch=1 currentEpoch=0 (after a crash)":                                                                                      "persist acceptedEpoch=1 currentEpoch=0 (after a crash)",
	} {
		assert.Equal(t, want, gist(line), line)
	}
}

// TestVotesReachingADecidedMemberAreNotDrawn: a vote is drawn while its
// receiver is electing, from its "becomes looking" to its decision; lines
// before -from count too.
func TestVotesReachingADecidedMemberAreNotDrawn(t *testing.T) {
	steps := []step{
		{cmd: "stabilize", out: "1: becomes following (discovery) leader=3 epoch=0\n"},
		{cmd: "stabilize", out: strings.Join([]string{
			"3->1 vote LEADING leader=3 zxid=0x0 round=1 peerEpoch=0",
			"3->1 dropped vote LEADING leader=3 zxid=0x0 round=1 peerEpoch=0",
			"1->2 vote FOLLOWING leader=3 zxid=0x0 round=1 peerEpoch=0",
			"3->1 PING 0x0",
			"1: becomes looking (election) leader=0 epoch=0",
			"2->1 vote LOOKING leader=2 zxid=0x0 round=2 peerEpoch=0",
			"1: becomes leading (discovery) leader=1 epoch=0",
			"2->1 injected vote LOOKING leader=2 zxid=0x0 round=2 peerEpoch=0",
		}, "\n") + "\n"},
	}
	d := mermaid(steps, 1, []int64{1, 2, 3}, nil)
	assert.Equal(t, `sequenceDiagram
    participant S1 as server 1
    participant S2 as server 2
    participant S3 as server 3
    S1->>S2: vote FOLLOWING leader=3 zxid=0x0 round=1 peerEpoch=0
    S3->>S1: PING 0x0
    Note over S1: becomes looking (election) leader=0 epoch=0
    S2->>S1: vote LOOKING leader=2 zxid=0x0 round=2 peerEpoch=0
    Note over S1: becomes leading (discovery) leader=1 epoch=0
`, d)
}

// TestNoScriptDrawsAVoteToADecidedMember: over every interaction script
// zabdiagram can draw, no vote arrow reaches a participant between its
// decision and its next "becomes looking" note.
func TestNoScriptDrawsAVoteToADecidedMember(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join(root, "zab", "testdata", "interaction", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	becomes := regexp.MustCompile(`^    Note over (S\d+): becomes (\w+) `)
	vote := regexp.MustCompile(`^    S\d+(?:->>|-x)(S\d+): vote `)
	drawn := 0
	for _, script := range scripts {
		var out bytes.Buffer
		if err := render(&out, script, "", ""); err != nil {
			require.ErrorContains(t, err, "Interaction.ConfigArgs", script) // a test-only setting
			continue
		}
		drawn++
		decided := map[string]bool{}
		for _, line := range strings.Split(out.String(), "\n") {
			if m := becomes.FindStringSubmatch(line); m != nil {
				decided[m[1]] = m[2] != "looking"
			} else if m := vote.FindStringSubmatch(line); m != nil {
				assert.False(t, decided[m[1]], "%s: a vote drawn to %s after its decision: %s", filepath.Base(script), m[1], line)
			}
		}
	}
	assert.Greater(t, drawn, len(scripts)/2, "most scripts should be drawable")
}
