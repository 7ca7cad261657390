package linearizability

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHistoryRoundTrip(t *testing.T) {
	h := cleanHistory()
	var buf bytes.Buffer
	require.NoError(t, WriteHistory(&buf, h))
	back, err := ReadHistory(bytes.NewReader(buf.Bytes()), "clean")
	require.NoError(t, err)
	assert.Equal(t, h, back)
	var again bytes.Buffer
	require.NoError(t, WriteHistory(&again, back))
	assert.Equal(t, buf.String(), again.String(), "writing is deterministic")
}

func TestHistoryExampleFromTheIssue(t *testing.T) {
	const lines = `{"kind":"op","client":1,"session":"0x100000abc","seq":7,"call":1200,"return":1350,"op":"setData","path":"/a","data":"v","version":-1,"err":"ok","zxid":"0x100000002","stat":{"czxid":"0x100000001","mzxid":"0x100000002","ctime":1,"mtime":2,"version":1,"cversion":0,"aversion":0,"ephemeralOwner":"0x0","dataLength":1,"numChildren":0,"pzxid":"0x100000001"}}
{"kind":"event","client":1,"session":"0x100000abc","seq":8,"at":1400,"type":"NodeDataChanged","path":"/a"}
`
	h, err := ReadHistory(strings.NewReader(lines), "issue")
	require.NoError(t, err)
	require.Len(t, h, 2)
	assert.Equal(t, Hex64(0x100000002), *h[0].Zxid)
	assert.Equal(t, int64(1350), *h[0].Return)
	assert.Equal(t, "NodeDataChanged", h[1].Type)
}

// Every malformed line is refused with its line number and field.
func TestHistoryReaderIsStrict(t *testing.T) {
	good := `{"kind":"op","client":1,"session":"0x1","seq":1,"call":1,"return":2,"op":"getData","path":"/a","err":"NoNode","zxid":"0x1"}`
	cases := []struct {
		line, field, msg string
	}{
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":1,"return":2,"op":"getData","path":"/a","err":"NoNode","zxid":"0x1","colour":"red"}`, "colour", "unknown field"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":1,"return":2,"op":"getData","path":"/a","err":"NONODE","zxid":"0x1"}`, "err", "not a ZooKeeper error name"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":1,"return":2,"op":"getData","path":"/a","err":"ok","zxid":"12"}`, "zxid", "hex string"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":1,"return":2,"op":"create","path":"/a","err":"ok","zxid":"0x2"}`, "mode", "missing on create"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":1,"return":2,"op":"create","path":"/a","mode":"Persistent","err":"ok","zxid":"0x2"}`, "mode", "unknown create mode"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":5,"return":2,"op":"sync","path":"/a","err":"ok"}`, "return", "before call"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":5,"op":"setData","path":"/a","data":"x","version":-1,"err":"ok"}`, "err", "without a return"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":5,"op":"setData","path":"/a","data":"x","version":-1,"err":"ConnectionLoss","zxid":"0x2"}`, "err", "without a return"},
		{`{"kind":"event","client":1,"session":"0x1","seq":2,"at":5,"type":"Disconnected","server":"1"}`, "server", "only a SyncConnected or Expired"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":5,"return":6,"op":"sync","path":"/a","err":"ok","zxid":"0x2","server":"1"}`, "server", "not a field of a \"op\" entry"},
		{`{"kind":"event","client":1,"session":"0x1","seq":2,"at":5,"type":"Disconnected","term":"epoch 2"}`, "term", "only a SyncConnected or Expired"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":5,"return":6,"op":"sync","path":"/a","err":"ok","zxid":"0x2","term":"epoch 2"}`, "term", "not a field of a \"op\" entry"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":5,"return":6,"op":"setData","path":"/a","data":"x","err":"ok","zxid":"0x2"}`, "version", "missing on setData"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":5,"return":6,"op":"multi","ops":[{"op":"getData","path":"/a"}],"results":[{"err":"ok"}],"err":"ok","zxid":"0x2"}`, "ops[0]", "cannot appear inside multi"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":5,"return":6,"op":"multi","ops":[{"op":"check","path":"/a","version":1}],"err":"ok","zxid":"0x2"}`, "results", "0 results for 1 operations"},
		{`{"kind":"event","client":1,"session":"0x1","seq":2,"at":5,"type":"NodeBurnt","path":"/a"}`, "type", "neither a watch event type nor a session state"},
		{`{"kind":"event","client":1,"session":"0x1","seq":2,"at":5,"type":"NodeCreated"}`, "path", "needs a path"},
		{`{"kind":"event","client":1,"session":"0x1","seq":2,"at":5,"type":"Expired","op":"getData"}`, "op", "not a field of a \"event\" entry"},
		{`{"kind":"op","client":1,"seq":2,"call":5,"return":6,"op":"sync","path":"/a","err":"ok"}`, "session", "missing"},
		{`{"kind":"nap","client":1,"session":"0x1","seq":2}`, "kind", "want"},
		{`{"kind":"op","client":"one","session":"0x1","seq":2,"call":5,"return":6,"op":"sync","path":"/a","err":"ok"}`, "client", "cannot unmarshal"},
		{`{"kind":"op","client":1,"session":"0x1","seq":2,"call":5,"return":6,"op":"sync","path":"/a","err":"ok"}`, "zxid", "missing"},
		{`not json`, "", "not a JSON object"},
	}
	for _, c := range cases {
		_, err := ReadHistory(strings.NewReader(good+"\n\n"+c.line+"\n"), "h.jsonl")
		var pe *ParseError
		require.True(t, errors.As(err, &pe), "%s: got %v", c.line, err)
		assert.Equal(t, 3, pe.Line, c.line)
		assert.Equal(t, c.field, pe.Field, c.line)
		assert.Contains(t, err.Error(), c.msg)
		assert.Contains(t, err.Error(), "h.jsonl:3")
	}
}

