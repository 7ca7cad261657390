// Command zabbench loads zabd and Debian's ZooKeeper 3.8 with the same
// pipelined requests in the same run and prints a Markdown table: writes/s
// (100-byte setData, -conns connections × -inflight requests in flight),
// reads/s (getData, same shape), p50/p99 latency with one connection and one
// request in flight, and each server's CPU time per operation.
//
// Both servers run as separate processes on loopback with fsync on, data in
// a temp dir; ZooKeeper's JVM is warmed up first. With -pin, servers run on
// CPU 0 (taskset) and the load generator on the others.
//
// With -n 3 both run as 3-member ensembles (zab/server/localens): the
// connections are spread over the members, latency goes through a
// follower, and the table adds failover (SIGKILL of the leader until a
// client's next write succeeds) and rejoin (restart of the killed member
// until it serves); -svg DIR writes a bar chart per figure.
//
// With -fill N each server, standalone, is filled with N znodes instead
// (N/1000 parents under the root with the rest spread evenly under them,
// 10-character names, 100 bytes of data, as datatree's benchmarks build
// theirs); the table gives its resident set's growth per znode, and the
// time a restart on the same data directory takes until it serves a read
// of the last znode (snapshot load and log replay; the median of
// -restarts).
//
//	go run ./cmd/zabbench -duration 10s
//	go run ./cmd/zabbench -n 3 -duration 10s -svg docs/bench
//	go run ./cmd/zabbench -fill 1000000 -zk-heap 3g
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

type options struct {
	duration, warmup time.Duration
	conns, inflight  int
	zabdBin          string
	pin              bool
	skipZooKeeper    bool
	members          int    // ensemble size; 1 is standalone
	failovers        int    // leader kills to take the median of
	svgDir           string // where the ensemble charts go
	// electionWait, if set, is fastleader.minNotificationInterval for both
	// ensembles and zabd's fastleader.finalizeWait (ZooKeeper fixes its
	// final wait at 200 ms).
	electionWait time.Duration
	// syncNodes, if set, adds the synchronization phase: the tree grows to
	// this many znodes, then a follower is brought back by SNAP and by DIFF.
	syncNodes int
	// fill, if set, replaces the throughput phases: each server is filled
	// with this many znodes, its resident set measured, and restarted.
	fill     int
	restarts int      // with fill: restarts to take the median of
	zabdEnv  []string // KEY=VALUE added to zabd's environment
	zkHeap   string   // ZooKeeper's JVM -Xmx
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of each measured phase")
	flag.DurationVar(&o.warmup, "warmup", 5*time.Second, "warm-up load before measuring (JIT for ZooKeeper)")
	flag.IntVar(&o.conns, "conns", 8, "connections for the throughput phases")
	flag.IntVar(&o.inflight, "inflight", 16, "requests in flight per connection in the throughput phases")
	flag.StringVar(&o.zabdBin, "zabd", "", "zabd binary (default: go build ./cmd/zabd)")
	flag.BoolVar(&o.pin, "pin", false, "run the servers on CPU 0 and the load generator on the other CPUs")
	flag.BoolVar(&o.skipZooKeeper, "zabd-only", false, "measure zabd only")
	flag.IntVar(&o.members, "n", 1, "ensemble size (1: standalone)")
	flag.IntVar(&o.failovers, "failovers", 5, "with -n: leader kills, the median is reported")
	flag.StringVar(&o.svgDir, "svg", "", "with -n: write a bar chart per figure into this directory")
	flag.IntVar(&o.syncNodes, "sync-nodes", 0, "with -n: grow the tree to this many znodes and time a follower's SNAP and DIFF synchronization")
	flag.DurationVar(&o.electionWait, "election-wait", 0, "with -n: fastleader.minNotificationInterval for both, and zabd's fastleader.finalizeWait (default: ZooKeeper's 200ms)")
	flag.IntVar(&o.fill, "fill", 0, "standalone: fill each server with this many znodes (100 bytes each), report RSS growth per znode and time a restart until it serves")
	flag.IntVar(&o.restarts, "restarts", 3, "with -fill: restarts to time, the median is reported")
	flag.Func("zabd-env", "KEY=VALUE to add to zabd's environment (repeatable), e.g. GOMEMLIMIT=400MiB", func(s string) error {
		if !strings.Contains(s, "=") {
			return errors.New("want KEY=VALUE")
		}
		o.zabdEnv = append(o.zabdEnv, s)
		return nil
	})
	flag.StringVar(&o.zkHeap, "zk-heap", "", "ZooKeeper's JVM maximum heap (-Xmx; default "+zkprocess.Heap+")")
	flag.Parse()
	if o.zkHeap != "" {
		zkprocess.Heap = o.zkHeap
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "zabbench:", err)
		os.Exit(1)
	}
}

