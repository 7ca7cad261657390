package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/zabd/zabd/zab/storage/vfs"
)

// Store is one server's data directories: snapshots and epoch files in
// Dir/version-2, the txn log in LogDir/version-2 (the same directory unless
// Options.LogDir says otherwise). It is driven by a shell (zab/server or
// sim), never by the core packages.
type Store struct {
	opts   Options
	dir    string // Dir/version-2: snapshots, epochs
	logDir string // LogDir/version-2: log files and their quarantine files

	// The epoch files as an ensemble member keeps them (MemberEpochs,
	// CoverEpoch): set only for a member; current mirrors currentEpoch,
	// marked is the newest epoch an updatingEpoch mark stands for (0: no
	// mark). Only the shell's one disk stream touches them.
	member  bool
	current int64
	marked  int64
}

// Open checks the options and creates the version-2 directories if needed.
// With a separate log directory it refuses, as ZooKeeper does, a log
// directory holding snapshots or a data directory holding log files: the
// two settings were most likely swapped. It reads nothing else: call
// Recover next.
func Open(opts Options) (*Store, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Store{opts: o, dir: join(o.Dir, VersionDir), logDir: join(o.LogDir, VersionDir)}
	for _, parent := range s.parents() {
		dir := join(parent, VersionDir)
		if err := o.FS.MkdirAll(dir); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
		// version-2 itself may have just been created: make its entry durable.
		if err := o.FS.SyncDir(parent); err != nil {
			return nil, err
		}
	}
	if s.logDir != s.dir {
		if err := s.checkSeparateDirs(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// parents lists Dir and, if it differs, LogDir.
func (s *Store) parents() []string {
	if s.logDir == s.dir {
		return []string{s.opts.Dir}
	}
	return []string{s.opts.Dir, s.opts.LogDir}
}

// checkSeparateDirs refuses a log directory with snapshot files and a
// snapshot directory with log files.
func (s *Store) checkSeparateDirs() error {
	logNames, err := s.opts.FS.List(s.logDir)
	if err != nil {
		return fmt.Errorf("list %s: %w", s.logDir, err)
	}
	if snaps := listSnapshots(logNames); len(snaps) > 0 {
		return fmt.Errorf("log directory %s holds snapshot %s: are dataDir and dataLogDir swapped?", s.logDir, snaps[0].name)
	}
	logs, err := listLogs(s.opts.FS, s.dir)
	if err != nil {
		return err
	}
	if len(logs) > 0 {
		return fmt.Errorf("data directory %s holds txn log %s although the log directory is %s: are dataDir and dataLogDir swapped?", s.dir, logs[0].name, s.logDir)
	}
	return nil
}

// Dir is the version-2 directory that holds the snapshots and epoch files.
func (s *Store) Dir() string { return s.dir }

// LogDir is the version-2 directory that holds the txn log files.
func (s *Store) LogDir() string { return s.logDir }

// WriteSnapshot writes snap durably as version-2/snapshot.<hex zxid>
// (temporary name, fsync, rename, directory fsync) and returns its name.
// This is for snapshots of the local tree (ZooKeeper takes one when the log
// rolls: see Log.Append); a snapshot received in a SNAP sync goes through
// InstallSnapshot.
//
// Contract: every txn up to snap.Zxid is already durable in the log (the
// core applies only txns that Sync reported durable). Recovery's refusal to
// lose history before the snapshot relies on it.
//
// A failed snapshot is not fatal: the old snapshots and the log still hold
// everything, and the temporary file is removed.
func (s *Store) WriteSnapshot(snap *Snapshot) (string, error) {
	return writeSnapshot(s.opts.FS, s.dir, snap)
}

// InstallSnapshot makes a snapshot received from the leader (SNAP sync)
// this server's starting point: it first truncates the log to snap.Zxid
// (txns above it are not in the leader's history), then writes the
// snapshot, then removes the log files (what they hold, this server's own
// history up to the snapshot, need not be the leader's). A crash before the
// snapshot is durable recovers a prefix of this server's own history; after
// it, the snapshot. Afterwards l appends only above snap.Zxid, starting a
// new file. Errors wrap ErrFailed and leave l failed: the process must
// stop and recover from disk.
func (s *Store) InstallSnapshot(l *Log, snap *Snapshot) (string, error) {
	if err := s.CoverEpoch(snap.Zxid); err != nil {
		return "", err
	}
	if err := l.Truncate(snap.Zxid); err != nil {
		return "", err
	}
	name, err := s.WriteSnapshot(snap)
	if err != nil {
		// Unlike a snapshot of the local tree, the installed one is the
		// log's new starting point, and the log was cut for it: the log
		// is unusable until a restart recovers it.
		return "", l.fail(fmt.Errorf("install snapshot: %w", err))
	}
	// What the log holds now is this server's own history up to the
	// snapshot, not necessarily the leader's: remove it (newest first, so
	// that a crash leaves the oldest files), so that neither a DIFF nor a
	// recovery falling back past a corrupt newer snapshot can use it.
	if err := truncateFiles(s.opts.FS, s.logDir, -1); err != nil {
		return "", fmt.Errorf("%w: remove the log before installed snapshot %s: %w", ErrFailed, name, err)
	}
	l.lastZxid = max(l.lastZxid, snap.Zxid)
	l.durableZxid = max(l.durableZxid, snap.Zxid)
	return name, nil
}

func (s *Store) warn(r *Recovery, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.Warnings = append(r.Warnings, msg)
	if s.opts.Logf != nil {
		s.opts.Logf("%s", msg)
	}
}

// Recovery is the outcome of Store.Recover.
type Recovery struct {
	// Snapshot is the snapshot the tree was loaded from; Name is "" when
	// there was none (or none valid), and the shell starts from an empty
	// tree (discarding whatever a failed TreeLoader call left).
	Snapshot SnapshotInfo
	// Log appends after LastZxid. The shell replays
	// Log.Iterator(Snapshot.Zxid+1) into the tree before it starts the
	// core with LastZxid as its history's end.
	Log      *Log
	LastZxid int64
	// Warnings lists what recovery skipped or moved aside (also sent to
	// Options.Logf).
	Warnings []string
	// Damaged, when not "", says what this data directory lost to damage
	// that Options.AllowDataLoss let recovery cut, now or at an earlier
	// start: the txns after LastZxid that the server may have acknowledged.
	// It holds until ClearDamage (an ensemble member: once a leader has
	// synchronized it), so that a restart in between cannot forget it.
	Damaged string
}

// Recover finds the newest valid snapshot and loads its tree with
// loadTree, skipping corrupt snapshots with a warning; then it checks the
// log from that snapshot on. The log ends at its first torn, zero or
// checksum-failing record: what follows is moved to
// version-2/quarantine.<log file>.<offset> with a warning, since after a
// crash it can only hold writes never reported durable. It refuses
// (ErrDataLoss, naming file and offset) when that is not so: damage in a log
// file that has successors, a log that ends before the snapshot's zxid, or
// a log that does not reach back to the snapshot (or, with no snapshot, to
// the first txn of an epoch). Options.AllowDataLoss turns these refusals
// into warnings. On success it has checked every record that replay,
// Log.Iterator(Snapshot.Zxid+1), reads (see checkExposed).
func (s *Store) Recover(loadTree TreeLoader) (*Recovery, error) {
	r := &Recovery{}
	fsys := s.opts.FS
	damaged, err := s.readDamaged()
	if err != nil {
		return nil, err
	}
	r.Damaged = damaged
	names, err := fsys.List(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.dir, err)
	}
	if err := s.removeLeftovers(s.dir, names); err != nil {
		return nil, err
	}
	if s.logDir != s.dir {
		logNames, err := fsys.List(s.logDir)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", s.logDir, err)
		}
		if err := s.removeLeftovers(s.logDir, logNames); err != nil {
			return nil, err
		}
	}
	newest, oldest, err := s.loadNewestSnapshot(r, names, loadTree)
	if err != nil {
		return nil, err
	}
	sawSnapshot := r.Snapshot.Name != "" || newest != nil
	snapZxid := r.Snapshot.Zxid
	logs, err := listLogs(fsys, s.logDir)
	if err != nil {
		return nil, err
	}
	relevant := filesFrom(logs, snapZxid+1)
	// Falling back past a corrupt snapshot is safe only if the log holds
	// what that snapshot held, from the snapshot used on without a gap.
	// It does when that snapshot was taken here (its txns were durable in
	// the log first); one installed from a leader (SNAP sync) holds txns no
	// log here has, and InstallSnapshot removed the log files before it, so
	// the log starts after it. A log starting at the first txn of an epoch
	// after the older snapshot, and no later than the corrupt one, is such
	// a log: ZooKeeper's members start theirs so (snapshot.0, then
	// log.<epoch>00000001), and a ZooKeeper stopped while writing a
	// snapshot leaves it cut short, as zabd's rename never does. With
	// several corrupt snapshots the log must reach back to the oldest of
	// them: one installed there, then one taken after it, left a log that
	// starts between the two, which held the newest but not the installed
	// snapshot's txns (TestCrashRecovery, seed 13872656585559453258: reads
	// that flipped bits made both look corrupt).
	//
	// With no valid snapshot to fall back to, the log must hold the history
	// from zxid 1. An epoch's first txn may follow log files that were
	// purged because the corrupt snapshot covered them (TestCrashRecovery,
	// seed 11086125612379629633: the only snapshot read as corrupt, and the
	// log, purged up to it, started at 0x2000000001) — epoch 1's too, after
	// a standalone server's epoch 0 (seed 6152548339431165575: txns 1..7
	// purged, the log from 0x100000001). Such a directory is refused even
	// when nothing was purged: nothing on disk tells the two apart.
	if oldest != nil && (len(relevant) == 0 || !follows(relevant[0].zxid, snapZxid) || relevant[0].zxid > oldest.zxid ||
		r.Snapshot.Name == "" && relevant[0].zxid > 1) {
		if err := s.fallbackUnsafe(r, oldest, oldest == newest, snapZxid, "no log file reaches back to it"); err != nil {
			return nil, err
		}
	} else if len(relevant) > 0 && relevant[0].zxid > snapZxid+1 && !startsEpoch(relevant[0].zxid, snapZxid) {
		from := "an empty tree (no snapshot)"
		if r.Snapshot.Name != "" {
			from = "the newest valid snapshot " + r.Snapshot.Name
		} else if sawSnapshot {
			from = "an empty tree (no valid snapshot)"
		}
		err := s.refuseOrWarn(r, &DataLossError{
			Corrupt: &CorruptError{File: relevant[0].name, Offset: 0, Reason: fmt.Sprintf("the log starts at zxid %#x", relevant[0].zxid)},
			Dir:     s.logDir,
			Problem: fmt.Sprintf("recovery starts from %s at zxid %#x, and no log file holds the txns between", from, snapZxid),
			AtStake: fmt.Sprintf("txns %#x..%#x are missing", snapZxid+1, relevant[0].zxid-1),
			Cut:     "start without them",
		})
		if err != nil {
			return nil, err
		}
	}
	last, err := s.checkLog(r, relevant, snapZxid)
	if err != nil {
		return nil, err
	}
	if newest != nil && max(last, snapZxid) < newest.zxid {
		if err := s.fallbackUnsafe(r, newest, true, snapZxid, fmt.Sprintf("the log ends at zxid %#x", last)); err != nil {
			return nil, err
		}
	}
	r.LastZxid = max(last, snapZxid)
	if err := s.removeRecordless(r); err != nil {
		return nil, err
	}
	if err := s.checkExposed(r, relevant, snapZxid); err != nil {
		return nil, err
	}
	r.Log = newLog(fsys, s.logDir, s.opts, r.LastZxid)
	return r, nil
}

// removeRecordless removes the log files named after r.LastZxid. They hold
// no txn: a crash lost the records of a file just started, and checkLog
// cut or set aside whatever followed its header. Kept, such a file sorts
// after the files that appends below its name start — a standalone server
// goes on in its log's epoch, a learner may be sent older txns — so the
// next file a crash damages is no longer the newest, and recovery refuses
// it as damage in a file with successors (TestCrashRecovery, seed
// 2344199025721758338: log.200000001 cut to its header, then
// log.100000002 onwards written, and log.100000023 left empty by a crash).
func (s *Store) removeRecordless(r *Recovery) error {
	fsys := s.opts.FS
	logs, err := listLogs(fsys, s.logDir)
	if err != nil {
		return err
	}
	removed := false
	for _, f := range logs {
		if f.zxid <= r.LastZxid {
			continue
		}
		empty, err := s.zeroAfterHeader(f.name)
		if err != nil {
			return err
		}
		if !empty {
			continue // checkLog leaves no such file; not this function's to judge
		}
		if err := fsys.Remove(join(s.logDir, f.name)); err != nil {
			return fmt.Errorf("remove %s: %w", f.name, err)
		}
		s.warn(r, "removed txn log %s, which holds no txn (the log ends at zxid %#x)", f.name, r.LastZxid)
		removed = true
	}
	if removed {
		if err := fsys.SyncDir(s.logDir); err != nil {
			return fmt.Errorf("%w: fsync directory %s: %w", ErrFailed, s.logDir, err)
		}
	}
	return nil
}

// checkExposed checks the log file that replay now starts from, when
// recovery's cuts and removals took away the one it checked for that
// (checked[0]), and so on until the file in front is one recovery checked.
//
// Replay reads from the last log file that starts at or before the
// snapshot's next txn (filesFrom), and trusts that recovery checked every
// record it reads (Iterator.open). checkLog checks the files from there on;
// but when it moves the first of them aside whole (damage at offset 0, or a
// file of zeros), or removeRecordless removes it (a header and no txn), the
// log ends at or before the snapshot, and an older file comes in front: one
// that the snapshot covers, which recovery had no reason to read. Replay
// reads it to its end all the same, looking for the snapshot's next txn, and
// failed on a flipped bit there after recovery had accepted the directory
// (ensemble simulator, hunt seed 112486: a bit flipped in log.100000002
// under snapshot.300000028, then AllowDataLoss moved a damaged
// log.300000013 aside). So that file is checked here as what it now is, the
// newest file: damage in it is refused naming file and offset, or cut
// under AllowDataLoss, and the next recovery, which checks it as the file in
// front, finds what this one left. Its txns all lie at or below the
// snapshot's zxid (the file after it started no later than the next txn),
// so the log's end, r.LastZxid, stays the snapshot's.
func (s *Store) checkExposed(r *Recovery, checked []logFile, snapZxid int64) error {
	seen := map[string]bool{}
	for _, f := range checked {
		seen[f.name] = true
	}
	for {
		logs, err := listLogs(s.opts.FS, s.logDir)
		if err != nil {
			return err
		}
		front := filesFrom(logs, snapZxid+1)
		if len(front) == 0 || seen[front[0].name] {
			return nil
		}
		// Every file after front[0] was moved aside or removed: it is the
		// newest, and checkLog judges it so.
		seen[front[0].name] = true
		if _, err := s.checkLog(r, front, snapZxid); err != nil {
			return err
		}
	}
}

// zeroAfterHeader reports whether the log file name holds nothing but zeros
// after its file header, reading it a block at a time.
func (s *Store) zeroAfterHeader(name string) (bool, error) {
	f, err := s.opts.FS.Open(join(s.logDir, name))
	if err != nil {
		return false, fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return false, err
	}
	buf := make([]byte, min(readAhead, max(size-fileHeaderLen, 0)))
	for off := int64(fileHeaderLen); off < size; off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), size-off)]
		if got, err := f.ReadAt(b, off); got < len(b) {
			return false, fmt.Errorf("read %s at offset %d: %w", name, off, err)
		}
		if firstNonZero(b) >= 0 {
			return false, nil
		}
	}
	return true, nil
}

