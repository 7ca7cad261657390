// Package zkcli is zabctl's ZooKeeper shell: zkCli's command set with its
// flags, output and exit codes (ZooKeeper 3.8's ZooKeeperMain and the
// org.apache.zookeeper.cli commands), over a session that moves to the next
// server when a connection fails (package wire/client/session).
//
// Output goes where zkCli sends it: results to stdout, "Created ..." and
// every error to stderr, watch events to stdout as
//
//	(blank line)
//	WATCHER::
//	(blank line)
//	WatchedEvent state:SyncConnected type:NodeDataChanged path:/a
//
// With -o json every read prints one JSON object per line instead, and
// events print as {"event":{...}} lines.
//
// Deliberate differences from zkCli, each for scripts: a one-shot command
// prints no "Connecting to" banner and no connection event, fails at once
// with a clear line when no server answers, and closes its session when it
// is done (zkCli's lives on until it expires).
package zkcli
