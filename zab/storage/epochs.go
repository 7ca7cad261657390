package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/zabd/zabd/zab/storage/vfs"
)

// The epoch files hold the epoch as decimal text with no newline, as
// ZooKeeper's QuorumPeer writes them.
const (
	acceptedEpochFile = "acceptedEpoch"
	currentEpochFile  = "currentEpoch"
)

// AcceptedEpoch reads version-2/acceptedEpoch; ok is false if it is absent.
func (s *Store) AcceptedEpoch() (epoch int64, ok bool, err error) {
	return readEpoch(s.opts.FS, s.dir, acceptedEpochFile)
}

// CurrentEpoch reads version-2/currentEpoch; ok is false if it is absent.
func (s *Store) CurrentEpoch() (epoch int64, ok bool, err error) {
	return readEpoch(s.opts.FS, s.dir, currentEpochFile)
}

// SetAcceptedEpoch durably replaces acceptedEpoch. An error wraps ErrFailed
// and is fatal: the peer must not act on an epoch it may not have persisted.
func (s *Store) SetAcceptedEpoch(epoch int64) error {
	return writeEpoch(s.opts.FS, s.dir, acceptedEpochFile, epoch)
}

// SetCurrentEpoch durably replaces currentEpoch; errors as SetAcceptedEpoch.
// An updatingEpoch mark that the new epoch covers is removed after it.
func (s *Store) SetCurrentEpoch(epoch int64) error {
	if err := writeEpoch(s.opts.FS, s.dir, currentEpochFile, epoch); err != nil {
		return err
	}
	s.current = epoch
	if s.marked != 0 && epoch >= s.marked {
		return s.removeUpdatingMark()
	}
	return nil
}

// CoverEpoch keeps an ensemble member's files startable across a crash
// before a txn or snapshot of zxid is written. A learner logs what its
// leader sends during synchronization, which may be of the leader's
// epoch, before NEWLEADER makes that epoch current; a crash in between
// would leave a log newer than currentEpoch, which ZooKeeper (and
// MemberEpochs) refuse. So, as ZooKeeper's learner does around NEWLEADER,
// the updatingEpoch mark is written durably first, and SetCurrentEpoch
// removes it once currentEpoch covers the epoch. It does nothing for a
// standalone server (MemberEpochs was never called) or an epoch that is
// not newer.
func (s *Store) CoverEpoch(zxid int64) error {
	epoch := zxid >> 32
	if !s.member || epoch <= s.current || epoch <= s.marked {
		return nil
	}
	if err := writeFileAtomic(s.opts.FS, s.dir, updatingEpochFile, nil); err != nil {
		return fmt.Errorf("%w: %w", ErrFailed, err)
	}
	s.marked = epoch
	return nil
}

// removeUpdatingMark removes the updatingEpoch mark durably.
func (s *Store) removeUpdatingMark() error {
	if err := removeDurably(s.opts.FS, s.dir, updatingEpochFile); err != nil {
		return err
	}
	s.marked = 0
	return nil
}

// removeDurably removes dir/name, if it exists, and fsyncs dir; an error
// wraps ErrFailed.
func removeDurably(fsys vfs.FS, dir, name string) error {
	if err := fsys.Remove(join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: remove %s: %w", ErrFailed, name, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("%w: remove %s: %w", ErrFailed, name, err)
	}
	return nil
}

func readEpoch(fsys vfs.FS, dir, name string) (int64, bool, error) {
	data, err := vfs.ReadFull(fsys, join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read %s: %w", name, err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	v, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil {
		return 0, false, &CorruptError{File: name, Offset: 0, Reason: fmt.Sprintf("%q is not an epoch", line)}
	}
	return v, true, nil
}

