package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/metrics"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

// metricsTraffic drives the same requests at a server: nodes, a quota
// (written as zkCli's setquota writes it), watches that fire for each event
// type, an ephemeral.
func metricsTraffic(t *testing.T, ctx context.Context, addr string) {
	t.Helper()
	c := dial(t, ctx, addr)
	defer c.CloseSession(ctx)
	create := func(path, data string, mode wire.CreateMode) {
		_, err := c.Create(ctx, path, []byte(data), client.OpenACL, mode)
		require.NoError(t, err, path)
	}
	create("/a", "x", wire.ModePersistent)
	create("/a/b", "y", wire.ModePersistent)
	create("/zookeeper/quota/a", "", wire.ModePersistent)
	create("/zookeeper/quota/a/zookeeper_limits", "count=10,bytes=-1", wire.ModePersistent)
	create("/zookeeper/quota/a/zookeeper_stats", "count=0,bytes=0", wire.ModePersistent)
	_, _, err := c.GetData(ctx, "/a", true)
	require.NoError(t, err)
	_, err = c.GetChildren(ctx, "/a", true)
	require.NoError(t, err)
	_, err = c.Exists(ctx, "/a/e", true)
	require.ErrorIs(t, err, wire.ErrNoNode)
	_, err = c.SetData(ctx, "/a", []byte("zz"), -1)
	require.NoError(t, err)
	create("/a/e", "eph", wire.ModeEphemeral)
	for range 3 {
		_, err = c.Exists(ctx, "/a/e", true)
		require.NoError(t, err)
	}
	require.NoError(t, c.Delete(ctx, "/a/e", -1))
	// Every watch has fired (data, children, created, deleted); wait for
	// the events so that both servers have sent them before mntr is asked.
	for range 4 {
		_, err := c.NextEvent(ctx)
		require.NoError(t, err)
	}
}

// mntrLines splits mntr's answer into key → value.
func mntrLines(t *testing.T, answer string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(answer), "\n") {
		key, value, ok := strings.Cut(line, "\t")
		require.True(t, ok, "mntr line %q has no tab", line)
		out[key] = value
	}
	return out
}

// TestMonitorCarriesZooKeepersMetricSet: after the same traffic, zabd's
// mntr has every key Debian's ZooKeeper 3.8 prints and no other but zabd's
// own zk_zabd_*; and the figures both measure the same way agree, every
// per-namespace one among them.
func TestMonitorCarriesZooKeepersMetricSet(t *testing.T) {
	zk := zkprocess.ForTest(t, nil)
	ts := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	metricsTraffic(t, ctx, zk.Addr)
	metricsTraffic(t, ctx, ts.addr)
	want := mntrLines(t, word(t, zk.Addr, "mntr"))
	got := mntrLines(t, word(t, ts.addr, "mntr"))
	for key := range want {
		assert.Contains(t, got, key, "ZooKeeper's mntr has %s", key)
		if strings.HasSuffix(key, "_per_namespace") {
			// Quotas, and the sizes of each namespace's reads and writes.
			assert.Equal(t, want[key], got[key], "%s", key)
		}
	}
	for _, key := range []string{"zk_cnt_a_read_per_namespace", "zk_cnt_a_write_per_namespace", "zk_cnt_zookeeper_write_per_namespace"} {
		assert.Contains(t, want, key, "the traffic reads and writes in these namespaces")
	}
	for key := range got {
		if !strings.HasPrefix(key, "zk_zabd_") {
			assert.Contains(t, want, key, "zabd's mntr has %s, which ZooKeeper's has not", key)
		}
	}
	for _, key := range []string{
		"zk_server_state", "zk_znode_count", "zk_approximate_data_size", "zk_ephemerals_count", "zk_watch_count",
		"zk_global_sessions", "zk_local_sessions", "zk_num_alive_connections", "zk_outstanding_requests",
		"zk_a_quota_count_limit_per_namespace", "zk_a_quota_bytes_limit_per_namespace",
		"zk_a_quota_count_usage_per_namespace", "zk_a_quota_bytes_usage_per_namespace",
		"zk_cnt_node_created_watch_count", "zk_sum_node_created_watch_count", "zk_max_node_created_watch_count",
		"zk_cnt_node_deleted_watch_count", "zk_cnt_node_changed_watch_count", "zk_cnt_node_children_watch_count",
		"zk_watch_bytes", "zk_connection_request_count", "zk_connection_drop_probability", "zk_unsuccessful_handshake",
		"zk_cnt_startup_snap_load_time", "zk_cnt_dbinittime", "zk_snap_count", "zk_commit_count",
	} {
		assert.Equal(t, want[key], got[key], "%s", key)
	}
	assert.Equal(t, "3.8.0-zabd, built on 2026-11-21 00:00 UTC", strings.TrimSpace(got["zk_version"]))
}

