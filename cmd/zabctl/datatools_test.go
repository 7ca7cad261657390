package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zk38 is a data directory Debian's ZooKeeper 3.8.0 wrote (see its README).
const zk38 = "../../zab/storage/testdata/zk38"

func TestDataToolsReadZooKeeper38Files(t *testing.T) {
	out, errOut, code := zabctl(t, "", "log", "dump", zk38)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Len(t, lines, 0x3d, "one line per txn of the four log files")
	assert.Regexp(t, `^0x1 2026-\S+ session=0x[0-9a-f]+ cxid=0x0 createSession timeout=5000ms digest=2:\d+$`, lines[0])
	assert.Contains(t, lines[1], "create /app ")

	out, _, code = zabctl(t, "", "log", "dump", "-from", "0x12", "-to", "0x13", "-o", "json", zk38+"/version-2/log.12")
	require.Equal(t, 0, code)
	assert.Equal(t, 2, strings.Count(out, "\n"))
	assert.Contains(t, out, `"zxid":"0x12"`)

	out, _, code = zabctl(t, "", "log", "verify", zk38)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "log.1: 17 txns 0x1..0x11, ends cleanly")
	assert.Contains(t, out, "recovery: starts from snapshot.30 and the log up to 0x3d")

	out, _, code = zabctl(t, "", "snap", "dump", zk38+"/version-2/snapshot.10")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "snapshot snapshot.10: zxid 0x10 (epoch 0), 1 sessions, 19 nodes")
	assert.Contains(t, out, `/app/n00 czxid=0x3`)

	out, _, code = zabctl(t, "", "snap", "digest", zk38+"/version-2/snapshot.30")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `^digest: \d+ \(version 2\) at zxid 0x31, matches the tree\n$`, out)
}

// zabdDataDir runs a zabd, writes through zabctl, stops it and returns its
// data directory.
func zabdDataDir(t *testing.T, writes int) string {
	z := startZabd(t, "", "")
	for i := range writes {
		_, errOut, code := zabctl(t, "", "-server", z.addr, "create", "/n"+strings.Repeat("x", i%3)+string(rune('a'+i)), "v")
		require.Equal(t, 0, code, errOut)
	}
	z.stop(t)
	return z.dir
}

func TestDataToolsOnZabdFilesAndDamage(t *testing.T) {
	dir := zabdDataDir(t, 6)
	out, errOut, code := zabctl(t, "", "log", "dump", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "create /na data=1 bytes")
	out, _, code = zabctl(t, "", "log", "verify", dir)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "ends cleanly")

	logs, err := filepath.Glob(filepath.Join(dir, "version-2", "log.*"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	data, err := os.ReadFile(logs[0])
	require.NoError(t, err)

	// A byte flipped in the first record: log dump and verify name the
	// file and offset. (Whether recovery cuts or refuses damage inside the
	// newest file is zab/storage's judgement, which verify reports.)
	bad := append([]byte(nil), data...)
	bad[16+12+5] ^= 0x01
	require.NoError(t, os.WriteFile(logs[0], bad, 0o644))
	out, _, _ = zabctl(t, "", "log", "verify", dir)
	assert.Contains(t, out, "DAMAGED at offset 16")
	_, errOut, code = zabctl(t, "", "log", "dump", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "at offset 16")

	// The last record cut short by a crash: zeros from inside it on, as a
	// lost sector of the preallocated file reads (docs/storage.md). A torn
	// tail, which recovery cuts. (Truncating the file there instead would
	// be a log cut short, which no crash does and recovery refuses.)
	require.NoError(t, os.WriteFile(logs[0], data, 0o644))
	ends := lastRecordStart(t, dir)
	torn := append(append([]byte(nil), data[:ends+7]...), make([]byte, len(data)-ends-7)...)
	require.NoError(t, os.WriteFile(logs[0], torn, 0o644))
	out, _, code = zabctl(t, "", "log", "verify", dir)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "DAMAGED at offset")
	assert.Contains(t, out, "recovery: starts from")
}

// lastRecordStart is the offset of the last txn of dir's log, from log dump.
func lastRecordStart(t *testing.T, dir string) int {
	out, _, code := zabctl(t, "", "log", "dump", "-o", "json", dir)
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	i := strings.Index(last, `"offset":`)
	require.Positive(t, i)
	var off int
	for _, c := range last[i+len(`"offset":`):] {
		if c < '0' || c > '9' {
			break
		}
		off = off*10 + int(c-'0')
	}
	return off
}

