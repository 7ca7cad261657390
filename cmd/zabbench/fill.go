package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

// fillResult is one server's memory and restart figures at o.fill znodes.
type fillResult struct {
	name               string
	nodes              int           // znodes created
	fillTime           time.Duration // creating them, pipelined
	rssIdle, rssFilled int64         // bytes, before and after the fill
	restart            time.Duration // process start → a read of the last znode succeeds (median of o.restarts)
	rssRestarted       int64         // bytes, right after the last restart serves
}

// fillShape is the tree -fill builds, as datatree's benchmarks do: parents
// under the root, each with the same number of children, 10-character
// names, 100 bytes of data each.
func fillShape(n int) (parents, perParent int) {
	parents = max(n/1000, 1)
	return parents, n/parents - 1
}

func fillName(i int) string { return fmt.Sprintf("n%09d", i) }

// runFill fills each server with o.fill znodes over the client protocol and
// reports the growth of its resident set per znode, then restarts it on its
// data directory o.restarts times and times each until it serves a read of
// the last znode.
func runFill(o options, dir string) error {
	var results []fillResult
	zabdDir := filepath.Join(dir, "zabd")
	r, err := fillOne(o, "zabd", func() (string, int, func(), error) {
		p, err := startZabd(o, zabdDir)
		if err != nil {
			return "", 0, nil, err
		}
		return p.addr, p.pid, p.stop, nil
	})
	if err != nil {
		return err
	}
	results = append(results, r)
	if !o.skipZooKeeper {
		zkDir := filepath.Join(dir, "zookeeper")
		if err := os.MkdirAll(zkDir, 0o755); err != nil {
			return err
		}
		r, err := fillOne(o, "ZooKeeper 3.8.0", func() (string, int, func(), error) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			zk, err := zkprocess.Start(ctx, zkDir, map[string]string{"tickTime": "2000"})
			if err != nil {
				return "", 0, nil, err
			}
			return zk.Addr, zk.Pid(), zk.Stop, nil
		})
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	printFillTable(o, results)
	return nil
}

// fillOne measures one server; start starts it on its data directory (the
// same one each time) and returns its client address, pid and a stop
// function.
func fillOne(o options, name string, start func() (addr string, pid int, stop func(), err error)) (fillResult, error) {
	r := fillResult{name: name}
	ctx := context.Background()
	addr, pid, stop, err := start()
	if err != nil {
		return r, err
	}
	if r.rssIdle, err = rss(pid); err != nil {
		stop()
		return r, err
	}
	fmt.Fprintf(os.Stderr, "%s: filling with %d znodes\n", name, o.fill)
	begin := time.Now()
	last, err := fill(ctx, addr, o.fill)
	r.fillTime = time.Since(begin)
	if err == nil {
		r.rssFilled, err = rss(pid)
	}
	stop()
	if err != nil {
		return r, err
	}
	r.nodes = o.fill
	var restarts []time.Duration
	for i := range max(o.restarts, 1) {
		fmt.Fprintf(os.Stderr, "%s: restart %d\n", name, i+1)
		begin = time.Now()
		addr, pid, stop, err = start()
		if err != nil {
			return r, err
		}
		err = readUntilServed(ctx, addr, last, 5*time.Minute)
		restarts = append(restarts, time.Since(begin))
		if err == nil {
			r.rssRestarted, err = rss(pid)
		}
		stop()
		if err != nil {
			return r, err
		}
	}
	slices.Sort(restarts)
	r.restart = restarts[len(restarts)/2]
	return r, nil
}

// fill creates n znodes in fillShape's tree, pipelined over 8 connections
// with 64 requests in flight each, and returns the last one's path.
func fill(ctx context.Context, addr string, n int) (string, error) {
	parents, perParent := fillShape(n)
	paths := func(i int) string { // i-th znode: the parents first
		if i < parents {
			return "/" + fillName(i)
		}
		return "/" + fillName(i%parents) + "/" + fillName(i)
	}
	total := parents * (perParent + 1)
	if err := createPipelined(ctx, addr, 0, parents, paths); err != nil {
		return "", err
	}
	if err := createPipelined(ctx, addr, parents, total, paths); err != nil {
		return "", err
	}
	return paths(total - 1), nil
}

// createPipelined creates the znodes path(from) … path(to-1), 100 bytes
// each, over 8 connections with up to 64 requests in flight on each.
func createPipelined(ctx context.Context, addr string, from, to int, path func(int) string) error {
	const nconns, window = 8, 64
	conns := make([]*client.Conn, 0, nconns)
	for range nconns {
		c, err := client.Dial(ctx, addr, client.Session{Timeout: 30 * time.Second})
		if err != nil {
			closeAll(conns)
			return err
		}
		conns = append(conns, c)
	}
	defer closeAll(conns)
	errs := make(chan error, len(conns))
	for ci, c := range conns {
		go func() {
			var calls []*client.Call
			for i := from + ci; i < to || len(calls) > 0; {
				if i < to && len(calls) < window {
					call, err := c.Send(wire.OpCreate, &wire.CreateRequest{Path: path(i), Data: payload, ACL: client.OpenACL})
					if err != nil {
						errs <- err
						return
					}
					calls = append(calls, call)
					i += len(conns)
					continue
				}
				r, err := calls[0].Wait(ctx)
				if err == nil && r.Header.Err != wire.ErrOK {
					err = r.Header.Err
				}
				if err != nil {
					errs <- err
					return
				}
				calls = calls[1:]
			}
			errs <- nil
		}()
	}
	var first error
	for range conns {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// readUntilServed connects to addr and reads path until it succeeds,
// retrying every 10 ms (the server may still be loading).
func readUntilServed(ctx context.Context, addr, path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		err := func() error {
			attempt, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			c, err := client.Dial(attempt, addr, client.Session{Timeout: 30 * time.Second})
			if err != nil {
				return err
			}
			defer c.CloseSession(ctx)
			_, _, err = c.GetData(attempt, path, false)
			return err
		}()
		if err == nil {
			return nil
		}
		if errors.Is(err, wire.ErrNoNode) || time.Now().After(deadline) {
			return fmt.Errorf("read %s after the restart: %w", path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rss is the resident set size of pid (VmRSS).
func rss(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

func printFillTable(o options, results []fillResult) {
	parents, perParent := fillShape(o.fill)
	fmt.Printf("%s; %d parents × %d children, 10-character names, 100-byte data; restart: median of %d\n\n",
		machine(), parents, perParent, max(o.restarts, 1))
	fmt.Println("| server | znodes | fill | RSS idle | RSS filled | RSS growth / znode | restart until serving | RSS restarted | RSS restarted / znode |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	mib := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	for _, r := range results {
		fmt.Printf("| %s | %d | %v | %s | %s | %.0f B | %v | %s | %.0f B |\n", r.name, r.nodes,
			r.fillTime.Round(100*time.Millisecond), mib(r.rssIdle), mib(r.rssFilled),
			float64(r.rssFilled-r.rssIdle)/float64(r.nodes), r.restart.Round(10*time.Millisecond),
			mib(r.rssRestarted), float64(r.rssRestarted-r.rssIdle)/float64(r.nodes))
	}
}
