package runlog_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/runlog"
)

func sample() *runlog.Run {
	r := &runlog.Run{Title: "sample", Members: []int64{1, 2}, Clients: []int{1}}
	r.Add(runlog.Event{At: 10, Kind: runlog.KindRole, Member: 1, Name: "leading", Text: "discovery", Epoch: 1, Peer: 1})
	r.Add(runlog.Event{At: 30, Kind: runlog.KindMessage, Member: 1, Peer: 2, Sent: 20, Name: "PROPOSAL", Zxid: 0x100000001})
	r.Add(runlog.Event{At: 50, Kind: runlog.KindMessage, Member: 2, Peer: 1, Sent: 40, Name: "ACK", Zxid: 0x100000001})
	r.Add(runlog.Event{At: 55, Kind: runlog.KindDurable, Member: 1, Zxid: 0x100000001})
	r.Add(runlog.Event{At: 60, Kind: runlog.KindOp, Client: 1, Sent: 5, Name: "create", Text: "/a", Outcome: runlog.OutcomeOK, Zxid: 0x100000001, ID: 0})
	r.Add(runlog.Event{At: 70, Kind: runlog.KindFailure, Name: "durability", Text: "lost", Ops: []int{0}})
	return r
}

func TestWriteThenReadGivesTheRunBack(t *testing.T) {
	r := sample()
	var buf bytes.Buffer
	require.NoError(t, r.Write(&buf))
	got, err := runlog.Read(&buf, "sample.jsonl")
	require.NoError(t, err)
	require.Equal(t, r, got)
}

func TestReadNamesTheLineOfABadEvent(t *testing.T) {
	_, err := runlog.Read(strings.NewReader("{\"title\":\"x\"}\n{\"t\":1,\"k\":\"role\"}\n{\"t\":\n"), "run.jsonl")
	require.ErrorContains(t, err, "run.jsonl line 3")
	_, err = runlog.Read(strings.NewReader("{\"title\":\"x\"}\n{\"t\":1}\n"), "run.jsonl")
	require.ErrorContains(t, err, "run.jsonl line 2: an event without a kind")
	_, err = runlog.Read(strings.NewReader(""), "empty.jsonl")
	require.ErrorContains(t, err, "empty.jsonl is empty")
}

func TestANilRunRecordsNothing(t *testing.T) {
	var r *runlog.Run
	require.False(t, r.On())
	r.Add(runlog.Event{Kind: runlog.KindRole}) // must not panic
}

// ShiViz's log: pairs of lines matching its parser, each host's clock
// counting its own events, and every receive's clock covering its send's.
func TestShiVizClocksFollowTheMessages(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, runlog.ShiViz(sample(), &buf))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Equal(t, 0, len(lines)%2)
	head := regexp.MustCompile(`^(\S*) (\{.*\})$`)
	own := map[string]int{}
	var clocks []map[string]int
	var texts []string
	for i := 0; i < len(lines); i += 2 {
		m := head.FindStringSubmatch(lines[i])
		require.NotNil(t, m, "line %d: %q", i+1, lines[i])
		var c map[string]int
		require.NoError(t, json.Unmarshal([]byte(m[2]), &c))
		own[m[1]]++
		require.Equal(t, own[m[1]], c[m[1]], "host %s counts its own events", m[1])
		clocks = append(clocks, c)
		texts = append(texts, lines[i+1])
	}
	require.Equal(t, []string{
		"leading (discovery) epoch 1 leader 1",
		"send PROPOSAL 0x100000001 to server2",
		"receive PROPOSAL 0x100000001 from server1",
		"send ACK 0x100000001 to server1",
		"receive ACK 0x100000001 from server2",
		"durable to 0x100000001",
		"create /a: ok",
	}, texts)
	// The ACK's receive at server1 has seen server2's send of it.
	require.Equal(t, 2, clocks[4]["server2"])
	require.Equal(t, 3, clocks[4]["server1"])
}

// FuzzRead: any input is a run or an error naming the line, never a
// crash; a run read back writes and reads again to itself.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	if err := sample().Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("{\"title\":\"x\"}\n{\"t\":1}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := runlog.Read(bytes.NewReader(in), "fuzz")
		if err != nil {
			require.Contains(t, err.Error(), "fuzz")
			return
		}
		var out bytes.Buffer
		require.NoError(t, r.Write(&out))
		again, err := runlog.Read(&out, "again")
		require.NoError(t, err)
		require.Equal(t, r, again)
	})
}
