package election

import (
	"testing"

	"github.com/zabd/zabd/wire"
)

// BenchmarkFiveVoterElection runs whole elections of five voters with
// distinct zxids, every message delivered at once in send order: the cost
// of the state machines alone (no network, no encoding).
func BenchmarkFiveVoterElection(b *testing.B) {
	voters := []int64{1, 2, 3, 4, 5}
	type inFlight struct {
		from int64
		m    Message
	}
	b.ReportAllocs()
	for b.Loop() {
		nodes := make(map[int64]*Election, len(voters))
		var queue []inFlight
		for _, id := range voters {
			e, err := New(Config{ID: id, Voters: voters})
			if err != nil {
				b.Fatal(err)
			}
			nodes[id] = e
			e.Start(0, 0x100000000|id, 1)
			for _, m := range e.Ready().Messages {
				queue = append(queue, inFlight{id, m})
			}
		}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			e := nodes[p.m.To]
			e.Step(0, p.from, p.m.Notification)
			for _, m := range e.Ready().Messages {
				queue = append(queue, inFlight{p.m.To, m})
			}
		}
		for _, id := range voters {
			nodes[id].Tick(DefaultFinalizeWait)
			if nodes[id].State() == wire.PeerLooking {
				b.Fatalf("server %d still LOOKING", id)
			}
		}
	}
}
