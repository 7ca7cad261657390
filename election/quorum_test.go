package election

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Reference: QuorumHierarchical.containsQuorum — more than half of the
// weight in more than half of the groups, groups of weight 0 not counted.
func TestHierarchicalQuorums(t *testing.T) {
	nine := mustHierarchical(t, [][]int64{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, nil)
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, nine.Voters())
	for _, tc := range []struct {
		sids []int64
		want bool
	}{
		{[]int64{1, 2, 4, 5}, true},
		{[]int64{1, 2, 3, 4}, false}, // one group's majority of three
		{[]int64{1, 4, 7, 2, 5}, true},
		{[]int64{1, 4, 7}, false},
		{nil, false},
		{[]int64{1, 2, 4, 5, 10}, true}, // a server in no group is ignored
	} {
		require.Equal(t, tc.want, nine.ContainsQuorum(tc.sids), "%v", tc.sids)
	}

	// A group of weight 0 does not count among the groups: with it, the
	// two others must both have their majority.
	zeroGroup := mustHierarchical(t, [][]int64{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, map[int64]int64{7: 0, 8: 0, 9: 0})
	require.False(t, zeroGroup.ContainsQuorum([]int64{1, 2, 7, 8, 9}))
	require.True(t, zeroGroup.ContainsQuorum([]int64{1, 2, 4, 5}))
	require.Zero(t, zeroGroup.Weight(7))
	require.Equal(t, int64(1), zeroGroup.Weight(1), "left out of weights: 1")
	require.Zero(t, zeroGroup.Weight(10), "not a voter")

	// Weights inside a group: 3 alone outweighs 1 and 2 together.
	heavy := mustHierarchical(t, [][]int64{{1, 2, 3}}, map[int64]int64{3: 3})
	require.True(t, heavy.ContainsQuorum([]int64{3}))
	require.False(t, heavy.ContainsQuorum([]int64{1, 2}))
}

func TestHierarchicalConfigIsChecked(t *testing.T) {
	for _, tc := range []struct {
		groups  [][]int64
		weights map[int64]int64
		want    string
	}{
		{nil, nil, "no voters"},
		{[][]int64{{1, 2}, {}}, nil, "group 1 is empty"},
		{[][]int64{{1, 2}, {2, 3}}, nil, "server 2 is in groups 0 and 1"},
		{[][]int64{{1, 2}}, map[int64]int64{3: 1}, "weight for server 3, which is in no group"},
		{[][]int64{{1, 2}}, map[int64]int64{2: -1}, "server 2 has negative weight -1"},
		{[][]int64{{1, 2}}, map[int64]int64{1: 0, 2: 0}, "every group weighs 0"},
	} {
		_, err := NewHierarchical(tc.groups, tc.weights)
		require.ErrorContains(t, err, tc.want)
	}
}

// One group of voters of weight 1 is a majority: the two verifiers agree
// on every set.
func TestPropertyOneGroupOfWeightOneIsAMajority(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 9).Draw(t, "voters")
		voters := make([]int64, n)
		for i := range voters {
			voters[i] = int64(i + 1)
		}
		maj, err := NewMajority(voters)
		require.NoError(t, err)
		h, err := NewHierarchical([][]int64{voters}, nil)
		require.NoError(t, err)
		sids := rapid.SliceOfDistinct(rapid.SampledFrom(voters), rapid.ID[int64]).Draw(t, "set")
		slices.Sort(sids)
		require.Equal(t, maj.ContainsQuorum(sids), h.ContainsQuorum(sids), fmt.Sprint(sids))
	})
}

// Any two quorums of a Hierarchical share a voter of weight above 0 — the
// intersection election and ZAB rely on — whatever the groups and weights.
func TestPropertyHierarchicalQuorumsIntersect(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		voters := []int64{1, 2, 3, 4, 5, 6}
		h := drawHierarchical(t, voters)
		a := rapid.SliceOfDistinct(rapid.SampledFrom(voters), rapid.ID[int64]).Draw(t, "a")
		b := rapid.SliceOfDistinct(rapid.SampledFrom(voters), rapid.ID[int64]).Draw(t, "b")
		if !h.ContainsQuorum(a) || !h.ContainsQuorum(b) {
			return
		}
		require.True(t, slices.ContainsFunc(a, func(s int64) bool { return slices.Contains(b, s) && h.Weight(s) > 0 }), "%v and %v", a, b)
	})
}
