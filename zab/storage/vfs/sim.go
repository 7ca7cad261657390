package vfs

// Sim is an in-memory disk for the simulator. Everything it decides comes
// from the *rand.Rand it is given, so one seed replays the same faults.
//
// # Fault model
//
// Data is tracked per sector (SimConfig.SectorSize, 512 B or 4 KiB). Each
// file has the bytes reads see and the bytes that are durable; File.Sync
// makes the file's current bytes and size durable.
//
//   - Crash: every sector that differs between current and durable contents
//     is, independently, kept (current bytes) with probability KeepUnsynced
//     or lost (durable bytes, zeros where the durable file was shorter); with
//     probability TornSector it is torn instead: a random prefix of the sector
//     comes from the current bytes and the rest from the durable ones. So a
//     preallocated log can keep a later unsynced sector and lose an earlier
//     one. An unsynced size change survives with probability KeepUnsynced.
//   - Directory entries: Create (of a new name), Rename and Remove change the
//     namespace at once for readers but are journaled; SyncDir commits the
//     whole journal, as a journaling file system commits all metadata. A
//     crash keeps a random prefix of the uncommitted operations (each is
//     atomic, as rename is on journaling file systems). A file whose name
//     was lost in a crash is gone with its data. MkdirAll is durable at once.
//   - Reads: each ReadAt flips one random bit of what it returns with
//     probability ReadFlip (the disk itself is not changed).
//   - Writes: each WriteAt, or Truncate that grows a file, fails with
//     ErrNoSpace and changes nothing with probability WriteNoSpace.
//   - Sync and SyncDir fail with probability SyncFail and then make nothing
//     durable; a successful one is slow with probability SyncSlow, which the
//     simulator reads as data (TakeSyncDelay) and schedules: no real sleep.
//   - Corruption of durable data is not random: the simulator asks for it
//     with FlipBit, which changes the current and the durable bytes alike.
//
// After Crash every File opened before it returns ErrCrashed. CrashWith
// crashes with every one of those choices made by the caller instead of the
// random source, and Clone copies a disk: together they let a test walk every
// crash point of a write.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand"
	"path"
	"slices"
	"time"
)

// SimConfig sets the sector size and the fault probabilities (each in [0,1]).
type SimConfig struct {
	SectorSize    int // 512 or 4096; 0 means 4096
	KeepUnsynced  float64
	TornSector    float64
	ReadFlip      float64
	WriteNoSpace  float64
	SyncFail      float64
	SyncSlow      float64
	SlowSyncDelay time.Duration
}

// ErrCrashed is returned by a File opened before the last Sim.Crash.
var ErrCrashed = errors.New("vfs: file handle from before a crash")

// ErrSimFault marks an injected fsync failure.
var ErrSimFault = errors.New("vfs: injected I/O error")

type simInode struct {
	data    []byte
	durable []byte
	// What Sync must copy: below keptLen, data differs from durable only
	// within [dirtyLo, dirtyHi); from keptLen on, anything may differ.
	// keptLen is the shortest data has been since the last Sync (a
	// truncation and a regrowth leave zeros where durable bytes were). A
	// log's fsync then copies what was appended, not the whole
	// preallocated file.
	dirtyLo, dirtyHi int
	keptLen          int
}

// clean reports whether data is known to equal durable: synced since its
// last change.
func (in *simInode) clean() bool {
	return in.sameExceptDirty() && in.dirtyLo == in.dirtyHi
}

// sameExceptDirty reports whether data and durable have one size and can
// differ only within the dirty range.
func (in *simInode) sameExceptDirty() bool {
	return len(in.data) == len(in.durable) && in.keptLen >= len(in.durable)
}

// resize makes b n bytes long, zeros past its old end, reusing its storage
// and at least doubling it when it must grow (files grow by preallocation
// steps; growing by a quarter each time would copy them over and over).
func resize(b []byte, n int) []byte {
	if n <= len(b) {
		return b[:n]
	}
	if n > cap(b) {
		grown := make([]byte, len(b), max(n, 2*cap(b)))
		copy(grown, b)
		b = grown
	}
	old := len(b)
	b = b[:n]
	clear(b[old:])
	return b
}

// wrote records a write of data[lo:hi] that kept the size.
func (in *simInode) wrote(lo, hi int) {
	if in.dirtyLo == in.dirtyHi {
		in.dirtyLo, in.dirtyHi = lo, hi
		return
	}
	in.dirtyLo, in.dirtyHi = min(in.dirtyLo, lo), max(in.dirtyHi, hi)
}