// writeEpoch writes name.tmp, fsyncs it, renames it over name and fsyncs the
// directory (ZooKeeper's AtomicFileWritingIdiom uses the same temp name).
func writeEpoch(fsys vfs.FS, dir, name string, epoch int64) error {
	if err := writeFileAtomic(fsys, dir, name, []byte(strconv.FormatInt(epoch, 10))); err != nil {
		return fmt.Errorf("%w: %w", ErrFailed, err)
	}
	return nil
}

func writeFileAtomic(fsys vfs.FS, dir, name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := fsys.Create(join(dir, tmp))
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(join(dir, tmp), join(dir, name))
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// updatingEpochFile marks, in ZooKeeper 3.8, a learner between logging a
// new epoch's sync and writing currentEpoch (Learner.syncWithLeader); a
// member that finds it at start takes the log's newer epoch as current.
const updatingEpochFile = "updatingEpoch"

// MemberEpochs applies the start-up rules of an ensemble member's epoch
// files (ZooKeeper 3.8's QuorumPeer.loadDataBase) against lastZxid, the
// last zxid recovery found, and makes the Store keep them from then on
// (CoverEpoch):
//   - an absent currentEpoch is lastZxid's epoch, and is written so;
//   - a currentEpoch older than lastZxid's epoch is taken as that epoch when
//     the updatingEpoch mark says a synchronization was interrupted, and
//     otherwise refuses the start: the files disagree with the log, and
//     guessing could let this member vote with an epoch it never accepted;
//   - an absent acceptedEpoch is lastZxid's epoch (written), and one
//     below currentEpoch refuses the start.
//
// Every refusal names the file and both values.
func (s *Store) MemberEpochs(lastZxid int64) (accepted, current int64, err error) {
	logged := lastZxid >> 32
	current, ok, err := s.CurrentEpoch()
	if err != nil {
		return 0, 0, err
	}
	updating, err := s.updatingEpoch()
	if err != nil {
		return 0, 0, err
	}
	switch {
	case !ok || logged > current && updating:
		current = max(logged, current)
		if err := s.SetCurrentEpoch(current); err != nil {
			return 0, 0, err
		}
		if updating {
			if err := s.removeUpdatingMark(); err != nil {
				return 0, 0, err
			}
		}
	case logged > current:
		return 0, 0, &EpochError{File: join(s.dir, currentEpochFile), Epoch: current, LastZxid: lastZxid,
			Reason: "is older than the epoch of the last logged txn"}
	case updating:
		// The log is not newer than currentEpoch: the mark is stale.
		if err := s.removeUpdatingMark(); err != nil {
			return 0, 0, err
		}
	}
	accepted, ok, err = s.AcceptedEpoch()
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		accepted = current // ZooKeeper takes the log's epoch, which current now covers
		if err := s.SetAcceptedEpoch(accepted); err != nil {
			return 0, 0, err
		}
	}
	if accepted < current {
		return 0, 0, &EpochError{File: join(s.dir, acceptedEpochFile), Epoch: accepted, LastZxid: lastZxid,
			Reason: fmt.Sprintf("is older than currentEpoch %d", current)}
	}
	s.member, s.current = true, current
	return accepted, current, nil
}

// updatingEpoch reports whether ZooKeeper's updatingEpoch mark exists.
func (s *Store) updatingEpoch() (bool, error) {
	f, err := s.opts.FS.Open(join(s.dir, updatingEpochFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("open %s: %w", updatingEpochFile, err)
	}
	return true, f.Close()
}

// EpochError is an epoch file that disagrees with the log or the other
// epoch file: the member refuses to start rather than guess.
type EpochError struct {
	File     string
	Epoch    int64
	LastZxid int64
	Reason   string
}

func (e *EpochError) Error() string {
	return fmt.Sprintf("%s: epoch %d %s (the log's last txn is 0x%x, of epoch %d); restore this member's "+
		"data directory from a backup, or remove it so that the member rejoins empty and is synchronized by the leader",
		e.File, e.Epoch, e.Reason, e.LastZxid, e.LastZxid>>32)
}
