package runlog

import (
	"fmt"
	"sort"
)

// Merge makes one run of the records real members wrote, each with its own
// clock. It pairs each member's sends with the receives of the member they
// went to (the n-th send of a packet type and zxid from a to b is the n-th
// receive of it at b: TCP keeps a connection's order), estimates each
// member's clock offset from those pairs, and puts every event on the
// first member's clock:
//
//	for members a and b, the fastest a→b packet took at least
//	d_ab = min(recv_b − send_a) = latency + (off_b − off_a), and the
//	fastest b→a one d_ba = latency + (off_a − off_b), so
//	off_b − off_a ≈ (d_ab − d_ba) / 2, the error at most half the
//	difference of the two directions' fastest latencies (NTP's estimate).
//
// Offsets propagate from the first member along pairs that exchanged
// packets both ways; a member with none keeps its own clock. A send whose
// receive was not recorded (the receiver was down, or does not record: a
// ZooKeeper member) is drawn as a message that arrived when it left; a
// receive whose send was not recorded, likewise; such a member still has a
// lane. A member's start after
// other events of its own is a restart: its process ended (a crash mark)
// at its last event before it. Sessions become client
// lanes in order of their first operation; times start at zero, the
// earliest event.
func Merge(records []*Run) (*Run, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("runlog: nothing to merge")
	}
	out := &Run{}
	seen := map[int64]bool{}
	for _, r := range records {
		if out.Title == "" {
			out.Title = r.Title
		}
		for _, m := range r.Members {
			if seen[m] {
				return nil, fmt.Errorf("runlog: member %d is in two records", m)
			}
			seen[m] = true
			out.Members = append(out.Members, m)
		}
	}
	// A member that records nothing (a ZooKeeper member) still gets a
	// lane when the others exchanged packets with it.
	for _, r := range records {
		for _, e := range r.Events {
			if (e.Kind == KindSend || e.Kind == KindReceive) && e.Peer != 0 && !seen[e.Peer] {
				seen[e.Peer] = true
				out.Members = append(out.Members, e.Peer)
			}
		}
	}
	sort.Slice(out.Members, func(i, j int) bool { return out.Members[i] < out.Members[j] })

	type key struct {
		from, to int64
		name     string
		zxid     int64
	}
	sends := map[key][]*Event{}
	recvs := map[key][]*Event{}
	var rest []Event
	for _, r := range records {
		// A real member records no crash: a start after other events of
		// its own means its process ended after the last of them.
		last, seen := int64(0), false
		for i := range r.Events {
			e := &r.Events[i]
			if e.Kind == KindStart && seen {
				rest = append(rest, Event{At: last, Kind: KindCrash, Member: e.Member, Text: "ended after its last recorded event"})
			}
			last, seen = e.At, e.Kind != KindCrash
			switch e.Kind {
			case KindSend:
				k := key{e.Member, e.Peer, e.Name, e.Zxid}
				sends[k] = append(sends[k], e)
			case KindReceive:
				k := key{e.Peer, e.Member, e.Name, e.Zxid}
				recvs[k] = append(recvs[k], e)
			default:
				rest = append(rest, *e)
			}
		}
	}
	type pair struct{ send, recv *Event }
	var pairs []pair
	var unmatched []*Event
	keys := make([]key, 0, len(sends)+len(recvs))
	for k := range sends {
		keys = append(keys, k)
	}
	for k := range recvs {
		if _, ok := sends[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { // map order must not reach the output
		a, b := keys[i], keys[j]
		if a.from != b.from {
			return a.from < b.from
		}
		if a.to != b.to {
			return a.to < b.to
		}
		if a.name != b.name {
			return a.name < b.name
		}
		return a.zxid < b.zxid
	})
	for _, k := range keys {
		s, r := sends[k], recvs[k]
		n := min(len(s), len(r))
		for i := 0; i < n; i++ {
			pairs = append(pairs, pair{s[i], r[i]})
		}
		unmatched = append(unmatched, s[n:]...)
		unmatched = append(unmatched, r[n:]...)
	}

	// Fastest one-way time per ordered pair of members, on their raw clocks.
	fastest := map[[2]int64]int64{}
	for _, p := range pairs {
		d := p.recv.At - p.send.At
		k := [2]int64{p.send.Member, p.recv.Member}
		if cur, ok := fastest[k]; !ok || d < cur {
			fastest[k] = d
		}
	}
	offset := map[int64]int64{out.Members[0]: 0}
	for changed := true; changed; {
		changed = false
		for _, a := range out.Members {
			oa, ok := offset[a]
			if !ok {
				continue
			}
			for _, b := range out.Members {
				if _, done := offset[b]; done {
					continue
				}
				ab, ok1 := fastest[[2]int64{a, b}]
				ba, ok2 := fastest[[2]int64{b, a}]
				if ok1 && ok2 {
					offset[b] = oa + (ab-ba)/2
					changed = true
				}
			}
		}
	}
	at := func(member, t int64) int64 { return t - offset[member] }

	var events []Event
	for _, p := range pairs {
		e := Event{Kind: KindMessage, Member: p.send.Member, Peer: p.recv.Member, Name: p.send.Name, Zxid: p.send.Zxid,
			Sent: at(p.send.Member, p.send.At), At: at(p.recv.Member, p.recv.At), Text: p.send.Text}
		if e.Name == "vote" {
			e.Kind, e.Name = KindVote, ""
		}
		// Offsets are estimates: a packet never arrives before it left.
		e.At = max(e.At, e.Sent)
		events = append(events, e)
	}
	for _, u := range unmatched {
		e := Event{Kind: KindMessage, Name: u.Name, Zxid: u.Zxid, Text: u.Text}
		if u.Kind == KindSend {
			e.Member, e.Peer = u.Member, u.Peer
			e.Text += " (its arrival was not recorded)"
		} else {
			e.Member, e.Peer = u.Peer, u.Member
			e.Text += " (its departure was not recorded)"
		}
		e.At = at(u.Member, u.At)
		e.Sent = e.At
		if e.Name == "vote" {
			e.Kind, e.Name = KindVote, ""
		}
		events = append(events, e)
	}
	for i := range rest {
		e := &rest[i]
		shift := offset[e.Member]
		e.At -= shift
		if hasSent(e.Kind) {
			e.Sent -= shift
		}
		events = append(events, *e)
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].At < events[j].At })
	start := int64(0)
	for i, e := range events {
		t := e.At
		if hasSent(e.Kind) {
			t = e.Sent
		}
		if i == 0 || t < start {
			start = t
		}
	}
	lane := map[int64]int{}
	for i := range events {
		e := &events[i]
		e.At -= start
		if hasSent(e.Kind) {
			e.Sent -= start
		}
		if e.Session != 0 {
			if _, ok := lane[e.Session]; !ok {
				lane[e.Session] = len(lane) + 1
				out.Clients = append(out.Clients, len(lane))
			}
			e.Client = lane[e.Session]
		}
	}
	out.Events = events
	return out, nil
}

// hasSent reports whether events of kind k carry a start time in Sent.
func hasSent(k Kind) bool { return k == KindMessage || k == KindVote || k == KindOp || k == KindFsync }