// TestMetricsMeasureTraffic: the measured metrics move with the traffic.
func TestMetricsMeasureTraffic(t *testing.T) {
	ts := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	metricsTraffic(t, ctx, ts.addr)
	got := mntrLines(t, word(t, ts.addr, "mntr"))
	positive := func(key string) {
		t.Helper()
		assert.NotContains(t, []string{"", "0", "0.0", "-1"}, got[key], "%s", key)
	}
	for _, key := range []string{
		"zk_cnt_readlatency", "zk_cnt_updatelatency", "zk_cnt_fsynctime", "zk_cnt_sync_processor_batch_size",
		"zk_response_bytes", "zk_bytes_received_count", "zk_watch_bytes", "zk_last_client_response_size",
		"zk_max_client_response_size", "zk_min_client_response_size", "zk_non_mtls_local_conn_count",
		"zk_connection_request_count", "zk_cnt_dbinittime", "zk_packets_received", "zk_packets_sent",
	} {
		positive(key)
	}
	assert.Equal(t, "9", got["zk_cnt_updatelatency"], "the writes: 6 creates, setData, delete, closeSession")
	assert.Equal(t, "6", got["zk_cnt_readlatency"], "the reads: getData, getChildren, 4 exists")

	// Per namespace, as ZooKeeper measures them: a write is its path's
	// length plus its data's, a read that finds its node its path's
	// length, its data's or children's names' and 68 bytes of stat.
	perNamespace := map[string][5]string{ // avg, min, max, cnt, sum
		// creates of /a (1 byte) and /a/b (1), setData /a (2),
		// create /a/e (3), delete /a/e
		"a_write": {"4.6", "3", "7", "5", "23"},
		// the quota's three nodes under /zookeeper/quota
		"zookeeper_write": {"39.6667", "18", "52", "3", "119"},
		// getData /a, getChildren /a, three exists of /a/e (not the one
		// that found no node)
		"a_read": {"71.6", "71", "72", "5", "358"},
	}
	for set, want := range perNamespace {
		for i, stat := range []string{"avg", "min", "max", "cnt", "sum"} {
			key := "zk_" + stat + "_" + set + "_per_namespace"
			assert.Equal(t, want[i], got[key], key)
		}
	}
	assert.NotContains(t, got, "zk_cnt_zookeeper_read_per_namespace", "nothing read under /zookeeper")
}

// TestReplayedTxnsCountAsWrites: the txns a restarted server replays from
// its log count in write_per_namespace, as ZooKeeper's do (Debian's 3.8.0
// restarted on its data directory reports the writes made before, and no
// reads).
func TestReplayedTxnsCountAsWrites(t *testing.T) {
	cfg := testConfig(t.TempDir())
	ts := startServer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.addr)
	_, err := c.Create(ctx, "/r", []byte("abc"), client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	_, _, err = c.GetData(ctx, "/r", false)
	require.NoError(t, err)
	require.NoError(t, c.CloseSession(ctx))
	ts.stop(t)

	ts = startServer(t, cfg)
	got := mntrLines(t, word(t, ts.addr, "mntr"))
	assert.Equal(t, "1", got["zk_cnt_r_write_per_namespace"])
	assert.Equal(t, "5", got["zk_sum_r_write_per_namespace"])
	assert.NotContains(t, got, "zk_cnt_r_read_per_namespace")
}

