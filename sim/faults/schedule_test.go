package faults

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestGeneratedSchedulesAreValidAndRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Int64().Draw(t, "seed")
		s := Generate(seed, rand.New(rand.NewPCG(uint64(seed), 1)), DefaultLimits)
		require.NoError(t, s.Validate())
		back, err := Parse(s.MarshalIndented())
		require.NoError(t, err)
		require.Equal(t, s, back)
	})
}

func TestGenerateIsAFunctionOfItsStream(t *testing.T) {
	a := Generate(7, rand.New(rand.NewPCG(7, 7)), DefaultLimits)
	b := Generate(7, rand.New(rand.NewPCG(7, 7)), DefaultLimits)
	require.Equal(t, a.String(), b.String())
}

func TestParseRefusesBadSchedules(t *testing.T) {
	good := `{"seed":1,"servers":1,"clients":2,"ops_per_client":3,"session_timeout_ms":400,"tick_ms":100,"safety_ms":1000,"liveness_ms":1000,"faults":[{"at_ms":5,"kind":"drop","client":2}]}`
	_, err := Parse([]byte(good))
	require.NoError(t, err)
	for name, bad := range map[string]string{
		"unknown field":  `{"seed":1,"servers":1,"tick_ms":100,"session_timeout_ms":400,"liveness_ms":1,"bogus":1}`,
		"unknown kind":   `{"servers":1,"clients":1,"tick_ms":100,"session_timeout_ms":400,"safety_ms":10,"liveness_ms":1,"faults":[{"at_ms":1,"kind":"meteor"}]}`,
		"missing client": `{"servers":1,"clients":1,"tick_ms":100,"session_timeout_ms":400,"safety_ms":10,"liveness_ms":1,"faults":[{"at_ms":1,"kind":"drop","client":2}]}`,
		"after safety":   `{"servers":1,"clients":1,"tick_ms":100,"session_timeout_ms":400,"safety_ms":10,"liveness_ms":1,"faults":[{"at_ms":11,"kind":"crash"}]}`,
		"unsorted":       `{"servers":1,"clients":1,"tick_ms":100,"session_timeout_ms":400,"safety_ms":10,"liveness_ms":1,"faults":[{"at_ms":5,"kind":"crash"},{"at_ms":4,"kind":"crash"}]}`,
		"no servers":     `{"servers":0,"clients":1,"tick_ms":100,"session_timeout_ms":400,"liveness_ms":1}`,
		"tiny timeout":   `{"servers":1,"clients":1,"tick_ms":100,"session_timeout_ms":100,"liveness_ms":1}`,
	} {
		_, err := Parse([]byte(bad))
		require.Error(t, err, name)
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"servers":0}`), 0o644))
	_, err := Load(path)
	require.ErrorContains(t, err, path)
}
