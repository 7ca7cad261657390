package server

import (
	"net"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/server/fourlw"
	"github.com/zabd/zabd/zab/server/metrics"
)

// measured are the catalogue's counters and summaries the shell feeds
// (metrics.Measured in the catalogue), and the counts behind the gauges
// the event loop does not own.
type measured struct {
	watchBytes, connectionRejected, sessionlessExpired, bytesReceived  *metrics.Count
	connectionRequests, responseBytes, unrecoverable, failedHandshakes *metrics.Count

	fsyncTime, snapshotTime, dbInitTime, syncBatchSize                      *metrics.Distribution
	startupTxnsLoaded, startupTxnsLoadTime, startupSnapLoadTime             *metrics.Distribution
	readLatency, updateLatency                                              *metrics.Distribution
	nodeCreatedWatch, nodeDeletedWatch, nodeChangedWatch, nodeChildrenWatch *metrics.Distribution

	// An ensemble member's: its elections and synchronizations (the event
	// loop's, see Server.measureRole), and what it sends and receives.
	lookingCount, diffCount, snapCount, learnerProposals, learnerCommits *metrics.Count
	electionTime, unavailableTime, leaderUnavailableTime                 *metrics.Distribution
	followerSyncTime, observerSyncTime                                   *metrics.Distribution

	// ZooKeeper's per-namespace read and write sizes, which the tree
	// reports (namespaceTraffic).
	readPerNamespace, writePerNamespace *metrics.DistributionSet

	// Gauges kept outside the event loop.
	authFailed, nonMTLSRemote, nonMTLSLocal, handshaking atomic.Int64
}

func newMeasured(r *metrics.Registry) *measured {
	return &measured{
		watchBytes: r.Counter("watch_bytes"), connectionRejected: r.Counter("connection_rejected"),
		sessionlessExpired: r.Counter("sessionless_connections_expired"), bytesReceived: r.Counter("bytes_received_count"),
		connectionRequests: r.Counter("connection_request_count"), responseBytes: r.Counter("response_bytes"),
		unrecoverable: r.Counter("unrecoverable_error_count"), failedHandshakes: r.Counter("unsuccessful_handshake"),
		fsyncTime: r.Summary("fsynctime"), snapshotTime: r.Summary("snapshottime"), dbInitTime: r.Summary("dbinittime"),
		syncBatchSize: r.Summary("sync_processor_batch_size"), startupTxnsLoaded: r.Summary("startup_txns_loaded"),
		startupTxnsLoadTime: r.Summary("startup_txns_load_time"), startupSnapLoadTime: r.Summary("startup_snap_load_time"),
		readLatency: r.Summary("readlatency"), updateLatency: r.Summary("updatelatency"),
		nodeCreatedWatch: r.Summary("node_created_watch_count"), nodeDeletedWatch: r.Summary("node_deleted_watch_count"),
		nodeChangedWatch: r.Summary("node_changed_watch_count"), nodeChildrenWatch: r.Summary("node_children_watch_count"),
		lookingCount: r.Counter("looking_count"), diffCount: r.Counter("diff_count"), snapCount: r.Counter("snap_count"),
		learnerProposals: r.Counter("learner_proposal_received_count"), learnerCommits: r.Counter("learner_commit_received_count"),
		electionTime: r.Summary("election_time"), unavailableTime: r.Summary("unavailable_time"),
		leaderUnavailableTime: r.Summary("leader_unavailable_time"),
		followerSyncTime:      r.Summary("follower_sync_time"), observerSyncTime: r.Summary("observer_sync_time"),
		readPerNamespace: r.SummarySet("read_per_namespace"), writePerNamespace: r.SummarySet("write_per_namespace"),
	}
}

// namespaceTraffic feeds read_per_namespace and write_per_namespace from
// the tree (datatree.Traffic), which measures each read and applied write
// as ZooKeeper's DataTree does: on the event loop, and during recovery for
// the txns replayed, as ZooKeeper counts those too.
type namespaceTraffic struct{ m *measured }

func (n namespaceTraffic) Read(ns string, bytes int64)  { n.m.readPerNamespace.Observe(ns, bytes) }
func (n namespaceTraffic) Write(ns string, bytes int64) { n.m.writePerNamespace.Observe(ns, bytes) }

