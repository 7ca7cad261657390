// Package trace is the schema of the golden traces recorded from ZooKeeper
// 3.8.0 (one JSON object per line), the manifest that indexes them, and a
// reader for the txn log files captured with them. The recorder
// (scripts/goldenrec) writes them and datatree's golden test reads them, so
// both sides share one definition.
package trace
