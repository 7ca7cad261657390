package runlog_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/runlog"
)

// Two members whose clocks differ by 1000 µs, packets 50 µs each way:
// Merge finds the offset from the pairs, puts member 2's events on member
// 1's clock, and starts the run at zero.
func TestMergeAlignsClocksFromThePackets(t *testing.T) {
	const skew = 1000
	one := &runlog.Run{Title: "real", Members: []int64{1}}
	two := &runlog.Run{Members: []int64{2}}
	one.Add(runlog.Event{At: 100, Kind: runlog.KindRole, Member: 1, Name: "leading"})
	one.Add(runlog.Event{At: 200, Kind: runlog.KindSend, Member: 1, Peer: 2, Name: "PROPOSAL", Zxid: 7})
	two.Add(runlog.Event{At: 250 + skew, Kind: runlog.KindReceive, Member: 2, Peer: 1, Name: "PROPOSAL", Zxid: 7})
	two.Add(runlog.Event{At: 300 + skew, Kind: runlog.KindSend, Member: 2, Peer: 1, Name: "ACK", Zxid: 7})
	one.Add(runlog.Event{At: 350, Kind: runlog.KindReceive, Member: 1, Peer: 2, Name: "ACK", Zxid: 7})
	one.Add(runlog.Event{At: 400, Kind: runlog.KindSend, Member: 1, Peer: 3, Name: "COMMIT", Zxid: 7}) // 3 records nothing
	two.Add(runlog.Event{At: 500 + skew, Kind: runlog.KindOp, Member: 2, Session: 0x55, Sent: 450 + skew, Name: "getData", Outcome: "ok"})
	one.Add(runlog.Event{At: 600, Kind: runlog.KindOp, Member: 1, Session: 0x44, Sent: 420, Name: "create", Outcome: "ok"})

	r, err := runlog.Merge([]*runlog.Run{two, one})
	require.NoError(t, err)
	require.Equal(t, "real", r.Title)
	require.Equal(t, []int64{1, 2, 3}, r.Members, "3 records nothing, but packets went to it")
	require.Equal(t, []int{1, 2}, r.Clients)
	byName := map[string]runlog.Event{}
	for _, e := range r.Events {
		byName[e.Name] = e
	}
	require.Equal(t, runlog.Event{At: 0, Kind: runlog.KindRole, Member: 1, Name: "leading"}, byName["leading"])
	p := byName["PROPOSAL"]
	require.Equal(t, runlog.KindMessage, p.Kind)
	require.Equal(t, [2]int64{100, 150}, [2]int64{p.Sent, p.At}, "sent at 200, arrived 50 µs later, less the start at 100")
	a := byName["ACK"]
	require.Equal(t, [3]int64{2, 200, 250}, [3]int64{a.Member, a.Sent, a.At})
	c := byName["COMMIT"]
	require.Equal(t, c.Sent, c.At)
	require.Contains(t, c.Text, "arrival was not recorded")
	g := byName["getData"]
	require.Equal(t, [3]int64{350, 400, 1}, [3]int64{g.Sent, g.At, int64(g.Client)}, "member 2's op on member 1's clock; the first to end, its session's lane first")
	require.Equal(t, 2, byName["create"].Client)
}

func TestMergeRefusesAMemberTwice(t *testing.T) {
	_, err := runlog.Merge([]*runlog.Run{{Members: []int64{1}}, {Members: []int64{1}}})
	require.ErrorContains(t, err, "member 1 is in two records")
	_, err = runlog.Merge(nil)
	require.Error(t, err)
}
