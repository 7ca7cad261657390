package election

import (
	"errors"
	"fmt"
	"slices"
)

// QuorumVerifier decides which sets of voters form a quorum. Majority is
// ZooKeeper's default (QuorumMaj); Hierarchical is its weighted, grouped
// QuorumHierarchical. Other rules plug in through the same three methods.
type QuorumVerifier interface {
	// Voters lists the voting members in ascending server id.
	Voters() []int64
	// Weight is a voter's weight; a server of weight 0 is never proposed
	// as leader, and its vote must not help make a quorum.
	Weight(sid int64) int64
	// ContainsQuorum reports whether sids (distinct voters, ascending)
	// form a quorum.
	ContainsQuorum(sids []int64) bool
}

// Majority is a QuorumVerifier where any strict majority of the voters is a
// quorum and every voter weighs 1.
type Majority struct {
	voters []int64
}

// NewMajority builds a Majority over voters (any order, no duplicates, at
// least one).
func NewMajority(voters []int64) (Majority, error) {
	sorted, err := sortedDistinct(voters)
	if err != nil {
		return Majority{}, fmt.Errorf("majority quorum: %w", err)
	}
	if len(sorted) == 0 {
		return Majority{}, errors.New("majority quorum: no voters")
	}
	return Majority{voters: sorted}, nil
}

// Voters implements QuorumVerifier.
func (m Majority) Voters() []int64 { return slices.Clone(m.voters) }

// Weight implements QuorumVerifier: 1 for every server, as QuorumMaj gives
// (it does not check membership; callers only ask about voters).
func (m Majority) Weight(int64) int64 { return 1 }

// ContainsQuorum implements QuorumVerifier: more than half of the voters.
func (m Majority) ContainsQuorum(sids []int64) bool {
	return len(sids) > len(m.voters)/2
}

// Hierarchical is ZooKeeper's QuorumHierarchical (zoo.cfg's group.N and
// weight.N): the voters are split into groups and each has a weight. A set
// is a quorum when, in more than half of the groups of weight above 0, it
// holds more than half of the group's weight. A voter of weight 0 adds
// nothing to any quorum and never leads.
type Hierarchical struct {
	voters         []int64         // ascending
	group          map[int64]int   // voter -> index into groupWeight
	weight         map[int64]int64 // every voter's weight
	groupWeight    []int64
	weightedGroups int // groups of weight above 0
}

// NewHierarchical builds a Hierarchical from groups (each a list of voter
// ids; together the voters, each in exactly one group) and weights (a
// weight, 0 or more, for any voter; those left out weigh 1, as in
// ZooKeeper). At least one group must weigh more than 0.
func NewHierarchical(groups [][]int64, weights map[int64]int64) (Hierarchical, error) {
	h := Hierarchical{group: map[int64]int{}, weight: map[int64]int64{}}
	for gi, members := range groups {
		if len(members) == 0 {
			return Hierarchical{}, fmt.Errorf("hierarchical quorum: group %d is empty", gi)
		}
		for _, sid := range members {
			if other, dup := h.group[sid]; dup {
				return Hierarchical{}, fmt.Errorf("hierarchical quorum: server %d is in groups %d and %d", sid, other, gi)
			}
			h.group[sid] = gi
			h.weight[sid] = 1
			h.voters = append(h.voters, sid)
		}
	}
	if len(h.voters) == 0 {
		return Hierarchical{}, errors.New("hierarchical quorum: no voters")
	}
	slices.Sort(h.voters)
	for sid, w := range weights {
		if _, ok := h.group[sid]; !ok {
			return Hierarchical{}, fmt.Errorf("hierarchical quorum: weight for server %d, which is in no group", sid)
		}
		if w < 0 {
			return Hierarchical{}, fmt.Errorf("hierarchical quorum: server %d has negative weight %d", sid, w)
		}
		h.weight[sid] = w
	}
	h.groupWeight = make([]int64, len(groups))
	for sid, gi := range h.group {
		h.groupWeight[gi] += h.weight[sid] // a sum: map order does not matter
	}
	for _, w := range h.groupWeight {
		if w > 0 {
			h.weightedGroups++
		}
	}
	if h.weightedGroups == 0 {
		return Hierarchical{}, errors.New("hierarchical quorum: every group weighs 0, so no set is a quorum")
	}
	return h, nil
}

// Voters implements QuorumVerifier.
func (h Hierarchical) Voters() []int64 { return slices.Clone(h.voters) }

// Weight implements QuorumVerifier: the voter's weight, 0 for a server that
// is not a voter.
func (h Hierarchical) Weight(sid int64) int64 { return h.weight[sid] }

// ContainsQuorum implements QuorumVerifier: more than half of the weight
// of more than half of the weighted groups (QuorumHierarchical.
// containsQuorum; servers in no group are ignored).
func (h Hierarchical) ContainsQuorum(sids []int64) bool {
	got := make([]int64, len(h.groupWeight))
	for _, sid := range sids {
		if gi, ok := h.group[sid]; ok {
			got[gi] += h.weight[sid]
		}
	}
	majorities := 0
	for gi, w := range got {
		if 2*w > h.groupWeight[gi] {
			majorities++
		}
	}
	return 2*majorities > h.weightedGroups
}

// sortedDistinct returns ids sorted, or an error naming a duplicate.
func sortedDistinct(ids []int64) ([]int64, error) {
	sorted := slices.Sorted(slices.Values(ids))
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return nil, fmt.Errorf("server id %d listed twice", sorted[i])
		}
	}
	return sorted, nil
}