// synced makes data durable: the dirty range below keptLen, and everything
// from keptLen on.
func (in *simInode) synced() {
	kept := min(in.keptLen, len(in.data), len(in.durable))
	in.durable = resize(in.durable, len(in.data))
	lo, hi := min(in.dirtyLo, kept), min(in.dirtyHi, kept)
	copy(in.durable[lo:hi], in.data[lo:hi])
	copy(in.durable[kept:], in.data[kept:])
	in.dirtyLo, in.dirtyHi, in.keptLen = 0, 0, len(in.data)
}

type dirOpKind int

const (
	opCreate dirOpKind = iota
	opRename
	opRemove
)

type dirOp struct {
	kind dirOpKind
	name string // created, removed, or rename target
	from string // rename source
	ino  int
}

// Sim is the simulated disk. It is not safe for concurrent use.
type Sim struct {
	cfg          SimConfig
	rng          *rand.Rand
	inodes       map[int]*simInode
	nextIno      int
	names        map[string]int // namespace as readers see it
	durableNames map[string]int // namespace after the last SyncDir
	journal      []dirOp        // directory operations since the last SyncDir
	dirs         map[string]bool
	generation   int
	syncDelay    time.Duration
}

var _ FS = (*Sim)(nil)

// NewSim returns an empty simulated disk driven by rng.
func NewSim(cfg SimConfig, rng *rand.Rand) *Sim {
	if cfg.SectorSize == 0 {
		cfg.SectorSize = 4096
	}
	return &Sim{
		cfg: cfg, rng: rng,
		inodes: map[int]*simInode{}, names: map[string]int{}, durableNames: map[string]int{},
		dirs: map[string]bool{".": true, "/": true},
	}
}

// SetConfig changes the fault probabilities, e.g. to heal the disk.
func (s *Sim) SetConfig(cfg SimConfig) {
	if cfg.SectorSize == 0 {
		cfg.SectorSize = s.cfg.SectorSize
	}
	s.cfg = cfg
}

// TakeSyncDelay returns the completion delay of the slow fsyncs since the
// last call (zero if none was slow) and resets it.
func (s *Sim) TakeSyncDelay() time.Duration {
	d := s.syncDelay
	s.syncDelay = 0
	return d
}

func (s *Sim) chance(p float64) bool { return p > 0 && s.rng.Float64() < p }

func (s *Sim) MkdirAll(dir string) error {
	for d := path.Clean(dir); !s.dirs[d]; d = path.Dir(d) {
		s.dirs[d] = true
	}
	return nil
}

func (s *Sim) checkDir(name string) error {
	if !s.dirs[path.Dir(path.Clean(name))] {
		return &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return nil
}

func (s *Sim) Create(name string) (File, error) {
	name = path.Clean(name)
	if err := s.checkDir(name); err != nil {
		return nil, err
	}
	if ino, ok := s.names[name]; ok {
		s.inodes[ino].data = s.inodes[ino].data[:0]
		s.inodes[ino].keptLen = 0
		return s.handle(ino), nil
	}
	s.nextIno++
	ino := s.nextIno
	s.inodes[ino] = &simInode{}
	s.names[name] = ino
	s.journal = append(s.journal, dirOp{kind: opCreate, name: name, ino: ino})
	return s.handle(ino), nil
}

func (s *Sim) Open(name string) (File, error) {
	ino, ok := s.names[path.Clean(name)]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return s.handle(ino), nil
}

func (s *Sim) handle(ino int) *simFile {
	return &simFile{sim: s, ino: ino, generation: s.generation}
}

func (s *Sim) Rename(oldName, newName string) error {
	oldName, newName = path.Clean(oldName), path.Clean(newName)
	ino, ok := s.names[oldName]
	if !ok {
		return &fs.PathError{Op: "rename", Path: oldName, Err: fs.ErrNotExist}
	}
	if err := s.checkDir(newName); err != nil {
		return err
	}
	delete(s.names, oldName)
	s.names[newName] = ino
	s.journal = append(s.journal, dirOp{kind: opRename, from: oldName, name: newName, ino: ino})
	return nil
}

func (s *Sim) Remove(name string) error {
	name = path.Clean(name)
	if _, ok := s.names[name]; !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	delete(s.names, name)
	s.journal = append(s.journal, dirOp{kind: opRemove, name: name})
	return nil
}

func (s *Sim) List(dir string) ([]string, error) {
	dir = path.Clean(dir)
	if !s.dirs[dir] {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: fs.ErrNotExist}
	}
	var out []string
	for name := range s.names {
		if path.Dir(name) == dir {
			out = append(out, path.Base(name))
		}
	}
	for d := range s.dirs {
		if d != dir && path.Dir(d) == dir {
			out = append(out, path.Base(d))
		}
	}
	slices.Sort(out)
	return out, nil
}

