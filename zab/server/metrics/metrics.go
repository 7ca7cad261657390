package metrics

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zabd/zabd/zab/server/fourlw"
)

// windowSize is how many of a summary's latest observations its
// percentiles are computed over: the size of ZooKeeper's reservoir (which
// samples uniformly rather than keeping the latest).
const windowSize = 4096

// setWindowSize is the window of each key of a summary set without
// percentiles, for its Prometheus median alone: a set has a key per
// top-level namespace, of which a tree may have thousands, and 32 KiB of
// window for each would cost more than the namespaces' nodes.
const setWindowSize = 128

// Registry holds the values of the catalogue's counters and summaries; the
// gauges are read when reported (Reading). It renders both as ZooKeeper's
// two metrics providers do: mntr lines (Monitor) and Prometheus metrics
// (Collect). Safe for concurrent use.
type Registry struct {
	counters    map[string]*Count
	summaries   map[string]*Distribution
	counterSets map[string]*keyed[Count]
	summarySets map[string]*DistributionSet
}

// New returns a registry with every counter and summary of the catalogue at
// zero.
func New() *Registry {
	r := &Registry{
		counters: map[string]*Count{}, summaries: map[string]*Distribution{},
		counterSets: map[string]*keyed[Count]{}, summarySets: map[string]*DistributionSet{},
	}
	for _, d := range Catalogue {
		switch d.Kind {
		case Counter:
			r.counters[d.Name] = &Count{}
		case Summary, PercentileSummary:
			r.summaries[d.Name] = &Distribution{}
		case CounterSet:
			r.counterSets[d.Name] = &keyed[Count]{m: map[string]*Count{}}
		case SummarySet:
			r.summarySets[d.Name] = &DistributionSet{keyed: keyed[Distribution]{m: map[string]*Distribution{}}, window: setWindowSize}
		case PercentileSummarySet:
			r.summarySets[d.Name] = &DistributionSet{keyed: keyed[Distribution]{m: map[string]*Distribution{}}, window: windowSize}
		}
	}
	return r
}

// Counter returns the catalogue's counter name; it panics for a name the
// catalogue does not have as a counter (a programming error).
func (r *Registry) Counter(name string) *Count { return mustGet(r.counters, name, "counter") }

// Summary returns the catalogue's summary name.
func (r *Registry) Summary(name string) *Distribution { return mustGet(r.summaries, name, "summary") }

// SummarySet returns the catalogue's summary set name.
func (r *Registry) SummarySet(name string) *DistributionSet {
	return mustGet(r.summarySets, name, "summary set")
}

func mustGet[T any](m map[string]*T, name, kind string) *T {
	v, ok := m[name]
	if !ok {
		panic(fmt.Sprintf("metrics: %q is not a %s of the catalogue", name, kind))
	}
	return v
}

// Reset zeroes every counter and summary, as srst does with ZooKeeper's
// default provider (ServerStats.reset resets all ServerMetrics).
func (r *Registry) Reset() {
	for _, c := range r.counters {
		c.v.Store(0)
	}
	for _, d := range r.summaries {
		d.reset()
	}
	for _, s := range r.counterSets {
		s.reset()
	}
	for _, s := range r.summarySets {
		s.reset()
	}
}

// Count is a counter.
type Count struct{ v atomic.Int64 }

// Add adds n.
func (c *Count) Add(n int64) { c.v.Add(n) }

// Load reads the count.
func (c *Count) Load() int64 { return c.v.Load() }

// Distribution is a summary: count, sum, min and max of every observation
// since start (or srst), and the latest windowSize observations for its
// percentiles.
type Distribution struct {
	mu                   sync.Mutex
	count, sum, min, max int64
	// window is a ring of the latest observations: windowSize of them,
	// allocated at the first, or, when limit is set (a summary set's key),
	// at most limit, grown as they come.
	window []int64
	next   int
	limit  int
}

// Observe records one value.
func (d *Distribution) Observe(v int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.count == 0 || v < d.min {
		d.min = v
	}
	if d.count == 0 || v > d.max {
		d.max = v
	}
	d.count++
	d.sum += v
	size := d.limit
	if size == 0 {
		size = windowSize
		if d.window == nil {
			d.window = make([]int64, 0, windowSize)
		}
	}
	if len(d.window) < size {
		d.window = append(d.window, v)
	} else {
		d.window[d.next] = v
		d.next = (d.next + 1) % size
	}
}

