package linearizability

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readRecorded(t *testing.T) map[string]History {
	t.Helper()
	files, err := filepath.Glob("testdata/zk38/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]History{}
	for _, f := range files {
		r, err := os.Open(f)
		require.NoError(t, err)
		h, err := ReadHistory(r, f)
		r.Close()
		require.NoError(t, err)
		out[f] = h
	}
	return out
}

// TestRecordedZooKeeperHistoriesPass: real ZooKeeper 3.8 histories break no
// guarantee.
func TestRecordedZooKeeperHistoriesPass(t *testing.T) {
	for name, h := range readRecorded(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			r := CheckAll(h, Options{})
			var b strings.Builder
			require.NoError(t, r.Print(&b))
			assert.True(t, r.OK(), b.String())
		})
	}
}

// TestRecordedHistoriesMutatedAreCaught: the checkers are not vacuous on
// real histories — one changed reply is caught by the checker it concerns.
func TestRecordedHistoriesMutatedAreCaught(t *testing.T) {
	mutations := []struct {
		name      string
		guarantee string
		check     func(History) []Violation
		mutate    func(h History) bool
	}{
		{"read returns other data", GuaranteeReads, func(h History) []Violation { return CheckReads(h, Options{}) },
			func(h History) bool {
				for i := len(h) / 2; i < len(h); i++ {
					if e := &h[i]; e.Op == OpGetData && e.Err == ErrOK {
						e.Data = str(*e.Data + "-stale")
						return true
					}
				}
				return false
			}},
		{"write result changed", GuaranteeWrites, func(h History) []Violation { return CheckWrites(h, Options{}) },
			func(h History) bool {
				for i := len(h) / 2; i < len(h); i++ {
					if e := &h[i]; e.Op == OpSetData && e.Err == ErrOK {
						e.Err, e.Stat = "BadVersion", nil
						return true
					}
				}
				return false
			}},
		{"watch event after the data", GuaranteeWatch, func(h History) []Violation { return CheckWatches(h, Options{}) },
			func(h History) bool {
				for i := range h {
					ev := &h[i]
					if ev.Kind != KindEvent || ev.Type != "NodeDataChanged" {
						continue
					}
					// the client's next reply with a zxid
					for j := range h {
						r := &h[j]
						if r.Client == ev.Client && r.Kind == KindOp && r.Seq == ev.Seq+1 && r.Zxid != nil && r.Err != ErrConnectionLoss {
							ev.Seq, r.Seq = r.Seq, ev.Seq
							return true
						}
					}
				}
				return false
			}},
		{"final write lost", GuaranteeDurability, func(h History) []Violation { return CheckDurability(h, Options{}) },
			func(h History) bool {
				for i := len(h) - 1; i >= 0; i-- {
					if e := &h[i]; e.Op == OpGetData && e.Err == ErrOK {
						e.Data = str("never written")
						return true
					}
				}
				return false
			}},
	}
	for name, h := range readRecorded(t) {
		for _, m := range mutations {
			t.Run(filepath.Base(name)+"/"+m.name, func(t *testing.T) {
				mutated := cloneHistory(h)
				require.True(t, m.mutate(mutated), "the history has nothing to mutate")
				vs := m.check(mutated)
				require.NotEmpty(t, vs)
				assert.Equal(t, m.guarantee, vs[0].Guarantee)
			})
		}
	}
}

func cloneHistory(h History) History {
	out := make(History, len(h))
	copy(out, h)
	return out
}
