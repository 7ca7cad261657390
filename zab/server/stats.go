package server

import (
	"cmp"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/server/config"
	"github.com/zabd/zabd/zab/server/fourlw"
	"github.com/zabd/zabd/zab/server/metrics"
	"github.com/zabd/zabd/zab/storage"
)

// statusSnapshot is a consistent copy of what the four-letter words, the
// admin server and /metrics report, taken on the event loop.
type statusSnapshot struct {
	stats      fourlw.ServerStats
	conns      []fourlw.Connection
	ephemerals []fourlw.SessionEphemerals
	expiry     []fourlw.ExpirySet
	reading    metrics.Reading // the gauges, read with the rest
	conf       []fourlw.KeyValue
	env        []fourlw.KeyValue
	// The watch lists are taken only when a watch command asks for them,
	// in a later visit to the event loop: listing every watch of the tree,
	// sorted, is too much work to do for every ruok or /metrics scrape.
	watchesListed bool
	bySession     []fourlw.SessionWatches
	byPath        []fourlw.PathWatches
	dataDirSize   int64
	logDirSize    int64
	srv           *Server

	// serving: the server answers clients (standalone, or a member in
	// broadcast); the words that need a running server say it is not.
	serving bool
	// role is an ensemble member's role; ensemble is false when
	// standalone.
	role     zab.SoftState
	ensemble bool
}

// status takes a statusSnapshot; false if the server has stopped.
func (s *Server) status() (*statusSnapshot, bool) {
	st := &statusSnapshot{srv: s}
	ok := s.query(func() { s.fillStatus(st) })
	if ok {
		// ZooKeeper 3.8 reports the txn log directory's size as the data
		// directory's and the snapshot directory's as the log directory's
		// (its getDataDirSize reads FileTxnSnapLog's dataDir, which is the
		// log directory); zabd reports the same, so the figures compare.
		st.dataDirSize = dirSize(versionDir(s.cfg.DataLogDir))
		st.logDirSize = dirSize(versionDir(s.cfg.DataDir))
		st.conf = s.confLines(st.dataDirSize, st.logDirSize)
		st.env = envLines()
	}
	return st, ok
}

// fillStatus runs on the event loop.
func (s *Server) fillStatus(st *statusSnapshot) {
	tree := s.peer.Tree()
	now := time.Now()
	outstanding := int64(0)
	for _, c := range s.conns {
		outstanding += int64(len(c.inflight))
	}
	mode := s.mode()
	st.serving = mode != ""
	st.role, st.ensemble = s.role, s.net != nil
	st.stats = fourlw.ServerStats{
		Version: Version, Mode: mode,
		MinLatency: s.stats.latency.min, AvgLatency: s.stats.latency.avg(), MaxLatency: s.stats.latency.max,
		PacketsReceived: s.stats.received, PacketsSent: s.stats.sent,
		AliveConnections: len(s.conns), OutstandingRequests: outstanding,
		LastZxid: s.peer.LastZxid(), NodeCount: tree.ZooKeeperNodeCount(),
	}
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	slices.SortFunc(conns, func(a, b *conn) int { return cmp.Compare(a.id, b.id) })
	for _, c := range conns {
		fc := fourlw.Connection{
			Remote: c.remote, Secure: c.secure, InterestOpsShown: 1, Queued: int64(c.queuedBytes()),
			Received: c.received.Load(), Sent: c.sent.Load(),
			Expires: now.Add(c.timeout).Truncate(s.cfg.TickTime),
		}
		if c.session != 0 {
			fc.HasSession, fc.SessionID, fc.Established, fc.Timeout = true, c.session, c.opened, c.timeout
			fc.LastOp, fc.LastCxid, fc.LastZxid, fc.LastResponse = lastOpName(c), c.lastCxid, c.lastZxid, c.lastResp
			fc.LastLatency, fc.MinLatency, fc.MaxLatency = c.lastLatency, c.latency.min, c.latency.max
			fc.AvgLatency = int64(c.latency.avg())
		}
		st.conns = append(st.conns, fc)
	}
	slices.SortStableFunc(st.conns, func(a, b fourlw.Connection) int { return a.Expires.Compare(b.Expires) })
	table := s.peer.SessionTable()
	ephemeralCount := 0
	for _, id := range tree.Sessions() {
		paths := tree.Ephemerals(id)
		ephemeralCount += len(paths)
		st.ephemerals = append(st.ephemerals, fourlw.SessionEphemerals{SessionID: id, Paths: paths})
	}
	byExpiry := map[time.Time][]int64{}
	for _, sess := range table {
		at := now.Add(time.Duration(sess.Timeout) * time.Millisecond).Truncate(s.cfg.TickTime)
		byExpiry[at] = append(byExpiry[at], sess.ID)
	}
	for _, at := range slices.SortedFunc(maps.Keys(byExpiry), time.Time.Compare) {
		st.expiry = append(st.expiry, fourlw.ExpirySet{At: at, Sessions: byExpiry[at]})
	}
	st.reading = s.reading(cmp.Or(mode, "looking"), ephemeralCount, outstanding, len(table))
}