// result is one server's figures.
type result struct {
	name                          string
	writesPerSec, readsPerSec     float64
	writeCPU, readCPU             time.Duration // server CPU per op
	clientWriteCPU, clientReadCPU time.Duration // load generator CPU per op
	writeP50, writeP99            time.Duration
	readP50, readP99              time.Duration
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "zabbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if o.pin {
		if err := pinSelf(); err != nil {
			return err
		}
	}
	if o.members > 1 {
		return runEnsemble(o, dir)
	}
	if o.fill > 0 {
		return runFill(o, dir)
	}
	var results []result
	zabd, err := startZabd(o, dir)
	if err != nil {
		return err
	}
	r, err := measure(o, "zabd", zabd.addr, zabd.pid)
	zabd.stop()
	if err != nil {
		return err
	}
	results = append(results, r)
	if !o.skipZooKeeper {
		zk, err := startZooKeeper(o, dir)
		if err != nil {
			return err
		}
		r, err := measure(o, "ZooKeeper 3.8.0", zk.Addr, zk.Pid())
		zk.Stop()
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	printTable(o, results)
	return nil
}

func measure(o options, name, addr string, pid int) (result, error) {
	r := result{name: name}
	ctx := context.Background()
	addrs, pids := []string{addr}, []int{pid}
	fmt.Fprintf(os.Stderr, "%s: warming up for %v\n", name, o.warmup)
	if _, err := throughput(ctx, addrs, o, wire.OpSetData, o.warmup); err != nil {
		return r, err
	}
	if _, err := throughput(ctx, addrs, o, wire.OpGetData, o.warmup/2); err != nil {
		return r, err
	}
	var ops int64
	var cpu time.Duration
	var err error
	fmt.Fprintf(os.Stderr, "%s: writes\n", name)
	self := selfCPU()
	cpu, ops, err = withCPU(pids, func() (int64, error) { return throughput(ctx, addrs, o, wire.OpSetData, o.duration) })
	if err != nil {
		return r, err
	}
	r.writesPerSec, r.writeCPU, r.clientWriteCPU = float64(ops)/o.duration.Seconds(), perOp(cpu, ops), perOp(selfCPU()-self, ops)
	fmt.Fprintf(os.Stderr, "%s: reads\n", name)
	self = selfCPU()
	cpu, ops, err = withCPU(pids, func() (int64, error) { return throughput(ctx, addrs, o, wire.OpGetData, o.duration) })
	if err != nil {
		return r, err
	}
	r.readsPerSec, r.readCPU, r.clientReadCPU = float64(ops)/o.duration.Seconds(), perOp(cpu, ops), perOp(selfCPU()-self, ops)
	fmt.Fprintf(os.Stderr, "%s: latency\n", name)
	if r.writeP50, r.writeP99, err = latency(ctx, addr, wire.OpSetData, o.duration/2); err != nil {
		return r, err
	}
	if r.readP50, r.readP99, err = latency(ctx, addr, wire.OpGetData, o.duration/2); err != nil {
		return r, err
	}
	return r, nil
}

func perOp(cpu time.Duration, ops int64) time.Duration {
	if ops == 0 {
		return 0
	}
	return cpu / time.Duration(ops)
}

