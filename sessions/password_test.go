package sessions

import (
	"bufio"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestPasswordMatchesJavaGolden checks passwords against values printed by
// java.util.Random itself (testdata/Passwords.java; the command is the
// golden file's first line).
func TestPasswordMatchesJavaGolden(t *testing.T) {
	f, err := os.Open("testdata/passwords.golden")
	require.NoError(t, err)
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		id, want := parseGoldenLine(t, line)
		assert.Equal(t, want, hex.EncodeToString(Passwords{}.For(id)), "id %d", id)
		n++
	}
	require.NoError(t, sc.Err())
	require.Greater(t, n, 5)
}

func parseGoldenLine(t *testing.T, line string) (int64, string) {
	t.Helper()
	fields := strings.Fields(line)
	require.Len(t, fields, 2, "golden line %q", line)
	id, err := strconv.ParseInt(fields[0], 10, 64)
	require.NoError(t, err)
	return id, fields[1]
}

// TestPasswordMatchesLiveJava runs Java's Random on ids drawn at random
// here, so the check is not limited to the golden ids.
func TestPasswordMatchesLiveJava(t *testing.T) {
	javac, errc := exec.LookPath("javac")
	java, errj := exec.LookPath("java")
	if errc != nil || errj != nil {
		t.Skip("javac/java not installed (Debian: default-jdk-headless); the golden test still covers the derivation")
	}
	dir := t.TempDir()
	out, err := exec.Command(javac, "-d", dir, filepath.Join("testdata", "Passwords.java")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	ids := rapid.SliceOfN(rapid.Int64(), 200, 200).Example(1)
	args := []string{"-cp", dir, "Passwords"}
	for _, id := range ids {
		args = append(args, strconv.FormatInt(id, 10))
	}
	out, err = exec.Command(java, args...).Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, len(ids))
	for _, line := range lines {
		id, want := parseGoldenLine(t, line)
		assert.Equal(t, want, hex.EncodeToString(Passwords{}.For(id)), "id %d", id)
	}
}

func TestPasswordCheck(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.Int64().Filter(func(v int64) bool { return v != 0 }).Draw(t, "id")
		secret := rapid.SliceOfN(rapid.Byte(), 0, 32).Draw(t, "secret")
		p := Passwords{Secret: secret}
		pw := p.For(id)
		require.Len(t, pw, PasswordLen)
		require.True(t, p.Check(id, pw))
		bad := append([]byte(nil), pw...)
		bad[rapid.IntRange(0, PasswordLen-1).Draw(t, "flip")] ^= 1
		require.False(t, p.Check(id, bad))
		require.False(t, p.Check(id, pw[:PasswordLen-1]))
	})
	assert.False(t, Passwords{}.Check(0, Passwords{}.For(0)), "id 0 never validates")
}

// TestSecretChangesPassword: with an ensemble secret, knowing the id is no
// longer enough, and two secrets disagree.
func TestSecretChangesPassword(t *testing.T) {
	id := int64(0x0100_0123_4567_0000)
	plain := Passwords{}.For(id)
	a := Passwords{Secret: []byte("ensemble-a")}
	b := Passwords{Secret: []byte("ensemble-b")}
	assert.NotEqual(t, plain, a.For(id))
	assert.NotEqual(t, a.For(id), b.For(id))
	assert.False(t, a.Check(id, plain))
	assert.Equal(t, a.For(id), Passwords{Secret: []byte("ensemble-a")}.For(id), "derivation is stable")
}
