package metrics

import (
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server/fourlw"
)

func lines(ms []fourlw.Metric) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		out[m.Name] = m.Format()
	}
	return out
}

// TestSummaryAsZooKeeperPrintsIt: avg rounded half up to 4 decimals, min
// and max 0 before any observation, percentiles interpolated at q*(n+1)
// as Dropwizard's snapshot and rounded.
func TestSummaryAsZooKeeperPrintsIt(t *testing.T) {
	r := New()
	got := lines(r.Monitor(Reading{}))
	assert.Equal(t, "0.0", got["avg_readlatency"])
	assert.Equal(t, "0", got["min_readlatency"])
	assert.Equal(t, "0", got["p99_readlatency"])
	for _, v := range []int64{1, 2, 2, 10} {
		r.Summary("readlatency").Observe(v)
	}
	r.Summary("fsynctime").Observe(7)
	got = lines(r.Monitor(Reading{}))
	assert.Equal(t, "3.75", got["avg_readlatency"])
	assert.Equal(t, "1", got["min_readlatency"])
	assert.Equal(t, "10", got["max_readlatency"])
	assert.Equal(t, "4", got["cnt_readlatency"])
	assert.Equal(t, "15", got["sum_readlatency"])
	assert.Equal(t, "2", got["p50_readlatency"], "pos 2.5 between 2 and 2")
	assert.Equal(t, "10", got["p95_readlatency"], "pos 4.75: past the last")
	assert.Equal(t, "7.0", got["avg_fsynctime"])
	_, hasPercentile := got["p50_fsynctime"]
	assert.False(t, hasPercentile, "a basic summary has no percentiles")

	r.Reset()
	assert.Equal(t, "0", lines(r.Monitor(Reading{}))["cnt_readlatency"])
}

func TestPercentileInterpolates(t *testing.T) {
	s := distribution{sorted: []int64{10, 20, 30, 40}}
	assert.Equal(t, int64(25), s.percentile(0.5), "pos 2.5: halfway between 20 and 30")
	assert.Equal(t, int64(10), s.percentile(0.1), "pos 0.5: below the first")
	assert.Equal(t, int64(35), s.percentile(0.7), "pos 3.5: 30 + 0.5*10")
	assert.Equal(t, int64(33), s.percentile(0.66), "pos 3.3: 30 + 0.3*10 = 33.0")
	assert.Equal(t, int64(38), s.percentile(0.75), "pos 3.75: 37.5 rounds half up")
	assert.Equal(t, 20.0, s.quantile(0.5), "Prometheus: the value at rank ceil(q*n)")
}

// TestWindowKeepsTheLatest: percentiles cover the latest windowSize
// observations; count and sum cover all.
func TestWindowKeepsTheLatest(t *testing.T) {
	var d Distribution
	for i := range windowSize {
		d.Observe(int64(1000 + i))
	}
	for range windowSize {
		d.Observe(1)
	}
	s := d.read()
	assert.Equal(t, int64(2*windowSize), s.count)
	assert.Equal(t, int64(1), s.percentile(0.999))
	assert.Equal(t, int64(1000+windowSize-1), s.max)
}

// TestMonitorLayout: version and state, then gauges in catalogue order (a
// gauge absent from the reading, as a leader's on a standalone server, is
// left out), gauge sets as <key>_<name>, counters, summaries, zabd's own.
func TestMonitorLayout(t *testing.T) {
	r := New()
	r.Counter("watch_bytes").Add(42)
	rd := Reading{
		Version: "3.8.0-zabd", State: "standalone",
		Gauges:    map[string]float64{"znode_count": 5, "avg_latency": 1.5},
		GaugeSets: map[string]map[string]float64{"quota_count_limit_per_namespace": {"b": 3, "a": 10}},
		Own:       []fourlw.Metric{{Name: "zabd_last_zxid", Value: 7}},
	}
	ms := r.Monitor(rd)
	require.Greater(t, len(ms), 400)
	assert.Equal(t, fourlw.Metric{Name: "version", Text: "3.8.0-zabd"}, ms[0])
	assert.Equal(t, fourlw.Metric{Name: "server_state", Text: "standalone"}, ms[1])
	assert.Equal(t, fourlw.Metric{Name: "avg_latency", Value: 1.5, Float: true}, ms[2])
	assert.Equal(t, fourlw.Metric{Name: "znode_count", Value: 5}, ms[3])
	assert.Equal(t, "a_quota_count_limit_per_namespace", ms[4].Name)
	assert.Equal(t, "b_quota_count_limit_per_namespace", ms[5].Name)
	assert.Equal(t, "proposal_count", ms[6].Name, "then the counters")
	assert.Equal(t, "42", lines(ms)["watch_bytes"])
	assert.Equal(t, fourlw.Metric{Name: "zabd_last_zxid", Value: 7}, ms[len(ms)-1])
	assert.NotContains(t, lines(ms), "learners", "a leader's gauge is not reported by a server that does not give it")
}

