package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/zabd/zabd/zab/storage/vfs"
)

// Purge keeps the newest retain snapshots that look complete (they end with
// a checksum seal, ZooKeeper's own test) and the log files that recovery
// from the oldest of them needs, and removes older snapshots and log files,
// as ZooKeeper's autopurge does. Quarantine files are left for the operator.
func (s *Store) Purge(retain int) error {
	if retain < 1 {
		return fmt.Errorf("purge: retain %d snapshots; need at least 1", retain)
	}
	fsys := s.opts.FS
	names, err := fsys.List(s.dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", s.dir, err)
	}
	snaps := listSnapshots(names)
	var kept []snapFile
	for i := len(snaps) - 1; i >= 0 && len(kept) < retain; i-- {
		if !snaps[i].compressed && s.sealed(snaps[i].name) {
			kept = append(kept, snaps[i])
		}
	}
	if len(kept) == 0 {
		return nil
	}
	oldest := kept[len(kept)-1].zxid
	var snapsGone, logsGone []string
	for _, f := range snaps {
		if f.zxid < oldest {
			snapsGone = append(snapsGone, f.name)
		}
	}
	logs, err := listLogs(fsys, s.logDir)
	if err != nil {
		return err
	}
	if needed := filesFrom(logs, oldest); len(needed) > 0 {
		for _, f := range logs {
			if f.zxid < needed[0].zxid {
				logsGone = append(logsGone, f.name)
			}
		}
	}
	if err := removeFiles(fsys, s.dir, snapsGone); err != nil {
		return err
	}
	return removeFiles(fsys, s.logDir, logsGone)
}

// removeFiles removes names from dir and then makes the removal durable.
func removeFiles(fsys vfs.FS, dir string, names []string) error {
	for _, n := range names {
		if err := fsys.Remove(join(dir, n)); err != nil {
			return fmt.Errorf("purge %s: %w", join(dir, n), err)
		}
	}
	if len(names) > 0 {
		return fsys.SyncDir(dir)
	}
	return nil
}

// sealed reports whether a snapshot file ends as a complete one does: the
// int 1 and "/" of the checksum seal's string.
func (s *Store) sealed(name string) bool {
	f, err := s.opts.FS.Open(join(s.dir, name))
	if err != nil {
		return false
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil || size < fileHeaderLen+4+13 {
		return false
	}
	tail := make([]byte, 5)
	if _, err := f.ReadAt(tail, size-5); err != nil {
		return false
	}
	return binary.BigEndian.Uint32(tail) == 1 && tail[4] == '/'
}
