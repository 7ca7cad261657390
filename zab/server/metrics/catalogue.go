package metrics

// Kind says how a metric is kept and reported.
type Kind uint8

const (
	// Gauge is a value read when reported.
	Gauge Kind = iota
	// Counter counts up from start (or the last srst).
	Counter
	// Summary is a distribution of observations: avg/min/max/cnt/sum in
	// mntr; the 0.5 quantile, _count and _sum in Prometheus (ZooKeeper's
	// AvgMinMaxCounter, DetailLevel.BASIC).
	Summary
	// PercentileSummary adds p50/p95/p99/p999 to mntr and the 0.9 and
	// 0.99 quantiles to Prometheus (AvgMinMaxPercentileCounter, ADVANCED).
	PercentileSummary
	// GaugeSet, CounterSet and SummarySet are the same kept per key (a
	// namespace, a learner): mntr names them <key>_<name> (with the
	// summary's prefix first), Prometheus labels them key="<key>".
	GaugeSet
	CounterSet
	SummarySet
	PercentileSummarySet
)

// Why is why zabd reports a constant for a ZooKeeper metric; "" (Measured)
// when it measures it.
type Why string

// The reasons a metric holds a constant. docs/zabd.md lists the metrics
// under each.
const (
	Measured Why = ""
	// Ensemble: the metric describes leader election, synchronization or
	// broadcast between servers; standalone ZooKeeper reports 0 for it too.
	Ensemble Why = "ensemble"
	// Internal: ZooKeeper's request-processor threads, queues and caches,
	// which zabd's single event loop has no counterpart of.
	Internal Why = "internal"
	// Throttle: ZooKeeper's request and connection throttling and
	// stale-request handling, which zabd does not do.
	Throttle Why = "throttle"
	// NoJVM: zabd is not a JVM (Go's runtime metrics are exported as go_*).
	NoJVM Why = "jvm"
	// GlobalSessionsOnly: zabd has only global sessions.
	GlobalSessionsOnly Why = "sessions"
	// PlainAdmin: zabd's admin server speaks plain HTTP only.
	PlainAdmin Why = "admin"
	// NotYet: meaningful for zabd but not measured yet (a gap).
	NotYet Why = "not yet"
)

// Role is which servers report a gauge: ZooKeeper registers some only on a
// leader or on ensemble members. A standalone server reports neither.
type Role string

// The roles of Def.Role.
const (
	EveryServer Role = ""
	Leader      Role = "leader"
	// Follower is a follower or a leader: synced_observers.
	Follower Role = "follower"
	Quorum   Role = "quorum"
)

// Def is one of ZooKeeper 3.8's metrics.
type Def struct {
	Name string
	Kind Kind
	// Float marks a gauge ZooKeeper reports as a double (mntr prints "0.0").
	Float bool
	Why   Why
	Role  Role
}

