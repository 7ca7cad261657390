//go:build !race

package localens_test

const raceDetector = false