// reading reads the gauges for mntr and /metrics (on the event loop).
func (s *Server) reading(state string, ephemerals int, outstanding int64, sessions int) metrics.Reading {
	tree := s.peer.Tree()
	m := s.measured
	gauges := map[string]float64{
		"ephemerals_count":            float64(ephemerals),
		"num_alive_connections":       float64(len(s.conns)),
		"avg_latency":                 s.stats.latency.avg(),
		"outstanding_requests":        float64(outstanding),
		"znode_count":                 float64(tree.ZooKeeperNodeCount()),
		"global_sessions":             float64(sessions),
		"non_mtls_remote_conn_count":  float64(m.nonMTLSRemote.Load()),
		"last_client_response_size":   float64(s.stats.responseSize.last),
		"packets_sent":                float64(s.stats.sent),
		"packets_received":            float64(s.stats.received),
		"max_client_response_size":    float64(s.stats.responseSize.max),
		"connection_drop_probability": 0,
		"watch_count":                 float64(tree.WatchCount()),
		"auth_failed_count":           float64(m.authFailed.Load()),
		"min_latency":                 float64(s.stats.latency.min),
		"max_file_descriptor_count":   float64(maxFDs()),
		"approximate_data_size":       float64(tree.ApproximateDataSize()),
		"open_file_descriptor_count":  float64(openFDs()),
		"local_sessions":              0,
		"uptime":                      float64(time.Since(s.started).Milliseconds()),
		"max_latency":                 float64(s.stats.latency.max),
		"outstanding_tls_handshake":   float64(m.handshaking.Load()),
		"min_client_response_size":    float64(s.stats.responseSize.min),
		"non_mtls_local_conn_count":   float64(m.nonMTLSLocal.Load()),
	}
	sets := map[string]map[string]float64{}
	set := func(name, key string, v int64) {
		if sets[name] == nil {
			sets[name] = map[string]float64{}
		}
		sets[name][key] = float64(v)
	}
	for ns, q := range tree.QuotaMetrics() {
		if q.HasLimit() {
			set("quota_count_limit_per_namespace", ns, q.CountLimit)
			set("quota_bytes_limit_per_namespace", ns, q.BytesLimit)
		}
		if q.HasUsage() {
			set("quota_count_usage_per_namespace", ns, q.CountUsage)
			set("quota_bytes_usage_per_namespace", ns, q.BytesUsage)
		}
	}
	peerState := s.quorumGauges(gauges)
	fsyncs := s.disk.fsyncs.Load()
	return metrics.Reading{
		Version: Version, State: state, PeerState: peerState, Gauges: gauges, GaugeSets: sets,
		Own: []fourlw.Metric{
			{Name: "zabd_txns_per_fsync", Value: ratio(s.disk.batchTxns.Load(), fsyncs), Float: true},
			{Name: "zabd_slow_reader_disconnects", Value: float64(s.slowReaders.Load())},
			{Name: "zabd_last_zxid", Value: float64(s.peer.LastZxid())},
		},
	}
}