// fallbackUnsafe refuses (or, under AllowDataLoss, warns) when recovery
// would start from an older snapshot than a corrupt newer one without the
// log covering the difference.
func (s *Store) fallbackUnsafe(r *Recovery, skipped *skippedSnapshot, isNewest bool, snapZxid int64, why string) error {
	from := "an empty tree"
	if r.Snapshot.Name != "" {
		from = "the older snapshot " + r.Snapshot.Name
	}
	corrupt := "the newest snapshot is corrupt"
	if !isNewest {
		corrupt = fmt.Sprintf("snapshot %s and every newer one are corrupt", skipped.err.File)
	}
	return s.refuseOrWarn(r, &DataLossError{
		Corrupt: skipped.err,
		Dir:     s.dir,
		Problem: fmt.Sprintf("%s, and the log cannot take %s (zxid %#x) up to it: %s", corrupt, from, snapZxid, why),
		AtStake: fmt.Sprintf("txns up to %#x that only this snapshot holds may have been acknowledged", skipped.zxid),
		Cut:     fmt.Sprintf("start from %s and the log without them", from),
	})
}

// refuseOrWarn returns e with the override named, or under AllowDataLoss
// warns that recovery goes on regardless and returns nil.
func (s *Store) refuseOrWarn(r *Recovery, e *DataLossError) error {
	e.Override = s.opts.AllowDataLossName
	if !s.opts.AllowDataLoss {
		return e
	}
	s.warn(r, "%s given: starting although %s/%s at offset %d: %s: %s; %s",
		e.Override, e.Dir, e.Corrupt.File, e.Corrupt.Offset, e.Corrupt.Reason, e.Problem, e.AtStake)
	// Remember the loss before anything is cut: a crash after the cut
	// must not leave a log that looks whole.
	what := fmt.Sprintf("%s/%s at offset %d: %s; %s", e.Dir, e.Corrupt.File, e.Corrupt.Offset, e.Corrupt.Reason, e.AtStake)
	if r.Damaged != "" {
		what = r.Damaged + "\n" + what
	}
	if err := writeFileAtomic(s.opts.FS, s.dir, damagedFile, []byte(what)); err != nil {
		return fmt.Errorf("%w: %w", ErrFailed, err)
	}
	r.Damaged = what
	return nil
}

