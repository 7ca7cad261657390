package peerlink

import "time"

const (
	// DefaultDialTimeout is how long one dial may take before it fails
	// (ZooKeeper's cnxTO, zookeeper.cnxTimeout): what a dial across a
	// network that drops packets costs.
	DefaultDialTimeout = 5 * time.Second
	// DefaultLeaderDialWindow is how long a learner keeps dialling its
	// leader before it reports the connection lost.
	DefaultLeaderDialWindow = 2 * time.Second

	minLeaderBackoff = 10 * time.Millisecond
	maxLeaderBackoff = 200 * time.Millisecond
)

// LeaderDial is a learner's attempts to open a connection to its leader,
// started when its Peer sends FOLLOWERINFO or OBSERVERINFO.
type LeaderDial struct {
	deadline time.Duration
	backoff  time.Duration
}

// StartLeaderDial begins the attempts at now; window is how long they go
// on (DefaultLeaderDialWindow when not positive).
func StartLeaderDial(now, window time.Duration) LeaderDial {
	if window <= 0 {
		window = DefaultLeaderDialWindow
	}
	return LeaderDial{deadline: now + window, backoff: minLeaderBackoff}
}

// Failed records an attempt that failed at now. It returns how long to
// wait before the next one, or again false once the window has passed: the
// learner reports its connection lost (zab.PeerDisconnected). The wait
// doubles from 10 ms up to 200 ms.
func (d *LeaderDial) Failed(now time.Duration) (wait time.Duration, again bool) {
	if now > d.deadline {
		return 0, false
	}
	wait = d.backoff
	d.backoff = min(2*d.backoff, maxLeaderBackoff)
	return wait, true
}