// mode is srvr's Mode and mntr's zk_server_state: standalone, leader,
// follower or observer; "" while an ensemble member is not serving
// (looking, or not yet synchronized with its leader). Runs on the event
// loop.
func (s *Server) mode() string {
	if s.net == nil {
		return "standalone"
	}
	if s.role.Phase != zab.PhaseBroadcast {
		return ""
	}
	switch s.role.Role {
	case zab.RoleLeading:
		return "leader"
	case zab.RoleFollowing:
		return "follower"
	case zab.RoleObserving:
		return "observer"
	}
	return ""
}

// quorumGauges adds the ensemble's gauges as ZooKeeper 3.8 registers them —
// every member its quorum size; a leader its learners, synced followers
// and observers, and pending syncs — and returns its zk_peer_state
// (QuorumZooKeeperServer.dumpMonitorValues); a standalone server has
// neither. Runs on the event loop.
func (s *Server) quorumGauges(gauges map[string]float64) string {
	if s.net == nil {
		return ""
	}
	peerState := strings.ToLower(s.role.Role.String())
	if s.role.Role != zab.RoleLooking {
		peerState += " - " + s.role.Phase.String()
	}
	gauges["quorum_size"] = float64(len(s.peer.Voters()))
	if s.role.Role != zab.RoleLeading {
		return peerState
	}
	learners := s.peer.Learners()
	followers, observers := 0, 0
	for _, l := range learners {
		switch {
		case !l.Synced:
		case l.Observer:
			observers++
		default:
			followers++
		}
	}
	gauges["learners"] = float64(len(learners))
	gauges["synced_followers"] = float64(followers)
	gauges["synced_non_voting_followers"] = 0
	gauges["synced_observers"] = float64(observers)
	gauges["pending_syncs"] = float64(s.peer.PendingSyncs())
	return peerState
}

