package storage

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/storage/vfs"
)

// A member starting on a fresh directory, or on a directory of a server
// that never joined an epoch, takes the log's epoch and writes both files.
func TestMemberEpochsFillAbsentFiles(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(1)))
	s := openStore(t, fsys, "/d", nil)
	accepted, current, err := s.MemberEpochs(3<<32 | 7)
	require.NoError(t, err)
	require.Equal(t, [2]int64{3, 3}, [2]int64{accepted, current})
	fsys.Crash()
	for name, want := range map[string]string{"acceptedEpoch": "3", "currentEpoch": "3"} {
		data, err := vfs.ReadFull(fsys, "/d/version-2/"+name)
		require.NoError(t, err, name)
		require.Equal(t, want, string(data), name)
	}
}

// The files disagreeing with the log stop the start with the file named,
// unless ZooKeeper's updatingEpoch mark says a synchronization was cut
// short, in which case the log's epoch becomes current and the mark goes.
func TestMemberEpochsRefuseALogNewerThanCurrentEpoch(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(2)))
	s := openStore(t, fsys, "/d", nil)
	require.NoError(t, s.SetAcceptedEpoch(3))
	require.NoError(t, s.SetCurrentEpoch(2))
	_, _, err := s.MemberEpochs(3<<32 | 1)
	var epochErr *EpochError
	require.ErrorAs(t, err, &epochErr)
	require.Equal(t, "/d/version-2/currentEpoch", epochErr.File)
	require.ErrorContains(t, err, "epoch 2 is older than the epoch of the last logged txn (the log's last txn is 0x300000001, of epoch 3)")

	require.NoError(t, writeFileAtomic(fsys, "/d/version-2", updatingEpochFile, nil))
	accepted, current, err := s.MemberEpochs(3<<32 | 1)
	require.NoError(t, err)
	require.Equal(t, [2]int64{3, 3}, [2]int64{accepted, current})
	updating, err := s.updatingEpoch()
	require.NoError(t, err)
	require.False(t, updating, "the mark is removed once currentEpoch covers the log")

	require.NoError(t, s.SetCurrentEpoch(4))
	_, _, err = s.MemberEpochs(4 << 32)
	require.ErrorAs(t, err, &epochErr)
	require.Equal(t, "/d/version-2/acceptedEpoch", epochErr.File)
	require.ErrorContains(t, err, "epoch 3 is older than currentEpoch 4")
}

// CoverEpoch writes the mark before a txn of a newer epoch reaches the log,
// and the currentEpoch write that covers it removes it: a crash anywhere in
// between leaves files that MemberEpochs (and ZooKeeper) start from.
func TestCoverEpochMarksALearnerAheadOfItsCurrentEpoch(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(3)))
	s := openStore(t, fsys, "/d", nil)
	rec, err := s.Recover(newTestTree().load)
	require.NoError(t, err)
	_, _, err = s.MemberEpochs(rec.LastZxid)
	require.NoError(t, err)
	require.NoError(t, s.SetAcceptedEpoch(2))

	rng := rand.New(rand.NewSource(4))
	z := int64(2<<32 | 1)
	require.NoError(t, s.CoverEpoch(z))
	_, err = rec.Log.Append(makeEntry(z, 10, rng))
	require.NoError(t, err)
	_, err = rec.Log.Sync()
	require.NoError(t, err)
	fsys.Crash() // before NEWLEADER made epoch 2 current

	s = openStore(t, fsys, "/d", nil)
	rec, err = s.Recover(newTestTree().load)
	require.NoError(t, err)
	require.Equal(t, z, rec.LastZxid)
	accepted, current, err := s.MemberEpochs(rec.LastZxid)
	require.NoError(t, err, "the mark lets the member start")
	require.Equal(t, [2]int64{2, 2}, [2]int64{accepted, current})

	// Once currentEpoch covers the epoch, the mark is gone for good.
	require.NoError(t, s.CoverEpoch(3<<32|1))
	updating, err := s.updatingEpoch()
	require.NoError(t, err)
	require.True(t, updating)
	require.NoError(t, s.SetCurrentEpoch(3))
	updating, err = s.updatingEpoch()
	require.NoError(t, err)
	require.False(t, updating)
}

// A standalone server never marks anything: its zxids may carry any epoch.
func TestCoverEpochIgnoresAStandaloneServer(t *testing.T) {
	fsys := vfs.NewSim(vfs.SimConfig{}, rand.New(rand.NewSource(5)))
	s := openStore(t, fsys, "/d", nil)
	require.NoError(t, s.CoverEpoch(5<<32|1))
	updating, err := s.updatingEpoch()
	require.NoError(t, err)
	require.False(t, updating)
}
