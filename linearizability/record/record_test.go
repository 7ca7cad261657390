package record

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

var update = flag.String("update", "", "also write the recorded histories into this directory (e.g. ../testdata/zk38)")

// TestRecordZooKeeper38 records workloads against Debian's ZooKeeper 3.8
// (several concurrent clients, watches, ephemerals, a frozen client whose
// session expires) and demands zero violations from every checker.
func TestRecordZooKeeper38(t *testing.T) {
	if err := zkprocess.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	// tickTime 500 allows 1 s–10 s sessions, so an expiry takes seconds.
	srv := zkprocess.ForTest(t, map[string]string{"tickTime": "500"})
	runs := []struct {
		name string
		w    Workload
	}{
		{"workers", Workload{Clients: 4, Duration: 700 * time.Millisecond, Seed: 1, Root: "/w1"}},
		{"expiry", Workload{Clients: 3, Duration: 700 * time.Millisecond, Seed: 2, Expire: true, Root: "/w2"}},
	}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			run.w.Servers = []string{srv.Addr}
			var buf bytes.Buffer
			require.NoError(t, run.w.Run(ctx, &buf))
			raw := buf.Bytes()
			h, err := linearizability.ReadHistory(bytes.NewReader(raw), run.name)
			require.NoError(t, err)
			report := linearizability.CheckAll(h, linearizability.Options{})
			var out bytes.Buffer
			require.NoError(t, report.Print(&out))
			assert.True(t, report.OK(), "%s", out.String())
			if *update != "" {
				require.NoError(t, os.WriteFile(filepath.Join(*update, run.name+".jsonl"), raw, 0o644))
			}
		})
	}
}