func (s *Sim) SyncDir(dir string) error {
	if !s.dirs[path.Clean(dir)] {
		return &fs.PathError{Op: "fsync", Path: dir, Err: fs.ErrNotExist}
	}
	if err := s.syncFault("fsync directory " + dir); err != nil {
		return err
	}
	for _, op := range s.journal {
		applyDirOp(s.durableNames, op)
	}
	s.journal = s.journal[:0]
	return nil
}

func (s *Sim) syncFault(what string) error {
	if s.chance(s.cfg.SyncFail) {
		return fmt.Errorf("%s: %w", what, ErrSimFault)
	}
	if s.chance(s.cfg.SyncSlow) {
		s.syncDelay += s.cfg.SlowSyncDelay
	}
	return nil
}

func applyDirOp(names map[string]int, op dirOp) {
	switch op.kind {
	case opCreate:
		names[op.name] = op.ino
	case opRename:
		delete(names, op.from)
		names[op.name] = op.ino
	case opRemove:
		delete(names, op.name)
	}
}

// Crash loses what was not durable, as the fault model says, and
// invalidates every open File.
func (s *Sim) Crash() {
	s.CrashWith(CrashFate{
		DirOps: func(pending int) int { return s.rng.Intn(pending + 1) },
		Size:   func(string) bool { return s.chance(s.cfg.KeepUnsynced) },
		Sector: func(_ string, _ int64, n int) int {
			switch {
			case s.chance(s.cfg.TornSector):
				return s.rng.Intn(n)
			case s.chance(s.cfg.KeepUnsynced):
				return n
			}
			return 0
		},
	})
}

// CrashFate decides, instead of the random source, what a crash keeps: the
// tests that walk every crash point of a write use it.
type CrashFate struct {
	// DirOps is how many of the pending directory operations (creates,
	// renames, removes since the last SyncDir) survive, oldest first.
	DirOps func(pending int) int
	// Size reports whether a file's unsynced size change survives.
	Size func(name string) bool
	// Sector is how many leading bytes of the n-byte sector at offset off
	// of file name come from its unsynced contents; the rest are what was
	// durable (zeros past the durable end). 0 loses the sector, n keeps it,
	// anything between tears it there. It is asked only for sectors whose
	// unsynced contents differ from the durable ones, in file order.
	Sector func(name string, off int64, n int) int
}

// CrashWith crashes as Crash does, with what survives decided by fate.
func (s *Sim) CrashWith(fate CrashFate) {
	s.generation++
	keep := fate.DirOps(len(s.journal))
	for _, op := range s.journal[:keep] {
		applyDirOp(s.durableNames, op)
	}
	s.journal = nil
	s.names = make(map[string]int, len(s.durableNames))
	live := map[int]bool{}
	for _, name := range sortedKeys(s.durableNames) {
		ino := s.durableNames[name]
		s.names[name] = ino
		if !live[ino] {
			live[ino] = true
			s.crashInode(name, s.inodes[ino], fate)
		}
	}
	for _, ino := range sortedKeys(s.inodes) {
		if !live[ino] {
			delete(s.inodes, ino)
		}
	}
}

