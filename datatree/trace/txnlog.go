package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/zabd/zabd/wire"
)

// LogEntry is one txn of a captured txn log, with where it was read from.
type LogEntry struct {
	wire.TxnEntry
	File   string
	Offset int64
}

// LogFiles lists the txn log files (log.<hex zxid>) in dir, ordered by the
// zxid their names start at.
func LogFiles(dir string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "log.*"))
	if err != nil {
		return nil, fmt.Errorf("list txn logs: %w", err)
	}
	zxids := map[string]uint64{}
	for _, m := range matches {
		z, err := strconv.ParseUint(strings.TrimPrefix(filepath.Base(m), "log."), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("txn log %s: name is not log.<hex zxid>", m)
		}
		zxids[m] = z
	}
	sort.Slice(matches, func(i, j int) bool { return zxids[matches[i]] < zxids[matches[j]] })
	return matches, nil
}

// ReadTxnLogs decodes every txn log in dir (wire.TxnLogReader), in zxid order.
func ReadTxnLogs(dir string) ([]LogEntry, error) {
	files, err := LogFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []LogEntry
	for _, f := range files {
		es, err := readTxnLog(f)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, nil
}

func readTxnLog(path string) ([]LogEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open txn log: %w", err)
	}
	defer f.Close()
	r, err := wire.NewTxnLogReader(f, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []LogEntry
	for {
		e, off, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, LogEntry{TxnEntry: e, File: filepath.Base(path), Offset: off})
	}
}
