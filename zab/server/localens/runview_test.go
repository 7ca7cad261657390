package localens_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/runlog"
)

// TestTheRunOfARealEnsemble: three zabd members record their shares of a
// run (runRecordFile) across a leader's kill and restart; merged, the run
// has every member's roles, a leader in each epoch, the packets between
// them on one clock (none arriving before it left), votes, durable points
// and the clients' operations, and it draws as runview's page.
func TestTheRunOfARealEnsemble(t *testing.T) {
	e := startEnsemble(t, 3, 0)
	writeAndReadEverywhere(t, e, "/before")
	leader := waitServing(t, e)
	e.Member(leader).Stop(syscall.SIGKILL)
	waitServing(t, e)
	require.NoError(t, e.Restart(leader))
	waitServing(t, e)
	writeAndReadEverywhere(t, e, "/after")
	e.Close()

	var records []*runlog.Run
	for _, m := range e.Members {
		f, err := os.Open(m.RunRecordPath())
		require.NoError(t, err)
		r, _, err := runlog.ReadMember(f, m.RunRecordPath())
		f.Close()
		require.NoError(t, err)
		records = append(records, r)
	}
	run, err := runlog.Merge(records)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 3}, run.Members)
	count := map[runlog.Kind]int{}
	leaders := map[int64]bool{} // epochs led
	starts := map[int64]int{}
	for _, ev := range run.Events {
		count[ev.Kind]++
		switch ev.Kind {
		case runlog.KindMessage, runlog.KindVote:
			require.LessOrEqual(t, ev.Sent, ev.At, "%+v", ev)
		case runlog.KindRole:
			if ev.Name == "leading" && ev.Text == "broadcast" {
				leaders[ev.Epoch] = true
			}
		case runlog.KindStart:
			starts[ev.Member]++
		}
	}
	require.Len(t, leaders, 2, "a leader before the kill and one after")
	require.Equal(t, map[int64]int{1: 1, 2: 1, 3: 1, leader: 2}, starts, "a start per process")
	require.Equal(t, 1, count[runlog.KindCrash], "the killed leader's end, before its restart")
	require.Positive(t, count[runlog.KindMessage])
	require.Positive(t, count[runlog.KindVote])
	require.Positive(t, count[runlog.KindDurable])
	require.Positive(t, count[runlog.KindOp])
	require.NotEmpty(t, run.Clients)

	page := filepath.Join(t.TempDir(), "run.html")
	require.NoError(t, e.WriteView(page, t.Name()))
	st, err := os.Stat(page)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(10_000))
}