// TestCollectAsZooKeepersPrometheusProvider: gauges, counters and
// summaries (0.5 quantile for basic ones, 0.5/0.9/0.99 for the others)
// under ZooKeeper's names; sets labelled key.
func TestCollectAsZooKeepersPrometheusProvider(t *testing.T) {
	r := New()
	r.Summary("updatelatency").Observe(3)
	reg := prometheus.NewRegistry()
	rd := Reading{Gauges: map[string]float64{"znode_count": 5},
		GaugeSets: map[string]map[string]float64{"quota_bytes_usage_per_namespace": {"a": 2}},
		Own:       []fourlw.Metric{{Name: "zabd_last_zxid", Value: 7}}}
	reg.MustRegister(collectorFunc(func(ch chan<- prometheus.Metric) { r.Collect(rd, ch) }))
	families, err := reg.Gather()
	require.NoError(t, err)
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
	}
	assert.Equal(t, dto.MetricType_GAUGE, byName["znode_count"].GetType())
	assert.Equal(t, "znode_count", byName["znode_count"].GetHelp(), "described by its name, as ZooKeeper's")
	assert.Equal(t, dto.MetricType_COUNTER, byName["watch_bytes"].GetType())
	up := byName["updatelatency"].GetMetric()[0].GetSummary()
	assert.Equal(t, uint64(1), up.GetSampleCount())
	assert.Len(t, up.GetQuantile(), 3)
	assert.Len(t, byName["fsynctime"].GetMetric()[0].GetSummary().GetQuantile(), 1)
	set := byName["quota_bytes_usage_per_namespace"].GetMetric()[0]
	assert.Equal(t, "key", set.GetLabel()[0].GetName())
	assert.Equal(t, "a", set.GetLabel()[0].GetValue())
	assert.Contains(t, byName, "zabd_last_zxid")

	dump := lines(Dump(Reading{Version: "v", State: "follower", PeerState: "following - broadcast"}, families))
	assert.Equal(t, "following - broadcast", dump["peer_state"])
	assert.Equal(t, "5.0", dump["znode_count"])
	assert.Equal(t, "1.0", dump["updatelatency_count"])
	assert.Equal(t, "3.0", dump[`updatelatency{quantile="0.99"}`])
	assert.Equal(t, "NaN", dump[`fsynctime{quantile="0.5"}`], "an empty summary's quantile")
	assert.Equal(t, "2.0", dump[`quota_bytes_usage_per_namespace{key="a"}`])
}

type collectorFunc func(chan<- prometheus.Metric)

func (collectorFunc) Describe(chan<- *prometheus.Desc)      {}
func (f collectorFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

// TestCatalogueNamesAreUniqueAndDocumented: every metric appears once, and
// docs/zabd.md names every one of them.
func TestCatalogueNamesAreUniqueAndDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/zabd.md")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, d := range Catalogue {
		assert.False(t, seen[d.Name], "%s twice", d.Name)
		seen[d.Name] = true
		assert.True(t, strings.Contains(string(doc), "`"+d.Name+"`"), "docs/zabd.md does not name `%s`", d.Name)
	}
	for name := range ownHelp {
		assert.True(t, strings.Contains(string(doc), "`"+name+"`"), "docs/zabd.md does not name `%s`", name)
	}
}

