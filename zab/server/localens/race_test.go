//go:build race

package localens_test

// raceDetector: this test binary is built with -race.
const raceDetector = true