// damagedFile records, in version-2, the damage recovery cut (zabd only;
// ZooKeeper ignores it).
const damagedFile = "logDamaged"

// readDamaged reads what damagedFile records ("" when absent).
func (s *Store) readDamaged() (string, error) {
	data, err := vfs.ReadFull(s.opts.FS, join(s.dir, damagedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", damagedFile, err)
	}
	if len(data) == 0 {
		return "an earlier start cut damaged txns", nil
	}
	return string(data), nil
}

// ClearDamage forgets, durably, the damage Recovery.Damaged reported: the
// txns it cut are held again (an ensemble member a leader synchronized), or
// their loss is accepted (a standalone server started with AllowDataLoss).
func (s *Store) ClearDamage() error {
	return removeDurably(s.opts.FS, s.dir, damagedFile)
}

// follows reports whether a log file whose first txn is zxid takes over
// without a gap from one whose last is prev.
func follows(zxid, prev int64) bool { return zxid <= prev+1 || startsEpoch(zxid, prev) }

// startsEpoch reports whether zxid is the first txn of an epoch later than
// that of prev, so that no txn can lie between them.
func startsEpoch(zxid, prev int64) bool {
	return zxid&0xffffffff == 1 && zxid>>32 > prev>>32
}

// removeLeftovers removes, of the names in dir, the snapshots and the cut
// log files (keepPrefix) that were never renamed into place.
func (s *Store) removeLeftovers(dir string, names []string) error {
	removed := false
	for _, n := range names {
		if strings.HasPrefix(n, tmpPrefix) {
			if err := s.opts.FS.Remove(join(dir, n)); err != nil {
				return fmt.Errorf("remove %s: %w", n, err)
			}
			removed = true
		}
	}
	if removed {
		return s.opts.FS.SyncDir(dir)
	}
	return nil
}

type snapFile struct {
	name       string
	zxid       int64
	compressed bool
}

func listSnapshots(names []string) []snapFile {
	var out []snapFile
	for _, n := range names {
		if z, ok := parseZxidName(n, snapshotPrefix); ok {
			out = append(out, snapFile{name: n, zxid: z})
		} else if z, ok := compressedSnapshot(n); ok {
			out = append(out, snapFile{name: n, zxid: z, compressed: true})
		}
	}
	sortByZxid(out, func(f snapFile) int64 { return f.zxid })
	return out
}

// skippedSnapshot is a snapshot recovery found corrupt.
type skippedSnapshot struct {
	zxid int64
	err  *CorruptError
}

// loadNewestSnapshot loads the newest snapshot that reads back intact into
// r.Snapshot, skipping corrupt ones with a warning, and returns the newest
// and the oldest one it skipped (the same one when it skipped one; nil
// when none). Every snapshot between them was skipped too.
func (s *Store) loadNewestSnapshot(r *Recovery, names []string, loadTree TreeLoader) (newest, oldest *skippedSnapshot, err error) {
	snaps := listSnapshots(names)
	for i := len(snaps) - 1; i >= 0; i-- {
		info, err := ReadSnapshotFile(s.opts.FS, join(s.dir, snaps[i].name), loadTree)
		var c *CorruptError
		switch {
		case err == nil:
			r.Snapshot = info
			return newest, oldest, nil
		case errors.As(err, &c):
			s.warn(r, "skipping corrupt snapshot: %v", err)
			oldest = &skippedSnapshot{zxid: snaps[i].zxid, err: c}
			if newest == nil {
				newest = oldest
			}
		default:
			return newest, oldest, err
		}
	}
	return newest, oldest, nil
}

// checkLog scans the relevant log files and returns the last valid zxid.
// At the first damage it decides (see damage.go): a torn write in the newest
// file is cut off, anything else refuses unless AllowDataLoss.
func (s *Store) checkLog(r *Recovery, files []logFile, snapZxid int64) (int64, error) {
	prev := int64(0)
	for i, f := range files {
		if i > 0 && !follows(f.zxid, prev) {
			err := s.refuseOrWarn(r, &DataLossError{
				Corrupt: &CorruptError{File: f.name, Offset: 0, Reason: fmt.Sprintf("the log file before it ends at zxid %#x", prev)},
				Dir:     s.logDir,
				Problem: "a log file is missing between them",
				AtStake: fmt.Sprintf("txns %#x..%#x are missing", prev+1, f.zxid-1),
				Cut:     "start without them",
			})
			if err != nil {
				return 0, err
			}
		}
		floor := max(prev, f.zxid-1)
		d, last, err := s.assess(f, floor)
		if err != nil {
			return 0, err
		}
		prev = max(prev, last)
		if d == nil {
			continue
		}
		later := files[i+1:]
		if len(later) > 0 && d.after.count == 0 && later[0].zxid <= d.prev+1 {
			// The damage lies after the file's last record and the next file
			// takes over from it: nothing is missing. Set the bytes aside.
			// (A next file that starts a new epoch proves nothing: the
			// damaged bytes may hold the rest of the older epoch.)
			if err := s.quarantine(r, f, d.at, nil, ""); err != nil {
				return 0, err
			}
			continue
		}
		var refusal *DataLossError
		switch why := d.refusal(); {
		case len(later) > 0:
			end, err := s.lastZxid(later)
			if err != nil {
				return 0, err
			}
			refusal = &DataLossError{
				Problem: "a log file that has successors is damaged, and every record in such a file was durable",
				AtStake: fmt.Sprintf("txns %#x..%#x were durable and may have been acknowledged", d.prev+1, end),
				Cut:     fmt.Sprintf("cut %s at offset %d and move the later log files aside, dropping them", f.name, d.at.Offset),
			}
		case why != "":
			refusal = &DataLossError{Problem: why, AtStake: d.stake(),
				Cut: fmt.Sprintf("cut %s at offset %d, dropping them", f.name, d.at.Offset)}
		case d.prev < snapZxid:
			refusal = &DataLossError{
				Problem: fmt.Sprintf("the log's valid part ends at zxid %#x, before the snapshot's %#x", d.prev, snapZxid),
				AtStake: fmt.Sprintf("txns %#x..%#x were durable before the snapshot was taken", d.prev+1, snapZxid),
				Cut:     fmt.Sprintf("cut %s at offset %d, dropping them", f.name, d.at.Offset),
			}
		}
		note := ""
		if refusal != nil {
			refusal.Corrupt, refusal.Dir = d.at, s.logDir
			refusal.Cut += fmt.Sprintf(" (the bytes go to %s)", quarantineName(f.name, d.at.Offset))
			if err := s.refuseOrWarn(r, refusal); err != nil {
				return 0, err
			}
		} else if d.after.count > 0 {
			note = fmt.Sprintf("; they hold txns %#x..%#x, which were never reported durable: a crash lost part of the write that held them", d.after.first, d.after.last)
		}
		return prev, s.quarantine(r, f, d.at, later, note)
	}
	return prev, nil
}

// assess scans f and, if it is damaged, reads the damage (see damage.go)
// twice and wants the same answer both times: a disk that returned a flipped
// bit once must make recovery neither cut durable txns nor refuse.
func (s *Store) assess(f logFile, floor int64) (*damage, int64, error) {
	first, last, err := s.assessOnce(f, floor)
	if first == nil || err != nil {
		return nil, last, err
	}
	again, _, err := s.assessOnce(f, floor)
	if err != nil {
		return nil, 0, err
	}
	if again == nil || *again.at != *first.at || again.refusal() != first.refusal() || again.after != first.after {
		second := "no damage"
		if again != nil {
			second = fmt.Sprintf("damage at offset %d (%s)", again.at.Offset, again.at.Reason)
		}
		return nil, 0, fmt.Errorf("%s: a first read found damage at offset %d (%s), a second %s: the disk returns unstable data; not touching the log",
			f.name, first.at.Offset, first.at.Reason, second)
	}
	return first, last, nil
}

func (s *Store) assessOnce(f logFile, floor int64) (*damage, int64, error) {
	file, err := s.opts.FS.Open(join(s.logDir, f.name))
	if err != nil {
		return nil, 0, fmt.Errorf("open %s: %w", f.name, err)
	}
	defer file.Close()
	size, err := file.Size()
	if err != nil {
		return nil, 0, fmt.Errorf("size of %s: %w", f.name, err)
	}
	bad, last, err := scanRecords(file, size, f.name, floor)
	if bad == nil || err != nil {
		return nil, last, err
	}
	d, err := analyzeDamage(file, size, f.name, bad, max(last, floor))
	return d, last, err
}

// lastZxid is the zxid of the last valid record in files (read to their
// first damage).
func (s *Store) lastZxid(files []logFile) (int64, error) {
	last := int64(0)
	for _, f := range files {
		_, l, err := s.scanFile(f, max(last, f.zxid-1))
		if err != nil {
			return 0, err
		}
		last = max(last, l)
	}
	return last, nil
}

// scanFile reads every record of f; bad is where the valid records end if
// something other than EOF or zero padding follows them.
func (s *Store) scanFile(f logFile, floor int64) (bad *CorruptError, last int64, err error) {
	file, err := s.opts.FS.Open(join(s.logDir, f.name))
	if err != nil {
		return nil, 0, fmt.Errorf("open %s: %w", f.name, err)
	}
	defer file.Close()
	size, err := file.Size()
	if err != nil {
		return nil, 0, fmt.Errorf("size of %s: %w", f.name, err)
	}
	return scanRecords(file, size, f.name, floor)
}

// scanRecords reads every record of the log file r.
func scanRecords(r io.ReaderAt, size int64, name string, floor int64) (bad *CorruptError, last int64, err error) {
	sc, err := newLogScanner(r, size, name, floor)
	if errors.As(err, &bad) {
		return bad, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	for {
		ok, err := sc.Next()
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			break
		}
		last = sc.Zxid
	}
	if sc.Stop == stopBad {
		return sc.corruption(), last, nil
	}
	return nil, last, nil
}

// quarantine moves what follows the valid records of f (and, only under
// AllowDataLoss, the later files) aside, durably, before cutting f. note
// ends the warning about the cut.
func (s *Store) quarantine(r *Recovery, f logFile, bad *CorruptError, later []logFile, note string) error {
	fsys := s.opts.FS
	for _, g := range later {
		q := quarantineName(g.name, 0)
		if err := fsys.Rename(join(s.logDir, g.name), join(s.logDir, q)); err != nil {
			return fmt.Errorf("quarantine %s: %w", g.name, err)
		}
		s.warn(r, "moved log file %s to %s", g.name, q)
	}
	q := quarantineName(f.name, bad.Offset)
	if bad.Offset == 0 && len(later) == 0 {
		empty, err := s.allZero(f.name)
		if err != nil {
			return err
		}
		if empty {
			// Created, never written: nothing to keep.
			if err := fsys.Remove(join(s.logDir, f.name)); err != nil {
				return fmt.Errorf("remove %s: %w", f.name, err)
			}
			s.warn(r, "removed txn log %s, which holds nothing but zeros", f.name)
			return fsys.SyncDir(s.logDir)
		}
	}
	if bad.Offset == 0 {
		if err := fsys.Rename(join(s.logDir, f.name), join(s.logDir, q)); err != nil {
			return fmt.Errorf("quarantine %s: %w", f.name, err)
		}
		s.warn(r, "txn log %s has no valid header (%s); moved it to %s%s", f.name, bad.Reason, q, note)
		return fsys.SyncDir(s.logDir)
	}
	file, err := fsys.Open(join(s.logDir, f.name))
	if err != nil {
		return fmt.Errorf("open %s: %w", f.name, err)
	}
	defer file.Close()
	size, err := file.Size()
	if err != nil {
		return err
	}
	tail := make([]byte, size-bad.Offset)
	if _, err := file.ReadAt(tail, bad.Offset); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read %s at offset %d: %w", f.name, bad.Offset, err)
	}
	tail = trimZeros(tail)
	if err := writeFileAtomic(fsys, s.logDir, q, tail); err != nil {
		return fmt.Errorf("quarantine the tail of %s: %w", f.name, err)
	}
	if err := file.Truncate(bad.Offset); err != nil {
		return fmt.Errorf("cut %s at offset %d: %w", f.name, bad.Offset, err)
	}
	if err := file.Sync(); err != nil {
		return fmt.Errorf("%w: fsync %s: %w", ErrFailed, f.name, err)
	}
	s.warn(r, "txn log %s ends at offset %d (%s); moved the %d bytes after it to %s%s", f.name, bad.Offset, bad.Reason, len(tail), q, note)
	return nil
}

// allZero reports whether a file holds no byte but zeros.
func (s *Store) allZero(name string) (bool, error) {
	data, err := vfs.ReadFull(s.opts.FS, join(s.logDir, name))
	if err != nil {
		return false, fmt.Errorf("read %s: %w", name, err)
	}
	return firstNonZero(data) < 0, nil
}

func trimZeros(b []byte) []byte {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return b[:n]
}