// withCPU runs fn and returns the CPU time the processes pids used
// meanwhile.
func withCPU(pids []int, fn func() (int64, error)) (time.Duration, int64, error) {
	total := func() (time.Duration, error) {
		var sum time.Duration
		for _, pid := range pids {
			cpu, err := processCPU(pid)
			if err != nil {
				return 0, err
			}
			sum += cpu
		}
		return sum, nil
	}
	before, err := total()
	if err != nil {
		return 0, 0, err
	}
	ops, err := fn()
	after, err2 := total()
	return after - before, ops, errors.Join(err, err2)
}

// selfCPU is the load generator's own CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU reads utime+stime of pid (and its threads) from /proc.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// throughput keeps o.inflight requests in flight on each of o.conns
// connections (spread over addrs) for d and counts the replies.
func throughput(ctx context.Context, addrs []string, o options, op wire.OpCode, d time.Duration) (int64, error) {
	conns, err := dialAll(ctx, addrs, o.conns)
	if err != nil {
		return 0, err
	}
	defer closeAll(conns)
	var done atomic.Int64
	var firstErr error
	var errOnce sync.Once
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := fmt.Sprintf("/bench-%d", i)
			req := request(op, path)
			window := make([]*client.Call, 0, o.inflight)
			for time.Now().Before(stop) || len(window) > 0 {
				if time.Now().Before(stop) && len(window) < o.inflight {
					call, err := c.Send(op, req)
					if err != nil {
						errOnce.Do(func() { firstErr = err })
						return
					}
					window = append(window, call)
					continue
				}
				r, err := window[0].Wait(ctx)
				if err == nil && r.Header.Err != wire.ErrOK {
					err = r.Header.Err
				}
				if err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("%s %s: %w", op, path, err) })
					return
				}
				window = window[1:]
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	return done.Load(), firstErr
}

// latency runs one request at a time on one connection for d and returns
// the median and 99th percentile.
func latency(ctx context.Context, addr string, op wire.OpCode, d time.Duration) (p50, p99 time.Duration, err error) {
	conns, err := dialAll(ctx, []string{addr}, 1)
	if err != nil {
		return 0, 0, err
	}
	defer closeAll(conns)
	stop := time.Now().Add(d)
	samples, err := latencies(ctx, conns[0], op, func() bool { return time.Now().Before(stop) })
	if err != nil {
		return 0, 0, err
	}
	return samples[len(samples)/2], samples[len(samples)*99/100], nil
}

// latencies sends op on c, one request in flight, while more says so (at
// least once), and returns each request's latency, sorted.
func latencies(ctx context.Context, c *client.Conn, op wire.OpCode, more func() bool) ([]time.Duration, error) {
	req := request(op, "/bench-0")
	var samples []time.Duration
	for len(samples) == 0 || more() {
		start := time.Now()
		r, err := c.Do(ctx, op, req)
		if err == nil && r.Header.Err != wire.ErrOK {
			err = r.Header.Err
		}
		if err != nil {
			return nil, err
		}
		samples = append(samples, time.Since(start))
	}
	slices.Sort(samples)
	return samples, nil
}

var payload = make([]byte, 100)

func request(op wire.OpCode, path string) wire.Record {
	if op == wire.OpSetData {
		return &wire.SetDataRequest{Path: path, Data: payload, Version: -1}
	}
	return &wire.PathWatchRequest{Path: path}
}

// dialAll opens n sessions, spread over addrs, and makes sure each one's
// node exists.
func dialAll(ctx context.Context, addrs []string, n int) ([]*client.Conn, error) {
	var conns []*client.Conn
	for i := range n {
		c, err := client.Dial(ctx, addrs[i%len(addrs)], client.Session{Timeout: 30 * time.Second})
		if err != nil {
			closeAll(conns)
			return nil, err
		}
		conns = append(conns, c)
		_, err = c.Create(ctx, fmt.Sprintf("/bench-%d", i), payload, client.OpenACL, wire.ModePersistent)
		if err != nil && !errors.Is(err, wire.ErrNodeExists) {
			closeAll(conns)
			return nil, err
		}
	}
	return conns, nil
}

func closeAll(conns []*client.Conn) {
	for _, c := range conns {
		c.CloseSession(context.Background())
	}
}

// zabdProcess is a zabd started for the benchmark.
type zabdProcess struct {
	cmd  *exec.Cmd
	addr string
	pid  int
}

