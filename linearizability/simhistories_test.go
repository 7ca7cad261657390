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
// the checkers once failed (see testdata/sim/README.md) break no guarantee.
func TestSimulatorHistoriesPass(t *testing.T) {
	files, err := filepath.Glob("testdata/sim/*.jsonl.gz")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			f, err := os.Open(name)
			require.NoError(t, err)
			defer f.Close()
			z, err := gzip.NewReader(f)
			require.NoError(t, err)
			h, err := ReadHistory(z, name)
			require.NoError(t, err)
			opt := Options{}
			if !h.SingleServer() {
				// the simulator's TouchLag for an ensemble: 13 ticks of
				// its longest tick, 200 ms (sim.checkHistory)
				opt.TouchLag = 13 * 200 * time.Millisecond
			}
			r := CheckAll(h, opt)
			var b strings.Builder
			require.NoError(t, r.Print(&b))
			assert.True(t, r.OK(), b.String())
		})
	}
}
