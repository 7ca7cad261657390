package storage

import (
	"fmt"
	"math/rand"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/storage/vfs"
)

// zooKeeperClasspath returns the classpath of Debian's ZooKeeper, or skips.
func zooKeeperClasspath(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java is not installed (Debian package zookeeper brings it)")
	}
	jars, _ := filepath.Glob("/usr/share/java/*.jar")
	for _, j := range jars {
		if filepath.Base(j) == "zookeeper.jar" {
			return strings.Join(jars, ":")
		}
	}
	t.Skip("Debian's zookeeper is not installed (/usr/share/java/zookeeper.jar)")
	return ""
}

func runJava(t *testing.T, cp string, args ...string) string {
	t.Helper()
	cmd := exec.Command("java", append([]string{"-cp", cp}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "java %v:\n%s", args, out)
	return string(out)
}

// TestZooKeeperDumpersReadOurFiles has ZooKeeper 3.8's own log and snapshot
// dumpers read files this package wrote.
func TestZooKeeperDumpersReadOurFiles(t *testing.T) {
	cp := zooKeeperClasspath(t)
	dir := t.TempDir()
	s := openStore(t, vfs.OS{}, dir, func(o *Options) { o.SnapCount = 1000 })
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(1))
	tree := newTestTree()
	for z := int64(1); z <= 25; z++ {
		e := makeEntry(z, 100, rng)
		_, err := rec.Log.Append(e)
		require.NoError(t, err)
		tree.entries[z] = e
	}
	_, err = rec.Log.Sync()
	require.NoError(t, err)
	snap, err := s.WriteSnapshot(tree.snapshot(25))
	require.NoError(t, err)

	out := runJava(t, cp, "org.apache.zookeeper.server.persistence.TxnLogToolkit", filepath.Join(s.Dir(), LogName(1)))
	requireOutput(t, out, "EOF reached after 25 txns.")
	for _, z := range []int64{1, 25} {
		requireOutput(t, out, fmt.Sprintf("zxid 0x%x setData", z))
	}

	out = runJava(t, cp, "org.apache.zookeeper.server.SnapshotFormatter", filepath.Join(s.Dir(), snap))
	requireOutput(t, out, "/t19")
	requireOutput(t, out, "Session Details (sid, timeout, ephemeralCount):")
	requireOutput(t, out, "0x00000000000100, 30000, 0")
	requireOutput(t, out, "Last zxid: 0x19")
}

// requireOutput checks a dumper's output without printing all of it.
func requireOutput(t *testing.T, out, want string) {
	t.Helper()
	if !strings.Contains(out, want) {
		t.Fatalf("output lacks %q; its end:\n%s", want, out[max(0, len(out)-3000):])
	}
}
