package sessions

import "time"

// Limits bounds the session timeouts a server grants, in milliseconds
// (ZooKeeper's minSessionTimeout and maxSessionTimeout).
type Limits struct {
	MinMillis int32
	MaxMillis int32
}

// DefaultLimits are ZooKeeper's defaults: 2 and 20 ticks.
func DefaultLimits(tick time.Duration) Limits {
	t := int32(tick / time.Millisecond)
	return Limits{MinMillis: 2 * t, MaxMillis: 20 * t}
}

// Negotiate clamps a client's requested timeout into [Min, Max], as
// ZooKeeper does when it reads a ConnectRequest (min first, then max, so a
// misconfigured Min > Max yields Max).
func (l Limits) Negotiate(requestedMillis int32) int32 {
	t := requestedMillis
	if t < l.MinMillis {
		t = l.MinMillis
	}
	if t > l.MaxMillis {
		t = l.MaxMillis
	}
	return t
}
