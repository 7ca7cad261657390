package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
)

// OS is the real file system. It fsyncs exactly what storage asks for: a
// file's data (fdatasync where the platform has it, since the txn log writes
// into preallocated space and needs no metadata flush) and a directory after
// entries in it changed.
type OS struct{}

var _ FS = OS{}

func (OS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

func (OS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (OS) Open(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (OS) Rename(oldName, newName string) error { return os.Rename(oldName, newName) }

func (OS) Remove(name string) error { return os.Remove(name) }

func (OS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	slices.Sort(names)
	return names, nil
}

func (OS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return d.Close()
}

type osFile struct{ f *os.File }

func (o osFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := o.f.ReadAt(p, off)
	if errors.Is(err, io.EOF) && n == len(p) {
		err = nil
	}
	return n, err
}

func (o osFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := o.f.WriteAt(p, off)
	if errors.Is(err, syscall.ENOSPC) {
		err = fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return n, err
}

func (o osFile) Truncate(size int64) error { return o.f.Truncate(size) }

func (o osFile) Sync() error { return datasync(o.f) }

func (o osFile) Size() (int64, error) {
	st, err := o.f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (o osFile) Close() error { return o.f.Close() }
