package sim

import (
	"fmt"
	"time"
)

// Meter measures how fast the simulator goes over many runs: simulated
// time against the wall-clock time and the process's CPU time that
// passed since it started. The CPU figure is the one to compare between
// machines and loads: other processes on a shared machine slow the wall
// clock, not the CPU time a run costs.
type Meter struct {
	wall time.Time
	cpu  time.Duration
}

// StartMeter starts measuring now.
func StartMeter() Meter { return Meter{wall: time.Now(), cpu: processCPUTime()} }

// Elapsed is the wall-clock and CPU time (user and system, every thread
// of the process, the garbage collector's included) since the meter
// started. CPU time is 0 where the platform does not report it.
func (m Meter) Elapsed() (wall, cpu time.Duration) {
	return time.Since(m.wall), processCPUTime() - m.cpu
}

// Speed says how many simulated seconds passed per wall-clock second and
// per CPU second since the meter started, given the simulated time the
// runs covered.
func (m Meter) Speed(simulated time.Duration) string {
	wall, cpu := m.Elapsed()
	s := fmt.Sprintf("%.0f simulated seconds per wall second", simulated.Seconds()/wall.Seconds())
	if cpu > 0 {
		s += fmt.Sprintf(", %.0f per CPU second (%s of CPU)", simulated.Seconds()/cpu.Seconds(), cpu.Round(time.Millisecond))
	}
	return s
}