func TestHistoryDuplicateSeqIsRefused(t *testing.T) {
	line := `{"kind":"event","client":1,"session":"0x1","seq":2,"at":5,"type":"SyncConnected"}`
	_, err := ReadHistory(strings.NewReader(line+"\n"+line+"\n"), "dup")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "share seq 2")
}

func TestHex64(t *testing.T) {
	for _, v := range []Hex64{0, 1, 0x100000002, -1, 1<<63 - 1} {
		b, err := v.MarshalJSON()
		require.NoError(t, err)
		var back Hex64
		require.NoError(t, back.UnmarshalJSON(b))
		assert.Equal(t, v, back)
	}
	var h Hex64
	for _, bad := range []string{`"0x"`, `"12"`, `12`, `"0xg"`, `"0x8000000000000000"`} {
		assert.Error(t, h.UnmarshalJSON([]byte(bad)), bad)
	}
}

// FuzzReadHistory: any input is read or refused with an error, never a
// panic, and whatever is read writes back to a history that reads the same.
func FuzzReadHistory(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteHistory(&buf, cleanHistory()); err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		f.Add([]byte(line))
	}
	// the optional server and term of a SyncConnected and an Expired, and a
	// lost request without a return
	f.Add([]byte(`{"kind":"event","client":1,"session":"0x1","seq":1,"at":5,"type":"SyncConnected","timeout":4000,"server":"1"}`))
	f.Add([]byte(`{"kind":"event","client":1,"session":"0x1","seq":1,"at":5,"type":"SyncConnected","timeout":4000,"server":"1","term":"epoch 2"}`))
	f.Add([]byte(`{"kind":"event","client":1,"session":"0x1","seq":1,"at":5,"type":"Expired","server":"1","term":"epoch 2"}`))
	f.Add([]byte(`{"kind":"op","client":1,"session":"0x1","seq":2,"call":5,"op":"create","path":"/a","data":"x","mode":"persistent","err":"ConnectionLoss"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadHistory(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		var out bytes.Buffer
		require.NoError(t, WriteHistory(&out, h))
		back, err := ReadHistory(&out, "again")
		require.NoError(t, err)
		require.Equal(t, len(h), len(back))
		if len(h) <= 20 {
			CheckAll(h, Options{Timeout: 50 * time.Millisecond})
		}
	})
}

func TestValidateInMemory(t *testing.T) {
	require.NoError(t, cleanHistory().Validate())
	h := cleanHistory()
	h[3].Err = "Nope"
	err := h.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `entry 3: field "err"`)
}

// Times of 0 (a simulator's first instant) survive the file format.
func TestZeroTimesRoundTrip(t *testing.T) {
	ret := int64(0)
	h := History{
		{Kind: KindEvent, Client: 1, Session: 1, Seq: 1, At: 0, Type: StateSyncConnected, Timeout: 100},
		{Kind: KindOp, Client: 1, Session: 1, Seq: 2, Call: 0, Return: &ret, Op: OpSync, Path: "/", Err: ErrOK, Zxid: zx(0)},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteHistory(&buf, h))
	assert.Contains(t, buf.String(), `"at":0`)
	assert.Contains(t, buf.String(), `"call":0`)
	back, err := ReadHistory(&buf, "zero")
	require.NoError(t, err)
	assert.Equal(t, h, back)
}

// TestConnectionLossWithoutReturn: a recorder may write a request lost with
// its connection as ConnectionLoss without a return time; it is read as an
// operation of unknown outcome, which may have taken effect or not.
func TestConnectionLossWithoutReturn(t *testing.T) {
	const lost = `{"kind":"op","client":1,"session":"0x1","seq":2,"call":5,"op":"create","path":"/a","data":"x","mode":"persistent","err":"ConnectionLoss"}`
	for _, exists := range []bool{true, false} {
		read := `{"kind":"op","client":2,"session":"0x2","seq":1,"call":20,"return":21,"op":"exists","path":"/a","err":"NoNode","zxid":"0x3"}`
		if exists {
			read = `{"kind":"op","client":2,"session":"0x2","seq":1,"call":20,"return":21,"op":"exists","path":"/a","err":"ok","zxid":"0x3","stat":{"czxid":"0x3","mzxid":"0x3","ctime":0,"mtime":0,"version":0,"cversion":0,"aversion":0,"ephemeralOwner":"0x0","dataLength":1,"numChildren":0,"pzxid":"0x3"}}`
		}
		h, err := ReadHistory(strings.NewReader(lost+"\n"+read+"\n"), "h.jsonl")
		require.NoError(t, err)
		require.True(t, h[0].OutcomeUnknown())
		r := CheckAll(h, Options{})
		var b strings.Builder
		require.NoError(t, r.Print(&b))
		assert.True(t, r.OK(), "create took effect: %v\n%s", exists, b.String())
	}
}
