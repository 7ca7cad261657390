package sessions

import (
	"fmt"
	"math"
)

// containerOwner is the ephemeralOwner value that marks a container node
// (ZooKeeper's EphemeralType.CONTAINER_EPHEMERAL_OWNER); no session may
// have it as its id.
const containerOwner = math.MinInt64

// ttlServerID is the top byte that TTL nodes' ephemeralOwner carries when
// extended types are on; a server with this id would mint session ids that
// read as TTL owners.
const ttlServerID = 0xFF

// FirstID returns the first session id a server mints, shaped as ZooKeeper
// shapes it: the server id in the top byte, then the low 40 bits of the
// millisecond time, then 16 zero bits that successive sessions count up in.
// ZooKeeper takes the time from its elapsed-time clock; zabd takes the wall
// time handed in, which keeps ids from repeating across a reboot (the
// monotonic clock restarts at boot, the wall clock does not).
func FirstID(serverID int64, wallMillis int64) int64 {
	id := int64(uint64(wallMillis<<24)>>8) | serverID<<56
	if id == containerOwner {
		id++
	}
	return id
}

// ValidateServerID checks that serverID fits in the top byte of a session
// id, and, with extended types (TTL nodes) enabled, that it is not 255,
// which TTL nodes' owner field reserves.
func ValidateServerID(serverID int64, extendedTypes bool) error {
	if serverID < 0 || serverID > 0xFF {
		return fmt.Errorf("sessions: server id %d is outside 0..255", serverID)
	}
	if extendedTypes && serverID == ttlServerID {
		return fmt.Errorf("sessions: server id 255 is reserved when extended types (TTL nodes) are enabled")
	}
	return nil
}
