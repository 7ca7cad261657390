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

// benchEnsembleSchedule is the same work on an ensemble of three voters.
func benchEnsembleSchedule() *faults.Schedule {
	s := benchSchedule()
	s.Servers, s.Ensemble = 3, true
	return s
}

// BenchmarkSim measures the simulator's speed: simulated seconds per wall
// second and per CPU second of the process (sim-s/cpu-s: the figure a
// shared, loaded machine does not distort) and client operations per wall
// second, without the checkers (simulation) and with them (the whole run,
// as the sweep does it), for one server and for an ensemble of three.
func BenchmarkSim(b *testing.B) {
	for _, bc := range []struct {
		name  string
		sched func() *faults.Schedule
		opts  Options
	}{
		{"simulation", benchSchedule, Options{SkipCheckers: true}},
		{"with-checkers", benchSchedule, Options{}},
		{"ensemble-simulation", benchEnsembleSchedule, Options{SkipCheckers: true}},
		{"ensemble-with-checkers", benchEnsembleSchedule, Options{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var st Stats
			meter := StartMeter()
			for b.Loop() {
				res := Run(bc.sched(), bc.opts)
				if res.Failed() {
					b.Fatal(res.Failures)
				}
				st.SimTime += res.Stats.SimTime
				st.Ops += res.Stats.Ops
			}
			wall := b.Elapsed().Seconds()
			_, cpu := meter.Elapsed()
			b.ReportMetric(st.SimTime.Seconds()/wall, "sim-s/s")
			if cpu > 0 {
				b.ReportMetric(st.SimTime.Seconds()/cpu.Seconds(), "sim-s/cpu-s")
			}
			b.ReportMetric(float64(st.Ops)/wall, "ops/s")
		})
	}
}