// measureRole records an ensemble member's change of role or phase, as
// ZooKeeper's QuorumPeer and Learner measure them (ms): looking_count on
// entering LOOKING; election_time from then to the decision;
// unavailable_time (and leader_unavailable_time, leading) from then to
// broadcast; follower_sync_time or observer_sync_time from the start of
// synchronization to broadcast. Runs on the event loop.
func (s *Server) measureRole(prev, st zab.SoftState, now time.Time) {
	m := s.measured
	ms := func(since time.Time) int64 { return now.Sub(since).Milliseconds() }
	switch {
	case st.Role == zab.RoleLooking && (prev.Role != zab.RoleLooking || s.unavailableSince.IsZero()):
		m.lookingCount.Add(1)
		if s.unavailableSince.IsZero() {
			s.unavailableSince = now
		}
	case st.Elections > prev.Elections:
		// A whole election within one Ready: it began and ended now.
		m.lookingCount.Add(1)
		if s.unavailableSince.IsZero() {
			s.unavailableSince = now
		}
		m.electionTime.Observe(0)
	case prev.Role == zab.RoleLooking && st.Role != zab.RoleLooking:
		m.electionTime.Observe(ms(s.electionStart))
	}
	if st.Phase == zab.PhaseSync && prev.Phase != zab.PhaseSync {
		s.syncStart = now
	}
	if st.Phase != zab.PhaseBroadcast || prev.Phase == zab.PhaseBroadcast && prev.Role == st.Role {
		return
	}
	switch st.Role {
	case zab.RoleFollowing:
		m.followerSyncTime.Observe(ms(s.syncStart))
	case zab.RoleObserving:
		m.observerSyncTime.Observe(ms(s.syncStart))
	}
	if !s.unavailableSince.IsZero() {
		m.unavailableTime.Observe(ms(s.unavailableSince))
		if st.Role == zab.RoleLeading {
			m.leaderUnavailableTime.Observe(ms(s.unavailableSince))
		}
		s.unavailableSince = time.Time{}
	}
}

// measurePeerTraffic counts the synchronizations a leader sends (DIFF,
// SNAP) and the proposals and commits a learner receives, as ZooKeeper's
// LearnerHandler and Follower count them.
func (s *Server) measurePeerTraffic(sent []zab.PeerMessage, received *wire.QuorumPacket) {
	m := s.measured
	for i := range sent {
		switch sent[i].Packet.Type {
		case wire.PacketDiff:
			m.diffCount.Add(1)
		case wire.PacketSnap:
			m.snapCount.Add(1)
		}
	}
	if received == nil || s.role.Role == zab.RoleLeading {
		return
	}
	switch received.Type {
	case wire.PacketProposal:
		m.learnerProposals.Add(1)
	case wire.PacketCommit:
		m.learnerCommits.Add(1)
	}
}

// measureRecovery records start-up: ZooKeeper's dbinittime (the whole
// load), startup_snap_load_time (the snapshot: from loadStart to
// replayStart) and startup_txns_load_time and startup_txns_loaded (the txn
// log replayed after it).
func (s *Server) measureRecovery(loadStart, replayStart time.Time, replayed int) {
	now := time.Now()
	m := s.measured
	m.startupSnapLoadTime.Observe(replayStart.Sub(loadStart).Milliseconds())
	m.startupTxnsLoadTime.Observe(now.Sub(replayStart).Milliseconds())
	m.startupTxnsLoaded.Observe(int64(replayed))
	m.dbInitTime.Observe(now.Sub(loadStart).Milliseconds())
}

// countPlainConnection counts a connection that is not TLS, as ZooKeeper's
// Netty factory does for non_mtls_{local,remote}_conn_count.
func (m *measured) countPlainConnection(remote net.Addr) {
	if a, ok := remote.(*net.TCPAddr); ok && !a.IP.IsLoopback() {
		m.nonMTLSRemote.Add(1)
	} else {
		m.nonMTLSLocal.Add(1)
	}
}

