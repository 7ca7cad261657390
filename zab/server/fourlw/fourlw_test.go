package fourlw

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSource reports fixed values; the expected texts below are ZooKeeper
// 3.8.0's outputs for the same state, captured from Debian's server with the
// whitelist "*".
type fakeSource struct {
	connResets, serverResets int
	notServing               bool
}

var (
	est    = time.UnixMilli(1795260007396).UTC()
	lresp  = time.UnixMilli(1795260007999).UTC()
	expiry = time.Date(2026, 11, 21, 11, 20, 18, 0, time.UTC)
)

func (f *fakeSource) Stats() ServerStats {
	return ServerStats{
		Version: "3.8.0-zabd, built on 2026-11-21 00:00 UTC", Mode: "standalone",
		MinLatency: 0, AvgLatency: 4.6667, MaxLatency: 19, PacketsReceived: 10, PacketsSent: 9,
		AliveConnections: 2, OutstandingRequests: 0, LastZxid: 3, NodeCount: 7,
	}
}

func (f *fakeSource) Connections() []Connection {
	return []Connection{
		{Remote: "127.0.0.1:60450", Received: 1, Expires: expiry.Add(2 * time.Second)},
		{Remote: "127.0.0.1:60420", InterestOpsShown: 1, Received: 6, Sent: 6, HasSession: true,
			SessionID: 0x1000009438e0000, LastOp: "EXIS", Established: est, Timeout: 10 * time.Second,
			LastCxid: 5, LastZxid: 3, LastResponse: lresp, AvgLatency: 3, MaxLatency: 15, Expires: expiry.Add(2 * time.Second)},
	}
}

func (f *fakeSource) Conf() []KeyValue {
	return []KeyValue{{"clientPort", "39931"}, {"tickTime", "2000"}}
}
func (f *fakeSource) Env() []KeyValue          { return []KeyValue{{"os.name", "Linux"}} }
func (f *fakeSource) DirSizes() (int64, int64) { return 67109337, 67109337 }
func (f *fakeSource) WatchesBySession() []SessionWatches {
	return []SessionWatches{{SessionID: 0x1000009438e0000, Paths: []string{"/a", "/b"}}}
}
func (f *fakeSource) WatchesByPath() []PathWatches {
	return []PathWatches{{Path: "/a", Sessions: []int64{0x1000009438e0000}}, {Path: "/b", Sessions: []int64{0x1000009438e0000}}}
}
func (f *fakeSource) SessionExpiry() []ExpirySet {
	return []ExpirySet{{At: expiry, Sessions: []int64{0x1000009438e0000}}}
}
func (f *fakeSource) Ephemerals() []SessionEphemerals {
	return []SessionEphemerals{{SessionID: 0x1000009438e0000, Paths: []string{"/a/e"}}}
}
func (f *fakeSource) Metrics() []Metric {
	return []Metric{
		{Name: "version", Text: "3.8.0-zabd, built on 2026-11-21 00:00 UTC"},
		{Name: "avg_latency", Value: 4.6667, Float: true},
		{Name: "znode_count", Value: 7},
		{Name: "connection_drop_probability", Value: 0, Float: true},
	}
}
func (f *fakeSource) ReadOnly() bool        { return false }
func (f *fakeSource) Serving() bool         { return !f.notServing }
func (f *fakeSource) ResetConnectionStats() { f.connResets++ }
func (f *fakeSource) ResetServerStats()     { f.serverResets++ }

func run(t *testing.T, src Source, word string, allowed func(string) bool) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, Run(&b, word, src, allowed))
	return b.String()
}

func all(string) bool { return true }

