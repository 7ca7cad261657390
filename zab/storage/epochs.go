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
func (s *Store) SetCurrentEpoch(epoch int64) error {
	return writeEpoch(s.opts.FS, s.dir, currentEpochFile, epoch)
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