// reply records one reply or notification written to a client: its size
// (the frame without its length prefix, as ZooKeeper's BufferStats and
// response_bytes count it) and, for a reply, the latency of its request.
// Runs on the event loop.
func (s *Server) measureReply(c *conn, m *zab.Message, size int, now time.Time) {
	s.stats.responseSize.add(int64(size))
	if m.Header.Xid == wire.XidNotification {
		s.measured.watchBytes.Add(int64(size))
		return
	}
	s.measured.responseBytes.Add(int64(size))
	req, ok := c.inflight[m.Header.Xid]
	if !ok {
		return
	}
	delete(c.inflight, m.Header.Xid)
	s.rec.reply(c.session, req.op, req.at, &m.Header)
	ms := now.Sub(req.at).Milliseconds()
	s.stats.latency.add(ms)
	c.latency.add(ms)
	c.lastLatency = ms
	if req.op.IsWrite() {
		s.measured.updateLatency.Observe(ms)
	} else {
		s.measured.readLatency.Observe(ms)
	}
}

// measureNotifications records how many watchers each triggered watch
// event reached (node_*_watch_count): the notifications of one Ready with
// the same type and path are one trigger, as one txn's.
func (s *Server) measureNotifications(msgs []zab.Message) {
	type trigger struct {
		typ  wire.EventType
		path string
	}
	var order []trigger
	counts := map[trigger]int64{}
	for i := range msgs {
		ev, ok := msgs[i].Body.(*wire.WatcherEvent)
		if msgs[i].Kind != zab.Reply || msgs[i].Header.Xid != wire.XidNotification || !ok {
			continue
		}
		k := trigger{ev.Type, ev.Path}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	for _, k := range order {
		switch k.typ {
		case wire.EventNodeCreated:
			s.measured.nodeCreatedWatch.Observe(counts[k])
		case wire.EventNodeDeleted:
			s.measured.nodeDeletedWatch.Observe(counts[k])
		case wire.EventNodeDataChanged:
			s.measured.nodeChangedWatch.Observe(counts[k])
		case wire.EventNodeChildrenChanged:
			s.measured.nodeChildrenWatch.Observe(counts[k])
		}
	}
}

// bufferStats is ZooKeeper's BufferStats: the last, smallest and largest
// response sizes, -1 before the first.
type bufferStats struct{ last, min, max int64 }

func newBufferStats() bufferStats { return bufferStats{-1, -1, -1} }

func (b *bufferStats) add(size int64) {
	b.last = size
	if b.min < 0 || size < b.min {
		b.min = size
	}
	b.max = max(b.max, size)
}

// readingCollector exports the registry, with the gauges of a reading, to
// Prometheus.
type readingCollector struct {
	reg  *metrics.Registry
	read func() (metrics.Reading, bool)
}

// Describe sends nothing: the collector is unchecked, as the gauges it
// exports depend on the server's role and the sets on their keys.
func (readingCollector) Describe(chan<- *prometheus.Desc) {}

func (c readingCollector) Collect(ch chan<- prometheus.Metric) {
	if rd, ok := c.read(); ok {
		c.reg.Collect(rd, ch)
	}
}

// prometheusRegistry is what the Prometheus provider exports: the
// catalogue read through read and, with exportJvmInfo (on by default), the
// process metrics (process_*, the names Java's client exports too) and Go's
// runtime metrics (go_*, where ZooKeeper exports jvm_*).
func (s *Server) prometheusRegistry(read func() (metrics.Reading, bool)) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(readingCollector{reg: s.metrics, read: read})
	if s.cfg.MetricsExportJvmInfo {
		reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	}
	return reg
}

// monitorLines are mntr's lines (and the admin monitor command's fields)
// for a status snapshot, as the configured provider prints them.
func (s *Server) monitorLines(rd metrics.Reading) []fourlw.Metric {
	if !s.cfg.MetricsEnabled {
		return s.metrics.Monitor(rd)
	}
	families, err := s.prometheusRegistry(func() (metrics.Reading, bool) { return rd, true }).Gather()
	if err != nil {
		s.log.Warn("gathering metrics for mntr", "err", err)
	}
	return metrics.Dump(rd, families)
}
