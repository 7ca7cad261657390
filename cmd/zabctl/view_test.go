package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/runlog"
)

// zabctl run view merges members' records into the page and a ShiViz log;
// a record cut short by a kill is read with a warning, a file that is no
// record is refused with its name and line.
func TestRunViewMergesMemberRecords(t *testing.T) {
	dir := t.TempDir()
	one := &runlog.Run{Title: "zabd member 1", Members: []int64{1}}
	one.Add(runlog.Event{At: 1000, Kind: runlog.KindStart, Member: 1})
	one.Add(runlog.Event{At: 1100, Kind: runlog.KindSend, Member: 1, Peer: 2, Name: "PROPOSAL", Zxid: 1})
	one.Add(runlog.Event{At: 1300, Kind: runlog.KindReceive, Member: 1, Peer: 2, Name: "ACK", Zxid: 1})
	two := &runlog.Run{Title: "zabd member 2", Members: []int64{2}}
	two.Add(runlog.Event{At: 5000, Kind: runlog.KindStart, Member: 2})
	two.Add(runlog.Event{At: 5150, Kind: runlog.KindReceive, Member: 2, Peer: 1, Name: "PROPOSAL", Zxid: 1})
	two.Add(runlog.Event{At: 5200, Kind: runlog.KindSend, Member: 2, Peer: 1, Name: "ACK", Zxid: 1})
	var paths []string
	for i, r := range []*runlog.Run{one, two} {
		p := filepath.Join(dir, []string{"one.jsonl", "two.jsonl"}[i])
		f, err := os.Create(p)
		require.NoError(t, err)
		require.NoError(t, r.Write(f))
		require.NoError(t, f.Close())
		paths = append(paths, p)
	}
	cut, err := os.OpenFile(paths[1], os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = cut.WriteString("{\"t\":52\n")
	require.NoError(t, err)
	require.NoError(t, cut.Close())

	page, shiviz := filepath.Join(dir, "run.html"), filepath.Join(dir, "run.shiviz")
	out, errOut, code := zabctl(t, "", append([]string{"run", "view", "-o", page, "-shiviz", shiviz}, paths...)...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "view: "+page+" (2 members, 0 sessions, ")
	require.Contains(t, errOut, "skipped 1 line(s) cut short")
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	require.Contains(t, string(html), `"title":"zabd member 1"`)
	log, err := os.ReadFile(shiviz)
	require.NoError(t, err)
	require.Contains(t, string(log), "receive ACK 0x1 from server2")

	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{\"title\":\"x\"}\n{\"t\":1}\n"), 0o644))
	_, errOut, code = zabctl(t, "", "run", "view", "-o", page, bad)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, bad+" line 2: an event without a kind")
	_, errOut, code = zabctl(t, "", "run", "view")
	require.Equal(t, 2, code)
	require.True(t, strings.HasPrefix(errOut, "usage: zabctl run view"), errOut)
}