// TestPrometheusEndpoint: /metrics is Prometheus text exposition with
// ZooKeeper's names and types, Go's process and runtime metrics beside
// them (ZooKeeper's exportJvmInfo), and zabd's own.
func TestPrometheusEndpoint(t *testing.T) {
	scrape := func(t *testing.T, exportJvmInfo bool) map[string]*dto.MetricFamily {
		cfg := testConfig(t.TempDir())
		cfg.MetricsEnabled, cfg.MetricsHost, cfg.MetricsPort, cfg.MetricsExportJvmInfo = true, "127.0.0.1", 0, exportJvmInfo
		ts := startServer(t, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		metricsTraffic(t, ctx, ts.addr)
		resp, err := http.Get("http://" + ts.MetricsAddr().String() + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		parser := expfmt.NewTextParser(model.LegacyValidation)
		families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
		require.NoError(t, err, "%s", body)
		return families
	}
	families := scrape(t, true)
	for _, d := range metrics.Catalogue {
		if d.Role != metrics.EveryServer {
			assert.NotContains(t, families, d.Name, "a standalone server has no %s", d.Name)
			continue
		}
		f, ok := families[d.Name]
		if d.Kind >= metrics.GaugeSet {
			if ok {
				assert.Equal(t, "key", f.GetMetric()[0].GetLabel()[0].GetName(), d.Name)
			}
			continue
		}
		if !assert.True(t, ok, "/metrics has no %s", d.Name) {
			continue
		}
		switch d.Kind {
		case metrics.Gauge:
			assert.Equal(t, dto.MetricType_GAUGE, f.GetType(), d.Name)
		case metrics.Counter:
			assert.Equal(t, dto.MetricType_COUNTER, f.GetType(), d.Name)
		case metrics.Summary:
			assert.Len(t, f.GetMetric()[0].GetSummary().GetQuantile(), 1, d.Name)
		case metrics.PercentileSummary:
			assert.Len(t, f.GetMetric()[0].GetSummary().GetQuantile(), 3, d.Name)
		}
	}
	assert.Equal(t, 10.0, families["quota_count_limit_per_namespace"].GetMetric()[0].GetGauge().GetValue())
	for name, want := range map[string]map[string]uint64{
		"read_per_namespace":  {"a": 5},
		"write_per_namespace": {"a": 5, "zookeeper": 3},
	} {
		got := map[string]uint64{}
		for _, m := range families[name].GetMetric() {
			assert.Len(t, m.GetSummary().GetQuantile(), 1, name)
			got[m.GetLabel()[0].GetValue()] = m.GetSummary().GetSampleCount()
		}
		assert.Equal(t, want, got, "%s: sample counts by key", name)
	}
	assert.Positive(t, families["updatelatency"].GetMetric()[0].GetSummary().GetSampleCount())
	for _, name := range []string{"process_cpu_seconds_total", "process_open_fds", "process_resident_memory_bytes", "go_goroutines", "zabd_last_zxid"} {
		assert.Contains(t, families, name)
	}
	assert.NotContains(t, scrape(t, false), "go_goroutines", "exportJvmInfo=false leaves the runtime's metrics out")
}

// TestMonitorWithThePrometheusProvider: with ZooKeeper's Prometheus provider
// configured, mntr lists the Prometheus samples, as ZooKeeper's does.
func TestMonitorWithThePrometheusProvider(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.MetricsEnabled, cfg.MetricsHost, cfg.MetricsPort = true, "127.0.0.1", 0
	ts := startServer(t, cfg)
	stillServes(t, ts.addr)
	answer := word(t, ts.addr, "mntr")
	assert.True(t, strings.HasPrefix(answer, "zk_version\t3.8.0-zabd"), answer)
	got := mntrLines(t, answer)
	assert.Equal(t, "standalone", got["zk_server_state"])
	assert.Equal(t, "5.0", got["zk_znode_count"], "every value a double")
	assert.Contains(t, got, `zk_readlatency{quantile="0.99"}`)
	assert.Contains(t, got, "zk_readlatency_count")
	assert.Contains(t, got, "zk_go_goroutines")
	assert.NotContains(t, got, "zk_avg_readlatency")
}
