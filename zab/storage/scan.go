package storage

import (
	"fmt"
	"io"
)

// LogRecord is one valid record of a txn log file: where it starts, its
// zxid and its txn entry (valid only during the ScanLogFile callback).
type LogRecord struct {
	Offset int64
	Zxid   int64
	Entry  []byte
}

// LogFileEnd says where and why a scan of one log file stopped: Offset is
// where the valid records end; Damage is nil when the file ends there or
// only zero padding follows, else what is wrong at Offset.
type LogFileEnd struct {
	Offset int64
	Damage *CorruptError
}

// ScanLogFile reads one log file (ZooKeeper's or zabd's) for tools, without
// recovery's judgement: it hands each valid record to visit, in order, and
// stops at the end of the file, at zero padding, or at the first record
// that is torn, fails its checksum, is not a txn, or does not raise the
// zxid. Whether such damage is a crash's torn tail or corruption that
// loses durable txns depends on the files around it: Store.Recover decides.
// A bad file header is returned as a *CorruptError.
func ScanLogFile(r io.ReaderAt, size int64, name string, visit func(LogRecord) error) (LogFileEnd, error) {
	s, err := newLogScanner(r, size, name, -1)
	if err != nil {
		return LogFileEnd{}, err
	}
	for {
		ok, err := s.Next()
		if err != nil {
			return LogFileEnd{Offset: s.Offset()}, fmt.Errorf("read %s: %w", name, err)
		}
		if !ok {
			break
		}
		if err := visit(LogRecord{Offset: s.Offset() - int64(len(s.Entry)) - 13, Zxid: s.Zxid, Entry: s.Entry}); err != nil {
			return LogFileEnd{Offset: s.Offset()}, err
		}
	}
	end := LogFileEnd{Offset: s.Offset()}
	if s.Stop == stopBad {
		end.Damage = &CorruptError{File: name, Offset: s.Offset(), Reason: s.Reason}
	}
	return end, nil
}
