package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// serverJars are the jars (in -jars) a standalone ZooKeeper 3.8 server needs.
var serverJars = []string{
	"zookeeper.jar", "zookeeper-jute.jar", "slf4j-api.jar", "slf4j-simple.jar", "commons-cli.jar",
	"metrics-core.jar", "jackson-databind.jar", "jackson-core.jar", "jackson-annotations.jar",
	"netty-handler.jar", "netty-common.jar", "netty-transport.jar", "netty-buffer.jar",
	"netty-codec.jar", "netty-resolver.jar", "netty-transport-native-epoll.jar",
	"netty-transport-native-unix-common.jar",
}

// reaperPeriodMs is the container/TTL reaper's period (ZooKeeper's default is a minute).
const reaperPeriodMs = 300

// startupTimeout bounds how long a fresh JVM may take to accept connections.
const startupTimeout = 60 * time.Second

// server is a private standalone ZooKeeper on 127.0.0.1 with its own dataDir.
type server struct {
	dir  string // holds zoo.cfg, server.log and data/
	addr string
	cmd  *exec.Cmd
	jars string
}

// startServer writes zoo.cfg (the given extra keys after the fixed ones) into
// a fresh temporary directory and starts the server on a free port.
func startServer(jarDir string, extra []string) (*server, error) {
	dir, err := os.MkdirTemp("", "zk-golden-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cfg := []string{"dataDir=" + filepath.Join(dir, "data"), "clientPort=" + strconv.Itoa(port)}
	cfg = append(append(cfg, fixedConfig()...), extra...)
	if err := os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(strings.Join(cfg, "\n")+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("write zoo.cfg: %w", err)
	}
	var jars []string
	for _, j := range serverJars {
		jars = append(jars, filepath.Join(jarDir, j))
	}
	s := &server{dir: dir, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), jars: strings.Join(jars, ":")}
	return s, s.start()
}

// fixedConfig is the zoo.cfg every scenario shares besides dataDir and clientPort.
func fixedConfig() []string {
	return []string{
		"tickTime=2000",
		"clientPortAddress=127.0.0.1",
		"admin.enableServer=false",
		// A small snapCount makes the server roll its log and take
		// snapshots within a short scenario.
		"snapCount=10",
	}
}

// jvmFlags are the system properties the server runs with. preAllocSize
// (KiB) keeps the pre-allocated txn log files small enough to check in. The
// container/TTL reaper reads its period from a property without the
// "zookeeper." prefix, so zoo.cfg cannot set it.
func jvmFlags() []string {
	return []string{"-Dzookeeper.preAllocSize=16", "-Dznode.container.checkIntervalMs=" + strconv.Itoa(reaperPeriodMs)}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *server) start() error {
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("server log: %w", err)
	}
	args := append(jvmFlags(), "-cp", s.jars, "org.apache.zookeeper.server.ZooKeeperServerMain", filepath.Join(s.dir, "zoo.cfg"))
	s.cmd = exec.Command("java", args...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start java: %w", err)
	}
	logf.Close()
	deadline := time.Now().Add(startupTimeout)
	for time.Now().Before(deadline) {
		if s.answersSrvr() {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.stop()
	return fmt.Errorf("server at %s did not come up within %s (see %s)", s.addr, startupTimeout, filepath.Join(s.dir, "server.log"))
}

// answersSrvr probes the port with the "srvr" four-letter word, which
// (unlike a connect) leaves no session and no txn behind.
func (s *server) answersSrvr() bool {
	nc, err := net.DialTimeout("tcp", s.addr, time.Second)
	if err != nil {
		return false
	}
	defer nc.Close()
	if err := nc.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return false
	}
	if _, err := nc.Write([]byte("srvr")); err != nil {
		return false
	}
	out, _ := io.ReadAll(nc)
	return strings.Contains(string(out), "Zookeeper version")
}

// stop ends the server process and waits for it.
func (s *server) stop() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
	return nil
}

// dataFiles lists the txn logs and snapshots the server wrote, in name order.
func (s *server) dataFiles() ([]string, error) {
	dir := filepath.Join(s.dir, "data", "version-2")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "log.") || strings.HasPrefix(e.Name(), "snapshot.") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, errors.New("server wrote no log or snapshot files")
	}
	return out, nil
}
