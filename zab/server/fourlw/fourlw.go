package fourlw

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// ServerStats are the counters behind srvr, stat and mntr.
type ServerStats struct {
	Version             string // e.g. "3.8.0-zabd, built on 2026-01-01 00:00 UTC"
	Mode                string // "standalone", "leader", "follower", "observer"
	MinLatency          int64  // ms
	AvgLatency          float64
	MaxLatency          int64
	PacketsReceived     int64
	PacketsSent         int64
	AliveConnections    int
	OutstandingRequests int64
	LastZxid            int64
	NodeCount           int
}

// Connection describes one client connection for stat, cons and dump;
// Source.Connections lists them ordered by Expires.
type Connection struct {
	Remote   string // "127.0.0.1:5000"
	Secure   bool   // a TLS connection (the admin server lists them apart)
	Queued   int64  // replies waiting to be written
	Received int64
	Sent     int64
	// HasSession is false for a connection still in its handshake (and for
	// the four-letter-word connection itself); the fields below are then unset.
	HasSession       bool
	SessionID        int64
	LastOp           string // ZooKeeper's short names: "EXIS", "GETD", "SETD", "NA", ...
	Established      time.Time
	Timeout          time.Duration
	LastCxid         int32
	LastZxid         int64
	LastResponse     time.Time
	LastLatency      int64
	MinLatency       int64
	AvgLatency       int64
	MaxLatency       int64
	InterestOpsShown int       // ZooKeeper prints the selector interest ops: 1 reading, 0 not
	Expires          time.Time // when the server closes it if nothing arrives
}

// KeyValue is one line of conf or envi; with Key "", Value is written as
// it is (conf's membership section).
type KeyValue struct{ Key, Value string }

// SessionWatches lists the paths one session watches (wchc).
type SessionWatches struct {
	SessionID int64
	Paths     []string
}

// PathWatches lists the sessions watching one path (wchp).
type PathWatches struct {
	Path     string
	Sessions []int64
}

// ExpirySet is a group of sessions (or connections) expiring at one time.
type ExpirySet struct {
	At       time.Time
	Sessions []int64
}

// SessionEphemerals lists one session's ephemeral nodes.
type SessionEphemerals struct {
	SessionID int64
	Paths     []string
}

// Metric is one mntr line (without its zk_ prefix) and, with the same name,
// one Prometheus metric. Integers print as integers; Float values as Java
// prints doubles; Text values verbatim.
type Metric struct {
	Name  string
	Value float64
	Float bool
	Text  string
}

// Source is what a server exposes to the four-letter words. Every method
// returns a consistent snapshot, in the order it should be printed.
type Source interface {
	Stats() ServerStats
	Connections() []Connection
	Conf() []KeyValue
	Env() []KeyValue
	DirSizes() (dataDir, logDir int64)
	WatchesBySession() []SessionWatches // sorted by session id
	WatchesByPath() []PathWatches       // sorted by path
	SessionExpiry() []ExpirySet
	Ephemerals() []SessionEphemerals
	Metrics() []Metric
	ReadOnly() bool
	// Serving reports whether the server answers clients: an ensemble
	// member that is electing or synchronizing does not.
	Serving() bool
	ResetConnectionStats()
	ResetServerStats()
}

// Words lists every command this package answers.
var Words = []string{"conf", "cons", "crst", "dirs", "dump", "envi", "hash", "isro", "mntr", "ruok", "srst", "srvr", "stat", "wchc", "wchp", "wchs"}

// NotServing is what ZooKeeper answers the words that need a running
// server while it is not serving (AbstractFourLetterCommand.ZK_NOT_SERVING).
const NotServing = "This ZooKeeper instance is not currently serving requests"

// needServing are the words ZooKeeper 3.8 answers with NotServing while
// its server is not running.
var needServing = map[string]bool{
	"conf": true, "cons": true, "crst": true, "dirs": true, "dump": true, "hash": true, "mntr": true,
	"srst": true, "srvr": true, "stat": true, "wchc": true, "wchp": true, "wchs": true,
}

