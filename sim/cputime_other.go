//go:build !unix

package sim

import "time"

// processCPUTime is not measured on this platform.
func processCPUTime() time.Duration { return 0 }
