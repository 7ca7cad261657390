package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const zkCliPath = "/usr/share/zookeeper/bin/zkCli.sh"

// TestTranscriptMatchesZkCli runs one script of every zkCli command, with
// their flags and error cases, through Debian's zkCli and through zabctl,
// each against a fresh zabd, and compares what they print: stdout and
// stderr line by line (times and session ids masked), and the watch events
// as a multiset (zkCli prints them from another thread, so where they fall
// among the command output is a race).
func TestTranscriptMatchesZkCli(t *testing.T) {
	if _, err := os.Stat(zkCliPath); err != nil {
		t.Skipf("skipping: Debian's zookeeper package is not installed (%s missing; apt-get install zookeeper zookeeper-bin)", zkCliPath)
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("skipping: java is not installed (Debian's zookeeper package needs it)")
	}
	script, err := os.ReadFile("testdata/zkcli-script.txt")
	require.NoError(t, err)

	zk := startZabd(t, "", "")
	cmd := exec.Command(zkCliPath, "-server", zk.addr)
	cmd.Stdin = strings.NewReader(strings.ReplaceAll(string(script), "PORT", port(zk.addr)))
	var jOut, jErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &jOut, &jErr
	start := time.Now()
	runErr := cmd.Run()
	jCode := 0
	if ee, ok := runErr.(*exec.ExitError); ok {
		jCode = ee.ExitCode()
	} else {
		require.NoError(t, runErr)
	}
	t.Logf("zkCli ran the script in %v", time.Since(start))

	ours := startZabd(t, "", "")
	gOut, gErr, gCode := zabctl(t, strings.ReplaceAll(string(script), "PORT", port(ours.addr)), "-server", ours.addr)

	jLines, jEvents := normalize(jOut.String())
	gLines, gEvents := normalize(gOut)
	assert.Equal(t, jLines, gLines, "stdout")
	assert.Equal(t, jEvents, gEvents, "watch events")
	assert.Equal(t, normalizeErr(jErr.String()), normalizeErr(gErr), "stderr")
	assert.Equal(t, jCode, gCode, "exit code")
}

func port(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }

var (
	timeLine    = regexp.MustCompile(`^([cm]time) = .*$`)
	ownerLine   = regexp.MustCompile(`^ephemeralOwner = 0x[0-9a-f]+$`)
	versionLine = regexp.MustCompile(`^ZooKeeper CLI version: .*$`)
)

// normalize splits stdout into its lines without the watch events, and
// the sorted event lines; it masks times, non-zero session ids and the
// version, and drops the banner lines zkCli prints before its prompt.
func normalize(out string) (lines, events []string) {
	for _, l := range strings.Split(out, "\n") {
		switch {
		case l == "" || l == "WATCHER::" || strings.HasPrefix(l, "Connecting to ") || strings.HasPrefix(l, "JLine support"):
		case strings.HasPrefix(l, "WatchedEvent "):
			events = append(events, l)
		case timeLine.MatchString(l):
			lines = append(lines, timeLine.ReplaceAllString(l, "$1 = <time>"))
		case ownerLine.MatchString(l) && l != "ephemeralOwner = 0x0":
			lines = append(lines, "ephemeralOwner = <session>")
		case versionLine.MatchString(l):
			lines = append(lines, "ZooKeeper CLI version: <version>")
		default:
			lines = append(lines, l)
		}
	}
	slices.Sort(events)
	return lines, events
}

// normalizeErr drops the JVM's logging noise from zkCli's stderr.
func normalizeErr(s string) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l == "" || strings.HasPrefix(l, "SLF4J:") {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}
