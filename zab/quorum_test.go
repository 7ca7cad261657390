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

func TestCommittedWindow(t *testing.T) {
	w := newCommittedWindow(3)
	got, ok := w.since(0)
	require.True(t, ok)
	require.Empty(t, got)
	for z := int64(1); z <= 5; z++ {
		w.add(txnWithZxid(z))
	}
	zxids := func(ts []txnT) []int64 {
		var out []int64
		for _, t := range ts {
			out = append(out, t.Header.Zxid)
		}
		return out
	}
	got, ok = w.since(3)
	require.True(t, ok)
	require.Equal(t, []int64{4, 5}, zxids(got))
	_, ok = w.since(2)
	require.False(t, ok, "txn 3 is held but 2 is gone: the window cannot vouch for what follows 2")
	got, ok = w.since(5)
	require.True(t, ok)
	require.Empty(t, got)
	lo, hi, _ := w.bounds()
	require.Equal(t, []int64{3, 5}, []int64{lo, hi})
}

type txnT = datatree.Txn

func txnWithZxid(z int64) txnT { return txnT{Header: wire.TxnHeader{Zxid: z}} }
