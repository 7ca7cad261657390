// Command goldenrec records the golden traces of datatree/testdata/golden from
// a private Debian ZooKeeper 3.8.0 server: for each scenario it starts a
// fresh standalone server on 127.0.0.1 (temporary dataDir, free port), runs
// the scenario's requests with raw protocol frames over one TCP connection
// per session, writes every reply and notification to <out>/<scenario>/
// trace.jsonl, stops the server and copies its txn logs and snapshots next
// to the trace.
//
//	go run ./scripts/goldenrec -out datatree/testdata/golden [-only name,...]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zabd/zabd/datatree/trace"
)

// scenario is one trace: a server configuration and a script.
type scenario struct {
	name string
	desc string
	// config holds zoo.cfg lines beyond the fixed ones (see startServer).
	config []string
	script func(r *run)
}

// baseConfig enables what most scenarios exercise: TTL nodes and a super
// user whose password is superPassword. (The reaper's period is a JVM
// property, see startServer.)
var baseConfig = []string{
	"extendedTypesEnabled=true",
	"DigestAuthenticationProvider.superDigest=" + digestID("super", superPassword),
}

const superPassword = "sekrit"

func main() {
	out := flag.String("out", "datatree/testdata/golden", "directory to write the traces into")
	only := flag.String("only", "", "comma-separated scenario names to record (default all)")
	jars := flag.String("jars", "/usr/share/java", "directory holding Debian's ZooKeeper 3.8.0 jars")
	flag.Parse()
	if err := record(*out, *jars, *only); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

func record(out, jars, only string) error {
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n != "" {
			want[n] = true
		}
	}
	manifestPath := filepath.Join(out, trace.ManifestFile)
	manifest := map[string]trace.Scenario{}
	if _, err := os.Stat(manifestPath); err == nil {
		if manifest, err = trace.ReadManifest(manifestPath); err != nil {
			return err
		}
	}
	selected := len(want) > 0
	for _, sc := range scenarios {
		if selected && !want[sc.name] {
			continue
		}
		delete(want, sc.name)
		fmt.Fprintf(os.Stderr, "recording %s\n", sc.name)
		entry, err := recordScenario(out, jars, sc)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.name, err)
		}
		manifest[sc.name] = entry
	}
	for n := range want {
		return fmt.Errorf("no scenario named %q", n)
	}
	b, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	return os.WriteFile(manifestPath, append(b, '\n'), 0o644)
}

func recordScenario(out, jars string, sc scenario) (trace.Scenario, error) {
	entry := trace.Scenario{Name: sc.name, Desc: sc.desc,
		Command:  "go run ./scripts/goldenrec -only " + sc.name,
		Server:   "Debian zookeeper 3.8.0, standalone org.apache.zookeeper.server.ZooKeeperServerMain on 127.0.0.1",
		JVM:      jvmFlags(),
		Config:   append(fixedConfig(), sc.config...),
		Recorded: time.Now().UTC().Format(time.RFC3339)}
	srv, err := startServer(jars, sc.config)
	if err != nil {
		return entry, err
	}
	r := &run{srv: srv, conns: map[string]*conn{}, parked: map[string]*conn{}}
	sc.script(r)
	r.DrainAll()
	r.closeConns()
	srv.stop()
	if r.err != nil {
		// The server's directory stays for its log.
		return entry, fmt.Errorf("%w (server log: %s)", r.err, filepath.Join(srv.dir, "server.log"))
	}
	defer os.RemoveAll(srv.dir)
	dir := filepath.Join(out, sc.name)
	if err := os.RemoveAll(dir); err != nil {
		return entry, fmt.Errorf("clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return entry, fmt.Errorf("create %s: %w", dir, err)
	}
	log, err := trace.ReadTxnLogs(filepath.Join(srv.dir, "data", "version-2"))
	if err != nil {
		return entry, err
	}
	lines := annotate(r.lines, log)
	body, err := encodeLines(lines)
	if err != nil {
		return entry, err
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.jsonl"), body, 0o644); err != nil {
		return entry, fmt.Errorf("write trace: %w", err)
	}
	entry.Lines = len(lines)
	entry.Files = append(entry.Files, "trace.jsonl")
	files, err := srv.dataFiles()
	if err != nil {
		return entry, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return entry, fmt.Errorf("copy %s: %w", f, err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			return entry, fmt.Errorf("copy %s: %w", f, err)
		}
		entry.Files = append(entry.Files, filepath.Base(f))
	}
	return entry, nil
}