// Catalogue is ZooKeeper 3.8's metric set (ServerMetrics, the gauges
// ZooKeeperServer, LeaderZooKeeperServer, FollowerZooKeeperServer and
// QuorumZooKeeperServer register), kind by kind in the order a standalone
// ZooKeeper 3.8's mntr prints them (its default metrics provider's hash
// order, as captured from Debian's 3.8.0).
var Catalogue = []Def{
	// Gauges.
	{Name: "ephemerals_count", Kind: Gauge},
	{Name: "num_alive_connections", Kind: Gauge},
	{Name: "avg_latency", Kind: Gauge, Float: true},
	{Name: "outstanding_requests", Kind: Gauge},
	{Name: "znode_count", Kind: Gauge},
	{Name: "global_sessions", Kind: Gauge},
	{Name: "non_mtls_remote_conn_count", Kind: Gauge},
	{Name: "last_client_response_size", Kind: Gauge},
	{Name: "packets_sent", Kind: Gauge},
	{Name: "packets_received", Kind: Gauge},
	{Name: "max_client_response_size", Kind: Gauge},
	{Name: "connection_drop_probability", Kind: Gauge, Float: true, Why: Throttle},
	{Name: "watch_count", Kind: Gauge},
	{Name: "auth_failed_count", Kind: Gauge},
	{Name: "min_latency", Kind: Gauge},
	{Name: "max_file_descriptor_count", Kind: Gauge},
	{Name: "approximate_data_size", Kind: Gauge},
	{Name: "open_file_descriptor_count", Kind: Gauge},
	{Name: "local_sessions", Kind: Gauge, Why: GlobalSessionsOnly},
	{Name: "uptime", Kind: Gauge},
	{Name: "max_latency", Kind: Gauge},
	{Name: "outstanding_tls_handshake", Kind: Gauge},
	{Name: "min_client_response_size", Kind: Gauge},
	{Name: "non_mtls_local_conn_count", Kind: Gauge},
	// Gauges of ensemble members only.
	{Name: "learners", Kind: Gauge, Role: Leader, Why: Ensemble},
	{Name: "synced_followers", Kind: Gauge, Role: Leader, Why: Ensemble},
	{Name: "synced_non_voting_followers", Kind: Gauge, Role: Leader, Why: Ensemble},
	{Name: "synced_observers", Kind: Gauge, Role: Follower, Why: Ensemble},
	{Name: "pending_syncs", Kind: Gauge, Role: Leader, Why: Ensemble},
	{Name: "leader_uptime", Kind: Gauge, Role: Leader, Why: Ensemble},
	{Name: "last_proposal_size", Kind: Gauge, Role: Leader, Why: Ensemble},
	{Name: "max_proposal_size", Kind: Gauge, Role: Leader, Why: Ensemble},
	{Name: "min_proposal_size", Kind: Gauge, Role: Leader, Why: Ensemble},
	{Name: "quorum_size", Kind: Gauge, Role: Quorum, Why: Ensemble},

	// Gauge sets: quotas by top-level namespace.
	{Name: "quota_count_limit_per_namespace", Kind: GaugeSet},
	{Name: "quota_bytes_limit_per_namespace", Kind: GaugeSet},
	{Name: "quota_count_usage_per_namespace", Kind: GaugeSet},
	{Name: "quota_bytes_usage_per_namespace", Kind: GaugeSet},

	// Counters.
	{Name: "proposal_count", Kind: Counter, Why: Ensemble},
	{Name: "watch_bytes", Kind: Counter},
	{Name: "outstanding_changes_removed", Kind: Counter, Why: Internal},
	{Name: "throttled_ops", Kind: Counter, Why: Throttle},
	{Name: "stale_requests_dropped", Kind: Counter, Why: Throttle},
	{Name: "large_requests_rejected", Kind: Counter, Why: Throttle},
	{Name: "insecure_admin_count", Kind: Counter, Why: PlainAdmin},
	{Name: "connection_rejected", Kind: Counter},
	{Name: "cnxn_closed_without_zk_server_running", Kind: Counter, Why: Internal},
	{Name: "sessionless_connections_expired", Kind: Counter},
	{Name: "looking_count", Kind: Counter},
	{Name: "dead_watchers_queued", Kind: Counter, Why: Internal},
	{Name: "stale_requests", Kind: Counter, Why: Throttle},
	{Name: "connection_drop_count", Kind: Counter, Why: Throttle},
	{Name: "learner_proposal_received_count", Kind: Counter},
	{Name: "digest_mismatches_count", Kind: Counter, Why: Ensemble},
	{Name: "dead_watchers_cleared", Kind: Counter, Why: Internal},
	{Name: "response_packet_cache_hits", Kind: Counter, Why: Internal},
	{Name: "bytes_received_count", Kind: Counter},
	{Name: "add_dead_watcher_stall_time", Kind: Counter, Why: Internal},
	{Name: "request_throttle_wait_count", Kind: Counter, Why: Throttle},
	{Name: "requests_not_forwarded_to_commit_processor", Kind: Counter, Why: Internal},
	{Name: "response_packet_cache_misses", Kind: Counter, Why: Internal},
	{Name: "ensemble_auth_success", Kind: Counter, Why: Ensemble},
	{Name: "prep_processor_request_queued", Kind: Counter, Why: Internal},
	{Name: "learner_commit_received_count", Kind: Counter},
	{Name: "stale_replies", Kind: Counter, Why: Throttle},
	{Name: "connection_request_count", Kind: Counter},
	{Name: "response_bytes", Kind: Counter},
	{Name: "ensemble_auth_fail", Kind: Counter, Why: Ensemble},
	{Name: "diff_count", Kind: Counter},
	{Name: "response_packet_get_children_cache_misses", Kind: Counter, Why: Internal},
	{Name: "connection_revalidate_count", Kind: Counter, Why: Ensemble},
	{Name: "quit_leading_due_to_disloyal_voter", Kind: Counter, Why: Ensemble},
	{Name: "snap_count", Kind: Counter},
	{Name: "unrecoverable_error_count", Kind: Counter},
	{Name: "unsuccessful_handshake", Kind: Counter},
	{Name: "commit_count", Kind: Counter, Why: Ensemble},
	{Name: "stale_sessions_expired", Kind: Counter, Why: Internal},
	{Name: "response_packet_get_children_cache_hits", Kind: Counter, Why: Internal},
	{Name: "sync_processor_request_queued", Kind: Counter, Why: Internal},
	{Name: "outstanding_changes_queued", Kind: Counter, Why: Internal},
	{Name: "request_commit_queued", Kind: Counter, Why: Internal},
	{Name: "ensemble_auth_skip", Kind: Counter, Why: Ensemble},
	{Name: "skip_learner_request_to_next_processor_count", Kind: Counter, Why: Ensemble},
	{Name: "tls_handshake_exceeded", Kind: Counter, Why: Throttle},
	{Name: "revalidate_count", Kind: Counter, Why: Ensemble},

	// Counter sets.
	{Name: "quota_exceeded_error_per_namespace", Kind: CounterSet, Why: NotYet},

	// Summaries.
	{Name: "socket_closing_time", Kind: Summary, Why: Internal},
	{Name: "proposal_process_time", Kind: Summary, Why: Internal},
	{Name: "leader_unavailable_time", Kind: Summary},
	{Name: "node_created_watch_count", Kind: Summary},
	{Name: "session_queues_drained", Kind: Summary, Why: Internal},
	{Name: "write_commit_proc_req_queued", Kind: Summary, Why: Internal},
	{Name: "connection_token_deficit", Kind: Summary, Why: Throttle},
	{Name: "read_commit_proc_req_queued", Kind: Summary, Why: Internal},
	{Name: "node_deleted_watch_count", Kind: Summary},
	{Name: "startup_txns_load_time", Kind: Summary},
	{Name: "sync_processor_queue_size", Kind: Summary, Why: Internal},
	{Name: "follower_sync_time", Kind: Summary},
	{Name: "prep_processor_queue_size", Kind: Summary, Why: Internal},
	{Name: "fsynctime", Kind: Summary},
	{Name: "inflight_snap_count", Kind: Summary, Why: Ensemble},
	{Name: "reads_issued_from_session_queue", Kind: Summary, Why: Internal},
	{Name: "learner_request_processor_queue_size", Kind: Summary, Why: Ensemble},
	{Name: "snapshottime", Kind: Summary},
	{Name: "unavailable_time", Kind: Summary},
	{Name: "startup_txns_loaded", Kind: Summary},
	{Name: "reads_after_write_in_session_queue", Kind: Summary, Why: Internal},
	{Name: "requests_in_session_queue", Kind: Summary, Why: Internal},
	{Name: "write_commit_proc_issued", Kind: Summary, Why: Internal},
	{Name: "prep_process_time", Kind: Summary, Why: Internal},
	{Name: "pending_session_queue_size", Kind: Summary, Why: Internal},
	{Name: "time_waiting_empty_pool_in_commit_processor_read_ms", Kind: Summary, Why: Internal},
	{Name: "commit_process_time", Kind: Summary, Why: Internal},
	{Name: "dbinittime", Kind: Summary},
	{Name: "inflight_diff_count", Kind: Summary, Why: Ensemble},
	{Name: "netty_queued_buffer_capacity", Kind: Summary, Why: Internal},
	{Name: "election_time", Kind: Summary},
	{Name: "commit_commit_proc_req_queued", Kind: Summary, Why: Internal},
	{Name: "sync_processor_batch_size", Kind: Summary},
	{Name: "node_children_watch_count", Kind: Summary},
	{Name: "write_batch_time_in_commit_processor", Kind: Summary, Why: Internal},
	{Name: "read_commit_proc_issued", Kind: Summary, Why: Internal},
	{Name: "concurrent_request_processing_in_commit_processor", Kind: Summary, Why: Internal},
	{Name: "observer_sync_time", Kind: Summary},
	{Name: "node_changed_watch_count", Kind: Summary},
	{Name: "sync_process_time", Kind: Summary, Why: Internal},
	{Name: "startup_snap_load_time", Kind: Summary},

	// Summaries with percentiles.
	{Name: "prep_processor_queue_time_ms", Kind: PercentileSummary, Why: Internal},
	{Name: "jvm_pause_time_ms", Kind: PercentileSummary, Why: NoJVM},
	{Name: "close_session_prep_time", Kind: PercentileSummary, Why: Internal},
	{Name: "read_commitproc_time_ms", Kind: PercentileSummary, Why: Internal},
	{Name: "updatelatency", Kind: PercentileSummary},
	{Name: "local_write_committed_time_ms", Kind: PercentileSummary, Why: Internal},
	{Name: "request_throttle_queue_time_ms", Kind: PercentileSummary, Why: Throttle},
	{Name: "readlatency", Kind: PercentileSummary},
	{Name: "quorum_ack_latency", Kind: PercentileSummary, Why: Ensemble},
	{Name: "om_commit_process_time_ms", Kind: PercentileSummary, Why: Ensemble},
	{Name: "read_final_proc_time_ms", Kind: PercentileSummary, Why: Internal},
	{Name: "commit_propagation_latency", Kind: PercentileSummary, Why: Ensemble},
	{Name: "dead_watchers_cleaner_latency", Kind: PercentileSummary, Why: Internal},
	{Name: "write_final_proc_time_ms", Kind: PercentileSummary, Why: Internal},
	{Name: "proposal_ack_creation_latency", Kind: PercentileSummary, Why: Ensemble},
	{Name: "proposal_latency", Kind: PercentileSummary, Why: Ensemble},
	{Name: "om_proposal_process_time_ms", Kind: PercentileSummary, Why: Ensemble},
	{Name: "sync_processor_queue_and_flush_time_ms", Kind: PercentileSummary, Why: Internal},
	{Name: "propagation_latency", Kind: PercentileSummary, Why: Ensemble},
	{Name: "server_write_committed_time_ms", Kind: PercentileSummary, Why: Internal},
	{Name: "sync_processor_queue_time_ms", Kind: PercentileSummary, Why: Internal},
	{Name: "sync_processor_queue_flush_time_ms", Kind: PercentileSummary, Why: Internal},
	{Name: "write_commitproc_time_ms", Kind: PercentileSummary, Why: Internal},

	// Summary sets.
	{Name: "read_per_namespace", Kind: SummarySet},
	{Name: "write_per_namespace", Kind: SummarySet},
	{Name: "learner_handler_qp_size", Kind: SummarySet, Why: Ensemble},
	{Name: "learner_handler_qp_time_ms", Kind: PercentileSummarySet, Why: Ensemble},
	{Name: "ack_latency", Kind: PercentileSummarySet, Why: Ensemble},
}