// Run writes the answer to word. allowed tells whether the whitelist admits
// it; a refused or unknown word gets ZooKeeper's refusal line.
func Run(w io.Writer, word string, src Source, allowed func(string) bool) error {
	var b strings.Builder
	render, known := commands[word]
	switch {
	case !known || !allowed(word):
		fmt.Fprintf(&b, "%s is not executed because it is not in the whitelist.\n", word)
	case needServing[word] && !src.Serving():
		b.WriteString(NotServing)
		if word != "hash" { // ZooKeeper's DigestCommand prints it without a line end
			b.WriteByte('\n')
		}
	default:
		render(&b, src)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var commands = map[string]func(b *strings.Builder, src Source){
	"ruok": func(b *strings.Builder, _ Source) { b.WriteString("imok") },
	"srvr": func(b *strings.Builder, src Source) { writeStat(b, src, false) },
	"stat": func(b *strings.Builder, src Source) { writeStat(b, src, true) },
	"mntr": writeMetrics,
	"conf": func(b *strings.Builder, src Source) { writeKeyValues(b, src.Conf()) },
	"envi": func(b *strings.Builder, src Source) {
		b.WriteString("Environment:\n")
		writeKeyValues(b, src.Env())
	},
	"cons": func(b *strings.Builder, src Source) {
		for _, c := range src.Connections() {
			writeConnection(b, c, false)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	},
	"crst": func(b *strings.Builder, src Source) {
		src.ResetConnectionStats()
		b.WriteString("Connection stats reset.\n")
	},
	"srst": func(b *strings.Builder, src Source) {
		src.ResetServerStats()
		b.WriteString("Server stats reset.\n")
	},
	"dirs": func(b *strings.Builder, src Source) {
		data, log := src.DirSizes()
		fmt.Fprintf(b, "datadir_size: %d\nlogdir_size: %d\n", data, log)
	},
	"isro": func(b *strings.Builder, src Source) {
		switch {
		case !src.Serving():
			b.WriteString("null") // ZooKeeper's IsroCommand without a running server
		case src.ReadOnly():
			b.WriteString("ro")
		default:
			b.WriteString("rw")
		}
	},
	// hash prints the tree digests ZooKeeper keeps when digest.enabled is
	// set; zabd keeps none, and ZooKeeper with digests off prints nothing.
	"hash": func(*strings.Builder, Source) {},
	"wchs": writeWatchSummary,
	"wchc": func(b *strings.Builder, src Source) {
		for _, s := range src.WatchesBySession() {
			fmt.Fprintf(b, "0x%x\n", s.SessionID)
			for _, p := range s.Paths {
				fmt.Fprintf(b, "\t%s\n", p)
			}
		}
		b.WriteByte('\n')
	},
	"wchp": func(b *strings.Builder, src Source) {
		for _, p := range src.WatchesByPath() {
			fmt.Fprintf(b, "%s\n", p.Path)
			for _, s := range p.Sessions {
				fmt.Fprintf(b, "\t0x%x\n", s)
			}
		}
		b.WriteByte('\n')
	},
	"dump": writeDump,
}

func writeStat(b *strings.Builder, src Source, withClients bool) {
	st := src.Stats()
	fmt.Fprintf(b, "Zookeeper version: %s\n", st.Version)
	if withClients {
		b.WriteString("Clients:\n")
		for _, c := range src.Connections() {
			writeConnection(b, c, true)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "Latency min/avg/max: %d/%s/%d\n", st.MinLatency, JavaDouble(st.AvgLatency), st.MaxLatency)
	fmt.Fprintf(b, "Received: %d\nSent: %d\nConnections: %d\n", st.PacketsReceived, st.PacketsSent, st.AliveConnections)
	fmt.Fprintf(b, "Outstanding: %d\nZxid: 0x%x\n", st.OutstandingRequests, st.LastZxid)
	fmt.Fprintf(b, "Mode: %s\nNode count: %d\n", st.Mode, st.NodeCount)
}

// writeConnection prints ZooKeeper's ServerCnxn.dumpConnectionInfo line
// (without its line end): brief for stat, full for cons.
func writeConnection(b *strings.Builder, c Connection, brief bool) {
	fmt.Fprintf(b, " /%s[%d](queued=%d,recved=%d,sent=%d", c.Remote, c.InterestOpsShown, c.Queued, c.Received, c.Sent)
	if !brief && c.HasSession {
		fmt.Fprintf(b, ",sid=0x%x,lop=%s,est=%d,to=%d", c.SessionID, c.LastOp, c.Established.UnixMilli(), c.Timeout.Milliseconds())
		if c.LastCxid >= 0 {
			fmt.Fprintf(b, ",lcxid=0x%x", c.LastCxid)
		}
		fmt.Fprintf(b, ",lzxid=0x%x,lresp=%d,llat=%d,minlat=%d,avglat=%d,maxlat=%d",
			c.LastZxid, c.LastResponse.UnixMilli(), c.LastLatency, c.MinLatency, c.AvgLatency, c.MaxLatency)
	}
	b.WriteByte(')')
}

func writeKeyValues(b *strings.Builder, kvs []KeyValue) {
	for _, kv := range kvs {
		if kv.Key == "" {
			b.WriteString(kv.Value) // a raw line, its line end included
			continue
		}
		fmt.Fprintf(b, "%s=%s\n", kv.Key, kv.Value)
	}
}

func writeMetrics(b *strings.Builder, src Source) {
	for _, m := range src.Metrics() {
		fmt.Fprintf(b, "zk_%s\t%s\n", m.Name, m.Format())
	}
}

// Format renders a metric's value as mntr prints it.
func (m Metric) Format() string {
	switch {
	case m.Text != "":
		return m.Text
	case m.Float:
		return JavaDouble(m.Value)
	}
	return strconv.FormatInt(int64(m.Value), 10)
}

func writeWatchSummary(b *strings.Builder, src Source) {
	sum := SummarizeWatches(src.WatchesBySession())
	fmt.Fprintf(b, "%d connections watching %d paths\nTotal watches:%d\n", sum.Connections, sum.Paths, sum.Total)
}

// WatchSummary is wchs (and the admin watch_summary): how many connections
// watch how many distinct paths with how many watches.
type WatchSummary struct{ Connections, Paths, Total int }

// SummarizeWatches counts bySession.
func SummarizeWatches(bySession []SessionWatches) WatchSummary {
	paths := map[string]bool{}
	total := 0
	for _, s := range bySession {
		for _, p := range s.Paths {
			paths[p] = true
		}
		total += len(s.Paths)
	}
	return WatchSummary{Connections: len(bySession), Paths: len(paths), Total: total}
}

// javaDateLayout is java.util.Date.toString's format.
const javaDateLayout = "Mon Jan 02 15:04:05 MST 2006"

func writeDump(b *strings.Builder, src Source) {
	expiry := src.SessionExpiry()
	sessions := 0
	for _, set := range expiry {
		sessions += len(set.Sessions)
	}
	b.WriteString("SessionTracker dump:\n")
	fmt.Fprintf(b, "Session Sets (%d)/(%d):\n", len(expiry), sessions)
	for _, set := range expiry {
		fmt.Fprintf(b, "%d expire at %s:\n", len(set.Sessions), set.At.Format(javaDateLayout))
		for _, id := range set.Sessions {
			fmt.Fprintf(b, "\t0x%x\n", id)
		}
	}
	eph := src.Ephemerals()
	b.WriteString("ephemeral nodes dump:\n")
	fmt.Fprintf(b, "Sessions with Ephemerals (%d):\n", len(eph))
	for _, s := range eph {
		fmt.Fprintf(b, "0x%x:\n", s.SessionID)
		for _, p := range s.Paths {
			fmt.Fprintf(b, "\t%s\n", p)
		}
	}
	conns := src.Connections()
	var sets [][]Connection
	for i, c := range conns {
		if i == 0 || !c.Expires.Equal(conns[i-1].Expires) {
			sets = append(sets, nil)
		}
		sets[len(sets)-1] = append(sets[len(sets)-1], c)
	}
	b.WriteString("Connections dump:\n")
	fmt.Fprintf(b, "Connections Sets (%d)/(%d):\n", len(sets), len(conns))
	for _, set := range sets {
		fmt.Fprintf(b, "%d expire at %s:\n", len(set), set[0].Expires.Format(javaDateLayout))
		for _, c := range set {
			fmt.Fprintf(b, "\tip: /%s sessionId: 0x%x\n", c.Remote, c.SessionID)
		}
	}
}

// JavaDouble formats v as Java's Double.toString does for the values
// ZooKeeper prints: at least one digit after the point ("0.0", "4.6667"),
// and computerized scientific notation from 10^7 up ("1.5E7").
func JavaDouble(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	abs := math.Abs(v)
	if abs != 0 && (abs >= 1e7 || abs < 1e-3) {
		s := strconv.FormatFloat(v, 'E', -1, 64) // 1.5E+07
		mant, exp, _ := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
