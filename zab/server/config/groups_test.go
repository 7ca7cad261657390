package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fiveServers = "dataDir=/d\ninitLimit=5\nsyncLimit=2\n" +
	"server.1=a:1:2\nserver.2=b:1:2\nserver.3=c:1:2\nserver.4=d:1:2\nserver.5=e:1:2\nserver.6=f:1:2:observer\n"

// group.N and weight.N make ZooKeeper's hierarchical quorum: more than half
// of the weight of more than half of the weighted groups.
func TestHierarchicalQuorum(t *testing.T) {
	cfg, err := parse(t, fiveServers+"group.1=1:2:3\ngroup.2=4:5\nweight.3=0\n")
	require.NoError(t, err)
	assert.Empty(t, cfg.Warnings)
	q, err := cfg.Quorum()
	require.NoError(t, err)
	require.NotNil(t, q)
	assert.Equal(t, []int64{1, 2, 3, 4, 5}, q.Voters())
	assert.Equal(t, int64(0), q.Weight(3))
	// Both groups weigh 2 (3 weighs nothing): a quorum needs both of
	// each group's weighted members.
	assert.True(t, q.ContainsQuorum([]int64{1, 2, 4, 5}))
	assert.False(t, q.ContainsQuorum([]int64{1, 2, 3, 4}), "half of group 2 is no majority of it")
	assert.False(t, q.ContainsQuorum([]int64{2, 3, 4, 5}), "3 weighs nothing")
	assert.False(t, q.ContainsQuorum([]int64{1, 2, 3}), "one group of two")

	// As QuorumHierarchical.toString prints it: groups by id, members
	// ascending, then every participant's weight (1 where none is given).
	assert.Equal(t, "server.1=a:1:2:participant\nserver.2=b:1:2:participant\nserver.3=c:1:2:participant\n"+
		"server.4=d:1:2:participant\nserver.5=e:1:2:participant\nserver.6=f:1:2:observer\n"+
		"group.1=1:2:3\ngroup.2=4:5\nweight.1=1\nweight.2=1\nweight.3=0\nweight.4=1\nweight.5=1\nversion=0", cfg.DynamicConfig())

	plain, err := parse(t, fiveServers)
	require.NoError(t, err)
	q, err = plain.Quorum()
	require.NoError(t, err)
	assert.Nil(t, q, "without groups: a majority of the participants")
}

// What ZooKeeper would refuse, fail on later, or take silently is refused
// naming the line and key.
func TestHierarchicalQuorumRefusals(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{"group.1=1:2:3\ngroup.2=4\n", "zoo.cfg:8: server.5: participant 5 is in no group.N line"},
		{"group.1=1:2:3\ngroup.2=4:5:6\n", "zoo.cfg:11: group.2: server 6 is an observer"},
		{"group.1=1:2:3\ngroup.2=4:5:7\n", "zoo.cfg:11: group.2: server 7 has no server.7 line"},
		{"group.1=1:2:3\ngroup.2=3:4:5\n", "zoo.cfg:11: group.2: server 3 is in group.1 already"},
		{"group.1=1:2:x\n", "zoo.cfg:10: group.1: \"x\" is not a server id"},
		{"group.a=1:2:3\n", "zoo.cfg:10: group.a: group id \"a\" is not an integer"},
		{"weight.1=2\n", "zoo.cfg:10: weight.1: a weight without any group.N line"},
		{"group.1=1:2:3:4:5\nweight.1=-1\n", "zoo.cfg:11: weight.1: \"-1\" is not a weight"},
		{"group.1=1:2:3\ngroup.2=4:5\nweight.6=1\n", "zoo.cfg:12: weight.6: server 6 is in no group"},
		{"group.1=1:2:3:4:5\nweight.1=0\nweight.2=0\nweight.3=0\nweight.4=0\nweight.5=0\n", "zoo.cfg:10: group.1: hierarchical quorum: every group weighs 0"},
	} {
		_, err := parse(t, fiveServers+c.extra)
		require.Error(t, err, c.extra)
		assert.Contains(t, err.Error(), c.want, c.extra)
	}
}