func sortedKeys[K int | string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// crashInode rebuilds a file's bytes from its current and durable contents,
// sector by sector, as fate decides. Only sectors that differ are decided;
// when the size has not changed since the last Sync, only the dirty range
// can differ, and the sectors outside it are not even compared.
func (s *Sim) crashInode(name string, in *simInode, fate CrashFate) {
	if in.clean() {
		return // synced since its last write: nothing to lose, nothing to decide
	}
	size := len(in.durable)
	if len(in.data) != size && fate.Size(name) {
		size = len(in.data)
	}
	sector := s.cfg.SectorSize
	first, last := 0, size
	if in.sameExceptDirty() {
		first, last = in.dirtyLo/sector*sector, min(in.dirtyHi, size)
	}
	// The survivor is built in durable's storage (zeros past its old end),
	// sector by sector: a sector is compared before it is changed, and
	// each change stays within its sector.
	out := resize(in.durable, size)
	for start := first; start < last; start += sector {
		end := min(start+sector, size)
		if paddedEqual(in.data, out, start, end) {
			continue
		}
		cut := min(max(fate.Sector(name, int64(start), end-start), 0), end-start)
		copy(out[start:start+cut], window(in.data, start, start+cut))
		clear(out[start+min(cut, max(len(in.data)-start, 0)) : start+cut]) // current bytes past its end are zeros
	}
	in.durable = out
	if cap(in.data) >= size {
		in.data = in.data[:size]
		copy(in.data, out)
	} else {
		in.data = slices.Clone(out)
	}
	in.dirtyLo, in.dirtyHi, in.keptLen = 0, 0, size
}

// window is b[start:end] clipped to b's length (shorter, or empty, where b
// ends first).
func window(b []byte, start, end int) []byte {
	return b[min(start, len(b)):min(end, len(b))]
}

// paddedEqual reports whether a[start:end] and b[start:end] are equal when
// each is read as zero-padded past its end.
func paddedEqual(a, b []byte, start, end int) bool {
	wa, wb := window(a, start, end), window(b, start, end)
	common := min(len(wa), len(wb))
	return bytes.Equal(wa[:common], wb[:common]) && allZero(wa[common:]) && allZero(wb[common:])
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Clone returns an independent copy of the disk, its contents, pending
// directory operations and fault settings, drawing its faults from rng.
// Files open on s are not open on the copy.
func (s *Sim) Clone(rng *rand.Rand) *Sim {
	c := NewSim(s.cfg, rng)
	c.nextIno, c.generation, c.syncDelay = s.nextIno, s.generation+1, s.syncDelay
	for ino, in := range s.inodes {
		c.inodes[ino] = &simInode{data: slices.Clone(in.data), durable: slices.Clone(in.durable),
			dirtyLo: in.dirtyLo, dirtyHi: in.dirtyHi, keptLen: in.keptLen}
	}
	maps.Copy(c.names, s.names)
	maps.Copy(c.durableNames, s.durableNames)
	maps.Copy(c.dirs, s.dirs)
	c.journal = slices.Clone(s.journal)
	return c
}

// FlipBit corrupts durable data: it flips one bit of name at off in both the
// current and the durable contents.
func (s *Sim) FlipBit(name string, off int64, bit uint) error {
	ino, ok := s.names[path.Clean(name)]
	if !ok {
		return &fs.PathError{Op: "flip", Path: name, Err: fs.ErrNotExist}
	}
	in := s.inodes[ino]
	if off < 0 || off >= int64(len(in.data)) {
		return fmt.Errorf("flip %s: offset %d outside the file's %d bytes", name, off, len(in.data))
	}
	in.data[off] ^= 1 << (bit % 8)
	if off < int64(len(in.durable)) {
		in.durable[off] ^= 1 << (bit % 8)
	}
	return nil
}

type simFile struct {
	sim        *Sim
	ino        int
	generation int
	closed     bool
}

func (f *simFile) inode() (*simInode, error) {
	switch {
	case f.closed:
		return nil, fs.ErrClosed
	case f.generation != f.sim.generation:
		return nil, ErrCrashed
	}
	return f.sim.inodes[f.ino], nil
}

func (f *simFile) ReadAt(p []byte, off int64) (int, error) {
	in, err := f.inode()
	if err != nil {
		return 0, err
	}
	if off >= int64(len(in.data)) {
		return 0, io.EOF
	}
	n := copy(p, in.data[off:])
	if n > 0 && f.sim.chance(f.sim.cfg.ReadFlip) {
		p[f.sim.rng.Intn(n)] ^= 1 << f.sim.rng.Intn(8)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *simFile) WriteAt(p []byte, off int64) (int, error) {
	in, err := f.inode()
	if err != nil {
		return 0, err
	}
	if f.sim.chance(f.sim.cfg.WriteNoSpace) {
		return 0, fmt.Errorf("write: %w", ErrNoSpace)
	}
	if end := off + int64(len(p)); end > int64(len(in.data)) {
		in.data = resize(in.data, int(end))
	}
	copy(in.data[off:], p)
	in.wrote(int(off), int(off)+len(p))
	return len(p), nil
}

func (f *simFile) Truncate(size int64) error {
	in, err := f.inode()
	if err != nil {
		return err
	}
	if size > int64(len(in.data)) {
		if f.sim.chance(f.sim.cfg.WriteNoSpace) {
			return fmt.Errorf("truncate: %w", ErrNoSpace)
		}
		in.data = resize(in.data, int(size))
		return nil
	}
	if size < int64(len(in.data)) {
		in.data = in.data[:size]
		in.keptLen = min(in.keptLen, int(size))
	}
	return nil
}

func (f *simFile) Sync() error {
	in, err := f.inode()
	if err != nil {
		return err
	}
	if err := f.sim.syncFault("fsync"); err != nil {
		return err
	}
	in.synced()
	return nil
}

func (f *simFile) Size() (int64, error) {
	in, err := f.inode()
	if err != nil {
		return 0, err
	}
	return int64(len(in.data)), nil
}

func (f *simFile) Close() error {
	if f.closed {
		return fs.ErrClosed
	}
	f.closed = true
	return nil
}

// String names the sim for failure messages.
func (s *Sim) String() string {
	return fmt.Sprintf("vfs.Sim{sector %d, %d files, %d unsynced directory ops}", s.cfg.SectorSize, len(s.names), len(s.journal))
}
