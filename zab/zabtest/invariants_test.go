package zabtest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

func testTxn(epoch, counter int64, path string) *datatree.Txn {
	return &datatree.Txn{
		Header: wire.TxnHeader{ClientID: 7, Cxid: int32(counter), Zxid: makeZxid(epoch, counter), Time: 1, Type: wire.OpCreate},
		Body:   &wire.CreateTxn{Path: path, Data: []byte(path), ACL: wire.OpenACLUnsafe},
		Digest: wire.TxnDigest{Version: 2, TreeDigest: counter*100 + epoch},
	}
}

// TestInvariantsAcceptAValidRun: two epochs, a follower that lags and
// catches up, a restart from a snapshot, a SNAP: nothing is reported.
func TestInvariantsAcceptAValidRun(t *testing.T) {
	v := NewInvariants()
	a1, a2, b1 := testTxn(1, 1, "/a1"), testTxn(1, 2, "/a2"), testTxn(2, 1, "/b1")
	require.NoError(t, v.Epochs(1, 1, 1))
	require.NoError(t, v.Leading(1, 1))
	require.NoError(t, v.Broadcast(1, a1))
	require.NoError(t, v.Logged(2, a1))
	require.NoError(t, v.Broadcast(1, a2))
	for _, m := range []int64{1, 2} {
		require.NoError(t, v.Delivered(m, a1))
		require.NoError(t, v.Digest(m, a1.Digest.TreeDigest, a1))
	}
	require.NoError(t, v.Delivered(1, a2))
	// Server 2 leads epoch 2 after delivering a2 (its initial history).
	require.NoError(t, v.Leading(2, 2))
	require.NoError(t, v.Delivered(2, a2))
	require.NoError(t, v.Broadcast(2, b1))
	require.NoError(t, v.Delivered(2, b1))
	// Server 1 restarts from a snapshot at a1 and delivers again.
	require.NoError(t, v.Installed(1, a1.Header.Zxid))
	require.NoError(t, v.Delivered(1, a2))
	require.NoError(t, v.Delivered(1, b1))
	// Server 3 is sent a snapshot at b1.
	require.NoError(t, v.Installed(3, b1.Header.Zxid))
	require.NoError(t, v.Digest(3, b1.Digest.TreeDigest, nil))
	require.Equal(t, []int64{a1.Header.Zxid, a2.Header.Zxid, b1.Header.Zxid}, v.DeliveredZxids(3))
	require.NoError(t, v.Epochs(1, 2, 2))
}

// TestInvariantsCatchViolations: each invariant, broken once, is reported
// by name; a checker that cannot fail proves nothing.
func TestInvariantsCatchViolations(t *testing.T) {
	a1, a2, b1 := testTxn(1, 1, "/a1"), testTxn(1, 2, "/a2"), testTxn(2, 1, "/b1")
	other1 := testTxn(1, 1, "/other")
	epoch1 := func() *Invariants {
		v := NewInvariants()
		if err := v.Leading(1, 1); err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name string
		want string
		run  func(v *Invariants) error
	}{
		{"two leaders of one epoch", "Leadership", func(v *Invariants) error { return v.Leading(2, 1) }},
		{"a broadcast by a non-leader", "Leadership", func(v *Invariants) error { return v.Broadcast(2, a1) }},
		{"one zxid broadcast with two txns (ZOOKEEPER-335)", "Integrity", func(v *Invariants) error {
			_ = v.Broadcast(1, a1)
			return v.Broadcast(1, other1)
		}},
		{"a broadcast skipping a counter", "LocalPrimaryOrder", func(v *Invariants) error { return v.Broadcast(1, a2) }},
		{"a logged txn no leader broadcast", "Integrity", func(v *Invariants) error { return v.Logged(2, a1) }},
		{"a logged txn differing from the broadcast", "Integrity", func(v *Invariants) error {
			_ = v.Broadcast(1, a1)
			return v.Logged(2, other1)
		}},
		{"a delivered txn no leader broadcast", "Integrity", func(v *Invariants) error { return v.Delivered(2, a1) }},
		{"two members delivering different txns at one position", "PrefixConsistency", func(v *Invariants) error {
			_ = v.Broadcast(1, a1)
			_ = v.Broadcast(1, a2)
			_ = v.Delivered(1, a1)
			_ = v.Delivered(2, a1)
			_ = v.Delivered(2, a2)
			v.member(3).delivered = 1 // as if it had delivered a1
			return v.Delivered(3, a1)
		}},
		{"a txn delivered without its predecessor", "LocalPrimaryOrder", func(v *Invariants) error {
			_ = v.Broadcast(1, a1)
			_ = v.Broadcast(1, a2)
			return v.Delivered(2, a2)
		}},
		{"an older epoch delivered after a newer one", "GlobalPrimaryOrder", func(v *Invariants) error {
			_ = v.Broadcast(1, a1)
			_ = v.Leading(2, 2)
			_ = v.Broadcast(2, b1)
			_ = v.Delivered(2, b1)
			return v.Delivered(2, a1)
		}},
		{"a leader broadcasting before delivering what others delivered", "PrimaryIntegrity", func(v *Invariants) error {
			_ = v.Broadcast(1, a1)
			_ = v.Delivered(1, a1)
			_ = v.Leading(2, 2)
			return v.Broadcast(2, b1)
		}},
		{"an old txn delivered first after a new leader broadcast", "PrimaryIntegrity", func(v *Invariants) error {
			_ = v.Broadcast(1, a1)
			_ = v.Leading(2, 2)
			_ = v.Broadcast(2, b1)
			return v.Delivered(3, a1)
		}},
		{"a snapshot of a txn nobody delivered", "PrefixConsistency", func(v *Invariants) error {
			_ = v.Broadcast(1, a1)
			return v.Installed(2, a1.Header.Zxid)
		}},
		{"two digests after one txn", "PrefixConsistency", func(v *Invariants) error {
			_ = v.Broadcast(1, a1)
			_ = v.Delivered(1, a1)
			_ = v.Delivered(2, a1)
			_ = v.Digest(1, 5, nil)
			return v.Digest(2, 6, nil)
		}},
		{"a digest differing from the txn's", "PrefixConsistency", func(v *Invariants) error {
			_ = v.Broadcast(1, a1)
			_ = v.Delivered(1, a1)
			return v.Digest(1, 5, a1)
		}},
		{"acceptedEpoch below currentEpoch", "epochs", func(v *Invariants) error { return v.Epochs(1, 1, 2) }},
		{"acceptedEpoch going back", "went back", func(v *Invariants) error {
			_ = v.Epochs(1, 3, 1)
			return v.Epochs(1, 2, 1)
		}},
		{"currentEpoch going back", "went back", func(v *Invariants) error {
			_ = v.Epochs(1, 3, 3)
			return v.Epochs(1, 3, 2)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(epoch1())
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
