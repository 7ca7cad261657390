package wire

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateFuzzSeeds = flag.Bool("update-fuzz-seeds", false,
	"rewrite testdata/fuzz/<FuzzName>/ from the golden vectors")

// TestWriteFuzzSeeds turns the golden vectors into the fuzz targets' seed
// corpora: go test -run TestWriteFuzzSeeds -update-fuzz-seeds ./wire
func TestWriteFuzzSeeds(t *testing.T) {
	if !*updateFuzzSeeds {
		t.Skip("seed corpora are rewritten only with -update-fuzz-seeds")
	}
	seeds := map[string]map[string][]any{}
	add := func(target, name string, args ...any) {
		if seeds[target] == nil {
			seeds[target] = map[string][]any{}
		}
		seeds[target][strings.NewReplacer("/", "_", "#", "_").Replace(name)] = args
	}
	streams := map[string][]byte{}
	for _, v := range loadManifest(t, goldenDir) {
		if v.File == "txnlog.bin" || v.Kind == "fourletterword" {
			continue
		}
		b := vectorBytes(t, goldenDir, v)
		class, opName, _ := strings.Cut(v.Kind, "/")
		switch class {
		case "connect-request":
			add("FuzzConnectRequest", v.Name, b)
		case "connect-response":
			add("FuzzConnectResponse", v.Name, b)
		case "request":
			var h RequestHeader
			if err := Unmarshal(b[:8], &h); err != nil {
				t.Fatal(err)
			}
			add("FuzzRequest", v.Name, int32(h.Type), b[8:])
		case "reply":
			op, _ := ParseOpCode(opName)
			add("FuzzResponse", v.Name, int32(op), b[16:])
		}
		if lines := frameLines(t, goldenDir, v.File); strings.HasPrefix(lines[v.Line-1], ">") {
			streams[v.File] = AppendFrame(streams[v.File], rawRecord(b))
		}
	}
	for file, s := range streams {
		add("FuzzFrame", file, s, uint32(0))
	}
	add("FuzzFrame", "fourletterword", []byte("ruok"), uint32(0))

	raw, err := os.ReadFile(filepath.Join(goldenDir, "txnlog.bin"))
	if err != nil {
		t.Fatal(err)
	}
	add("FuzzTxnLog", "txnlog", raw)
	r, err := NewTxnLogReader(bytes.NewReader(raw), 0)
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, off, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entry, _ := txnEntryAt(t, raw, off)
		add("FuzzTxn", fmt.Sprintf("txnlog_%d", off), entry)
	}

	// Every peer vector of the two-server capture; of the larger ensemble
	// capture, the first three of each kind from each sender.
	seen := map[string]int{}
	for _, dir := range []string{peerDir, ensembleDir} {
		for _, v := range loadManifest(t, dir) {
			if v.Length == 0 || v.Kind == kindSnapshotStream {
				continue
			}
			if dir == ensembleDir {
				key := v.Kind + senderOf(v).String()
				if seen[key]++; seen[key] > 3 {
					continue
				}
			}
			name := v.Name
			if dir == ensembleDir {
				name = "ensemble_" + name
			}
			b := streamBytes(t, dir, v)
			switch {
			case v.Kind == "election/initial-message":
				add("FuzzInitialMessage", name, b)
			case v.Kind == "election/notification":
				add("FuzzNotification", name, b[4:])
			default:
				add("FuzzQuorumPacket", name, b)
				var qp QuorumPacket
				if err := Unmarshal(b, &qp); err != nil {
					t.Fatal(v.Name, err)
				}
				add("FuzzPacketData", name, int32(qp.Type), senderOf(v) == FromLearner, qp.Data)
			}
		}
	}
	// Payloads only a reconfig sends, which no capture holds.
	add("FuzzPacketData", "commitandactivate", int32(PacketCommitAndActivate), false,
		Marshal(&CommitAndActivate{DesignatedLeader: 3}))
	add("FuzzPacketData", "informandactivate", int32(PacketInformAndActivate), false,
		Marshal(&InformAndActivate{DesignatedLeader: 3, Txn: TxnEntry{Header: TxnHeader{Type: OpReconfig},
			Body: &SetDataTxn{Path: "/zookeeper/config", Data: []byte("server.1=127.0.0.1:2888:3888:participant\nversion=100000001")}}}))
	for _, v := range loadManifest(t, peerDir) {
		switch v.Kind {
		case "request/reconfig":
			add("FuzzRequest", v.Name, int32(OpReconfig), vectorBytes(t, peerDir, v)[8:])
		case "reply/reconfig":
			add("FuzzResponse", v.Name, int32(OpReconfig), vectorBytes(t, peerDir, v)[16:])
		}
	}
	// Layouts older peers send, which the capture cannot show.
	add("FuzzNotification", "forty-bytes", Marshal(&Notification{State: PeerLeading, Leader: 2})[:40])
	add("FuzzNotification", "twenty-eight-bytes", Marshal(&Notification{State: PeerLeading, Leader: 2})[:28])
	add("FuzzInitialMessage", "v2", Marshal(&InitialMessage{ProtocolVersion: ElectionProtocolV2, ServerID: 2,
		Address: "127.0.0.1:3888|127.0.0.2:3888"}))

	for target, files := range seeds {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, args := range files {
			var b strings.Builder
			b.WriteString("go test fuzz v1\n")
			for _, a := range args {
				switch v := a.(type) {
				case []byte:
					fmt.Fprintf(&b, "[]byte(%q)\n", v)
				case int32:
					fmt.Fprintf(&b, "int32(%d)\n", v)
				case uint32:
					fmt.Fprintf(&b, "uint32(%d)\n", v)
				case bool:
					fmt.Fprintf(&b, "bool(%t)\n", v)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
