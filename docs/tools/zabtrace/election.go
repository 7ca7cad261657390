package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/wire"
)

// The election scenario: three voters that all logged txns of epoch 1 but
// got different distances into it. Server 2 has the longest history, so it
// must win, although server 3 has the higher id: the zxid is compared
// before the id.
var electionServers = []struct {
	id, zxid, epoch int64
}{
	{id: 1, zxid: 0x100000005, epoch: 1},
	{id: 2, zxid: 0x100000007, epoch: 1},
	{id: 3, zxid: 0x100000006, epoch: 1},
}

// electionDelay is how long every notification takes on the simulated
// network; server 3 starts this late, so it first hears votes of others.
const (
	electionDelay = 5 * time.Millisecond
	lateStart     = 20 * time.Millisecond
)

// delivery is a notification in flight; seq breaks ties between equal
// times in send order, so the run is the same every time.
type delivery struct {
	at       time.Duration
	seq      int
	from, to int64
	n        wire.Notification
}

// renderElection runs zabd's election package for three voters over a
// network that delivers every message after electionDelay, and prints each
// message, each change of vote and each decision: first with zabd's
// adaptive final wait, then with ZooKeeper's fixed one.
func renderElection(w io.Writer) error {
	if err := renderElectionRun(w, false); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nThe same election with ZooKeeper's fixed final wait (election.Config.FixedFinalizeWait):\n\n")
	return renderElectionRun(w, true)
}

func renderElectionRun(w io.Writer, fixedFinalizeWait bool) error {
	voters := make([]int64, len(electionServers))
	for i, s := range electionServers {
		voters[i] = s.id
	}
	nodes := map[int64]*election.Election{}
	wakeups := map[int64]time.Duration{}
	for _, s := range electionServers {
		e, err := election.New(election.Config{ID: s.id, Voters: voters, FixedFinalizeWait: fixedFinalizeWait})
		if err != nil {
			return err
		}
		nodes[s.id] = e
		fmt.Fprintf(w, "server %d: last logged zxid %s, currentEpoch %d\n", s.id, zxid(s.zxid), s.epoch)
	}
	fmt.Fprintf(w, "network: every notification arrives %v after it is sent; server 3 starts at %v\n\n", electionDelay, lateStart)

	var inflight []delivery
	seq := 0
	decided := map[int64]bool{}
	// flush collects what id's machine wants done after a call.
	flush := func(now time.Duration, id int64) {
		rd := nodes[id].Ready()
		for _, m := range rd.Messages {
			seq++
			inflight = append(inflight, delivery{at: now + electionDelay, seq: seq, from: id, to: m.To, n: m.Notification})
			fmt.Fprintf(w, "%6v  s%d -> s%d  %s\n", now, id, m.To, notification(m.Notification))
		}
		if d := rd.Decision; d != nil {
			decided[id] = true
			fmt.Fprintf(w, "%6v  s%d DECIDES %s, leader %d (vote %s)\n", now, id, d.State, d.Vote.Leader, vote(d.Vote))
		}
		wakeups[id] = rd.Wakeup
	}
	start := func(now time.Duration, s int) {
		id := electionServers[s].id
		fmt.Fprintf(w, "%6v  s%d starts LOOKING and votes for itself\n", now, id)
		nodes[id].Start(now, electionServers[s].zxid, electionServers[s].epoch)
		flush(now, id)
	}

	started := map[int64]bool{}
	for now := time.Duration(0); len(decided) < len(nodes); {
		for i, s := range electionServers {
			if !started[s.id] && (s.id != 3 || now >= lateStart) {
				started[s.id] = true
				start(now, i)
			}
		}
		// The next event: a delivery, a timer or server 3's start.
		next, kind := time.Duration(-1), ""
		consider := func(at time.Duration, k string) {
			if next < 0 || at < next {
				next, kind = at, k
			}
		}
		slices.SortFunc(inflight, func(a, b delivery) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
		if len(inflight) > 0 {
			consider(inflight[0].at, "deliver")
		}
		for _, id := range voters {
			if wakeups[id] > 0 {
				consider(wakeups[id], fmt.Sprint(id))
			}
		}
		if !started[3] {
			consider(lateStart, "start")
		}
		if next < 0 {
			return fmt.Errorf("election stalled at %v with %d of %d decided", now, len(decided), len(nodes))
		}
		now = next
		switch kind {
		case "start":
		case "deliver":
			d := inflight[0]
			inflight = inflight[1:]
			e := nodes[d.to]
			if !started[d.to] {
				fmt.Fprintf(w, "%6v  s%d <- s%d  dropped: s%d is not electing yet\n", now, d.to, d.from, d.to)
				continue
			}
			fmt.Fprintf(w, "%6v  s%d <- s%d  %s\n", now, d.to, d.from, notification(d.n))
			before := e.Vote()
			e.Step(now, d.from, d.n)
			if after := e.Vote(); after != before {
				fmt.Fprintf(w, "%6v  s%d now votes for sid=%d (was sid=%d)\n", now, d.to, after.Leader, before.Leader)
			}
			flush(now, d.to)
		default:
			for _, id := range voters {
				if fmt.Sprint(id) == kind {
					nodes[id].Tick(now)
					flush(now, id)
				}
			}
		}
	}
	return nil
}

func vote(v election.Vote) string {
	return fmt.Sprintf("(peerEpoch=%d, zxid=%s, sid=%d)", v.PeerEpoch, zxid(v.Zxid), v.Leader)
}

func notification(n wire.Notification) string {
	return fmt.Sprintf("%s round=%d vote=%s", n.State, n.ElectionEpoch,
		vote(election.Vote{Leader: n.Leader, Zxid: n.Zxid, PeerEpoch: n.PeerEpoch}))
}
