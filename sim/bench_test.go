package sim

import (
	"testing"

	"github.com/zabd/zabd/sim/faults"
)

// benchSchedule is one server and ten clients doing 200 operations each
// over 20 simulated seconds, with no faults.
func benchSchedule() *faults.Schedule {
	return &faults.Schedule{Seed: 2, Servers: 1, Clients: 10, OpsPerClient: 200, MaxThinkMs: 200, SessionTimeoutMs: 4000,
		TickMs: 200, SafetyMs: 20_000, LivenessMs: 30_000}
}

// BenchmarkSim measures the simulator's speed: simulated seconds per wall
// second and client operations per wall second, without the checkers
// (simulation) and with them (the whole run, as the sweep does it).
func BenchmarkSim(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
	}{{"simulation", Options{SkipCheckers: true}}, {"with-checkers", Options{}}} {
		b.Run(bc.name, func(b *testing.B) {
			var st Stats
			for b.Loop() {
				res := Run(benchSchedule(), bc.opts)
				if res.Failed() {
					b.Fatal(res.Failures)
				}
				st.SimTime += res.Stats.SimTime
				st.Ops += res.Stats.Ops
			}
			wall := b.Elapsed().Seconds()
			b.ReportMetric(st.SimTime.Seconds()/wall, "sim-s/s")
			b.ReportMetric(float64(st.Ops)/wall, "ops/s")
		})
	}
}
