package runview

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/runlog"
)

func run() *runlog.Run {
	r := &runlog.Run{Title: "t", Members: []int64{1, 2}, Clients: []int{1}}
	r.Add(runlog.Event{At: 5, Kind: runlog.KindPartition, Name: "1", Text: "isolate [2]"})
	r.Add(runlog.Event{At: 30, Kind: runlog.KindMessage, Member: 1, Peer: 2, Sent: 20, Name: "PROPOSAL", Zxid: 0x100000001})
	r.Add(runlog.Event{At: 45, Kind: runlog.KindMessage, Member: 2, Peer: 1, Sent: 31, Name: "ACK", Zxid: 0x100000001})
	r.Add(runlog.Event{At: 50, Kind: runlog.KindDurable, Member: 1, Zxid: 0x100000001})
	r.Add(runlog.Event{At: 52, Kind: runlog.KindDurable, Member: 2, Zxid: 0x100000001})
	r.Add(runlog.Event{At: 60, Kind: runlog.KindOp, Client: 1, Sent: 10, Name: "create", Text: "/</script><script>alert(1)</script>", Outcome: "ok"})
	r.Add(runlog.Event{At: 80, Kind: runlog.KindFailure, Name: "b", Text: "later"})
	r.Add(runlog.Event{At: 70, Kind: runlog.KindFailure, Name: "a", Text: "found at the end", Ops: []int{0}, Attachment: "<html>porcupine</html>"})
	return r
}

// The data the page carries, decoded: the packed lists unpack to what was
// recorded, a partition never healed lasts to the end, failures are in
// time order with their attachments.
func TestThePageCarriesTheRun(t *testing.T) {
	d := build(run())
	require.Equal(t, []int64{30, 10, 1, 2, 0, 0x100000001, 15, 14, 2, 1, 1, 0}, d.Messages)
	require.Equal(t, []int64{50, 1, 0x100000001, 2, 2, 0}, d.Durable)
	require.Equal(t, []string{"PROPOSAL", "ACK", "create"}, d.Names)
	require.Equal(t, [][]any{{int64(5), int64(80), "isolate [2]"}}, d.Cuts)
	require.Len(t, d.Failures, 2)
	require.Equal(t, "a", d.Failures[0][1])
	require.Equal(t, 0, d.Failures[0][4])
	require.Equal(t, -1, d.Failures[1][4])
	require.Equal(t, []string{"<html>porcupine</html>"}, d.Attached)
	require.NotNil(t, build(&runlog.Run{}).Failures, "every list is there for the script, if empty")
}

// What a run holds (paths, data, Porcupine's page) cannot end the script
// that carries it.
func TestRecordedTextCannotEscapeThePage(t *testing.T) {
	var page bytes.Buffer
	require.NoError(t, Write(&page, run()))
	html := page.String()
	require.Equal(t, 2, strings.Count(html, "<script"), "the page's own two scripts (its data and its code), and no other")
	require.NotContains(t, html, "alert(1)</script>")
	m := regexp.MustCompile(`(?s)<script type="application/json" id="run">(.*?)</script>`).FindStringSubmatch(html)
	require.NotNil(t, m)
	var back data
	require.NoError(t, json.Unmarshal([]byte(m[1]), &back))
	require.Equal(t, "/</script><script>alert(1)</script>", back.Ops[0][4])
}