// Count is how many values were observed.
func (d *Distribution) Count() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count
}

func (d *Distribution) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.count, d.sum, d.min, d.max, d.window, d.next = 0, 0, 0, 0, nil, 0
}

// distribution is a Distribution read at one moment, its window sorted.
type distribution struct {
	count, sum, min, max int64
	sorted               []int64
}

func (d *Distribution) read() distribution {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := distribution{count: d.count, sum: d.sum, min: d.min, max: d.max, sorted: slices.Clone(d.window)}
	slices.Sort(s.sorted)
	return s
}

// avg is AvgMinMaxCounter.getAvg: the mean rounded half up to 4 decimals.
func (s distribution) avg() float64 {
	if s.count == 0 {
		return 0
	}
	return math.Floor(float64(s.sum)/float64(s.count)*1e4+0.5) / 1e4
}

// percentile is Dropwizard's UniformSnapshot.getValue, rounded as
// AvgMinMaxPercentileCounter rounds it: linear interpolation at
// q*(n+1).
func (s distribution) percentile(q float64) int64 {
	n := len(s.sorted)
	if n == 0 {
		return 0
	}
	pos := q * float64(n+1)
	i := int(pos)
	var v float64
	switch {
	case i < 1:
		v = float64(s.sorted[0])
	case i >= n:
		v = float64(s.sorted[n-1])
	default:
		lower, upper := float64(s.sorted[i-1]), float64(s.sorted[i])
		v = lower + (pos-math.Floor(pos))*(upper-lower)
	}
	return int64(math.Floor(v + 0.5))
}

// quantile is the window's value at rank ceil(q*n), for Prometheus.
func (s distribution) quantile(q float64) float64 {
	if len(s.sorted) == 0 {
		return math.NaN() // what a Prometheus summary reports without observations
	}
	i := int(math.Ceil(q*float64(len(s.sorted)))) - 1
	return float64(s.sorted[max(i, 0)])
}

// DistributionSet is a summary set (ZooKeeper's SummarySet): a
// Distribution per key, made at the key's first observation, kept until
// srst.
type DistributionSet struct {
	keyed[Distribution]
	window int // each key's window (Distribution.limit)
}

// Observe records v under key. Once key is known it allocates nothing: the
// map is looked up with key as given, which is copied only when it is new
// (so a key sliced from a long path does not keep the path alive).
func (s *DistributionSet) Observe(key string, v int64) {
	s.mu.Lock()
	d := s.m[key]
	if d == nil {
		d = &Distribution{limit: s.window}
		s.m[strings.Clone(key)] = d
	}
	s.mu.Unlock()
	d.Observe(v)
}

// keyed is a set of counters or summaries by key. (The counter sets are
// not recorded into yet: quota_exceeded_error_per_namespace is among
// zabd's gaps, the others are an ensemble's.)
type keyed[T any] struct {
	mu sync.Mutex
	m  map[string]*T
}

func (k *keyed[T]) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.m)
}

// sorted lists the keys and their values in key order.
func (k *keyed[T]) sorted() ([]string, []*T) {
	k.mu.Lock()
	defer k.mu.Unlock()
	keys := slices.Sorted(maps.Keys(k.m))
	vals := make([]*T, len(keys))
	for i, key := range keys {
		vals[i] = k.m[key]
	}
	return keys, vals
}

// Reading is what a report reads from the server at one moment.
type Reading struct {
	Version string // zk_version
	State   string // zk_server_state: standalone, leader, follower, observer
	// PeerState is an ensemble member's zk_peer_state ("following -
	// broadcast"), printed after the state; "" standalone.
	PeerState string
	// Gauges by name; a gauge absent is not reported (ZooKeeper registers
	// the leader's and members' gauges only there).
	Gauges map[string]float64
	// GaugeSets by name, then key.
	GaugeSets map[string]map[string]float64
	// Own are zabd's metrics, reported after ZooKeeper's, as gauges.
	Own []fourlw.Metric
}

