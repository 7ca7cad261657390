package randstream

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func draw(s Streams, name string, n int) []uint64 {
	r := s.Stream(name)
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.Uint64()
	}
	return out
}

func TestSameSeedAndNameGiveSameSequence(t *testing.T) {
	require.Equal(t, draw(New(42), "faults", 100), draw(New(42), "faults", 100))
}

func TestStreamsAreIndependent(t *testing.T) {
	s := New(42)
	// Drawing heavily from the workload stream does not change the fault stream.
	before := draw(s, "faults", 10)
	_ = draw(s, "workload", 10000)
	require.Equal(t, before, draw(s, "faults", 10))
	require.NotEqual(t, draw(s, "faults", 10), draw(s, "workload", 10))
}

func TestNeighbouringSeedsDiffer(t *testing.T) {
	require.NotEqual(t, draw(New(1), "faults", 4), draw(New(2), "faults", 4))
	require.NotEqual(t, New(1).DeriveSeed("disk/1"), New(1).DeriveSeed("disk/2"))
}