func (p *zabdProcess) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
}

// zabdBinary is -zabd, or cmd/zabd built into dir.
func zabdBinary(o options, dir string) (string, error) {
	if o.zabdBin != "" {
		return o.zabdBin, nil
	}
	bin := filepath.Join(dir, "zabd")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/zabd").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build zabd (run from the repository root or pass -zabd): %v: %s", err, out)
	}
	return bin, nil
}

func startZabd(o options, dir string) (*zabdProcess, error) {
	bin, err := zabdBinary(o, dir)
	if err != nil {
		return nil, err
	}
	port, err := zkprocess.FreePort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "zabd.cfg")
	text := fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=*\nmaxClientCnxns=0\n",
		filepath.Join(dir, "zabd-data"), port)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		return nil, err
	}
	args := []string{bin, "-config", cfg, "-log-level", "warn"}
	if o.pin {
		args = append([]string{"taskset", "-c", "0"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	cmd.Env = append(os.Environ(), o.zabdEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &zabdProcess{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", port), pid: cmd.Process.Pid}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		out, err := zkprocess.FourLetterWord(ctx, p.addr, "ruok")
		cancel()
		if err == nil && out == "imok" {
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("zabd did not start on %s", p.addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func startZooKeeper(o options, dir string) (*zkprocess.Server, error) {
	zkDir := filepath.Join(dir, "zookeeper")
	if err := os.MkdirAll(zkDir, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	zk, err := zkprocess.Start(ctx, zkDir, map[string]string{"tickTime": "2000"})
	if err != nil {
		return nil, err
	}
	if o.pin {
		if out, err := exec.Command("taskset", "-a", "-p", "-c", "0", strconv.Itoa(zk.Pid())).CombinedOutput(); err != nil {
			zk.Stop()
			return nil, fmt.Errorf("pin ZooKeeper: %v: %s", err, out)
		}
	}
	return zk, nil
}

// pinSelf keeps the load generator off CPU 0 by re-executing zabbench
// under taskset.
func pinSelf() error {
	if os.Getenv("ZABBENCH_PINNED") != "" {
		return nil
	}
	if runtime.NumCPU() < 2 {
		return errors.New("-pin needs at least 2 CPUs")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return fmt.Errorf("-pin needs taskset: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	args := append([]string{taskset, "-c", fmt.Sprintf("1-%d", runtime.NumCPU()-1), self}, os.Args[1:]...)
	return syscall.Exec(taskset, args, append(os.Environ(), "ZABBENCH_PINNED=1"))
}

// machine describes the CPUs and the Go version.
func machine() string {
	cpuModel := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				cpuModel = strings.TrimSpace(strings.SplitN(line, ":", 2)[1])
				break
			}
		}
	}
	return fmt.Sprintf("%s × %s, %s", nproc(), cpuModel, runtime.Version())
}

func printTable(o options, results []result) {
	fmt.Printf("%s; %d conns × %d in flight, %v per phase, pinned: %v\n\n",
		machine(), o.conns, o.inflight, o.duration, o.pin)
	fmt.Println("| server | writes/s | server CPU/write | client CPU/write | reads/s | server CPU/read | client CPU/read | write p50 | write p99 | read p50 | read p99 |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Printf("| %s | %.0f | %v | %v | %.0f | %v | %v | %v | %v | %v | %v |\n", r.name,
			r.writesPerSec, r.writeCPU.Round(100*time.Nanosecond), r.clientWriteCPU.Round(100*time.Nanosecond),
			r.readsPerSec, r.readCPU.Round(100*time.Nanosecond), r.clientReadCPU.Round(100*time.Nanosecond),
			r.writeP50.Round(time.Microsecond), r.writeP99.Round(time.Microsecond), r.readP50.Round(time.Microsecond), r.readP99.Round(time.Microsecond))
	}
}

// nproc is the machine's CPU count (not the affinity-limited NumCPU).
func nproc() string {
	out, err := exec.Command("nproc", "--all").Output()
	if err != nil {
		return strconv.Itoa(runtime.NumCPU())
	}
	return strings.TrimSpace(string(out))
}
