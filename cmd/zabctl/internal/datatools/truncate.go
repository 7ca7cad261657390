package datatools

import (
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/zab/restore"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// LogTruncate is `zabctl log truncate DIR ZXID`: drop every txn after ZXID
// from the log, for an operator's repair. A standalone server (epoch 0)
// acknowledged every txn it logged, so dropping any of them loses writes
// clients were told succeeded: that needs -force. Txns of an ensemble's
// epochs are dropped as a TRUNC from the leader would; the leader
// synchronizes the member again when it rejoins. Snapshots past ZXID would
// bring the txns back at start-up: they are refused too without -force,
// and with it renamed aside (".truncated" suffix, which recovery ignores).
// The server must be stopped.
func LogTruncate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("log truncate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	force := fs.Bool("force", false, "drop acknowledged txns of a standalone server, and set newer snapshots aside")
	logDir := fs.String("logdir", "", "the txn log directory when it is not DIR (ZooKeeper's dataLogDir)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zabctl log truncate [-force] [-logdir DIR] DATADIR ZXID")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil || fs.NArg() != 2 {
		fs.Usage()
		return 2
	}
	dataDir := fs.Arg(0)
	target, err := parseZxid(fs.Arg(1))
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if *logDir == "" {
		*logDir = dataDir
	}
	logV2, err := versionDir(*logDir)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	snapV2, err := versionDir(dataDir)
	if err != nil {
		return fail(stderr, "%v", err)
	}

	// What would go: the txns after target, by epoch.
	logs, err := listFiles(logV2, "log")
	if err != nil {
		return fail(stderr, "%v", err)
	}
	var dropped, standalone int
	first, last := int64(-1), int64(-1)
	for _, f := range logs {
		if _, err := scanFile(f.Path, f.Name, func(r storage.LogRecord) error {
			if r.Zxid > target {
				dropped++
				if epochOf(r.Zxid) == 0 {
					standalone++
				}
				if first < 0 {
					first = r.Zxid
				}
				last = r.Zxid
			}
			return nil
		}); err != nil {
			return fail(stderr, "%v", err)
		}
	}
	snaps, err := listFiles(snapV2, "snapshot")
	if err != nil {
		return fail(stderr, "%v", err)
	}
	var newer []namedFile
	for _, s := range snaps {
		if s.Zxid > target {
			newer = append(newer, s)
		}
	}
	if dropped == 0 && len(newer) == 0 {
		fmt.Fprintf(stdout, "nothing after %s: the log is unchanged\n", zxidString(target))
		return 0
	}
	if !*force {
		switch {
		case standalone > 0:
			return fail(stderr, "refusing: truncating to %s drops %d txns (%s..%s) that a standalone server acknowledged to its clients; pass -force to drop them anyway",
				zxidString(target), dropped, zxidString(first), zxidString(last))
		case len(newer) > 0:
			return fail(stderr, "refusing: snapshot %s is past %s and would bring the dropped txns back; pass -force to set it aside", newer[len(newer)-1].Name, zxidString(target))
		}
	}
	for _, s := range newer {
		if err := os.Rename(s.Path, s.Path+".truncated"); err != nil {
			return fail(stderr, "set %s aside: %v", s.Name, err)
		}
		fmt.Fprintf(stdout, "set %s aside as %s.truncated\n", s.Name, s.Name)
	}
	store, err := storage.Open(storage.Options{FS: vfs.OS{}, Dir: dataDir, LogDir: *logDir, Rand: rand.New(rand.NewSource(1)), AllowDataLossName: "zabd -allow-data-loss"})
	if err != nil {
		return fail(stderr, "%v", err)
	}
	rec, _, err := restore.Load(store, datatree.Config{ExtendedTypesEnabled: true})
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer rec.Log.Close()
	if err := rec.Log.Truncate(target); err != nil {
		return fail(stderr, "truncate: %v", err)
	}
	fmt.Fprintf(stdout, "dropped %d txns (%s..%s); the log now ends at %s\n", dropped, zxidString(first), zxidString(last), zxidString(min(rec.LastZxid, target)))
	return 0
}
