package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zabd/zabd/wire"
)

// Vector is one manifest entry: where a captured record lives and what
// captured it.
type Vector struct {
	Name    string `json:"name"`    // unique, "<log>/<kind>#<n>"
	Kind    string `json:"kind"`    // e.g. "request/getData", "reply/getData", "txn/create"
	File    string `json:"file"`    // under golden/
	Line    int    `json:"line"`    // frame logs: 1-based line of the frame
	Offset  int64  `json:"offset"`  // txn logs and peer streams: offset of the record
	Length  int    `json:"length"`  // peer streams: length of the record
	Command string `json:"command"` // what produced the traffic
}

func runExtract(args []string) error {
	fs := flag.NewFlagSet("extract", flag.ExitOnError)
	in := fs.String("in", "frames", "directory of frame logs")
	out := fs.String("out", "golden", "golden directory to write")
	commands := fs.String("commands", "", "file of 'session<TAB>command' lines")
	txnlog := fs.String("txnlog", "", "a ZooKeeper txn log file to include")
	txnCommand := fs.String("txnlog-command", "", "what wrote the txn log")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cmds, err := readCommands(*commands)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	logs, err := filepath.Glob(filepath.Join(*in, "*.frames"))
	if err != nil {
		return err
	}
	sort.Strings(logs)
	var vectors []Vector
	for _, path := range logs {
		base := filepath.Base(path)
		session := base[:strings.LastIndex(base, "-")]
		if isPeerLog(base) {
			vs, err := peerVectors(path, *out, cmds[session])
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			vectors = append(vectors, vs...)
			continue
		}
		vs, err := classify(path, cmds[session])
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(vs) == 0 {
			continue
		}
		if err := copyFile(path, filepath.Join(*out, base), -1); err != nil {
			return err
		}
		vectors = append(vectors, vs...)
	}
	if *txnlog != "" {
		vs, err := txnVectors(*txnlog, filepath.Join(*out, "txnlog.bin"), *txnCommand)
		if err != nil {
			return err
		}
		vectors = append(vectors, vs...)
	}
	b, err := json.MarshalIndent(vectors, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*out, "manifest.json"), append(b, '\n'), 0o644)
}

