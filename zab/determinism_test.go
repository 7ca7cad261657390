package zab_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// determinismRun drives a Peer where any map order would show: 60
// connections watching one node that one txn creates, and 60 sessions that
// expire in the same tick, each taking an ephemeral that another session
// watches. It returns every byte the Peer emitted and logged.
func determinismRun(t *testing.T) []byte { return determinismRunReleasing(t, false) }

// determinismRunReleasing is determinismRun with the harness handing every
// Ready back to the Peer (Peer.Release) or not.
func determinismRunReleasing(t *testing.T, release bool) []byte {
	h := zabtest.New(t, zab.Config{ServerID: 1, SnapCount: 50}, 42)
	h.ReleaseReadys = release
	keeper := h.Session(40000)
	keeper.GetChildren("/", true)
	var doomed []*zabtest.Client
	for i := range 60 {
		c := h.Session(4000)
		c.Exists("/hot", true)
		c.GetChildren("/", true)
		c.Create(fmt.Sprintf("/eph%02d", i), "", wire.ModeEphemeral)
		keeper.Exists(fmt.Sprintf("/eph%02d", i), true)
		doomed = append(doomed, c)
	}
	keeper.Create("/hot", "x", wire.ModePersistent) // fires 60 exists watches (and child watches)
	for range 4 {
		h.Advance(2 * time.Second)
		keeper.Ping()
	}
	require.Len(t, h.Peer.SessionTable(), 1, "the 60 silent sessions expired")
	require.NotEmpty(t, h.Snapshots, "snapshots are part of the output compared")
	return h.Bytes()
}

// TestReleasedReadysChangeNothing: a shell that hands every Ready's slices
// back for reuse (Peer.Release) gets, byte for byte, the effects a shell
// that keeps them gets.
func TestReleasedReadysChangeNothing(t *testing.T) {
	require.Equal(t, determinismRun(t), determinismRunReleasing(t, true))
}

// TestDeterminism: the same input, run 20 times in one process (so map
// iteration orders differ), gives byte-identical effects.
func TestDeterminism(t *testing.T) {
	first := determinismRun(t)
	require.NotEmpty(t, first)
	for i := 1; i < 20; i++ {
		require.True(t, bytes.Equal(first, determinismRun(t)), "run %d differs", i)
	}
}
