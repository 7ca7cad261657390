package election

import (
	"errors"
	"fmt"
	"slices"
)

// QuorumVerifier decides which sets of voters form a quorum. Majority is
// ZooKeeper's default (QuorumMaj); hierarchical or weighted quorums
// (QuorumHierarchical) plug in through the same three methods.
type QuorumVerifier interface {
	// Voters lists the voting members in ascending server id.
	Voters() []int64
	// Weight is a voter's weight; a server of weight 0 is never proposed
	// as leader.
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
