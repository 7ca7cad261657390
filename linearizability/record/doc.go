// Package record turns the operations of real ZooKeeper clients into a
// history file (see docs/history-format.md) that the linearizability
// checkers read.
//
// A Client wraps a github.com/go-zookeeper/zk connection. go-zookeeper hides
// the reply header (zxid, error code) and delivers watch events on channels
// whose order against replies is lost, so the recorder dials the server
// itself and taps the byte stream: every frame the server sends is decoded
// with wire's records as it is read, which gives each reply its zxid and each
// reply and event its exact arrival order (the seq). The API call only
// supplies what was asked.
//
// The tap can also freeze a client: while frozen, nothing the client sends
// reaches the server and it cannot reconnect, so its session expires exactly
// as a client that stops pinging (go-zookeeper itself never stops pinging).
//
// A Client runs one operation at a time (calls are serialised); use several
// Clients for concurrency. Times are a monotonic clock shared by all clients
// of a Recorder.
package record