// TestSummarySetAsZooKeeperPrintsIt: each key of a summary set is a summary
// named <prefix>_<key>_<name>, read_per_namespace's keys before
// write_per_namespace's (the order Debian's ZooKeeper 3.8.0 prints them
// in), keys printed as they are; srst drops the keys; Prometheus labels
// them key, and ZooKeeper's Prometheus mntr writes the label unescaped.
func TestSummarySetAsZooKeeperPrintsIt(t *testing.T) {
	r := New()
	reads, writes := r.SummarySet("read_per_namespace"), r.SummarySet("write_per_namespace")
	writes.Observe("a", 7)
	reads.Observe("a", 75)
	reads.Observe("a", 70)
	writes.Observe("sp ace", 8)
	writes.Observe(`q"\`, 3)
	ms := r.Monitor(Reading{})
	var names []string
	for _, m := range ms {
		if strings.HasSuffix(m.Name, "_per_namespace") {
			names = append(names, m.Name)
		}
	}
	assert.Equal(t, []string{
		"avg_a_read_per_namespace", "min_a_read_per_namespace", "max_a_read_per_namespace", "cnt_a_read_per_namespace", "sum_a_read_per_namespace",
		"avg_a_write_per_namespace", "min_a_write_per_namespace", "max_a_write_per_namespace", "cnt_a_write_per_namespace", "sum_a_write_per_namespace",
		`avg_q"\_write_per_namespace`, `min_q"\_write_per_namespace`, `max_q"\_write_per_namespace`, `cnt_q"\_write_per_namespace`, `sum_q"\_write_per_namespace`,
		"avg_sp ace_write_per_namespace", "min_sp ace_write_per_namespace", "max_sp ace_write_per_namespace", "cnt_sp ace_write_per_namespace", "sum_sp ace_write_per_namespace",
	}, names, "summary sets last, no percentiles")
	got := lines(ms)
	assert.Equal(t, "72.5", got["avg_a_read_per_namespace"])
	assert.Equal(t, "70", got["min_a_read_per_namespace"])
	assert.Equal(t, "75", got["max_a_read_per_namespace"])
	assert.Equal(t, "2", got["cnt_a_read_per_namespace"])
	assert.Equal(t, "145", got["sum_a_read_per_namespace"])

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectorFunc(func(ch chan<- prometheus.Metric) { r.Collect(Reading{}, ch) }))
	families, err := reg.Gather()
	require.NoError(t, err)
	dump := lines(Dump(Reading{}, families))
	assert.Equal(t, "2.0", dump[`read_per_namespace_count{key="a"}`])
	assert.Equal(t, "145.0", dump[`read_per_namespace_sum{key="a"}`])
	assert.Equal(t, "70.0", dump[`read_per_namespace{key="a",quantile="0.5"}`])
	assert.Equal(t, "1.0", dump[`write_per_namespace_count{key="q"\"}`])

	r.Reset()
	for name := range lines(r.Monitor(Reading{})) {
		assert.NotContains(t, name, "_per_namespace", "srst forgets the keys")
	}
}

// TestSummarySetWindowIsSmall: a summary set's key keeps only the latest
// setWindowSize observations for its median, grown as they come, so that
// thousands of namespaces cost little; count and sum cover all.
func TestSummarySetWindowIsSmall(t *testing.T) {
	r := New()
	set := r.SummarySet("write_per_namespace")
	set.Observe("once", 1)
	d := set.m["once"]
	assert.Less(t, cap(d.window), 16, "one observation, a small window")
	for i := range 3 * setWindowSize {
		set.Observe("many", int64(i))
	}
	s := set.m["many"].read()
	assert.Len(t, s.sorted, setWindowSize)
	assert.Equal(t, int64(3*setWindowSize), s.count)
	assert.Equal(t, int64(2*setWindowSize), s.sorted[0], "the latest ones")
	assert.Zero(t, testing.AllocsPerRun(100, func() { set.Observe("many", 1) }), "a known key allocates nothing")
}