// Monitor is the mntr answer (and the admin monitor command) as ZooKeeper
// 3.8's default metrics provider gives it: version and state, then gauges,
// gauge sets, counters, counter sets, summaries, percentile summaries and
// summary sets, each in catalogue order, keys sorted; then zabd's own.
func (r *Registry) Monitor(rd Reading) []fourlw.Metric {
	out := monitorValues(rd)
	number := func(name string, v float64, float bool) {
		out = append(out, fourlw.Metric{Name: name, Value: v, Float: float})
	}
	summary := func(name string, d *Distribution, percentiles bool) {
		s := d.read()
		number("avg_"+name, s.avg(), true)
		number("min_"+name, float64(s.min), false)
		number("max_"+name, float64(s.max), false)
		number("cnt_"+name, float64(s.count), false)
		number("sum_"+name, float64(s.sum), false)
		if percentiles {
			for _, p := range mntrPercentiles {
				number(p.prefix+name, float64(s.percentile(p.q)), false)
			}
		}
	}
	for _, kind := range []Kind{Gauge, GaugeSet, Counter, CounterSet, Summary, PercentileSummary, SummarySet, PercentileSummarySet} {
		for _, d := range Catalogue {
			if d.Kind != kind {
				continue
			}
			switch kind {
			case Gauge:
				if v, ok := rd.Gauges[d.Name]; ok {
					number(d.Name, v, d.Float)
				}
			case GaugeSet:
				set := rd.GaugeSets[d.Name]
				for _, key := range slices.Sorted(maps.Keys(set)) {
					number(key+"_"+d.Name, set[key], false)
				}
			case Counter:
				number(d.Name, float64(r.counters[d.Name].Load()), false)
			case CounterSet:
				keys, vals := r.counterSets[d.Name].sorted()
				for i, key := range keys {
					number(key+"_"+d.Name, float64(vals[i].Load()), false)
				}
			case Summary, PercentileSummary:
				summary(d.Name, r.summaries[d.Name], kind == PercentileSummary)
			case SummarySet, PercentileSummarySet:
				keys, vals := r.summarySets[d.Name].sorted()
				for i, key := range keys {
					summary(key+"_"+d.Name, vals[i], kind == PercentileSummarySet)
				}
			}
		}
	}
	return append(out, rd.Own...)
}

var mntrPercentiles = []struct {
	prefix string
	q      float64
}{{"p50_", 0.5}, {"p95_", 0.95}, {"p99_", 0.99}, {"p999_", 0.999}}

// The quantiles ZooKeeper's Prometheus provider exports.
var (
	basicQuantiles    = []float64{0.5}
	advancedQuantiles = []float64{0.5, 0.9, 0.99}
)

// Collect sends the catalogue's metrics and zabd's own as ZooKeeper's
// Prometheus provider exports them: gauges and counters under their names,
// summaries with their quantiles, _count and _sum, sets labelled
// key="<key>", each described by its own name (as ZooKeeper describes
// them).
func (r *Registry) Collect(rd Reading, ch chan<- prometheus.Metric) {
	keyLabel := []string{"key"}
	summary := func(name string, labels []string, d *Distribution, qs []float64, labelValues ...string) {
		s := d.read()
		quantiles := map[float64]float64{}
		for _, q := range qs {
			quantiles[q] = s.quantile(q)
		}
		ch <- prometheus.MustNewConstSummary(prometheus.NewDesc(name, name, labels, nil),
			uint64(s.count), float64(s.sum), quantiles, labelValues...)
	}
	for _, d := range Catalogue {
		plain := prometheus.NewDesc(d.Name, d.Name, nil, nil)
		withKey := prometheus.NewDesc(d.Name, d.Name, keyLabel, nil)
		switch d.Kind {
		case Gauge:
			if v, ok := rd.Gauges[d.Name]; ok {
				ch <- prometheus.MustNewConstMetric(plain, prometheus.GaugeValue, v)
			}
		case GaugeSet:
			for key, v := range rd.GaugeSets[d.Name] {
				ch <- prometheus.MustNewConstMetric(withKey, prometheus.GaugeValue, v, key)
			}
		case Counter:
			ch <- prometheus.MustNewConstMetric(plain, prometheus.CounterValue, float64(r.counters[d.Name].Load()))
		case CounterSet:
			keys, vals := r.counterSets[d.Name].sorted()
			for i, key := range keys {
				ch <- prometheus.MustNewConstMetric(withKey, prometheus.CounterValue, float64(vals[i].Load()), key)
			}
		case Summary:
			summary(d.Name, nil, r.summaries[d.Name], basicQuantiles)
		case PercentileSummary:
			summary(d.Name, nil, r.summaries[d.Name], advancedQuantiles)
		case SummarySet, PercentileSummarySet:
			qs := basicQuantiles
			if d.Kind == PercentileSummarySet {
				qs = advancedQuantiles
			}
			keys, vals := r.summarySets[d.Name].sorted()
			for i, key := range keys {
				summary(d.Name, keyLabel, vals[i], qs, key)
			}
		}
	}
	for _, m := range rd.Own {
		if m.Text == "" {
			ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(m.Name, ownHelp[m.Name], nil, nil), prometheus.GaugeValue, m.Value)
		}
	}
}

