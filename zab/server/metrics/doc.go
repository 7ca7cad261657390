// Package metrics is ZooKeeper 3.8's metric set as zabd reports it: the
// catalogue of every metric a ZooKeeper 3.8 server registers (its
// ServerMetrics counters and summaries and the gauges its servers register),
// each either measured by zabd or held at a constant for a documented reason
// (Why), and a Registry that keeps the counters and summaries and renders
// them as ZooKeeper's two metrics providers do: mntr lines as the default
// provider prints them (avg/min/max/cnt/sum, p50/p95/p99/p999), and
// Prometheus metrics, through github.com/prometheus/client_golang, as the
// PrometheusMetricsProvider exports them (summaries with their quantiles,
// _count and _sum; sets labelled key). Gauges are read from the server when
// a report is made (Reading).
package metrics
