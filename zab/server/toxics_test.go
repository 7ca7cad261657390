package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
)

// faultyLinks puts a toxiproxy proxy in front of every member's quorum and
// election port: every peer connection to a member goes through its
// proxies, which can delay, black-hole or cut it.
type faultyLinks struct {
	t       *testing.T
	server  *toxiproxy.ApiServer
	proxies map[int64][]*toxiproxy.Proxy // by member: its quorum and election proxies
}

func newFaultyLinks(t *testing.T) *faultyLinks {
	f := &faultyLinks{t: t, proxies: map[int64][]*toxiproxy.Proxy{},
		server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())}
	t.Cleanup(func() {
		for _, ps := range f.proxies {
			for _, p := range ps {
				p.Stop()
			}
		}
	})
	return f
}

// via starts a proxy for a member's port and returns its address (for
// startEnsembleVia).
func (f *faultyLinks) via(id int64, port int, real string) string {
	p := toxiproxy.NewProxy(f.server, fmt.Sprintf("server%d-port%d", id, port), "127.0.0.1:0", real)
	require.NoError(f.t, p.Start())
	f.proxies[id] = append(f.proxies[id], p)
	return p.Listen
}

// toxic adds a toxic, both ways, to every proxy of the members ids.
func (f *faultyLinks) toxic(typ string, attributes string, ids ...int64) {
	for _, id := range ids {
		for _, p := range f.proxies[id] {
			for _, stream := range []string{"upstream", "downstream"} {
				_, err := p.Toxics.AddToxicJson(strings.NewReader(fmt.Sprintf(
					`{"name":%q,"type":%q,"stream":%q,"toxicity":1.0,"attributes":%s}`, typ+"-"+stream, typ, stream, attributes)))
				require.NoError(f.t, err)
			}
		}
	}
}

// heal removes every toxic and re-enables every proxy.
func (f *faultyLinks) heal() {
	for _, ps := range f.proxies {
		for _, p := range ps {
			p.Toxics.ResetToxics(context.Background())
			if !p.Enabled {
				require.NoError(f.t, p.Start())
			}
		}
	}
}

// cut closes a member's proxies: its peer connections break, and new ones
// are refused until heal.
func (f *faultyLinks) cut(id int64) {
	for _, p := range f.proxies[id] {
		p.Stop()
	}
}

// writers is a recorded load of wire/client sessions, each creating the
// children of its own parents with a few requests in flight, reconnecting
// with its session to the members in turn when its connection breaks.
// Calls cut off by a broken connection stay without a return: their outcome
// is unknown. After each reconnection a writer starts a new parent, so that
// the checkers see each parent's children, with at most a window of
// unknown outcomes, as one small component.
type writers struct {
	rec     *historyRecorder
	addrs   []string
	acked   []map[string]bool // per writer: the creates acknowledged
	parents [][]string        // per writer: the parents it made, in order
	mu      sync.Mutex
}

func (w *writers) run(t *testing.T, ctx context.Context, n, inFlight int) {
	w.acked, w.parents = make([]map[string]bool, n), make([][]string, n)
	var wg sync.WaitGroup
	for i := range n {
		w.acked[i] = map[string]bool{}
		wg.Add(1)
		go func() { defer wg.Done(); w.write(t, ctx, i, inFlight) }()
	}
	wg.Wait()
}

func (w *writers) write(t *testing.T, ctx context.Context, id, inFlight int) {
	var parent string
	var c *client.Conn
	session := client.Session{Timeout: 10 * time.Second}
	next := id
	connect := func() bool {
		for ctx.Err() == nil {
			addr := w.addrs[next%len(w.addrs)]
			next++
			dialCtx, cancel := context.WithTimeout(ctx, time.Second)
			conn, err := client.Dial(dialCtx, addr, session)
			cancel()
			if err == nil {
				c, session = conn, conn.Session()
				return true
			}
			if errors.Is(err, wire.ErrSessionExpired) {
				t.Errorf("writer %d: session %#x expired while reconnecting", id, session.ID)
				return false
			}
			if next%len(w.addrs) == 0 {
				time.Sleep(10 * time.Millisecond) // backing off between rounds of the members
			}
		}
		return false
	}
	if !connect() {
		return
	}
	defer func() { c.CloseSession(context.Background()) }()
	type pending struct {
		call  *client.Call
		entry int
		path  string
	}
	var window []pending
	send := func(path string) bool {
		entry := w.rec.call(id, c.SessionID(), linearizability.Entry{Op: linearizability.OpCreate, Path: path, Data: new(string), Mode: wire.ModePersistent.String()})
		call, err := c.Send(wire.OpCreate, &wire.CreateRequest{Path: path, ACL: client.OpenACL})
		if err != nil {
			return false
		}
		window = append(window, pending{call, entry, path})
		return true
	}
	// awaitHead waits for the oldest call in the window; false when the
	// connection broke (the window's calls then have unknown outcomes).
	awaitHead := func() bool {
		waitCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		r, err := window[0].call.Wait(waitCtx)
		if err != nil {
			window = nil
			c.Close()
			return false
		}
		p := window[0]
		window = window[1:]
		w.rec.returned(p.entry, r, func(e *linearizability.Entry) { e.Created = p.path })
		if r.Header.Err == wire.ErrOK || (p.path == parent && r.Header.Err == wire.ErrNodeExists) {
			w.mu.Lock()
			w.acked[id][p.path] = r.Header.Err == wire.ErrOK
			w.mu.Unlock()
			return true
		}
		t.Errorf("writer %d: create %s: %v", id, p.path, r.Header.Err)
		return true
	}
	// Each connection writes under a new parent, made first (a create cut
	// off may have made it: NodeExists then).
	for gen := 0; ; gen++ {
		parent = fmt.Sprintf("/w%d-%d", id, gen)
		w.mu.Lock()
		w.parents[id] = append(w.parents[id], parent)
		w.mu.Unlock()
		for made := false; !made; {
			if ctx.Err() != nil {
				return
			}
			if send(parent) && awaitHead() {
				made = true
			} else if !connect() {
				return
			}
		}
		for i := 0; ctx.Err() == nil || len(window) > 0; {
			if ctx.Err() == nil && len(window) < inFlight && send(fmt.Sprintf("%s/%06d", parent, i)) {
				i++
				continue
			}
			if len(window) > 0 && awaitHead() {
				continue
			}
			break
		}
		if ctx.Err() != nil || !connect() {
			return
		}
	}
}

