package zab

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

func TestQuorumOfOneCommitsOnOwnAck(t *testing.T) {
	q := newQuorumTracker(votersOnly(t, 1))
	require.Zero(t, q.committed())
	q.ack(1, 5)
	require.Equal(t, int64(5), q.committed())
	q.ack(1, 3)
	require.Equal(t, int64(5), q.committed(), "a stale ack never undoes a commit")
	q.ack(9, 100)
	require.Equal(t, int64(5), q.committed(), "non-voters do not count")
}

// TestCommitThroughOutlivesForgottenAcks: a commit point recorded at
// establishment holds when the acknowledgements that made it are withdrawn.
func TestCommitThroughOutlivesForgottenAcks(t *testing.T) {
	q := newQuorumTracker(votersOnly(t, 1, 2, 3, 4, 5))
	for _, v := range []int64{1, 2, 3} {
		q.ack(v, 7)
	}
	q.commitThrough(7)
	q.forget(2)
	q.forget(3)
	require.Equal(t, int64(7), q.committed())
	q.commitThrough(5)
	require.Equal(t, int64(7), q.committed(), "never back")
}

// TestQuorumCommitsWhatAMajorityLogged compares with a direct count: a
// zxid is committed iff more than half the voters acked it or later.
func TestQuorumCommitsWhatAMajorityLogged(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 7).Draw(t, "voters")
		voters := make([]int64, n)
		for i := range voters {
			voters[i] = int64(i + 1)
		}
		q := newQuorumTracker(votersOnly(t, voters...))
		acked := map[int64]int64{}
		for range rapid.IntRange(0, 40).Draw(t, "acks") {
			v := rapid.Int64Range(1, int64(n)).Draw(t, "voter")
			z := rapid.Int64Range(0, 20).Draw(t, "zxid")
			q.ack(v, z)
			acked[v] = max(acked[v], z)
			best := int64(0)
			for z := int64(0); z <= 20; z++ {
				count := 0
				for _, a := range acked {
					if a >= z {
						count++
					}
				}
				if 2*count > n {
					best = z
				}
			}
			require.Equal(t, best, q.committed())
		}
	})
}

// votersOnly is an ensemble of these voters under a majority quorum.
func votersOnly(t require.TestingT, ids ...int64) *members {
	m, err := newMembers(ids[0], &Ensemble{Voters: ids})
	require.NoError(t, err)
	return m
}

// TestCommittedWindow: the window holds the newest txns, oldest first,
// dropping the oldest when full. Whether a learner can be synchronized from
// it is decideSync's rule (TestDecideSync*).
func TestCommittedWindow(t *testing.T) {
	w := newCommittedWindow(3)
	_, ok := w.oldest()
	require.False(t, ok, "an empty window has no oldest txn")
	held := func() []int64 {
		var out []int64
		for i := 0; i < w.n; i++ {
			out = append(out, w.at(i).Header.Zxid)
		}
		return out
	}
	w.add(txnWithZxid(1))
	w.add(txnWithZxid(2))
	require.Equal(t, []int64{1, 2}, held())
	for z := int64(3); z <= 5; z++ {
		w.add(txnWithZxid(z))
	}
	require.Equal(t, []int64{3, 4, 5}, held())
	oldest, ok := w.oldest()
	require.True(t, ok)
	require.Equal(t, int64(3), oldest)
}

type txnT = datatree.Txn

func txnWithZxid(z int64) txnT { return txnT{Header: wire.TxnHeader{Zxid: z}} }
