package randstream

import (
	"hash/fnv"
	"math/rand/v2"
)

// Streams hands out the random streams of one seed.
type Streams struct{ seed int64 }

// New returns the streams of seed.
func New(seed int64) Streams { return Streams{seed: seed} }

// Seed is the seed the streams derive from.
func (s Streams) Seed() int64 { return s.seed }

// Stream returns a fresh generator for the subsystem called name. Two calls
// with the same name return generators that produce the same sequence.
func (s Streams) Stream(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	state := uint64(s.seed) ^ h.Sum64()
	return rand.New(rand.NewPCG(splitmix64(&state), splitmix64(&state)))
}

// DeriveSeed returns an int64 seed for a component that takes a seed rather
// than a generator (a simulated disk, say), derived from (seed, name) as
// Stream is.
func (s Streams) DeriveSeed(name string) int64 { return s.Stream(name).Int64() }

// splitmix64 advances state and returns the next output of SplitMix64, which
// spreads seeds that differ in one bit over the whole 64-bit space.
func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
