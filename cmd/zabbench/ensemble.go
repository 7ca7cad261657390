package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/localens"
)

// ensembleResult is one kind of server's figures as an ensemble.
type ensembleResult struct {
	result
	failover time.Duration // SIGKILL of the leader → a client's next write succeeds
	rejoin   time.Duration // restart of the killed member → it serves again
	// With -sync-nodes: a follower restarted without its data (SNAP) and
	// one restarted after missing a few writes (DIFF), until each serves.
	snapSync, diffSync time.Duration
	// snapWrites: a client's writes to the leader, one in flight, while
	// the follower took its SNAP (latencies, sorted).
	snapWrites []time.Duration
}

// runEnsemble measures zabd and ZooKeeper 3.8 as o.members-member
// ensembles on loopback, one after the other: throughput with the
// connections spread over the members, latency through a follower, and the
// failover and rejoin times of a leader killed with SIGKILL.
func runEnsemble(o options, dir string) error {
	bin, err := zabdBinary(o, dir)
	if err != nil {
		return err
	}
	kinds := []struct {
		name   string
		launch func(int64, string) (*exec.Cmd, error)
	}{{"zabd", nil}}
	if !o.skipZooKeeper {
		kinds = append(kinds, struct {
			name   string
			launch func(int64, string) (*exec.Cmd, error)
		}{"ZooKeeper 3.8.0", localens.ZooKeeper})
	}
	var results []ensembleResult
	for i, k := range kinds {
		extra := map[string]string{"maxClientCnxns": "0"}
		if ms := o.electionWait.Milliseconds(); ms > 0 {
			extra["fastleader.minNotificationInterval"] = fmt.Sprint(ms)
			if k.launch == nil {
				extra["fastleader.finalizeWait"] = fmt.Sprint(ms)
			}
		}
		e, err := localens.Start(localens.Options{Binary: bin, Launch: k.launch, Voters: o.members,
			Dir: filepath.Join(dir, fmt.Sprintf("ensemble%d", i)), TickTime: 2 * time.Second, Extra: extra})
		if err != nil {
			return err
		}
		r, err := measureEnsemble(o, k.name, e)
		e.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", k.name, err)
		}
		results = append(results, r)
	}
	printEnsembleTable(o, results)
	if o.svgDir != "" {
		return writeEnsembleCharts(o.svgDir, results)
	}
	return nil
}

func measureEnsemble(o options, name string, e *localens.Ensemble) (ensembleResult, error) {
	r := ensembleResult{result: result{name: name}}
	ctx := context.Background()
	waitCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	leader, err := e.WaitServing(waitCtx)
	cancel()
	if err != nil {
		return r, err
	}
	addrs := e.ClientAddrs()
	pids := func() []int {
		var ps []int
		for _, m := range e.Members {
			ps = append(ps, m.Pid())
		}
		return ps
	}
	fmt.Fprintf(os.Stderr, "%s: %d members, server %d leads; warming up for %v\n", name, len(addrs), leader, o.warmup)
	if _, err := throughput(ctx, addrs, o, wire.OpSetData, o.warmup); err != nil {
		return r, err
	}
	if _, err := throughput(ctx, addrs, o, wire.OpGetData, o.warmup/2); err != nil {
		return r, err
	}
	fmt.Fprintf(os.Stderr, "%s: writes\n", name)
	self := selfCPU()
	cpu, ops, err := withCPU(pids(), func() (int64, error) { return throughput(ctx, addrs, o, wire.OpSetData, o.duration) })
	if err != nil {
		return r, err
	}
	r.writesPerSec, r.writeCPU, r.clientWriteCPU = float64(ops)/o.duration.Seconds(), perOp(cpu, ops), perOp(selfCPU()-self, ops)
	fmt.Fprintf(os.Stderr, "%s: reads\n", name)
	self = selfCPU()
	cpu, ops, err = withCPU(pids(), func() (int64, error) { return throughput(ctx, addrs, o, wire.OpGetData, o.duration) })
	if err != nil {
		return r, err
	}
	r.readsPerSec, r.readCPU, r.clientReadCPU = float64(ops)/o.duration.Seconds(), perOp(cpu, ops), perOp(selfCPU()-self, ops)
	follower := e.Member(leader%int64(len(addrs)) + 1).ClientAddr
	fmt.Fprintf(os.Stderr, "%s: latency through follower %s\n", name, follower)
	if r.writeP50, r.writeP99, err = latency(ctx, follower, wire.OpSetData, o.duration/2); err != nil {
		return r, err
	}
	if r.readP50, r.readP99, err = latency(ctx, follower, wire.OpGetData, o.duration/2); err != nil {
		return r, err
	}
	fmt.Fprintf(os.Stderr, "%s: failover\n", name)
	if r.failover, r.rejoin, err = failover(ctx, e, o.failovers); err != nil {
		return r, err
	}
	if o.syncNodes > 0 {
		if r.snapSync, r.diffSync, r.snapWrites, err = syncTimes(ctx, o, name, e); err != nil {
			return r, err
		}
	}
	return r, nil
}

