package vtime

import "time"

// Clock is the simulation's virtual clock. The zero value starts at monotonic
// time 0 with wall time at the Unix epoch; use NewClock to choose the wall
// time at start.
type Clock struct {
	mono       time.Duration
	wallOffset time.Duration // wall = wallStart + mono + wallOffset
	wallStart  time.Time
}

// NewClock returns a clock whose wall time starts at wallStart.
func NewClock(wallStart time.Time) *Clock { return &Clock{wallStart: wallStart} }

// Mono is the time elapsed since the simulation began; it never decreases.
func (c *Clock) Mono() time.Duration { return c.mono }

// Wall is the simulated wall-clock time, which jumps when JumpWall is called.
func (c *Clock) Wall() time.Time { return c.wallStart.Add(c.mono + c.wallOffset) }

// WallMillis is Wall in milliseconds since the Unix epoch, the unit of
// ZooKeeper's ctime and mtime.
func (c *Clock) WallMillis() int64 { return c.Wall().UnixMilli() }

// JumpWall moves wall time by d (negative: backwards) and leaves monotonic
// time alone.
func (c *Clock) JumpWall(d time.Duration) { c.wallOffset += d }

// advanceTo moves monotonic time to t; the queue calls it and never with a
// time in the past.
func (c *Clock) advanceTo(t time.Duration) {
	if t > c.mono {
		c.mono = t
	}
}
