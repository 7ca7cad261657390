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

// ErrDataLoss marks a refusal to start: recovering would lose txns that
// were durable (a damaged record that valid ones follow, a damaged log file
// that has successors, damage before the newest valid snapshot's zxid, a log
// that does not reach back to the snapshot). The error is a *DataLossError;
// Options.AllowDataLoss overrides it.
var ErrDataLoss = errors.New("refusing to start: recovery would lose durable txns")

// DataLossError is a refusal to start: where the damage is, what it means,
// which txns are at stake, and the repairs the operator can choose. It
// wraps ErrDataLoss and the *CorruptError.
type DataLossError struct {
	Corrupt  *CorruptError
	Dir      string // the directory that holds Corrupt.File
	Problem  string // why the damage cannot be cut off safely
	AtStake  string // the txns that would be lost
	Override string // how the operator sets Options.AllowDataLoss
	Cut      string // what starting with Override does
}

func (e *DataLossError) Error() string {
	return fmt.Sprintf("refusing to start: %s/%s at offset %d: %s: %s; %s. "+
		"Repair: restore this server's data directory from another member or a backup, or start with %s to %s",
		e.Dir, e.Corrupt.File, e.Corrupt.Offset, e.Corrupt.Reason, e.Problem, e.AtStake, e.Override, e.Cut)
}

func (e *DataLossError) Unwrap() []error { return []error{ErrDataLoss, e.Corrupt} }

// ErrFailed marks the failure of a write or fsync of the log. The Log is then
// unusable and the process must stop and recover from disk: after a failed
// fsync the kernel may have dropped the dirty pages, so a retry could report
// data durable that is not (PostgreSQL's "fsyncgate").
var ErrFailed = errors.New("storage write failed; the process must restart")