// watchLists groups the data table's watches (the ones ZooKeeper 3.8's
// wchs, wchc and wchp report: getData, exists and persistent watches, not
// getChildren ones) by session and by path. A watcher is a connection; the
// lists name its session, as ZooKeeper's do. ZooKeeper prints them in hash
// order; here sessions, paths and ids are sorted. Runs on the event loop.
func (s *Server) watchLists(watches []datatree.WatchInfo) ([]fourlw.SessionWatches, []fourlw.PathWatches) {
	pathsOf := map[int64][]string{}
	var byPath []fourlw.PathWatches
	for _, w := range watches { // sorted by path, then watcher
		if w.Table != datatree.DataTable {
			continue
		}
		var session int64
		if c := s.conns[zab.ConnID(w.Watcher)]; c != nil {
			session = c.session
		}
		pathsOf[session] = append(pathsOf[session], w.Path)
		if n := len(byPath); n == 0 || byPath[n-1].Path != w.Path {
			byPath = append(byPath, fourlw.PathWatches{Path: w.Path})
		}
		last := &byPath[len(byPath)-1]
		last.Sessions = append(last.Sessions, session)
	}
	for i := range byPath {
		slices.Sort(byPath[i].Sessions)
	}
	var bySession []fourlw.SessionWatches
	for _, id := range slices.Sorted(maps.Keys(pathsOf)) {
		bySession = append(bySession, fourlw.SessionWatches{SessionID: id, Paths: pathsOf[id]})
	}
	return bySession, byPath
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// lastOpName is ZooKeeper's four-letter abbreviation of a connection's last
// request type (ServerCnxn's lop field).
func lastOpName(c *conn) string {
	if !c.hasLastOp {
		return "NA"
	}
	if name, ok := opAbbrev[c.lastOp]; ok {
		return name
	}
	return "NA"
}

var opAbbrev = map[wire.OpCode]string{
	wire.OpPing: "PING", wire.OpCreateSession: "SESS", wire.OpMulti: "MULT", wire.OpMultiRead: "MLTR",
	wire.OpCreate: "CREA", wire.OpCreate2: "CREA", wire.OpCreateTTL: "CREA", wire.OpCreateContainer: "CREA",
	wire.OpDelete: "DELE", wire.OpDeleteContainer: "DELE", wire.OpSetData: "SETD", wire.OpReconfig: "RECO",
	wire.OpSetACL: "SETA", wire.OpCloseSession: "CLOS", wire.OpSync: "SYNC", wire.OpCheck: "CHEC",
	wire.OpExists: "EXIS", wire.OpGetData: "GETD", wire.OpSetWatches: "SETW", wire.OpSetWatches2: "STW2",
	wire.OpAddWatch: "ADDW", wire.OpGetACL: "GETA", wire.OpGetChildren: "GETC", wire.OpGetChildren2: "GETC",
	wire.OpGetAllChildrenNumber: "GETACN", wire.OpCheckWatches: "CHKW", wire.OpRemoveWatches: "REMW",
	wire.OpWhoAmI: "HOMI", wire.OpGetEphemerals: "GETE",
}

// confLines are conf's key=value lines, as ZooKeeper 3.8 prints them for a
// standalone server.
func (s *Server) confLines(dataSize, logSize int64) []fourlw.KeyValue {
	port := func(a net.Addr, none string) string {
		if a, ok := a.(*net.TCPAddr); ok {
			return strconv.Itoa(a.Port)
		}
		return none
	}
	lines := []fourlw.KeyValue{
		{Key: "clientPort", Value: port(s.Addr(), "0")},
		{Key: "secureClientPort", Value: port(s.SecureAddr(), "-1")},
		{Key: "dataDir", Value: versionDir(s.cfg.DataDir)},
		{Key: "dataDirSize", Value: strconv.FormatInt(dataSize, 10)},
		{Key: "dataLogDir", Value: versionDir(s.cfg.DataLogDir)},
		{Key: "dataLogSize", Value: strconv.FormatInt(logSize, 10)},
		{Key: "tickTime", Value: strconv.FormatInt(s.cfg.TickTime.Milliseconds(), 10)},
		{Key: "maxClientCnxns", Value: strconv.Itoa(s.cfg.MaxClientCnxns)},
		{Key: "minSessionTimeout", Value: strconv.FormatInt(s.cfg.MinSessionTimeout.Milliseconds(), 10)},
		{Key: "maxSessionTimeout", Value: strconv.FormatInt(s.cfg.MaxSessionTimeout.Milliseconds(), 10)},
		{Key: "clientPortListenBacklog", Value: "-1"},
		{Key: "serverId", Value: strconv.FormatInt(s.cfg.MyID, 10)}, // myid; 0 standalone, as ZooKeeper prints it
	}
	me, ok := s.cfg.Server(s.cfg.MyID)
	if s.net == nil || !ok {
		return lines
	}
	// An ensemble member adds what QuorumZooKeeperServer.dumpConf prints:
	// its quorum settings, then the server list as QuorumMaj.toString
	// (which ends without a line end).
	peerType := "0" // LearnerType.PARTICIPANT's ordinal
	if me.Role == config.Observer {
		peerType = "1"
	}
	return append(lines,
		fourlw.KeyValue{Key: "initLimit", Value: strconv.Itoa(s.cfg.InitLimit)},
		fourlw.KeyValue{Key: "syncLimit", Value: strconv.Itoa(s.cfg.SyncLimit)},
		fourlw.KeyValue{Key: "electionAlg", Value: "3"},
		fourlw.KeyValue{Key: "electionPort", Value: strconv.Itoa(me.ElectionPort)},
		fourlw.KeyValue{Key: "quorumPort", Value: strconv.Itoa(me.QuorumPort)},
		fourlw.KeyValue{Key: "peerType", Value: peerType},
		fourlw.KeyValue{Value: "membership: \n"},
		fourlw.KeyValue{Value: s.cfg.DynamicConfig()},
	)
}

// envLines are envi's lines: ZooKeeper's keys where a Go process has an
// equivalent.
func envLines() []fourlw.KeyValue {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	user := os.Getenv("USER")
	home, _ := os.UserHomeDir()
	return []fourlw.KeyValue{
		{Key: "zookeeper.version", Value: Version},
		{Key: "host.name", Value: host},
		{Key: "go.version", Value: runtime.Version()},
		{Key: "os.name", Value: runtime.GOOS},
		{Key: "os.arch", Value: runtime.GOARCH},
		{Key: "user.name", Value: user},
		{Key: "user.home", Value: home},
		{Key: "user.dir", Value: wd},
		{Key: "os.cpus", Value: strconv.Itoa(runtime.NumCPU())},
	}
}

// versionDir is the absolute version-2 directory under dir, as ZooKeeper
// prints it.
func versionDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Join(dir, storage.VersionDir)
}

