package zkprocess

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// JarDir is where Debian installs ZooKeeper's jar and its dependencies.
const JarDir = "/usr/share/java"

// ErrNotInstalled means Debian's zookeeper package (or java) is absent.
var ErrNotInstalled = errors.New("Debian's zookeeper package (java and /usr/share/java/zookeeper.jar) is not installed")

// Server is a running private ZooKeeper.
type Server struct {
	Addr    string // 127.0.0.1:port of the client port
	Dir     string // its config, data and log
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// Available reports whether ZooKeeper can be started here.
func Available() error {
	if _, err := exec.LookPath("java"); err != nil {
		return ErrNotInstalled
	}
	if _, err := os.Stat(filepath.Join(JarDir, "zookeeper.jar")); err != nil {
		return ErrNotInstalled
	}
	return nil
}

// FreePort returns a loopback port that was free a moment ago (see
// FreePorts).
func FreePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// lowestPort is where FreePorts starts looking: above the well-known and
// commonly configured ports.
const lowestPort = 10000

// FreePorts returns n different loopback ports that were free a moment ago
// (held open together while chosen), picked at random below the kernel's
// ephemeral range (/proc/sys/net/ipv4/ip_local_port_range). A port a
// server is told to bind but has not bound yet is otherwise free for the
// kernel to hand any outgoing connection as its local port: the tests' own
// srvr polling took a ZooKeeper member's client port while its JVM started,
// and the member exited with "Address already in use".
func FreePorts(n int) ([]int, error) {
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	top := ephemeralLow()
	for attempt := 0; len(ports) < n && attempt < 100*n; attempt++ {
		addr := "127.0.0.1:0" // the kernel's choice, if no range is left below its own
		if top > lowestPort {
			addr = fmt.Sprintf("127.0.0.1:%d", lowestPort+rand.IntN(top-lowestPort))
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue // taken: try another
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("find %d free ports: found %d below %d", n, len(ports), top)
	}
	return ports, nil
}

// ephemeralLow is the lowest port of the kernel's ephemeral range (Linux's
// default 32768 when it cannot be read).
func ephemeralLow() int {
	const linuxDefault = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return linuxDefault
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return linuxDefault
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return linuxDefault
	}
	return low
}

// Start runs ZooKeeperServerMain in dir with a zoo.cfg of tickTime 2000,
// every four-letter word allowed, the admin server off, plus extra keys
// (which override those), and waits until it answers srvr.
func Start(ctx context.Context, dir string, extra map[string]string) (*Server, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	cfg := map[string]string{
		"tickTime":               "2000",
		"dataDir":                filepath.Join(dir, "data"),
		"clientPort":             fmt.Sprint(port),
		"clientPortAddress":      "127.0.0.1",
		"admin.enableServer":     "false",
		"4lw.commands.whitelist": "*",
		"maxClientCnxns":         "0",
	}
	maps.Copy(cfg, extra)
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		fmt.Fprintf(&b, "%s=%s\n", k, cfg[k])
	}
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(b.String()), 0o644); err != nil {
		return nil, fmt.Errorf("write zoo.cfg: %w", err)
	}
	logFile, err := os.Create(filepath.Join(dir, "zookeeper.log"))
	if err != nil {
		return nil, fmt.Errorf("create log: %w", err)
	}
	cmd, err := JavaCommand("org.apache.zookeeper.server.ZooKeeperServerMain", cfgPath, dir)
	if err != nil {
		logFile.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start ZooKeeper: %w", err)
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, cmd: cmd, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		logFile.Close()
		close(s.exited)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w; ZooKeeper's log ends:\n%s", err, logTail(filepath.Join(dir, "zookeeper.log")))
	}
	return s, nil
}

// Heap is the JVM's maximum heap (-Xmx) for the servers JavaCommand starts:
// enough for tests and the benchmarks' small trees; a benchmark that grows
// a large tree raises it.
var Heap = "512m"

// JavaCommand is the JVM running one of ZooKeeper's main classes
// (ZooKeeperServerMain standalone, QuorumPeerMain for an ensemble member)
// on the zoo.cfg at cfgPath, logging under logDir.
func JavaCommand(mainClass, cfgPath, logDir string) (*exec.Cmd, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	jars, err := filepath.Glob(filepath.Join(JarDir, "*.jar"))
	if err != nil {
		return nil, err
	}
	return exec.Command("java", "-Xmx"+Heap, "-cp", strings.Join(jars, ":"),
		"-Dzookeeper.log.dir="+logDir, mainClass, cfgPath), nil
}

// waitReady polls srvr until ZooKeeper answers, it exits, or ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		// Each attempt gets its own short deadline: a connection accepted
		// while the JVM is still starting may never be answered.
		attempt, cancel := context.WithTimeout(ctx, time.Second)
		out, err := FourLetterWord(attempt, s.Addr, "srvr")
		cancel()
		if err == nil && strings.Contains(out, "Mode: standalone") {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("ZooKeeper exited during start-up: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("ZooKeeper did not answer srvr on %s: %w", s.Addr, ctx.Err())
		case <-tick.C:
		}
	}
}

// Pid is the JVM's process id (for CPU accounting).
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Stop kills ZooKeeper's process group and waits for it to go.
func (s *Server) Stop() {
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
}

// ForTest starts a ZooKeeper in a test's temp dir, skips the test when the
// packages are absent, and stops it when the test ends.
func ForTest(t testing.TB, extra map[string]string) *Server {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Start(ctx, t.TempDir(), extra)
	if err != nil {
		t.Fatalf("start ZooKeeper: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// FourLetterWord sends a four-letter word to addr and returns everything the
// server writes before closing the connection.
func FourLetterWord(ctx context.Context, addr, word string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	} else {
		c.SetDeadline(time.Now().Add(10 * time.Second))
	}
	if _, err := c.Write([]byte(word)); err != nil {
		return "", err
	}
	var b strings.Builder
	r := bufio.NewReader(c)
	if _, err := r.WriteTo(&b); err != nil {
		return b.String(), err
	}
	return b.String(), nil
}

// Mode asks the server at addr for its srvr mode: standalone, leader,
// follower or observer; "" when it does not serve (an ensemble member
// electing or synchronizing) or does not answer.
func Mode(ctx context.Context, addr string) string {
	out, err := FourLetterWord(ctx, addr, "srvr")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(out, "\n") {
		if mode, ok := strings.CutPrefix(line, "Mode: "); ok {
			return mode
		}
	}
	return ""
}

// logTail returns the last lines of a log file, for start-up errors (the
// test's temp dir, and the log with it, is gone when the error is read).
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}
