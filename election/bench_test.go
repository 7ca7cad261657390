package election

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

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

// BenchmarkVirtualTimeToDecide measures, in virtual time, how long an
// election takes under each final-wait rule: 3 and 5 voters with random
// zxids and epochs start within 20ms of each other (a fresh ensemble, or
// survivors noticing a dead leader) over FIFO links on which every message
// takes up to 10ms (what is sent to a server not yet started waits, as
// ZooKeeper's connection manager queues it, and arrives 1ms after it
// starts, once connected); with every voter up, with one (random) voter
// silent (its messages lost, as across a partition), and with one voter
// dead (a message to it is refused, and the sender told: SetUnreachable,
// as a dial to a dead process is refused). The ZAB stand-in
// of property_test.go restarts the election of servers whose leader gets
// no quorum of followers within 2s. Each iteration plays the same 500
// seeded elections; the metrics are over those: the time from the first
// start until every live voter follows one leader that a quorum follows
// (median, 99th percentile, maximum), notifications sent per election, and
// the elections that needed the stand-in to restart someone (split or
// stranded decisions). The figures are in docs/election.md.
//
//	go test ./election -run XXX -bench VirtualTimeToDecide -benchtime 1x
func BenchmarkVirtualTimeToDecide(b *testing.B) {
	for _, voters := range []int{3, 5} {
		for _, down := range []downVoters{{0, false, "none"}, {1, false, "silent"}, {1, true, "dead"}} {
			for _, rule := range finalWaitRules {
				b.Run(fmt.Sprintf("voters=%d/down=%s/%s", voters, down.name, rule.name), func(b *testing.B) {
					var m electionMeasures
					for b.Loop() {
						m = measureElections(b, voters, down, rule)
					}
					ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
					b.ReportMetric(ms(m.settled[len(m.settled)/2]), "p50-ms")
					b.ReportMetric(ms(m.settled[len(m.settled)*99/100]), "p99-ms")
					b.ReportMetric(ms(m.settled[len(m.settled)-1]), "max-ms")
					b.ReportMetric(float64(m.messages)/float64(len(m.settled)), "msgs/election")
					b.ReportMetric(float64(m.restarted), "restarted")
				})
			}
		}
	}
}

// downVoters is how many voters of a measured election never start, and
// whether a message to one is refused (dead) or lost (silent).
type downVoters struct {
	n       int
	refused bool
	name    string
}

type electionMeasures struct {
	settled   []time.Duration // per election, ascending
	messages  int
	restarted int
}

func measureElections(b *testing.B, n int, down downVoters, rule finalWaitRule) electionMeasures {
	var m electionMeasures
	for seed := range uint64(500) {
		rng := rand.New(rand.NewPCG(seed, 1))
		p := faultPlan{
			locals: map[int64]local{}, startAt: map[int64]time.Duration{},
			heal: time.Hour, maxDelay: 10 * time.Millisecond, fixedWait: rule.fixed, fifo: true, seed: seed,
		}
		for i := range n {
			id := int64(i + 1)
			p.voters = append(p.voters, id)
			epoch := int64(rng.IntN(2) + 1)
			p.locals[id] = local{zxid: epoch<<32 | int64(rng.IntN(4)), epoch: epoch}
		}
		for _, i := range rng.Perm(n)[down.n:] {
			p.startAt[p.voters[i]] = time.Duration(rng.IntN(21)) * time.Millisecond
		}
		c := newPlannedCluster(b, p)
		c.refuse = down.refused
		fifo := c.route
		c.route = func(pk packet) []time.Duration {
			at := fifo(pk)
			for i := range at {
				at[i] = max(at[i], p.startAt[pk.to]+time.Millisecond)
			}
			return at
		}
		for _, id := range p.voters {
			if _, starts := p.startAt[id]; !starts {
				c.down[id] = true
			}
		}
		if !runPlan(c, p, time.Minute, c.converged) {
			b.Fatalf("seed %d: not settled after a minute\n%s", seed, c.trace())
		}
		m.settled = append(m.settled, c.now-slices.Min(slices.Collect(maps.Values(p.startAt))))
		if len(c.decisions) > n-down.n {
			m.restarted++
		}
		c.runFor(time.Second) // what is still in flight is part of the cost
		m.messages += len(c.sent)
	}
	slices.Sort(m.settled)
	return m
}
