package storage

import (
	"errors"
	"fmt"
)

// CorruptError says that a file holds something that is not what zabd or
// ZooKeeper writes there: which file, at which byte offset, and what.
type CorruptError struct {
	File   string
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s at offset %d: %s", e.File, e.Offset, e.Reason)
}

// ErrDataLoss marks a refusal to start: recovering would silently lose
// txns that were durable (corruption before the newest valid snapshot's
// zxid, in the middle of the log, or a log with no snapshot to start from).
// Options.AllowDataLoss overrides it.
var ErrDataLoss = errors.New("recovery would lose durable txns; refusing to start (override: AllowDataLoss)")

// ErrFailed marks the failure of a write or fsync of the log. The Log is then
// unusable and the process must stop and recover from disk: after a failed
// fsync the kernel may have dropped the dirty pages, so a retry could report
// data durable that is not (PostgreSQL's "fsyncgate").
var ErrFailed = errors.New("storage write failed; the process must restart")

func refuse(c *CorruptError, why string) error {
	return fmt.Errorf("%w: %s: %w", ErrDataLoss, why, c)
}
