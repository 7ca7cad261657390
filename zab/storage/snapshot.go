package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io"
	"strconv"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// Snapshot file layout (ZooKeeper's FileSnap, SnapStream, SerializeUtils):
//
//	FileHeader: int magic "ZKSN", int version 2, long dbid -1
//	int session count, then per session: long id, int timeout (ms)
//	the tree: ACL cache, then the nodes (written and read by the datatree)
//	seal: long Adler32 of every byte before it, string "/"
//	optional ZxidDigest: long zxid, int digest version, long digest
//	  (a hex string instead of the long for digest versions below 2)
//	seal again, its checksum covering everything before it
//
// The Adler32 runs over the whole stream, the first seal included.
const snapDBID = -1

// Session is one entry of the snapshot's session table.
type Session struct {
	ID      int64
	Timeout int32 // ms
}

// ZxidDigest is the tree digest a 3.8 snapshot carries after the tree.
type ZxidDigest struct {
	Zxid    int64
	Version int32
	Digest  int64
}

// Snapshot is what WriteSnapshot writes.
type Snapshot struct {
	// Zxid names the file: the last txn applied when the (fuzzy)
	// serialization started.
	Zxid int64
	// Sessions in the order to write them (sort them for determinism).
	Sessions []Session
	// WriteTree writes the ACL cache and the nodes in ZooKeeper's
	// DataTree.serialize format.
	WriteTree func(w io.Writer) error
	// Digest, if not nil, is called after WriteTree and its result written
	// as the 3.8 digest section (ZooKeeper writes one whenever
	// zookeeper.digest.enabled, its default).
	Digest func() ZxidDigest
}

// SnapshotInfo describes a snapshot that was read.
type SnapshotInfo struct {
	Name     string
	Zxid     int64
	Sessions []Session
	Digest   *ZxidDigest // nil when the file has no digest section
}

// TreeLoader reads the ACL cache and the nodes from d, leaving d just after
// them; zxid is the snapshot's (the tree's last applied zxid). Recovery may
// call it more than once (when a snapshot turns out corrupt it tries an
// older one), so it must build a new tree on every call. Offsets in d are
// file offsets. With the datatree:
//
//	func(d *wire.Decoder, zxid int64) (err error) { tree, err = datatree.Load(cfg, d, zxid); return err }
type TreeLoader func(d *wire.Decoder, zxid int64) error

// checksumWriter buffers writes to a file and keeps the running Adler32.
type checksumWriter struct {
	f    vfs.File
	name string
	off  int64
	buf  []byte
	sum  hash.Hash32
}

