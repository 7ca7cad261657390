package wire

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The golden vectors are frames and txn log entries that Debian's ZooKeeper
// 3.8.0 and its clients produced, recorded by testdata/capture (see
// capture.sh and testdata/golden/manifest.json, which names the command
// behind every vector).

// Client vectors come from a standalone server and its clients; peer
// vectors from two-server ensembles (see peer_golden_test.go). Both
// directories hold frame logs and a txn log.
const (
	goldenDir = "testdata/golden/client"
	peerDir   = "testdata/golden/peer"
)

var goldenDirs = []string{goldenDir, peerDir}

type goldenVector struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Offset  int64  `json:"offset"`
	Length  int    `json:"length"`
	Command string `json:"command"`
}

func loadManifest(t testing.TB, dir string) []goldenVector {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []goldenVector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	return vs
}

// frameLines reads a frame log: per line a direction, then the frame's bytes
// in hex (or a marker word and text for what is not a frame).
func frameLines(t testing.TB, dir, file string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// vectorBytes returns a frame vector's record bytes.
func vectorBytes(t testing.TB, dir string, v goldenVector) []byte {
	t.Helper()
	lines := frameLines(t, dir, v.File)
	if v.Line < 1 || v.Line > len(lines) {
		t.Fatalf("%s: line %d of %s does not exist", v.Name, v.Line, v.File)
	}
	fields := strings.Fields(lines[v.Line-1])
	b, err := hex.DecodeString(fields[len(fields)-1])
	if err != nil {
		t.Fatalf("%s: %v", v.Name, err)
	}
	return b
}

// decodeFrameVector decodes a captured frame as its kind says: the records
// it holds in order, header first. It requires that they fill the frame
// exactly, so a decoder that skips or invents bytes fails here.
func decodeFrameVector(kind string, b []byte) ([]Record, error) {
	d := NewDecoder(b)
	var recs []Record
	read := func(r Record) { r.Decode(d); recs = append(recs, r) }
	class, opName, _ := strings.Cut(kind, "/")
	switch class {
	case "connect-request":
		read(&ConnectRequest{})
	case "connect-response":
		read(&ConnectResponse{})
	case "notification":
		read(&ReplyHeader{})
		read(&WatcherEvent{})
	case "request":
		h := &RequestHeader{}
		read(h)
		if h.Type.String() != opName {
			return nil, fmt.Errorf("header says %s", h.Type)
		}
		body, err := NewRequest(h.Type)
		if err != nil {
			return nil, err
		}
		read(body)
	case "reply", "error-reply":
		read(&ReplyHeader{})
		if class == "reply" {
			op, ok := ParseOpCode(opName)
			if !ok {
				return nil, fmt.Errorf("unknown opcode %q", opName)
			}
			body, err := NewResponse(op)
			if err != nil {
				return nil, err
			}
			read(body)
		}
	default:
		return nil, fmt.Errorf("no decoder for kind %q", kind)
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	if d.Remaining() != 0 {
		return nil, fmt.Errorf("%d bytes left over", d.Remaining())
	}
	return recs, nil
}

func encodeRecords(recs []Record) []byte {
	var e Encoder
	for _, r := range recs {
		r.Encode(&e)
	}
	return e.Bytes()
}

// TestGoldenFramesRoundTrip decodes every captured frame and re-encodes it
// to the same bytes.
func TestGoldenFramesRoundTrip(t *testing.T) {
	n := 0
	for _, dir := range goldenDirs {
		for _, v := range loadManifest(t, dir) {
			if v.Line == 0 || v.Kind == "fourletterword" {
				continue
			}
			n++
			checkFrameVector(t, dir, v)
		}
	}
	if n < 100 {
		t.Fatalf("only %d frame vectors in the manifests", n)
	}
}

func checkFrameVector(t *testing.T, dir string, v goldenVector) {
	t.Helper()
	{
		b := vectorBytes(t, dir, v)
		recs, err := decodeFrameVector(v.Kind, b)
		if err != nil {
			t.Errorf("%s: %v", v.Name, err)
			return
		}
		if got := encodeRecords(recs); !bytes.Equal(got, b) {
			t.Errorf("%s: re-encoded\n%x\nwant\n%x", v.Name, got, b)
		}
	}
}

// TestGoldenTxnLog reads ZooKeeper's own txn logs with TxnLogReader and
// re-encodes every entry to the file's bytes.
func TestGoldenTxnLog(t *testing.T) {
	for _, dir := range goldenDirs {
		checkTxnLog(t, dir)
	}
}

func checkTxnLog(t *testing.T, dir string) {
	raw, err := os.ReadFile(filepath.Join(dir, "txnlog.bin"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewTxnLogReader(bytes.NewReader(raw), 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Header != (FileHeader{Magic: TxnLogMagic, Version: FileVersion, DbID: 0}) {
		t.Fatalf("file header %+v", r.Header)
	}
	var offsets []int64
	for {
		entry, off, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		offsets = append(offsets, off)
		end := r.End()
		if got := AppendTxnLogEntry(nil, &entry); !bytes.Equal(got, raw[off:end]) {
			t.Errorf("entry at %d re-encoded\n%x\nwant\n%x", off, got, raw[off:end])
		}
	}
	if r.End() != int64(len(raw)) {
		t.Errorf("entries end at %d of %d bytes", r.End(), len(raw))
	}
	var manifest []int64
	for _, v := range loadManifest(t, dir) {
		if v.File == "txnlog.bin" {
			manifest = append(manifest, v.Offset)
		}
	}
	if !reflect.DeepEqual(offsets, manifest) {
		t.Errorf("entries at %v, manifest lists %v", offsets, manifest)
	}
}

func TestTxnLogReaderRejectsCorruption(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(goldenDir, "txnlog.bin"))
	if err != nil {
		t.Fatal(err)
	}
	const second = 77 // offset of the second entry
	for name, mutate := range map[string]func(b []byte){
		"checksum":   func(b []byte) { b[second] ^= 1 },
		"body":       func(b []byte) { b[second+40] ^= 1 },
		"end marker": func(b []byte) { b[184] = 'X' },
		"length":     func(b []byte) { b[second+8] = 0x7f },
	} {
		b := append([]byte(nil), raw...)
		mutate(b)
		r, err := NewTxnLogReader(bytes.NewReader(b), 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Next(); err != nil {
			t.Fatalf("%s: first entry: %v", name, err)
		}
		_, off, err := r.Next()
		var le *TxnLogError
		if !errors.As(err, &le) || le.Offset != second || off != second {
			t.Errorf("%s: got %v at %d, want a TxnLogError at %d", name, err, off, second)
		}
	}
	if _, err := NewTxnLogReader(bytes.NewReader([]byte("ZKSN\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00")), 0); err == nil {
		t.Error("a snapshot header was accepted as a txn log")
	}
}

// TestGoldenCoverage checks that every record kind of the client protocol
// and of the txn log has at least one captured vector.
func TestGoldenCoverage(t *testing.T) {
	have := map[string]bool{}
	for _, dir := range goldenDirs {
		for _, v := range loadManifest(t, dir) {
			have[v.Kind] = true
		}
	}
	want := []string{
		"connect-request", "connect-response", "notification", "fourletterword",
		"txn/createSession", "txn/closeSession", "txn/create", "txn/create2", "txn/createTTL",
		"txn/createContainer", "txn/delete", "txn/setData", "txn/setACL", "txn/error", "txn/multi",
	}
	for _, op := range []string{
		"create", "create2", "createContainer", "createTTL", "delete", "exists", "getData",
		"setData", "getACL", "setACL", "getChildren", "getChildren2", "sync", "ping", "multi",
		"multiRead", "checkWatches", "removeWatches", "getEphemerals", "getAllChildrenNumber",
		"addWatch", "whoAmI", "auth", "setWatches", "setWatches2", "sasl", "closeSession",
	} {
		want = append(want, "request/"+op, "reply/"+op)
	}
	want = append(want, "request/reconfig", "reply/reconfig", "error-reply/reconfig", "request/deleteContainer",
		"txn/reconfig")
	for _, k := range want {
		if !have[k] {
			t.Errorf("no golden vector of kind %s", k)
		}
	}
}

func TestGoldenFourLetterWord(t *testing.T) {
	for _, v := range loadManifest(t, goldenDir) {
		if v.Kind != "fourletterword" {
			continue
		}
		line := frameLines(t, goldenDir, v.File)[v.Line-1]
		if line != "> 4lw ruok" {
			t.Fatalf("%s: %q", v.Name, line)
		}
		// The bytes the client sent, read as the first frame's length.
		fr := NewFrameReader(strings.NewReader("ruok"), 0)
		frame, word, err := fr.ReadFirstFrame()
		if err != nil || word != "ruok" || frame != nil {
			t.Fatalf("ReadFirstFrame = %x, %q, %v", frame, word, err)
		}
		return
	}
	t.Fatal("no four-letter word vector")
}
