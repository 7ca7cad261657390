package storage

import (
	"fmt"
	"math/rand"

	"github.com/zabd/zabd/zab/storage/vfs"
)

// Options configures a Store.
type Options struct {
	FS vfs.FS
	// Dir is the data directory (ZooKeeper's dataDir): snapshots and epoch
	// files live in Dir/version-2.
	Dir string
	// LogDir is the txn log directory (ZooKeeper's dataLogDir): the log
	// files live in LogDir/version-2. Empty means Dir. A separate log
	// directory lets the log's fsyncs have a disk to themselves.
	LogDir string
	// SnapCount is ZooKeeper's snapCount: the log rolls to a new file after
	// SnapCount/2 + rand(SnapCount/2) txns. 0 means 100000.
	SnapCount int
	// PreallocSize is how far ahead the log file is extended with zeros, as
	// zookeeper.preAllocSize (which is in KiB). 0 means 64 MiB. It must be a
	// multiple of 512: recovery tells a crash's lost size change (the file
	// ends at a multiple of the sector size) from a file cut short.
	PreallocSize int64
	// Rand draws the roll offsets. Required; never the global source.
	Rand *rand.Rand
	// AllowDataLoss lets recovery start although durable txns are missing
	// or corrupt (it then cuts the log at the corruption, quarantining the
	// rest, and logs a warning).
	AllowDataLoss bool
	// AllowDataLossName is how the operator sets AllowDataLoss, named in
	// refusals and warnings (zabd: "-allow-data-loss"). Empty means
	// "Options.AllowDataLoss".
	AllowDataLossName string
	// Logf receives warnings (quarantined tails, skipped snapshots). Nil
	// discards them; they are also returned in Recovery.Warnings.
	Logf func(format string, args ...any)
}

const (
	defaultSnapCount    = 100000
	defaultPreallocSize = 64 << 20
)

func (o *Options) withDefaults() (Options, error) {
	out := *o
	if out.FS == nil {
		return out, fmt.Errorf("storage options: no FS")
	}
	if out.Rand == nil {
		return out, fmt.Errorf("storage options: no Rand")
	}
	if out.LogDir == "" {
		out.LogDir = out.Dir
	}
	if out.SnapCount == 0 {
		out.SnapCount = defaultSnapCount
	}
	if out.SnapCount < 2 {
		return out, fmt.Errorf("storage options: SnapCount %d is below 2", out.SnapCount)
	}
	if out.PreallocSize == 0 {
		out.PreallocSize = defaultPreallocSize
	}
	if out.PreallocSize < 0 || out.PreallocSize%crashSector != 0 {
		return out, fmt.Errorf("storage options: PreallocSize %d is not a positive multiple of %d", out.PreallocSize, crashSector)
	}
	if out.AllowDataLossName == "" {
		out.AllowDataLossName = "Options.AllowDataLoss"
	}
	return out, nil
}