func readCommands(path string) (map[string]string, error) {
	m := map[string]string{}
	if path == "" {
		return m, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "\t"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// classify names every frame of one connection's log.
func classify(path, command string) ([]Vector, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, ".frames")
	pending := map[int32]wire.OpCode{}
	seen := map[string]int{}
	var out []Vector
	add := func(kind string, line int) {
		seen[kind]++
		out = append(out, Vector{
			Name: fmt.Sprintf("%s/%s#%d", name, kind, seen[kind]), Kind: kind,
			File: base, Line: line, Command: command,
		})
	}
	firstUp, firstDown := true, true
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<27)
	for line := 1; sc.Scan(); line++ {
		dir, rest, _ := strings.Cut(sc.Text(), " ")
		if strings.HasPrefix(rest, "4lw ") {
			add("fourletterword", line)
			firstUp = false
			continue
		}
		if strings.Contains(rest, " ") {
			continue // raw text, bad lengths and truncations are not records
		}
		b, err := hex.DecodeString(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		d := wire.NewDecoder(b)
		switch {
		case dir == ">" && firstUp:
			firstUp = false
			add("connect-request", line)
		case dir == "<" && firstDown:
			firstDown = false
			add("connect-response", line)
		case dir == ">":
			var h wire.RequestHeader
			h.Decode(d)
			if d.Err() != nil {
				return nil, fmt.Errorf("line %d: %w", line, d.Err())
			}
			pending[h.Xid] = h.Type
			add("request/"+h.Type.String(), line)
		default:
			var h wire.ReplyHeader
			h.Decode(d)
			if d.Err() != nil {
				return nil, fmt.Errorf("line %d: %w", line, d.Err())
			}
			switch {
			case h.Xid == wire.XidNotification:
				add("notification", line)
			case h.Err != wire.ErrOK:
				add("error-reply/"+pending[h.Xid].String(), line)
			default:
				add("reply/"+pending[h.Xid].String(), line)
			}
		}
	}
	return out, sc.Err()
}

// txnVectors copies a txn log up to the end of its last entry (dropping the
// preallocated zeros) and lists its entries.
func txnVectors(src, dst, command string) ([]Vector, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := wire.NewTxnLogReader(f, 0)
	if err != nil {
		return nil, err
	}
	var out []Vector
	seen := map[string]int{}
	for {
		t, off, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		kind := "txn/" + t.Header.Type.String()
		seen[kind]++
		out = append(out, Vector{
			Name: fmt.Sprintf("txnlog/%s#%d", kind, seen[kind]), Kind: kind,
			File: filepath.Base(dst), Offset: off, Command: command,
		})
	}
	return out, copyFile(src, dst, r.End())
}

// copyFile copies src to dst, only the first n bytes if n >= 0.
func copyFile(src, dst string, n int64) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	var r io.Reader = in
	if n >= 0 {
		r = io.LimitReader(in, n)
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Peer logs are raw: election connections (an InitialMessage, then frames
// each holding a notification) and quorum connections (QuorumPackets back to
// back, no length prefix).
func isPeerLog(base string) bool {
	return strings.HasPrefix(base, "election-") || strings.HasPrefix(base, "quorum-")
}

// peerVectors writes each direction of a raw log to its own .bin file in
// out and lists the records found in it.
func peerVectors(path, out, command string) ([]Vector, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	streams := map[string][]byte{}
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[1] != "raw" {
			return nil, fmt.Errorf("line %d: not a raw chunk", i+1)
		}
		chunk, err := hex.DecodeString(f[2])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		streams[f[0]] = append(streams[f[0]], chunk...)
	}
	name := strings.TrimSuffix(filepath.Base(path), ".frames")
	var vs []Vector
	for dir, suffix := range map[string]string{">": "out", "<": "in"} {
		s := streams[dir]
		if len(s) == 0 {
			continue
		}
		file := name + "." + suffix + ".bin"
		if err := os.WriteFile(filepath.Join(out, file), s, 0o644); err != nil {
			return nil, err
		}
		seen := map[string]int{}
		add := func(kind string, off, n int) {
			seen[kind]++
			vs = append(vs, Vector{Name: fmt.Sprintf("%s.%s/%s#%d", name, suffix, kind, seen[kind]), Kind: kind,
				File: file, Offset: int64(off), Length: n, Command: command})
		}
		d := wire.NewDecoder(s)
		if strings.HasPrefix(name, "quorum-") {
			for d.Remaining() > 0 {
				start := d.Offset()
				var qp wire.QuorumPacket
				qp.Decode(d)
				if d.Err() != nil {
					break // the capture ended inside a packet
				}
				add("quorum/"+qp.Type.String(), start, d.Offset()-start)
				if qp.Type == wire.PacketSnap {
					// The snapshot follows outside any packet and ends
					// with the signature string.
					n := snapshotStreamLen(d.Rest())
					if n < 0 {
						break // the capture ended inside the snapshot
					}
					add("quorum/snapshot-stream", d.Offset(), n)
					d.ReadRaw(n)
				}
			}
			continue
		}
		if dir == ">" {
			var m wire.InitialMessage
			m.Decode(d)
			if d.Err() != nil {
				return nil, fmt.Errorf("%s: initial message: %w", file, d.Err())
			}
			add("election/initial-message", 0, d.Offset())
		}
		for d.Remaining() >= 4 {
			start := d.Offset()
			n := int(d.ReadInt())
			if n <= 0 || n > d.Remaining() {
				break
			}
			d.ReadRaw(n)
			add("election/notification", start, 4+n)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
	return vs, nil
}

// snapshotStreamLen finds the end of the snapshot stream at the start of b:
// the first jute string SnapshotSignature, or -1. (A node holding those
// bytes would end it early; the capture's nodes do not.)
func snapshotStreamLen(b []byte) int {
	sig := wire.Marshal(&wire.SnapshotEnd{})
	i := bytes.Index(b, sig)
	if i < 0 {
		return -1
	}
	return i + len(sig)
}
