package datatools

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/storage"
)

// TxnLine is one txn as log dump prints it (and as its JSON).
type TxnLine struct {
	File    string   `json:"file"`
	Offset  int64    `json:"offset"`
	Zxid    string   `json:"zxid"`
	Time    string   `json:"time"`
	Session string   `json:"session"`
	Cxid    string   `json:"cxid"`
	Type    string   `json:"type"`
	Paths   []string `json:"paths,omitempty"`
	Detail  string   `json:"detail,omitempty"`
	Digest  string   `json:"digest,omitempty"`
}

// txnLine describes a decoded entry.
func txnLine(file string, off int64, e *wire.TxnEntry) TxnLine {
	h := e.Header
	l := TxnLine{File: file, Offset: off, Zxid: zxidString(h.Zxid),
		Time:    time.UnixMilli(h.Time).UTC().Format("2006-01-02T15:04:05.000Z"),
		Session: wire.SessionString(h.ClientID), Cxid: "0x" + strconv.FormatUint(uint64(uint32(h.Cxid)), 16),
		Type: h.Type.String()}
	l.Paths, l.Detail = describeTxn(e.Body)
	if e.Digest != nil {
		l.Digest = fmt.Sprintf("%d:%d", e.Digest.Version, e.Digest.TreeDigest)
	}
	return l
}

// describeTxn returns the paths a txn body touches and what else it says.
func describeTxn(body wire.Record) ([]string, string) {
	switch b := body.(type) {
	case *wire.CreateTxn:
		return []string{b.Path}, fmt.Sprintf("data=%d bytes ephemeral=%t", len(b.Data), b.Ephemeral)
	case *wire.CreateTTLTxn:
		return []string{b.Path}, fmt.Sprintf("data=%d bytes ttl=%dms", len(b.Data), b.TTL)
	case *wire.CreateContainerTxn:
		return []string{b.Path}, fmt.Sprintf("data=%d bytes", len(b.Data))
	case *wire.DeleteTxn:
		return []string{b.Path}, ""
	case *wire.SetDataTxn:
		return []string{b.Path}, fmt.Sprintf("data=%d bytes version=%d", len(b.Data), b.Version)
	case *wire.SetACLTxn:
		return []string{b.Path}, fmt.Sprintf("version=%d", b.Version)
	case *wire.CheckVersionTxn:
		return []string{b.Path}, fmt.Sprintf("version=%d", b.Version)
	case *wire.CreateSessionTxn:
		return nil, fmt.Sprintf("timeout=%dms", b.TimeOut)
	case *wire.CloseSessionTxn:
		return b.Paths2Delete, ""
	case *wire.ErrorTxn:
		return nil, "err=" + b.Err.String()
	case *wire.MultiTxn:
		var paths, ops []string
		for _, t := range b.Txns {
			body, err := wire.DecodeTxnBody(t.Type, wire.NewDecoder(t.Data))
			if err != nil {
				ops = append(ops, t.Type.String()+"(undecodable)")
				continue
			}
			p, _ := describeTxn(body)
			paths = append(paths, p...)
			ops = append(ops, t.Type.String())
		}
		return paths, "ops=" + strings.Join(ops, ",")
	}
	return nil, ""
}

// LogDump is `zabctl log dump`.
func LogDump(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("log dump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "first zxid to print (0x hex, decimal or epoch:counter)")
	to := fs.String("to", "", "last zxid to print")
	sessionFlag := fs.String("session", "", "print only this session's txns (0x hex or decimal)")
	format := fs.String("o", "text", "output: text or json (one object per line)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zabctl log dump [-from ZXID] [-to ZXID] [-session ID] [-o json] FILE|DIR...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 || (*format != "text" && *format != "json") {
		fs.Usage()
		return 2
	}
	lo, hi := int64(0), int64(-1)
	var err error
	if *from != "" {
		if lo, err = parseZxid(*from); err != nil {
			return fail(stderr, "-from: %v", err)
		}
	}
	if *to != "" {
		if hi, err = parseZxid(*to); err != nil {
			return fail(stderr, "-to: %v", err)
		}
	}
	var session int64
	hasSession := *sessionFlag != ""
	if hasSession {
		s, err := strconv.ParseUint(*sessionFlag, 0, 64)
		if err != nil {
			return fail(stderr, "-session %q: want 0x hex or decimal", *sessionFlag)
		}
		session = int64(s)
	}
	var files []namedFile
	for _, arg := range fs.Args() {
		st, err := os.Stat(arg)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		if !st.IsDir() {
			files = append(files, namedFile{Path: arg, Name: st.Name()})
			continue
		}
		dir, err := versionDir(arg)
		if err != nil {
			return fail(stderr, "%v", err)
		}
		logs, err := listFiles(dir, "log")
		if err != nil {
			return fail(stderr, "%v", err)
		}
		if len(logs) == 0 {
			return fail(stderr, "%s: no log.<zxid> files", dir)
		}
		files = append(files, logs...)
	}
	code := 0
	enc := json.NewEncoder(stdout)
	for _, f := range files {
		end, err := scanFile(f.Path, f.Name, func(r storage.LogRecord) error {
			if r.Zxid < lo || (hi >= 0 && r.Zxid > hi) {
				return nil
			}
			e, err := wire.DecodeTxnEntry(r.Entry)
			if err != nil {
				return fmt.Errorf("%s at offset %d: %w", f.Name, r.Offset, err)
			}
			if hasSession && e.Header.ClientID != session {
				return nil
			}
			line := txnLine(f.Name, r.Offset, &e)
			if *format == "json" {
				return enc.Encode(line)
			}
			_, err = fmt.Fprintln(stdout, line.text())
			return err
		})
		if err != nil {
			return fail(stderr, "%v", err)
		}
		if end.Damage != nil {
			fmt.Fprintf(stderr, "zabctl: %v (the records before it were printed; zabctl log verify tells whether recovery would cut it)\n", end.Damage)
			code = 1
		}
	}
	return code
}

func (l TxnLine) text() string {
	s := fmt.Sprintf("%s %s session=%s cxid=%s %s", l.Zxid, l.Time, l.Session, l.Cxid, l.Type)
	if len(l.Paths) > 0 {
		s += " " + strings.Join(l.Paths, ",")
	}
	if l.Detail != "" {
		s += " " + l.Detail
	}
	if l.Digest != "" {
		s += " digest=" + l.Digest
	}
	return s
}

// scanFile opens a log file and scans it with storage.ScanLogFile.
func scanFile(path, name string, visit func(storage.LogRecord) error) (storage.LogFileEnd, error) {
	f, err := os.Open(path)
	if err != nil {
		return storage.LogFileEnd{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return storage.LogFileEnd{}, err
	}
	return storage.ScanLogFile(f, st.Size(), name, visit)
}

// fail prints one line and returns exit code 1.
func fail(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintln(stderr, "zabctl: "+fmt.Sprintf(format, args...))
	return 1
}
