package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/zabd/zabd/zab/storage"
)

// LockFile is the file in the data directory (and in the log directory,
// when that is another one) that the running zabd holds an exclusive flock
// on, with its pid inside: a second zabd on the same directory stops at
// start, naming that pid. The kernel drops the lock when the process exits,
// however it exits, so a crash leaves no stale lock behind.
const LockFile = "zabd.lock"

// dataDirs lists dataDir and, if it is another directory, dataLogDir.
func dataDirs(dataDir, dataLogDir string) []string {
	if filepath.Clean(dataLogDir) == filepath.Clean(dataDir) {
		return []string{dataDir}
	}
	return []string{dataDir, dataLogDir}
}

// checkDataDirs creates each directory and its version-2 if missing (as
// ZooKeeper does) and refuses, in one line, one that is not a directory or
// that zabd cannot create files in: better at start than at the first write
// after clients were told the server is up.
func checkDataDirs(dirs []string) error {
	for _, dir := range dirs {
		for _, d := range []string{dir, filepath.Join(dir, storage.VersionDir)} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("data directory %s: %w", d, err)
			}
			probe, err := os.CreateTemp(d, ".zabd-write-check-*")
			if err != nil {
				return fmt.Errorf("data directory %s is not writable: %w", d, unwrapPath(err))
			}
			probe.Close()
			if err := os.Remove(probe.Name()); err != nil {
				return fmt.Errorf("data directory %s: %w", d, err)
			}
		}
	}
	return nil
}

// unwrapPath drops the *PathError's own path from err when the message
// already names the directory, keeping "permission denied" and the like.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// dirLock holds the lock files of the data directories.
type dirLock struct{ files []*os.File }

// lockDataDirs takes LockFile in each directory, or says which process
// holds it.
func lockDataDirs(dirs []string) (*dirLock, error) {
	l := &dirLock{}
	for _, dir := range dirs {
		path := filepath.Join(dir, LockFile)
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			l.release()
			return nil, fmt.Errorf("lock data directory %s: %w", dir, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder := "another process"
			if pid, rerr := os.ReadFile(path); rerr == nil && len(strings.TrimSpace(string(pid))) > 0 {
				holder = "pid " + strings.TrimSpace(string(pid))
			}
			f.Close()
			l.release()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("data directory %s is in use by another zabd (%s holds %s)", dir, holder, path)
			}
			return nil, fmt.Errorf("lock data directory %s: %w", dir, err)
		}
		l.files = append(l.files, f)
		if err := writePid(f); err != nil {
			l.release()
			return nil, fmt.Errorf("lock data directory %s: write %s: %w", dir, path, err)
		}
	}
	return l, nil
}

func writePid(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(fmt.Sprintf("%d\n", os.Getpid())), 0)
	return err
}

// release drops the locks (closing the files is what releases a flock).
func (l *dirLock) release() {
	if l == nil {
		return
	}
	for _, f := range l.files {
		f.Close()
	}
	l.files = nil
}
