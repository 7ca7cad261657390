package datatools

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/zab/restore"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// LogVerify is `zabctl log verify DIR`: every log file's checksums and
// records, the zxids' continuity within and across files, then what
// recovery would do with the directory (run on a copy, so nothing here is
// changed). Exit 0 when recovery keeps every durable txn (a clean log, or a
// torn tail it cuts), 1 when it would refuse or lose txns, 2 on usage.
func LogVerify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("log verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logDir := fs.String("logdir", "", "the txn log directory when it is not DIR (ZooKeeper's dataLogDir)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zabctl log verify [-logdir DIR] DATADIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	dataDir := fs.Arg(0)
	if *logDir == "" {
		*logDir = dataDir
	}
	snapV2, err := versionDir(dataDir)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	logV2, err := versionDir(*logDir)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	logs, err := listFiles(logV2, "log")
	if err != nil {
		return fail(stderr, "%v", err)
	}
	problems := 0
	prev := int64(-1)
	prevName := ""
	for _, f := range logs {
		first, last, n := int64(-1), int64(-1), 0
		end, err := scanFile(f.Path, f.Name, func(r storage.LogRecord) error {
			if first < 0 {
				first = r.Zxid
			}
			if gap := continuity(last, r.Zxid); gap != "" {
				fmt.Fprintf(stdout, "%s: offset %d: %s\n", f.Name, r.Offset, gap)
				problems++
			}
			last = r.Zxid
			n++
			return nil
		})
		var ce *storage.CorruptError
		switch {
		case errors.As(err, &ce):
			fmt.Fprintf(stdout, "%s: unreadable: %v\n", f.Name, ce)
			problems++
			continue
		case err != nil:
			return fail(stderr, "%v", err)
		}
		state := "ends cleanly"
		if end.Damage != nil {
			state = fmt.Sprintf("DAMAGED at offset %d: %s", end.Damage.Offset, end.Damage.Reason)
			problems++
		}
		if n == 0 {
			fmt.Fprintf(stdout, "%s: no txns, %s at offset %d\n", f.Name, state, end.Offset)
			continue
		}
		fmt.Fprintf(stdout, "%s: %d txns %s..%s, %s at offset %d\n", f.Name, n, zxidString(first), zxidString(last), state, end.Offset)
		if first != f.Zxid {
			fmt.Fprintf(stdout, "%s: its name says it starts at %s, its first txn is %s\n", f.Name, zxidString(f.Zxid), zxidString(first))
			problems++
		}
		if gap := continuity(prev, first); gap != "" {
			fmt.Fprintf(stdout, "%s after %s: %s\n", f.Name, prevName, gap)
			problems++
		}
		prev, prevName = last, f.Name
	}
	if len(logs) == 0 {
		fmt.Fprintf(stdout, "%s: no log files\n", logV2)
	}

	verdict, ok := dryRecover(snapV2, logV2)
	fmt.Fprintln(stdout, verdict)
	switch {
	case !ok:
		return 1
	case problems > 0:
		fmt.Fprintf(stdout, "%d problem(s) above; recovery keeps every durable txn (a torn tail is what a crash leaves)\n", problems)
	}
	return 0
}

// continuity checks that next follows prev: the next counter in the same
// epoch, or a new epoch (whose counter starts again). prev < 0 means none.
func continuity(prev, next int64) string {
	if prev < 0 {
		return ""
	}
	switch {
	case next <= prev:
		return fmt.Sprintf("zxid %s does not follow %s", zxidString(next), zxidString(prev))
	case epochOf(next) == epochOf(prev) && next != prev+1:
		return fmt.Sprintf("gap: %s follows %s (%d txns missing)", zxidString(next), zxidString(prev), next-prev-1)
	}
	return ""
}

// dryRecover copies the directories' files to a temporary directory and
// runs storage's recovery there, returning its verdict and whether it kept
// every durable txn.
func dryRecover(snapV2, logV2 string) (string, bool) {
	tmp, err := os.MkdirTemp("", "zabctl-verify-")
	if err != nil {
		return "recovery: cannot make a scratch copy: " + err.Error(), false
	}
	defer os.RemoveAll(tmp)
	for _, dir := range []string{snapV2, logV2} {
		if err := copyDir(dir, filepath.Join(tmp, "version-2")); err != nil {
			return "recovery: cannot make a scratch copy: " + err.Error(), false
		}
	}
	store, err := storage.Open(storage.Options{FS: vfs.OS{}, Dir: tmp, Rand: rand.New(rand.NewSource(1)), AllowDataLossName: "zabd -allow-data-loss"})
	if err != nil {
		return "recovery: " + err.Error(), false
	}
	rec, _, err := restore.Load(store, datatree.Config{ExtendedTypesEnabled: true})
	if err != nil {
		return "recovery would refuse to start: " + relabel(err.Error(), tmp, snapV2), false
	}
	defer rec.Log.Close()
	snap := "no snapshot"
	if rec.Snapshot.Name != "" {
		snap = rec.Snapshot.Name
	}
	verdict := fmt.Sprintf("recovery: starts from %s and the log up to %s", snap, zxidString(rec.LastZxid))
	for _, w := range rec.Warnings {
		verdict += "\nrecovery (done on a scratch copy, nothing here changed): " + relabel(w, tmp, snapV2)
	}
	return verdict, true
}

// relabel names the operator's directory instead of the scratch copy.
func relabel(msg, tmp, dir string) string {
	return strings.ReplaceAll(msg, filepath.Join(tmp, "version-2"), dir)
}

func copyDir(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