func TestFormatsMatchZooKeeper(t *testing.T) {
	for word, want := range map[string]string{
		"ruok": "imok",
		"isro": "rw",
		"hash": "",
		"srvr": "Zookeeper version: 3.8.0-zabd, built on 2026-11-21 00:00 UTC\nLatency min/avg/max: 0/4.6667/19\nReceived: 10\nSent: 9\nConnections: 2\nOutstanding: 0\nZxid: 0x3\nMode: standalone\nNode count: 7\n",
		"stat": "Zookeeper version: 3.8.0-zabd, built on 2026-11-21 00:00 UTC\nClients:\n /127.0.0.1:60450[0](queued=0,recved=1,sent=0)\n /127.0.0.1:60420[1](queued=0,recved=6,sent=6)\n\nLatency min/avg/max: 0/4.6667/19\nReceived: 10\nSent: 9\nConnections: 2\nOutstanding: 0\nZxid: 0x3\nMode: standalone\nNode count: 7\n",
		"cons": " /127.0.0.1:60450[0](queued=0,recved=1,sent=0)\n /127.0.0.1:60420[1](queued=0,recved=6,sent=6,sid=0x1000009438e0000,lop=EXIS,est=1795260007396,to=10000,lcxid=0x5,lzxid=0x3,lresp=1795260007999,llat=0,minlat=0,avglat=3,maxlat=15)\n\n",
		"mntr": "zk_version\t3.8.0-zabd, built on 2026-11-21 00:00 UTC\nzk_avg_latency\t4.6667\nzk_znode_count\t7\nzk_connection_drop_probability\t0.0\n",
		"conf": "clientPort=39931\ntickTime=2000\n",
		"envi": "Environment:\nos.name=Linux\n",
		"wchs": "1 connections watching 2 paths\nTotal watches:2\n",
		"wchc": "0x1000009438e0000\n\t/a\n\t/b\n\n",
		"wchp": "/a\n\t0x1000009438e0000\n/b\n\t0x1000009438e0000\n\n",
		"dirs": "datadir_size: 67109337\nlogdir_size: 67109337\n",
		"dump": "SessionTracker dump:\nSession Sets (1)/(1):\n1 expire at Sat Nov 21 11:20:18 UTC 2026:\n\t0x1000009438e0000\n" +
			"ephemeral nodes dump:\nSessions with Ephemerals (1):\n0x1000009438e0000:\n\t/a/e\n" +
			"Connections dump:\nConnections Sets (1)/(2):\n2 expire at Sat Nov 21 11:20:20 UTC 2026:\n\tip: /127.0.0.1:60450 sessionId: 0x0\n\tip: /127.0.0.1:60420 sessionId: 0x1000009438e0000\n",
	} {
		t.Run(word, func(t *testing.T) {
			assert.Equal(t, want, run(t, &fakeSource{}, word, all))
		})
	}
}

// A conf line with no key is written as it is: an ensemble member's
// membership section.
func TestConfRawLines(t *testing.T) {
	var b strings.Builder
	writeKeyValues(&b, []KeyValue{{Key: "peerType", Value: "0"}, {Value: "membership: \n"}, {Value: "server.1=a:1:2:participant\nversion=0"}})
	assert.Equal(t, "peerType=0\nmembership: \nserver.1=a:1:2:participant\nversion=0", b.String())
}

func TestResets(t *testing.T) {
	src := &fakeSource{}
	assert.Equal(t, "Connection stats reset.\n", run(t, src, "crst", all))
	assert.Equal(t, "Server stats reset.\n", run(t, src, "srst", all))
	assert.Equal(t, 1, src.connResets)
	assert.Equal(t, 1, src.serverResets)
}

func TestRefusal(t *testing.T) {
	onlySrvr := func(w string) bool { return w == "srvr" }
	src := &fakeSource{}
	assert.Equal(t, "ruok is not executed because it is not in the whitelist.\n", run(t, src, "ruok", onlySrvr))
	assert.Equal(t, "srst is not executed because it is not in the whitelist.\n", run(t, src, "srst", onlySrvr))
	assert.Zero(t, src.serverResets, "a refused command does nothing")
	assert.Contains(t, run(t, src, "srvr", onlySrvr), "Mode: standalone")
}

// An ensemble member that is electing or synchronizing answers as
// ZooKeeper 3.8's does before its server runs.
func TestNotServing(t *testing.T) {
	src := &fakeSource{notServing: true}
	for _, word := range []string{"conf", "cons", "crst", "dirs", "dump", "mntr", "srst", "srvr", "stat", "wchc", "wchp", "wchs"} {
		assert.Equal(t, NotServing+"\n", run(t, src, word, all), word)
	}
	assert.Equal(t, NotServing, run(t, src, "hash", all))
	assert.Equal(t, "null", run(t, src, "isro", all))
	assert.Equal(t, "imok", run(t, src, "ruok", all))
	assert.Equal(t, "Environment:\nos.name=Linux\n", run(t, src, "envi", all))
	assert.Zero(t, src.connResets+src.serverResets, "the resets do nothing")
}

func TestJavaDouble(t *testing.T) {
	for v, want := range map[float64]string{0: "0.0", 1: "1.0", 4.6667: "4.6667", 0.2857: "0.2857", 1.5e7: "1.5E7", 1e7: "1.0E7", -2.5: "-2.5", 0.0005: "5.0E-4"} {
		assert.Equal(t, want, JavaDouble(v), "%v", v)
	}
}