// syncTimes grows the tree to o.syncNodes znodes, then times a follower
// brought back without its data (the leader sends a SNAP) and one brought
// back after missing 1000 writes (DIFF), each from its restart until it
// serves. During the SNAP a client writes to the leader, one request in
// flight: snapWrites are those writes' latencies.
func syncTimes(ctx context.Context, o options, name string, e *localens.Ensemble) (snap, diff time.Duration, snapWrites []time.Duration, err error) {
	fmt.Fprintf(os.Stderr, "%s: growing the tree to %d znodes\n", name, o.syncNodes)
	if err := createNodes(ctx, e.ClientAddrs(), "/sync", o.syncNodes); err != nil {
		return 0, 0, nil, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	leader, err := e.WaitServing(waitCtx)
	cancel()
	if err != nil {
		return 0, 0, nil, err
	}
	follower := leader%int64(len(e.Members)) + 1
	rejoin := func() (time.Duration, error) {
		start := time.Now()
		if err := e.Restart(follower); err != nil {
			return 0, err
		}
		for e.Mode(ctx, follower) == "" {
			if time.Since(start) > 5*time.Minute {
				return 0, fmt.Errorf("server %d did not serve within 5 minutes of its restart", follower)
			}
			time.Sleep(10 * time.Millisecond) // polling srvr
		}
		return time.Since(start), nil
	}
	fmt.Fprintf(os.Stderr, "%s: SNAP of server %d\n", name, follower)
	e.Member(follower).Stop(syscall.SIGTERM)
	if err := e.Wipe(follower); err != nil {
		return 0, 0, nil, err
	}
	writer, err := dialAll(ctx, []string{e.Member(leader).ClientAddr}, 1)
	if err != nil {
		return 0, 0, nil, err
	}
	defer closeAll(writer)
	rejoined := make(chan struct{})
	written := make(chan error, 1)
	go func() {
		var err error
		snapWrites, err = latencies(ctx, writer[0], wire.OpSetData, func() bool {
			select {
			case <-rejoined:
				return false
			default:
				return true
			}
		})
		written <- err
	}()
	snap, err = rejoin()
	close(rejoined)
	if werr := <-written; err == nil {
		err = werr
	}
	if err != nil {
		return 0, 0, nil, err
	}
	fmt.Fprintf(os.Stderr, "%s: DIFF of server %d\n", name, follower)
	e.Member(follower).Stop(syscall.SIGTERM)
	if err := createNodes(ctx, []string{e.Member(leader).ClientAddr}, "/diff", 1000); err != nil {
		return 0, 0, nil, err
	}
	diff, err = rejoin()
	return snap, diff, snapWrites, err
}

// createNodes creates n znodes parent/<i> (10 bytes each) under a new
// parent, pipelined over 8 connections spread over addrs.
func createNodes(ctx context.Context, addrs []string, parent string, n int) error {
	conns, err := dialAll(ctx, addrs, 8)
	if err != nil {
		return err
	}
	defer closeAll(conns)
	if _, err := conns[0].Create(ctx, parent, nil, client.OpenACL, wire.ModePersistent); err != nil && !errors.Is(err, wire.ErrNodeExists) {
		return err
	}
	data := payload[:10]
	errs := make(chan error, len(conns))
	for ci, c := range conns {
		go func() {
			var window []*client.Call
			for i := ci; i < n || len(window) > 0; {
				if i < n && len(window) < 64 {
					call, err := c.Send(wire.OpCreate, &wire.CreateRequest{Path: fmt.Sprintf("%s/%08d", parent, i), Data: data, ACL: client.OpenACL})
					if err != nil {
						errs <- err
						return
					}
					window = append(window, call)
					i += len(conns)
					continue
				}
				r, err := window[0].Wait(ctx)
				if err == nil && r.Header.Err != wire.ErrOK {
					err = r.Header.Err
				}
				if err != nil {
					errs <- err
					return
				}
				window = window[1:]
			}
			errs <- nil
		}()
	}
	for range conns {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// failover kills the leader with SIGKILL while a client writes through a
// follower, one request in flight, and measures the time from the kill to
// the client's next successful write (reconnecting with its session to any
// member, as a client would); then restarts the killed member and measures
// the time until it serves again. It does so runs times and returns the
// medians.
func failover(ctx context.Context, e *localens.Ensemble, runs int) (time.Duration, time.Duration, error) {
	var downs, rejoins []time.Duration
	for range max(runs, 1) {
		waitCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
		leader, err := e.WaitServing(waitCtx)
		cancel()
		if err != nil {
			return 0, 0, err
		}
		down, err := killLeaderWhileWriting(ctx, e, leader)
		if err != nil {
			return 0, 0, err
		}
		start := time.Now()
		if err := e.Restart(leader); err != nil {
			return 0, 0, err
		}
		for e.Mode(ctx, leader) == "" {
			if time.Since(start) > time.Minute {
				return 0, 0, fmt.Errorf("server %d did not serve within a minute of its restart", leader)
			}
			time.Sleep(5 * time.Millisecond) // polling srvr
		}
		rejoins = append(rejoins, time.Since(start))
		downs = append(downs, down)
	}
	return median(downs), median(rejoins), nil
}

func killLeaderWhileWriting(ctx context.Context, e *localens.Ensemble, leader int64) (time.Duration, error) {
	addrs := e.ClientAddrs()
	follower := leader%int64(len(addrs)) + 1
	c, err := client.Dial(ctx, e.Member(follower).ClientAddr, client.Session{Timeout: 30 * time.Second})
	if err != nil {
		return 0, err
	}
	session := c.Session()
	req := &wire.SetDataRequest{Path: "/bench-failover", Data: payload, Version: -1}
	if _, err := c.Create(ctx, req.Path, payload, client.OpenACL, wire.ModePersistent); err != nil && !errors.Is(err, wire.ErrNodeExists) {
		return 0, err
	}
	for range 20 { // a steady stream of writes before the kill
		if _, err := c.Do(ctx, wire.OpSetData, req); err != nil {
			return 0, err
		}
	}
	killed := time.Now()
	e.Member(leader).Stop(syscall.SIGKILL)
	next := int(follower)
	for time.Since(killed) < time.Minute {
		r, err := c.Do(ctx, wire.OpSetData, req)
		if err == nil && r.Header.Err == wire.ErrOK {
			down := time.Since(killed)
			c.CloseSession(ctx)
			return down, nil
		}
		// The connection is gone (or the member is electing): reconnect
		// with the session, trying the members in turn, pausing 5 ms
		// after each round as a client backs off.
		c.Close()
		for {
			addr := addrs[next%len(addrs)]
			next++
			if next%len(addrs) == int(follower)%len(addrs) {
				time.Sleep(5 * time.Millisecond)
			}
			dialCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			c, err = client.Dial(dialCtx, addr, session)
			cancel()
			if err == nil {
				break
			}
			if time.Since(killed) > time.Minute {
				return 0, errors.New("no member took the session back within a minute")
			}
		}
	}
	return 0, errors.New("no write succeeded within a minute of killing the leader")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func printEnsembleTable(o options, results []ensembleResult) {
	wait := "ZooKeeper's election timing"
	if o.electionWait > 0 {
		wait = fmt.Sprintf("election wait %v (zabd's final wait and both's first notification interval)", o.electionWait)
	}
	fmt.Printf("%s; %d-member ensembles; %d conns × %d in flight spread over the members, %v per phase; latency one request in flight through a follower; failover and rejoin the median of %d SIGKILLs of the leader; %s\n\n",
		machine(), o.members, o.conns, o.inflight, o.duration, max(o.failovers, 1), wait)
	fmt.Println("| servers | writes/s | server CPU/write | reads/s | server CPU/read | write p50 | write p99 | read p50 | read p99 | failover | rejoin |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Printf("| %s | %.0f | %v | %.0f | %v | %v | %v | %v | %v | %v | %v |\n", r.name,
			r.writesPerSec, r.writeCPU.Round(100*time.Nanosecond), r.readsPerSec, r.readCPU.Round(100*time.Nanosecond),
			r.writeP50.Round(time.Microsecond), r.writeP99.Round(time.Microsecond), r.readP50.Round(time.Microsecond), r.readP99.Round(time.Microsecond),
			r.failover.Round(time.Millisecond), r.rejoin.Round(time.Millisecond))
	}
	if o.syncNodes > 0 {
		fmt.Printf("\nA follower rejoining a tree of %d znodes, from its restart until it serves:\n\n", o.syncNodes)
		fmt.Println("| servers | without its data (SNAP) | the leader's writes meanwhile: p50 / p99 / max | after missing 1000 writes (DIFF) |")
		fmt.Println("|---|---:|---:|---:|")
		for _, r := range results {
			w := r.snapWrites
			fmt.Printf("| %s | %v | %v / %v / %v (%d writes) | %v |\n", r.name, r.snapSync.Round(time.Millisecond),
				w[len(w)/2].Round(time.Microsecond), w[len(w)*99/100].Round(time.Microsecond), w[len(w)-1].Round(time.Millisecond), len(w),
				r.diffSync.Round(time.Millisecond))
		}
	}
}

// writeEnsembleCharts writes one SVG bar chart per figure into dir.
func writeEnsembleCharts(dir string, results []ensembleResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	figures := []struct {
		file, title, unit string
		value             func(ensembleResult) float64
	}{
		{"n3-writes.svg", "writes/s (100-byte setData, pipelined)", "ops/s", func(r ensembleResult) float64 { return r.writesPerSec }},
		{"n3-reads.svg", "reads/s (getData, pipelined)", "ops/s", func(r ensembleResult) float64 { return r.readsPerSec }},
		{"n3-write-p50.svg", "write latency p50, one in flight", "µs", func(r ensembleResult) float64 { return float64(r.writeP50.Microseconds()) }},
		{"n3-write-p99.svg", "write latency p99, one in flight", "µs", func(r ensembleResult) float64 { return float64(r.writeP99.Microseconds()) }},
		{"n3-failover.svg", "SIGKILL of the leader → next write succeeds", "ms", func(r ensembleResult) float64 { return float64(r.failover.Milliseconds()) }},
		{"n3-rejoin.svg", "restart of the killed member → it serves", "ms", func(r ensembleResult) float64 { return float64(r.rejoin.Milliseconds()) }},
	}
	for _, f := range figures {
		var bars []bar
		for _, r := range results {
			bars = append(bars, bar{label: r.name, value: f.value(r)})
		}
		if err := os.WriteFile(filepath.Join(dir, f.file), []byte(barChart(f.title, f.unit, bars)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

type bar struct {
	label string
	value float64
}

// barChart renders a horizontal bar chart as a small standalone SVG.
func barChart(title, unit string, bars []bar) string {
	const width, left, barH, gap, top = 560, 150, 26, 12, 34
	maxV := 0.0
	for _, b := range bars {
		maxV = max(maxV, b.value)
	}
	height := top + len(bars)*(barH+gap) + 10
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="13">`+"\n", width, height)
	fmt.Fprintf(&s, `<text x="8" y="20" font-weight="bold">%s</text>`+"\n", escapeXML(title))
	colors := []string{"#2b7bb9", "#d9822b", "#5a9e4b", "#8e6bb8"}
	for i, b := range bars {
		y := top + i*(barH+gap)
		w := 0.0
		if maxV > 0 {
			w = b.value / maxV * float64(width-left-110)
		}
		fmt.Fprintf(&s, `<text x="8" y="%d">%s</text>`+"\n", y+barH-8, escapeXML(b.label))
		fmt.Fprintf(&s, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", left, y, w, barH, colors[i%len(colors)])
		fmt.Fprintf(&s, `<text x="%.1f" y="%d">%s %s</text>`+"\n", float64(left)+w+6, y+barH-8, formatValue(b.value), unit)
	}
	s.WriteString("</svg>\n")
	return s.String()
}

func formatValue(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func escapeXML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
