package linearizability

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSimulatorHistoriesPass: correct histories from the simulator on which
// the checkers once failed (see testdata/sim/README.md) break no guarantee,
// and where a witness is kept, it explains the history.
func TestSimulatorHistoriesPass(t *testing.T) {
	files, err := filepath.Glob("testdata/sim/*.jsonl.gz")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range files {
		if strings.HasSuffix(name, ".witness.jsonl.gz") {
			continue // read with its history
		}
		t.Run(filepath.Base(name), func(t *testing.T) {
			h, err := ReadHistory(gunzip(t, name), name)
			require.NoError(t, err)
			opt := Options{Reaping: strings.Contains(filepath.Base(name), ".reaping.")}
			if witness := strings.TrimSuffix(name, ".jsonl.gz") + ".witness.jsonl.gz"; fileExists(witness) {
				opt.Witness, err = ReadWitness(gunzip(t, witness), witness)
				require.NoError(t, err)
			}
			if !h.SingleServer() {
				// the simulator's TouchLag for an ensemble: 13 ticks of
				// its longest tick, 200 ms (sim.checkHistory)
				opt.TouchLag = 13 * 200 * time.Millisecond
			}
			r := CheckAll(h, opt)
			var b strings.Builder
			require.NoError(t, r.Print(&b))
			assert.True(t, r.OK(), b.String())
			assert.NoError(t, r.Unexplained)
		})
	}
}

// gunzip opens a gzipped file for reading until the test ends.
func gunzip(t *testing.T, name string) *gzip.Reader {
	f, err := os.Open(name)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	return z
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
