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

func TestParseRefusesBadGroups(t *testing.T) {
	const ensemble = `{"servers":4,"ensemble":true,"observers":1,"clients":1,"tick_ms":100,"session_timeout_ms":400,"liveness_ms":1`
	s, err := Parse([]byte(ensemble + `,"groups":[[1,2],[3]],"weights":{"3":0}}`))
	require.NoError(t, err)
	q, err := s.Quorum()
	require.NoError(t, err)
	require.True(t, q.ContainsQuorum([]int64{1, 2}), "group {3} weighs 0: {1,2} is a majority of the only weighted group")
	require.False(t, q.ContainsQuorum([]int64{1, 3}))
	for bad, want := range map[string]string{
		`"groups":[[1,2]]`:                                     "must hold each voter",
		`"groups":[[1,2],[3,4]]`:                               "must hold each voter",
		`"groups":[[1,2],[2,3]]`:                               "must hold each voter",
		`"groups":[[1],[2],[3]],"weights":{"1":0,"2":0,"3":0}`: "every group weighs 0",
		`"groups":[[1,2],[3]],"weights":{"3":-1}`:              "negative weight",
		`"weights":{"1":2}`:                                    "weights without groups",
	} {
		_, err := Parse([]byte(ensemble + "," + bad + "}"))
		require.ErrorContains(t, err, want, bad)
	}
	_, err = Parse([]byte(`{"servers":1,"clients":1,"tick_ms":100,"session_timeout_ms":400,"liveness_ms":1,"groups":[[1]]}`))
	require.ErrorContains(t, err, "standalone")
}

func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"servers":0}`), 0o644))
	_, err := Load(path)
	require.ErrorContains(t, err, path)
}
