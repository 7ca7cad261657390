package vfs

import "errors"

// FS is a file system. Implementations need not be safe for concurrent use
// unless they say so; storage uses one FS from one goroutine at a time per
// file, except that OS is safe for concurrent use.
type FS interface {
	// MkdirAll creates dir and its parents if missing.
	MkdirAll(dir string) error
	// Create creates name, or truncates it if it exists, and opens it for
	// reading and writing. The new directory entry is durable only after
	// SyncDir of its directory.
	Create(name string) (File, error)
	// Open opens an existing file for reading and writing.
	Open(name string) (File, error)
	// Rename atomically replaces newName with oldName. Durable after SyncDir.
	Rename(oldName, newName string) error
	// Remove deletes name. Durable after SyncDir.
	Remove(name string) error
	// List returns the names of the entries in dir, sorted.
	List(dir string) ([]string, error)
	// SyncDir makes the entries of dir (creates, renames, removes) durable.
	SyncDir(dir string) error
}

// File is an open file. Writes are positional: the txn log writes into a
// preallocated region, so there is no implicit append offset.
type File interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	// Truncate sets the size; growing the file fills it with zeros.
	Truncate(size int64) error
	// Sync makes the file's data and size durable (not its directory entry).
	Sync() error
	Size() (int64, error)
	Close() error
}

// ErrNoSpace is returned (wrapped) by writes that find the disk full.
var ErrNoSpace = errors.New("no space left on device")

// ReadFull reads the whole of name.
func ReadFull(fs FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if err != nil && n < len(buf) {
		return nil, err
	}
	return buf, nil
}