// checkAll reads every writer's children through a synced member, checks
// that every acknowledged create is there, and runs every checker on the
// history.
func (w *writers) checkAll(t *testing.T, e *testEnsemble, leader int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, e.members[leader-1].addrs[clientPort], client.Session{Timeout: 10 * time.Second})
	require.NoError(t, err)
	defer c.CloseSession(ctx)
	reader := len(w.acked)
	total := 0
	for id := range w.acked {
		have := map[string]bool{}
		for _, parent := range w.parents[id] {
			entry := w.rec.call(reader, c.SessionID(), linearizability.Entry{Op: linearizability.OpGetChildren, Path: parent})
			r, err := c.Do(ctx, wire.OpGetChildren, &wire.PathWatchRequest{Path: parent})
			require.NoError(t, err)
			var listing wire.StringsResponse
			if r.Header.Err == wire.ErrOK {
				require.NoError(t, r.Decode(&listing))
				have[parent] = true
			}
			w.rec.returned(entry, r, func(e *linearizability.Entry) { e.Children = listing.Strings })
			for _, k := range listing.Strings {
				have[parent+"/"+k] = true
			}
		}
		for path, ok := range w.acked[id] {
			assert.True(t, !ok || have[path], "acknowledged create %s lost", path)
			if ok {
				total++
			}
		}
	}
	t.Logf("%d creates acknowledged", total)
	w.rec.check(t, filepath.Join(t.TempDir(), "history.jsonl"))
}

// TestEnsembleUnderPeerFaults runs writers through every member while the
// peer links misbehave, then checks that every acknowledged write is there
// and that the history breaks no guarantee.
func TestEnsembleUnderPeerFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an ensemble under faults for several seconds")
	}
	for _, tc := range []struct {
		name  string
		fault func(f *faultyLinks, e *testEnsemble, leader int64)
	}{
		{"latency on every link", func(f *faultyLinks, e *testEnsemble, _ int64) {
			f.toxic("latency", `{"latency":15,"jitter":10}`, 1, 2, 3)
		}},
		{"leader cut off", func(f *faultyLinks, e *testEnsemble, leader int64) {
			f.cut(leader)
		}},
		{"leader black-holed past syncLimit", func(f *faultyLinks, e *testEnsemble, leader int64) {
			f.toxic("timeout", `{"timeout":0}`, leader)
		}},
		{"follower's connections reset", func(f *faultyLinks, e *testEnsemble, leader int64) {
			f.toxic("reset_peer", `{"timeout":300}`, leader%3+1)
		}},
		{"slow close and small slices", func(f *faultyLinks, e *testEnsemble, _ int64) {
			f.toxic("slicer", `{"average_size":64,"size_variation":32,"delay":100}`, 1, 2, 3)
			f.toxic("slow_close", `{"delay":500}`, 1, 2, 3)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultyLinks(t)
			e := startEnsembleVia(t, 3, 0, f.via)
			leader := e.waitServing()
			w := &writers{rec: newHistoryRecorder()}
			for _, m := range e.members {
				w.addrs = append(w.addrs, m.addrs[clientPort])
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3500*time.Millisecond)
			defer cancel()
			faults := make(chan struct{})
			go func() {
				defer close(faults)
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
					return
				}
				tc.fault(f, e, leader)
				select {
				case <-time.After(1500 * time.Millisecond): // past syncLimit (1 s)
				case <-ctx.Done():
				}
				f.heal()
			}()
			w.run(t, ctx, 3, 2)
			<-faults
			leader = e.waitServing()
			w.checkAll(t, e, leader)
		})
	}
}
