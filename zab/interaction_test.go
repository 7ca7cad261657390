package zab_test

import (
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// TestInteraction runs the scripts in testdata/interaction: each drives an
// ensemble step by step (elections, synchronization by DIFF, TRUNC and
// SNAP, crashes, partitions, bad packets) and compares the trace it
// prints with the file. After a deliberate change of behaviour, regenerate
// them with
//
//	go test ./zab -run TestInteraction -rewrite
//
// and read the diff: the files are the record of what the protocol does.
func TestInteraction(t *testing.T) {
	datadriven.Walk(t, "testdata/interaction", func(t *testing.T, path string) {
		e := zabtest.NewInteraction(1)
		e.ConfigArgs = map[string]func(*zab.Config, int64){"counter-limit": zab.SetCounterLimit}
		datadriven.RunTestAny(t, path, e.Handle)
	})
}
