package fourlw

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server/zkprocess"
)

// lineKeys returns each line's text up to its first ':' or '=' or tab, with
// digits masked: the shape of a four-letter word's answer without its values.
func lineKeys(s string) []string {
	maskDigits := strings.NewReplacer("0", "#", "1", "#", "2", "#", "3", "#", "4", "#", "5", "#", "6", "#", "7", "#", "8", "#", "9", "#")
	var keys []string
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexAny(line, ":=\t"); i >= 0 {
			line = line[:i]
		}
		keys = append(keys, maskDigits.Replace(line))
	}
	return keys
}

// TestShapesAgainstZooKeeper asks Debian's ZooKeeper 3.8 and this package
// the same words and compares the answers' shapes (line keys) and the
// refusal text exactly.
func TestShapesAgainstZooKeeper(t *testing.T) {
	zk := zkprocess.ForTest(t, map[string]string{"4lw.commands.whitelist": "srvr,dirs,isro,ruok,wchs"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	allowed := func(w string) bool { return strings.Contains("srvr,dirs,isro,ruok,wchs", w) }
	for _, word := range []string{"srvr", "dirs", "isro", "ruok", "wchs", "mntr", "dump", "stat", "cons"} {
		t.Run(word, func(t *testing.T) {
			real, err := zkprocess.FourLetterWord(ctx, zk.Addr, word)
			require.NoError(t, err)
			ours := run(t, &fakeSource{}, word, allowed)
			if allowed(word) {
				assert.Equal(t, lineKeys(real), lineKeys(ours))
			} else {
				assert.Equal(t, real, ours)
			}
		})
	}
}
