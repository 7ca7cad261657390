// Package vtime is the simulator's notion of time: a virtual clock that keeps
// monotonic time and wall time apart, and the one event queue that every
// simulated happening goes through.
//
// Monotonic time only moves forward and only when the queue hands out the next
// event; it drives ticks, timeouts and session expiry. Wall time is monotonic
// time plus an offset that a fault may jump forwards or backwards, as an NTP
// step or an operator would, so a test can show that a wall-clock jump never
// expires a session.
//
// The queue orders events by (time, sequence number): two events due at the
// same instant run in the order they were scheduled, so a run is a function of
// its inputs and nothing else.
package vtime
