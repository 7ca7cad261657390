package trace

import (
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/zabd/zabd/wire"
)

// LogEntry is one txn record of a ZooKeeper txn log file.
type LogEntry struct {
	Header wire.TxnHeader
	Body   wire.Record // nil for a txn type without a body
	// Digest is the tree digest ZooKeeper stored after the txn; nil when the
	// record carries none.
	Digest *wire.TxnDigest
	// Offset is the record's byte offset in its file, for error messages.
	Offset int64
}

// Txn log file layout (ZooKeeper's FileTxnLog): a header {int magic "ZKLG",
// int version 2, long dbid}, then records {long Adler32 checksum of the
// record bytes, int length, the record bytes (TxnHeader, body, optional
// TxnDigest), byte 'B'}. Files are pre-allocated with zeros, so a zero length
// (or the end of the file) ends the log.
const (
	logMagic      = 0x5a4b4c47 // "ZKLG"
	logVersion    = 2
	logHeaderSize = 16
	endOfRecord   = 'B'
)

// ReadTxnLog decodes every txn record of one txn log file; a malformed
// record is an error naming the file and its offset.
func ReadTxnLog(path string) ([]LogEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read txn log: %w", err)
	}
	if len(b) < logHeaderSize || binary.BigEndian.Uint32(b) != logMagic || binary.BigEndian.Uint32(b[4:]) != logVersion {
		return nil, fmt.Errorf("%s: offset 0: not a version-2 txn log", path)
	}
	var out []LogEntry
	off := logHeaderSize
	for off+12 <= len(b) {
		sum := binary.BigEndian.Uint64(b[off:])
		n := int(int32(binary.BigEndian.Uint32(b[off+8:])))
		if n == 0 {
			break // pre-allocated zeros: end of the log
		}
		start := off + 12
		if n < 0 || start+n+1 > len(b) {
			return nil, fmt.Errorf("%s: offset %d: record length %d runs past the end", path, off, n)
		}
		rec := b[start : start+n]
		if uint64(adler32.Checksum(rec)) != sum {
			return nil, fmt.Errorf("%s: offset %d: checksum mismatch", path, off)
		}
		if b[start+n] != endOfRecord {
			return nil, fmt.Errorf("%s: offset %d: record not ended by 'B'", path, off)
		}
		e, err := decodeLogRecord(rec)
		if err != nil {
			return nil, fmt.Errorf("%s: offset %d: %w", path, off, err)
		}
		e.Offset = int64(off)
		out = append(out, e)
		off = start + n + 1
	}
	return out, nil
}

func decodeLogRecord(rec []byte) (LogEntry, error) {
	var e LogEntry
	d := wire.NewDecoder(rec)
	e.Header.Decode(d)
	if err := d.Err(); err != nil {
		return e, fmt.Errorf("txn header: %w", err)
	}
	body, err := wire.DecodeTxnBody(e.Header.Type, d)
	if err != nil {
		return e, fmt.Errorf("%s txn body: %w", e.Header.Type, err)
	}
	e.Body = body
	if d.Remaining() > 0 {
		e.Digest = &wire.TxnDigest{}
		e.Digest.Decode(d)
		if err := d.Err(); err != nil {
			return e, fmt.Errorf("txn digest: %w", err)
		}
	}
	if d.Remaining() != 0 {
		return e, fmt.Errorf("%d bytes left after the txn", d.Remaining())
	}
	return e, nil
}

// LogFiles lists the txn log files (log.<hex zxid>) in dir, ordered by the
// zxid their names start at.
func LogFiles(dir string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "log.*"))
	if err != nil {
		return nil, fmt.Errorf("list txn logs: %w", err)
	}
	type file struct {
		path string
		zxid uint64
	}
	var files []file
	for _, m := range matches {
		z, err := strconv.ParseUint(strings.TrimPrefix(filepath.Base(m), "log."), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("txn log %s: name is not log.<hex zxid>", m)
		}
		files = append(files, file{m, z})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].zxid < files[j].zxid })
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.path
	}
	return out, nil
}

// ReadTxnLogs decodes every txn log in dir, in zxid order.
func ReadTxnLogs(dir string) ([]LogEntry, error) {
	files, err := LogFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []LogEntry
	for _, f := range files {
		es, err := ReadTxnLog(f)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, nil
}