// TestLogVerifyTellsMidLogCorruptionFromATornTail: damage in a log file
// that has successors loses acknowledged txns, and recovery refuses it.
func TestLogVerifyTellsMidLogCorruptionFromATornTail(t *testing.T) {
	dir := t.TempDir()
	v2 := filepath.Join(dir, "version-2")
	require.NoError(t, os.MkdirAll(v2, 0o755))
	files, err := filepath.Glob(zk38 + "/version-2/*")
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if filepath.Base(f) == "log.12" {
			b[16+12+20] ^= 0x10 // inside the first record's entry
		}
		require.NoError(t, os.WriteFile(filepath.Join(v2, filepath.Base(f)), b, 0o644))
	}
	// Only snapshot.0 left, so recovery needs every log file.
	for _, s := range []string{"snapshot.10", "snapshot.1f", "snapshot.30"} {
		require.NoError(t, os.Remove(filepath.Join(v2, s)))
	}
	out, _, code := zabctl(t, "", "log", "verify", dir)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "log.12: no txns, DAMAGED at offset 16")
	assert.Contains(t, out, "recovery would refuse to start")
	assert.Contains(t, out, "log.12")
	_, err = os.Stat(filepath.Join(v2, "log.12"))
	assert.NoError(t, err, "verify changed nothing in place")
}

func TestLogTruncateRefusesToDropAStandalonesTxnsWithoutForce(t *testing.T) {
	dir := zabdDataDir(t, 4)
	_, errOut, code := zabctl(t, "", "log", "truncate", dir, "0x2")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "refusing: truncating to 0x2 drops")
	assert.Contains(t, errOut, "-force")
	out, _, _ := zabctl(t, "", "log", "dump", dir)
	before := strings.Count(out, "\n")

	out, errOut, code = zabctl(t, "", "log", "truncate", "-force", dir, "0x2")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "the log now ends at 0x2")
	out, _, code = zabctl(t, "", "log", "dump", dir)
	require.Equal(t, 0, code)
	assert.Equal(t, 2, strings.Count(out, "\n"), "was %d txns", before)

	// The server starts from the truncated log.
	z := startZabd(t, dir, "")
	out, _, code = zabctl(t, "", "-server", z.addr, "ls", "/")
	require.Equal(t, 0, code)
	assert.Equal(t, "[na, zookeeper]\n", out)
}

func TestDataToolsBadInputIsOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"log", "dump", "/no/such/file"},
		{"log", "verify", "/no/such/dir"},
		{"snap", "dump", "/no/such/snapshot.1"},
		{"snap", "digest", zk38 + "/version-2/log.1"},
		{"log", "truncate", zk38, "nonsense"},
	} {
		_, errOut, code := zabctl(t, "", args...)
		assert.Equal(t, 1, code, args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%v: %q", args, errOut)
		assert.True(t, strings.HasPrefix(errOut, "zabctl: "), errOut)
	}
	_, _, code := zabctl(t, "", "log", "frob")
	assert.Equal(t, 2, code)
}

func TestEnsembleStatusTable(t *testing.T) {
	z := startZabd(t, "", "")
	_, _, code := zabctl(t, "", "-server", z.addr, "create", "/s")
	require.Equal(t, 0, code)
	out, _, code := zabctl(t, "", "ensemble", "status", "-server", z.addr)
	require.Equal(t, 0, code, out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	assert.Regexp(t, `^SERVER\s+ID\s+ROLE\s+EPOCH\s+LAST ZXID\s+LAG\s+CONNECTIONS\s+OUTSTANDING$`, lines[0])
	assert.Regexp(t, `^127\.0\.0\.1:\d+\s+\S+\s+standalone\s+0\s+0x[0-9a-f]+\s+0\s+\d+\s+0$`, lines[1])

	out, _, code = zabctl(t, "", "ensemble", "status", "-server", z.addr+",127.0.0.1:1", "-watch", "1ms", "-n", "2", "-o", "json")
	assert.Equal(t, 1, code, "an unreachable member makes the exit code 1")
	assert.Equal(t, 2, strings.Count(out, "\n"), "two refreshes")
	assert.Contains(t, out, `"role":"unreachable"`)
}
