package server

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zabd/zabd/zab/storage"
)

// LockFile is the file in the data directory (and in the log directory,
// when that is another one) that the running zabd holds an exclusive flock
// on, with its pid inside: a second zabd on the same directory stops at
// start, naming that pid. The kernel drops the lock when the process exits,
// however it exits, so a crash leaves no stale lock behind.
const LockFile = "zabd.lock"

// DefaultLockWait is how long a starting zabd waits for the holder of a
// data directory's lock to let go before it refuses to start.
//
// The kernel drops a flock only once the holder is gone: a process killed
// with SIGKILL still holds it while the kernel tears it down (its memory,
// then its files), and a supervisor that restarts zabd as soon as it has
// sent the signal, without waiting to reap it, starts the new one in that
// window. Every holder is waited for, not only one that looks to be
// exiting, because from outside a dying holder cannot be told reliably
// from a live one: the pid in the file may not be written yet, or be stale
// or reused; a killed process shows state R or D while its address space
// is freed, and its thread-group leader shows Z while other threads still
// hold the files. Waiting costs nothing when the holder is gone within the
// bound; when it is a live zabd (two servers configured on one directory,
// an operator's mistake) the refusal comes the bound later, still in
// seconds, and says how long it waited.
const DefaultLockWait = 5 * time.Second

// lockPoll is how often a held lock is tried again while waiting.
const lockPoll = 20 * time.Millisecond

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

// lockDataDirs takes LockFile in each directory. A lock another process
// holds is tried again until wait has passed (one deadline for all the
// directories; see DefaultLockWait), with one log line naming the file and
// its holder; after that it says which process holds it.
func lockDataDirs(dirs []string, wait time.Duration, log *slog.Logger) (*dirLock, error) {
	l := &dirLock{}
	deadline := time.Now().Add(wait)
	for _, dir := range dirs {
		path := filepath.Join(dir, LockFile)
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			l.release()
			return nil, fmt.Errorf("lock data directory %s: %w", dir, err)
		}
		if err := flockWaiting(f, path, deadline, wait, log); err != nil {
			f.Close()
			l.release()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("data directory %s is in use by another zabd (%s holds %s; waited %s for it to exit)",
					dir, lockHolder(path), path, wait)
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

// flockWaiting takes f's exclusive flock, trying again every lockPoll while
// another process holds it and deadline has not passed; it returns
// EWOULDBLOCK if the lock is still held then.
func flockWaiting(f *os.File, path string, deadline time.Time, wait time.Duration, log *slog.Logger) error {
	logged := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || !time.Now().Before(deadline) {
			return err
		}
		if !logged {
			log.Warn("data directory lock is held by another process; waiting for it to exit",
				"lock", path, "holder", lockHolder(path), "wait", wait.String())
			logged = true
		}
		time.Sleep(lockPoll)
	}
}

// lockHolder names the process that holds the lock at path, from the pid
// its holder wrote into it: "pid N", or "another process" before the
// holder has written it.
func lockHolder(path string) string {
	b, err := os.ReadFile(path)
	if pid := strings.TrimSpace(string(b)); err == nil && pid != "" {
		return "pid " + pid
	}
	return "another process"
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