// ownHelp describes zabd's own metrics for Prometheus.
var ownHelp = map[string]string{
	"zabd_txns_per_fsync":          "Mean number of txns made durable by one fsync (group commit).",
	"zabd_slow_reader_disconnects": "Connections closed because their client stopped reading its replies.",
	"zabd_last_zxid":               "The zxid of the last txn applied.",
}

// monitorValues are the lines ZooKeeper's dumpMonitorValues gives before
// the metrics provider's: version, state and, on an ensemble member, its
// peer state.
func monitorValues(rd Reading) []fourlw.Metric {
	out := []fourlw.Metric{{Name: "version", Text: rd.Version}, {Name: "server_state", Text: rd.State}}
	if rd.PeerState != "" {
		out = append(out, fourlw.Metric{Name: "peer_state", Text: rd.PeerState})
	}
	return out
}

// Dump is mntr (and the admin monitor command) as ZooKeeper 3.8 answers it
// with its Prometheus provider: version and state, then every sample of the
// registry it exports (rd's gauges among them), named as the sample is ("readlatency_count",
// `readlatency{quantile="0.5"}`), each value a double.
func Dump(rd Reading, families []*dto.MetricFamily) []fourlw.Metric {
	out := monitorValues(rd)
	sample := func(name string, labels []*dto.LabelPair, extra string, v float64) {
		var parts []string
		for _, l := range labels {
			// Unescaped, as ZooKeeper's buildKeyForDump writes it: a
			// namespace may hold '"' or '\'.
			parts = append(parts, l.GetName()+`="`+l.GetValue()+`"`)
		}
		if extra != "" {
			parts = append(parts, extra)
		}
		if len(parts) > 0 {
			name += "{" + strings.Join(parts, ",") + "}"
		}
		out = append(out, fourlw.Metric{Name: name, Value: v, Float: true})
	}
	for _, f := range families {
		name := f.GetName()
		for _, m := range f.GetMetric() {
			switch {
			case m.GetSummary() != nil:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					sample(name, m.GetLabel(), fmt.Sprintf("quantile=%q", goDouble(q.GetQuantile())), q.GetValue())
				}
				sample(name+"_count", m.GetLabel(), "", float64(s.GetSampleCount()))
				sample(name+"_sum", m.GetLabel(), "", s.GetSampleSum())
			case m.GetHistogram() != nil:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					sample(name+"_bucket", m.GetLabel(), fmt.Sprintf("le=%q", goDouble(b.GetUpperBound())), float64(b.GetCumulativeCount()))
				}
				sample(name+"_count", m.GetLabel(), "", float64(h.GetSampleCount()))
				sample(name+"_sum", m.GetLabel(), "", h.GetSampleSum())
			case m.GetCounter() != nil:
				sample(name, m.GetLabel(), "", m.GetCounter().GetValue())
			case m.GetGauge() != nil:
				sample(name, m.GetLabel(), "", m.GetGauge().GetValue())
			default:
				sample(name, m.GetLabel(), "", m.GetUntyped().GetValue())
			}
		}
	}
	return out
}

// goDouble formats a quantile or bucket bound as Prometheus' Java client
// labels it (Collector.doubleToGoString): "+Inf" for infinity, else Java's
// Double.toString.
func goDouble(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return fourlw.JavaDouble(v)
}
