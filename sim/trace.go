package sim

import (
	"fmt"
	"io"
	"time"

	"github.com/zabd/zabd/sim/vtime"
)

// tracer writes the run's trace: one line per thing that happened, prefixed
// with the monotonic time. The same schedule gives the same bytes. With no
// writer, nothing is formatted at all (callers test on() first for
// anything costly to build).
type tracer struct {
	w     io.Writer
	clock *vtime.Clock
}

func (t *tracer) on() bool { return t.w != nil }

func (t *tracer) logf(format string, args ...any) {
	if t.w == nil {
		return
	}
	fmt.Fprintf(t.w, "%12s  ", fmtMono(t.clock.Mono()))
	fmt.Fprintf(t.w, format, args...)
	io.WriteString(t.w, "\n")
}

// fmtMono prints a monotonic time as seconds with microseconds, fixed width
// friendly and independent of locale.
func fmtMono(d time.Duration) string {
	us := d / time.Microsecond
	return fmt.Sprintf("%d.%06ds", us/1_000_000, us%1_000_000)
}