// dirSize sums the sizes of the files in dir.
func dirSize(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
	}
	return total
}

func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}

func maxFDs() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return lim.Cur
}

// addAsker counts the connection asking a four-letter word among the
// connections, as ZooKeeper does: it has received one packet (the word),
// sent nothing, has no session, and expires as a sessionless connection.
func (st *statusSnapshot) addAsker(c *conn, sessionless time.Duration) {
	st.stats.AliveConnections++
	st.reading.Gauges["num_alive_connections"]++
	asker := fourlw.Connection{Remote: c.remote, Received: 1, Expires: time.Now().Add(sessionless).Truncate(st.srv.cfg.TickTime)}
	st.conns = append(st.conns, asker)
	slices.SortStableFunc(st.conns, func(a, b fourlw.Connection) int { return a.Expires.Compare(b.Expires) })
}

// The statusSnapshot is the fourlw.Source the words render.
func (st *statusSnapshot) Stats() fourlw.ServerStats              { return st.stats }
func (st *statusSnapshot) Connections() []fourlw.Connection       { return st.conns }
func (st *statusSnapshot) Conf() []fourlw.KeyValue                { return st.conf }
func (st *statusSnapshot) Env() []fourlw.KeyValue                 { return st.env }
func (st *statusSnapshot) DirSizes() (int64, int64)               { return st.dataDirSize, st.logDirSize }
func (st *statusSnapshot) SessionExpiry() []fourlw.ExpirySet      { return st.expiry }
func (st *statusSnapshot) Ephemerals() []fourlw.SessionEphemerals { return st.ephemerals }
func (st *statusSnapshot) Metrics() []fourlw.Metric               { return st.srv.monitorLines(st.reading) }
func (st *statusSnapshot) ReadOnly() bool                         { return false }
func (st *statusSnapshot) Serving() bool                          { return st.serving }

func (st *statusSnapshot) WatchesBySession() []fourlw.SessionWatches {
	st.listWatches()
	return st.bySession
}

func (st *statusSnapshot) WatchesByPath() []fourlw.PathWatches {
	st.listWatches()
	return st.byPath
}

// listWatches fills the watch lists on the event loop, once.
func (st *statusSnapshot) listWatches() {
	if st.watchesListed {
		return
	}
	st.watchesListed = true
	srv := st.srv
	srv.query(func() { st.bySession, st.byPath = srv.watchLists(srv.peer.Tree().Watches()) })
}

func (st *statusSnapshot) ResetConnectionStats() {
	st.srv.query(func() {
		for _, c := range st.srv.conns {
			c.latency = latencyStats{}
			c.received.Store(0)
			c.sent.Store(0)
		}
	})
}

// ResetServerStats is srst: the server's counters and, with ZooKeeper's
// default metrics provider, every counter and summary of the catalogue (its
// Prometheus provider ignores the reset).
func (st *statusSnapshot) ResetServerStats() {
	st.srv.query(func() { st.srv.stats.reset() })
	if !st.srv.cfg.MetricsEnabled {
		st.srv.metrics.Reset()
	}
}
