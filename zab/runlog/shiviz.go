package runlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// ShiVizParser is the regular expression to give ShiViz
// (https://bestchai.bitbucket.io/shiviz/) for a log written by ShiViz.
const ShiVizParser = `(?<host>\S*) (?<clock>{.*})\n(?<event>.*)`

// ShiViz writes r in ShiViz's log format: per event, a line with the host
// and its vector clock, then a line describing the event. Hosts are the
// members ("server1") and clients ("client1"); every message is a send at
// its sender and a receive at its receiver, which is where the vector
// clocks come from. Events at the same time keep the run's order, with
// sends first.
func ShiViz(r *Run, w io.Writer) error {
	type entry struct {
		at   int64
		send bool
		host string
		msg  int // index of the message event, for sends and receives; -1 otherwise
		recv bool
		text string
	}
	var entries []entry
	for i := range r.Events {
		e := &r.Events[i]
		switch e.Kind {
		case KindMessage, KindVote:
			what := e.Name
			if e.Kind == KindVote {
				what = "vote " + e.Text
			} else if e.Zxid != 0 {
				what += " 0x" + strconv.FormatInt(e.Zxid, 16)
			}
			entries = append(entries,
				entry{at: e.Sent, send: true, host: memberHost(e.Member), msg: i, text: fmt.Sprintf("send %s to %s", what, memberHost(e.Peer))},
				entry{at: e.At, host: memberHost(e.Peer), msg: i, recv: true, text: fmt.Sprintf("receive %s from %s", what, memberHost(e.Member))})
		case KindOp:
			entries = append(entries, entry{at: e.At, host: "client" + strconv.Itoa(e.Client), msg: -1,
				text: fmt.Sprintf("%s %s: %s", e.Name, e.Text, e.Outcome)})
		case KindPartition, KindHeal, KindFailure:
			// Not one host's event: ShiViz has no place for it.
		default:
			if e.Member == 0 {
				continue
			}
			entries = append(entries, entry{at: e.At, host: memberHost(e.Member), msg: -1, text: describeLocal(e)})
		}
	}
	sort.SliceStable(entries, func(a, b int) bool {
		if entries[a].at != entries[b].at {
			return entries[a].at < entries[b].at
		}
		return entries[a].send && !entries[b].send
	})
	clocks := map[string]map[string]int{}
	stamps := map[int]map[string]int{} // message index -> its sender's clock at the send
	bw := bufio.NewWriter(w)
	for _, en := range entries {
		c := clocks[en.host]
		if c == nil {
			c = map[string]int{}
			clocks[en.host] = c
		}
		if en.recv {
			stamp, ok := stamps[en.msg]
			if !ok {
				continue // sent before the record began
			}
			for h, n := range stamp {
				c[h] = max(c[h], n)
			}
			delete(stamps, en.msg)
		}
		c[en.host]++
		if en.send {
			copyOf := make(map[string]int, len(c))
			for h, n := range c {
				copyOf[h] = n
			}
			stamps[en.msg] = copyOf
		}
		clock, err := json.Marshal(c) // map keys are sorted: the same run gives the same bytes
		if err != nil {
			return fmt.Errorf("runlog: ShiViz clock: %w", err)
		}
		fmt.Fprintf(bw, "%s %s\n%s\n", en.host, clock, en.text)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("runlog: write the ShiViz log: %w", err)
	}
	return nil
}

func memberHost(id int64) string { return "server" + strconv.FormatInt(id, 10) }

// describeLocal is one line for an event that happens at one member.
func describeLocal(e *Event) string {
	switch e.Kind {
	case KindRole:
		return fmt.Sprintf("%s (%s) epoch %d leader %d", e.Name, e.Text, e.Epoch, e.Peer)
	case KindDurable:
		return fmt.Sprintf("durable to 0x%x", e.Zxid)
	default:
		if e.Text == "" {
			return string(e.Kind)
		}
		return string(e.Kind) + ": " + e.Text
	}
}
