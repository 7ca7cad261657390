package storage

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// VersionDir is the subdirectory of the data directory that holds every
// file, as in ZooKeeper.
const VersionDir = "version-2"

const (
	logPrefix        = "log."
	snapshotPrefix   = "snapshot."
	tmpPrefix        = "tmp."        // "tmp.snapshot.<hex>", "tmp.log.<hex>": ZooKeeper's file listing ignores it
	quarantinePrefix = "quarantine." // "quarantine.log.<hex>.<offset>": likewise ignored by ZooKeeper
)

// LogName is the name of the log file whose first txn is zxid.
func LogName(zxid int64) string { return logPrefix + strconv.FormatUint(uint64(zxid), 16) }

// SnapshotName is the name of the snapshot taken at zxid.
func SnapshotName(zxid int64) string {
	return snapshotPrefix + strconv.FormatUint(uint64(zxid), 16)
}

// parseZxidName parses "<prefix><hex>" (and nothing more) into the zxid.
func parseZxidName(name, prefix string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" || len(rest) > 16 {
		return 0, false
	}
	v, err := strconv.ParseUint(rest, 16, 64)
	if err != nil {
		return 0, false
	}
	return int64(v), true
}

// compressedSnapshot reports whether name is a snapshot ZooKeeper wrote with
// compression ("snapshot.<hex>.gz" or ".snappy"), which zabd does not read.
func compressedSnapshot(name string) (zxid int64, ok bool) {
	for _, ext := range []string{".gz", ".snappy"} {
		if base, found := strings.CutSuffix(name, ext); found {
			return parseZxidName(base, snapshotPrefix)
		}
	}
	return 0, false
}

func quarantineName(file string, offset int64) string {
	return fmt.Sprintf("%s%s.%d", quarantinePrefix, file, offset)
}

func join(dir, name string) string { return path.Join(dir, name) }