func (w *checksumWriter) Write(p []byte) (int, error) {
	w.sum.Write(p)
	w.buf = append(w.buf, p...)
	if len(w.buf) >= 1<<20 {
		if err := w.flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (w *checksumWriter) flush() error {
	if _, err := w.f.WriteAt(w.buf, w.off); err != nil {
		return fmt.Errorf("write %s at offset %d: %w", w.name, w.off, err)
	}
	w.off += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

func (w *checksumWriter) seal() {
	var e wire.Encoder
	e.WriteLong(int64(w.sum.Sum32()))
	e.WriteString("/")
	w.Write(e.Bytes())
}

// writeSnapshot writes snap to a temporary file, fsyncs it, renames it to
// its final name and fsyncs the directory. It returns the final name.
func writeSnapshot(fs vfs.FS, dir string, snap *Snapshot) (string, error) {
	name := SnapshotName(snap.Zxid)
	tmp := tmpPrefix + name
	f, err := fs.Create(join(dir, tmp))
	if err != nil {
		return "", fmt.Errorf("create %s: %w", tmp, err)
	}
	err = writeSnapshotTo(f, tmp, snap)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", tmp, cerr)
	}
	if err == nil {
		err = fs.Rename(join(dir, tmp), join(dir, name))
	}
	if err == nil {
		err = fs.SyncDir(dir)
	}
	if err != nil {
		fs.Remove(join(dir, tmp)) // best effort; recovery removes leftovers too
		return "", fmt.Errorf("snapshot %s: %w", name, err)
	}
	return name, nil
}

func writeSnapshotTo(f vfs.File, name string, snap *Snapshot) error {
	w := &checksumWriter{f: f, name: name, sum: adler32.New()}
	e := wire.NewEncoder(nil)
	e.WriteRaw(appendFileHeader(nil, wire.SnapshotMagic, snapDBID))
	e.WriteInt(int32(len(snap.Sessions)))
	for _, s := range snap.Sessions {
		e.WriteLong(s.ID)
		e.WriteInt(s.Timeout)
	}
	w.Write(e.Bytes())
	if err := snap.WriteTree(w); err != nil {
		return fmt.Errorf("write tree: %w", err)
	}
	w.seal()
	if snap.Digest != nil {
		d := snap.Digest()
		e.Reset()
		e.WriteLong(d.Zxid)
		e.WriteInt(d.Version)
		e.WriteLong(d.Digest)
		w.Write(e.Bytes())
		w.seal()
	}
	if err := w.flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", name, err)
	}
	return nil
}

// ReadSnapshotFile reads and checks the snapshot file at path (its base name
// must be snapshot.<hex zxid>), handing the tree to loadTree.
func ReadSnapshotFile(fs vfs.FS, path string, loadTree TreeLoader) (SnapshotInfo, error) {
	name := path[len(path)-len(baseName(path)):]
	zxid, ok := parseZxidName(name, snapshotPrefix)
	if !ok {
		if _, compressed := compressedSnapshot(name); compressed {
			return SnapshotInfo{}, fmt.Errorf("%s: compressed snapshots (zookeeper.snapshot.compression.method) are not supported; restart ZooKeeper without compression to write a plain one", name)
		}
		return SnapshotInfo{}, fmt.Errorf("%s is not named snapshot.<hex zxid>", name)
	}
	data, err := vfs.ReadFull(fs, path)
	if err != nil {
		return SnapshotInfo{}, fmt.Errorf("read %s: %w", name, err)
	}
	return ParseSnapshot(data, name, zxid, loadTree)
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// ParseSnapshot checks and decodes a whole snapshot file's bytes (zxid is
// the one its name gives); name is used in errors, which are *CorruptError
// for anything malformed.
func ParseSnapshot(data []byte, name string, zxid int64, loadTree TreeLoader) (SnapshotInfo, error) {
	info := SnapshotInfo{Name: name, Zxid: zxid}
	corrupt := func(off int, format string, args ...any) (SnapshotInfo, error) {
		return info, &CorruptError{File: name, Offset: int64(off), Reason: fmt.Sprintf(format, args...)}
	}
	// As ZooKeeper's validity check: a complete file ends with a seal's "/".
	if n := len(data); n < fileHeaderLen+4+13 || binary.BigEndian.Uint32(data[n-5:]) != 1 || data[n-1] != '/' {
		return corrupt(max(len(data)-5, 0), "file of %d bytes does not end with a checksum seal", len(data))
	}
	if err := checkFileHeader(data, wire.SnapshotMagic); err != nil {
		return corrupt(0, "not a snapshot: %v", err)
	}
	d := wire.NewDecoder(data)
	d.ReadInt() // magic and version, checked above
	d.ReadInt()
	d.ReadLong() // dbid: ZooKeeper writes -1 and never reads it
	count := d.ReadInt()
	if count < 0 || int64(count)*12 > int64(d.Remaining()) {
		return corrupt(fileHeaderLen, "session count %d", count)
	}
	info.Sessions = make([]Session, count)
	for i := range info.Sessions {
		info.Sessions[i] = Session{ID: d.ReadLong(), Timeout: d.ReadInt()}
	}
	treeAt := d.Offset()
	if err := loadTree(d, zxid); err != nil {
		off := max(treeAt, d.Offset())
		var de *wire.DecodeError
		if errors.As(err, &de) {
			off = de.Offset
		}
		return corrupt(off, "tree: %v", err)
	}
	if err := d.Err(); err != nil {
		return corrupt(d.Offset(), "tree: %v", err)
	}
	if err := checkSeal(d, data); err != nil {
		return info, &CorruptError{File: name, Offset: int64(d.Offset()), Reason: err.Error()}
	}
	if d.Remaining() > 0 {
		digestAt := d.Offset()
		dg := &ZxidDigest{Zxid: d.ReadLong(), Version: d.ReadInt()}
		if dg.Version < 2 {
			hex := d.ReadString()
			v, err := strconv.ParseUint(hex, 16, 64)
			if err != nil && d.Err() == nil {
				return corrupt(digestAt, "digest %q is not hex", hex)
			}
			dg.Digest = int64(v)
		} else {
			dg.Digest = d.ReadLong()
		}
		if err := d.Err(); err != nil {
			return corrupt(digestAt, "digest: %v", err)
		}
		if err := checkSeal(d, data); err != nil {
			return info, &CorruptError{File: name, Offset: int64(d.Offset()), Reason: err.Error()}
		}
		info.Digest = dg
	}
	if d.Remaining() > 0 {
		return corrupt(d.Offset(), "%d bytes after the last checksum seal", d.Remaining())
	}
	return info, nil
}

// checkSeal reads a seal at d's offset and checks it against the Adler32 of
// data before it.
func checkSeal(d *wire.Decoder, data []byte) error {
	at := d.Offset()
	want := adler32.Checksum(data[:at])
	got := d.ReadLong()
	marker := d.ReadString()
	switch {
	case d.Err() != nil:
		return fmt.Errorf("checksum seal: %v", d.Err())
	case uint64(got) != uint64(want):
		return fmt.Errorf("checksum %#x, seal says %#x", want, uint64(got))
	case marker != "/":
		return fmt.Errorf("seal marker %q, want \"/\"", marker)
	}
	return nil
}
