package localens_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/linearizability/record"
	"github.com/zabd/zabd/zab/server/localens"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

// migrationZnodes is how many znodes the ZooKeeper ensemble holds before
// the migration: 5000, or 100000 with ZABD_MIGRATE=long (.ci/run sets it).
func migrationZnodes() int {
	if os.Getenv("ZABD_MIGRATE") == "long" {
		return 100_000
	}
	return 5_000
}

// TestRollingMigrationFromZooKeeperAndBack is issue 16's rolling migration
// as an operator runs it: a three-member ZooKeeper 3.8 ensemble holding
// data, live sessions with ephemerals and watches, has its members replaced
// by zabd one at a time (stopped, then zabd started on the same zoo.cfg and
// dataDir as ZooKeeper left them; the followers first, the leader last),
// then ZooKeeper takes every member back the same way, while a recorded
// workload writes and reads throughout. Every checker passes on the whole
// run's history; the sessions opened on ZooKeeper before the migration live
// to the end with their ephemerals on every member; every watch they set
// before the migration fires, on whichever kind of member they are
// connected to by then; every member ends with the same znodes.
func TestRollingMigrationFromZooKeeperAndBack(t *testing.T) {
	if err := zkprocess.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if testing.Short() {
		t.Skip("runs zabd and ZooKeeper processes")
	}
	skipUnderRace(t)
	start := time.Now()
	kinds := &memberKinds{kind: map[int64]byte{1: zookeeperKind, 2: zookeeperKind, 3: zookeeperKind}}
	e, err := localens.Start(localens.Options{Binary: zabdBinary, Voters: 3, Dir: ensembleDir(t),
		TickTime: 500 * time.Millisecond, InitLimit: 20, SyncLimit: 10, Launch: kinds.launch,
		// Both kinds snapshot every few hundred txns (ZooKeeper at a
		// random point between half of snapCount and snapCount): the
		// member that takes over finds snapshots and logs of the other
		// kind, and snapshots are taken while the workload writes.
		// mixedEnsemble: zabd takes ZooKeeper's rules where they differ,
		// as an operator sets it while the ensemble mixes both kinds.
		Extra: map[string]string{"snapCount": "400", "mixedEnsemble": "true"}, RunRecord: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		e.Close()
		if t.Failed() {
			for _, m := range e.Members {
				t.Logf("server %d log tail:\n%s", m.ID, m.LogTail(60))
			}
			keepView(t, e)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	waitKinds(t, ctx, e, kinds)

	znodes := migrationZnodes()
	loadStart := time.Now()
	bulkLoad(t, e, znodes)
	t.Logf("loaded %d znodes into ZooKeeper in %v", znodes, time.Since(loadStart).Round(time.Millisecond))

	// Six steps (three members, two directions), one watched path each.
	const steps = 6
	admin, _ := longSession(t, e.ClientAddrs())
	_, err = admin.Create("/watched", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for s := range steps {
		_, err := admin.Create(watchedPath(s), []byte("before"), 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	_, err = admin.Create("/holders", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	var holders []*sessionHolder
	for i := range 3 {
		holders = append(holders, holdSession(t, e.ClientAddrs(), i, steps))
	}

	history := filepath.Join(t.TempDir(), "history.jsonl")
	f, err := os.Create(history)
	require.NoError(t, err)
	workloadCtx, stopWorkload := context.WithCancel(ctx)
	defer stopWorkload()
	workloadDone := make(chan error, 1)
	go func() {
		w := record.Workload{Servers: e.ClientAddrs(), Clients: 4, Duration: time.Hour, SessionTimeout: 6 * time.Second, Seed: uint64(time.Now().UnixNano())}
		workloadDone <- w.Run(workloadCtx, f)
	}()
	// The workload's setup (its root and queue, not retried) is done before
	// the first member stops.
	waitCreated(t, ctx, admin, "/lin/q", workloadDone)

	step := 0
	for _, to := range []byte{zabdKind, zookeeperKind} {
		for {
			id, ok := nextToReplace(t, ctx, e, kinds, to)
			if !ok {
				break
			}
			stepStart := time.Now()
			role := e.Mode(ctx, id)
			e.Member(id).Stop(syscall.SIGTERM)
			// Written while the member is down: its clients are moving to
			// the others, and their watches must follow them.
			setWithRetry(t, ctx, admin, watchedPath(step))
			kinds.set(id, to)
			require.NoError(t, e.Restart(id))
			waitKinds(t, ctx, e, kinds)
			for _, h := range holders {
				h.requireFired(t, ctx, step)
			}
			t.Logf("step %d: server %d (%s) replaced by %s in %v; modes %q", step+1, id, role, kindName(to),
				time.Since(stepStart).Round(time.Millisecond), e.Modes(ctx))
			step++
		}
	}
	require.Equal(t, steps, step, "every member was replaced twice")

	stopWorkload()
	require.NoError(t, <-workloadDone, "the workload (history in %s)", history)
	require.NoError(t, f.Close())
	checkHistoryExcusing(t, history, linearizability.GuaranteeSyncRead, zookeeperLeaderSync(e, kinds))

	for _, h := range holders {
		h.requireAlive(t, e)
	}
	requireSameTree(t, ctx, e, znodes)
	t.Logf("migration of %d znodes there and back: %v in all", znodes, time.Since(start).Round(time.Second))
}

// memberKinds is each member's kind by id (zabdKind or zookeeperKind, as
// in mixed_test.go's layouts); its launch is the ensemble's Launch, so a
// restart runs the member's current kind.
type memberKinds struct {
	mu   sync.Mutex
	kind map[int64]byte
	// leaders maps each epoch seen to the member that led it, with its kind
	// then (zookeeperLeaderSync).
	leaders map[int64]epochLeader
}

type epochLeader struct {
	id   int64
	kind byte
}

// noteLeader records that id, of its current kind, leads epoch.
func (k *memberKinds) noteLeader(epoch, id int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.leaders == nil {
		k.leaders = map[int64]epochLeader{}
	}
	k.leaders[epoch] = epochLeader{id: id, kind: k.kind[id]}
}

func (k *memberKinds) leaderOf(epoch int64) (epochLeader, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l, ok := k.leaders[epoch]
	return l, ok
}

func (k *memberKinds) launch(id int64, cfg string) (*exec.Cmd, error) {
	if k.of(id) == zookeeperKind {
		return localens.ZooKeeper(id, cfg)
	}
	return exec.Command(zabdBinary, "-config", cfg), nil
}

func (k *memberKinds) of(id int64) byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.kind[id]
}

func (k *memberKinds) set(id int64, kind byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kind[id] = kind
}

// waitKinds waits until every member serves under one leader and each is
// the kind it should be (srvr's version line names zabd).
func waitKinds(t *testing.T, ctx context.Context, e *localens.Ensemble, kinds *memberKinds) int64 {
	t.Helper()
	waitCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	leader, err := e.WaitServing(waitCtx)
	require.NoError(t, err)
	// The README's step 3: no lag left before the next member goes down. A
	// ZooKeeper 3.8.0 follower stopped from following while it still
	// applies a long synchronization can diverge from its leader, whichever
	// kind leads (ZOOKEEPER-4712, docs/compatibility.md).
	require.NoError(t, e.WaitCaughtUp(waitCtx, leader))
	if z, err := e.Zxid(waitCtx, leader); err == nil {
		kinds.noteLeader(z>>32, leader)
	}
	for _, m := range e.Members {
		out, err := zkprocess.FourLetterWord(waitCtx, m.ClientAddr, "srvr")
		require.NoError(t, err, "srvr on server %d", m.ID)
		k := kinds.of(m.ID)
		assert.Equal(t, k == zookeeperKind, !strings.Contains(out, "zabd"), "server %d runs %s: %s", m.ID, kindName(k), out)
	}
	return leader
}

// nextToReplace picks the next member to turn into the other kind, as an
// operator would: a follower while one is left, the leader last; false
// once every member is of that kind.
func nextToReplace(t *testing.T, ctx context.Context, e *localens.Ensemble, kinds *memberKinds, to byte) (int64, bool) {
	leader := waitKinds(t, ctx, e, kinds)
	var left []int64
	for _, m := range e.Members {
		if kinds.of(m.ID) != to {
			left = append(left, m.ID)
		}
	}
	if len(left) == 0 {
		return 0, false
	}
	for _, id := range left {
		if id != leader {
			return id, true
		}
	}
	return leader, true
}

// bulkLoad creates n znodes under /data in buckets of a thousand, each
// bucket one multi, the multis sent by several goroutines at once.
func bulkLoad(t *testing.T, e *localens.Ensemble, n int) {
	t.Helper()
	c := connect(t, e.ClientAddrs()...)
	_, err := c.Create("/data", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	const perBucket, senders = 1000, 4
	buckets := make(chan int)
	errs := make(chan error, senders)
	for range senders {
		go func() {
			var err error
			for b := range buckets {
				if err == nil {
					err = createBucket(c, b, perBucket, n)
				}
			}
			errs <- err
		}()
	}
	for b := 0; b*perBucket < n; b++ {
		buckets <- b
	}
	close(buckets)
	for range senders {
		require.NoError(t, <-errs)
	}
}

// createBucket creates bucket b and its znodes (of the n in all) in one multi.
func createBucket(c *zk.Conn, b, perBucket, n int) error {
	bucket := fmt.Sprintf("/data/b%03d", b)
	ops := []any{&zk.CreateRequest{Path: bucket, Acl: zk.WorldACL(zk.PermAll)}}
	for i := b * perBucket; i < min(n, (b+1)*perBucket); i++ {
		ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("%s/n%06d", bucket, i), Data: []byte(strconv.Itoa(i)), Acl: zk.WorldACL(zk.PermAll)})
	}
	if _, err := c.Multi(ops...); err != nil {
		return fmt.Errorf("create %s: %w", bucket, err)
	}
	return nil
}

func watchedPath(step int) string { return fmt.Sprintf("/watched/s%d", step) }

// setWithRetry changes path's data, retrying while the client moves from a
// stopped member to another (a repeated set only fires the watches again,
// which fire once).
func setWithRetry(t *testing.T, ctx context.Context, c *zk.Conn, path string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := c.Set(path, []byte("changed"), -1)
		if err == nil {
			return
		}
		// The member the client is connected to may be the one stopping:
		// go-zookeeper reports that as a closed connection, no server, or
		// the socket's own error (a reset while the request was written).
		var netErr *net.OpError
		lost := errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) || errors.As(err, &netErr)
		if !lost || time.Now().After(deadline) {
			t.Fatalf("set %s: %v", path, err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("set %s: %v", path, ctx.Err())
		case <-time.After(100 * time.Millisecond): // polling real processes
		}
	}
}

// waitCreated polls until path exists, failing if the workload ends first.
func waitCreated(t *testing.T, ctx context.Context, c *zk.Conn, path string, workloadDone <-chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		ok, _, err := c.Exists(path)
		require.NoError(t, err)
		if ok {
			return
		}
		select {
		case err := <-workloadDone:
			t.Fatalf("the workload ended before creating %s: %v", path, err)
		case <-ctx.Done():
			t.Fatalf("%s not created: %v", path, ctx.Err())
		case <-time.After(20 * time.Millisecond): // polling a real server
		}
	}
}

// sessionHolder is a session opened on ZooKeeper before the migration that
// must outlive it: it holds ephemerals and one data watch per step.
type sessionHolder struct {
	index      int
	conn       *zk.Conn
	session    int64
	expired    *atomic.Bool
	watches    []<-chan zk.Event // by step, on watchedPath(step)
	ephemerals []string
}

// longSession connects to addrs with a session that outlives a member's
// replacement (ten seconds, the most tickTime 500 ms allows) and reports
// whether it was ever expired.
func longSession(t *testing.T, addrs []string) (*zk.Conn, *atomic.Bool) {
	t.Helper()
	var expired atomic.Bool
	connected := make(chan struct{})
	var once sync.Once
	conn, _, err := zk.Connect(addrs, 10*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)),
		zk.WithEventCallback(func(ev zk.Event) {
			switch ev.State {
			case zk.StateHasSession:
				once.Do(func() { close(connected) })
			case zk.StateExpired:
				expired.Store(true)
			}
		}))
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	select {
	case <-connected:
	case <-time.After(20 * time.Second):
		t.Fatalf("no session with %v within 20s", addrs)
	}
	return conn, &expired
}

func holdSession(t *testing.T, addrs []string, index, steps int) *sessionHolder {
	t.Helper()
	conn, expired := longSession(t, addrs)
	h := &sessionHolder{index: index, conn: conn, session: conn.SessionID(), expired: expired}
	for j := range 10 {
		p, err := conn.Create(fmt.Sprintf("/holders/h%d-e%d", index, j), []byte("held"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		h.ephemerals = append(h.ephemerals, p)
	}
	for s := range steps {
		_, _, w, err := conn.GetW(watchedPath(s))
		require.NoError(t, err)
		h.watches = append(h.watches, w)
	}
	return h
}

// requireFired waits until the holder's watch of the step fired as a data
// change of its path.
func (h *sessionHolder) requireFired(t *testing.T, ctx context.Context, step int) {
	t.Helper()
	select {
	case ev := <-h.watches[step]:
		require.Equal(t, zk.EventNodeDataChanged, ev.Type, "holder %d's watch of step %d: %+v", h.index, step+1, ev)
		require.Equal(t, watchedPath(step), ev.Path)
	case <-time.After(30 * time.Second):
		t.Fatalf("holder %d (session %#x) missed the data change of %s", h.index, h.session, watchedPath(step))
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
}

// requireAlive checks that the holder's session is the one it opened on
// ZooKeeper, never expired, and that every member shows its ephemerals
// owned by it.
func (h *sessionHolder) requireAlive(t *testing.T, e *localens.Ensemble) {
	t.Helper()
	require.False(t, h.expired.Load(), "holder %d's session %#x expired", h.index, h.session)
	require.Equal(t, h.session, h.conn.SessionID(), "holder %d has its first session", h.index)
	_, err := h.conn.Sync("/holders")
	require.NoError(t, err, "holder %d's session %#x still works", h.index, h.session)
	for _, m := range e.Members {
		c := connect(t, m.ClientAddr)
		_, err := c.Sync("/holders")
		require.NoError(t, err)
		for _, p := range h.ephemerals {
			_, st, err := c.Get(p)
			require.NoError(t, err, "server %d: %s", m.ID, p)
			assert.Equal(t, h.session, st.EphemeralOwner, "server %d: owner of %s", m.ID, p)
		}
		c.Close()
	}
}

// requireSameTree checks every member, after a sync through it, holds the
// loaded znodes and the same number of znodes in all (mntr's
// zk_znode_count), and that none saw a digest mismatch.
func requireSameTree(t *testing.T, ctx context.Context, e *localens.Ensemble, loaded int) {
	t.Helper()
	var counts []int
	for _, m := range e.Members {
		c := connect(t, m.ClientAddr)
		_, err := c.Sync("/")
		require.NoError(t, err)
		buckets, _, err := c.Children("/data")
		require.NoError(t, err)
		total := 0
		for _, b := range buckets {
			kids, _, err := c.Children("/data/" + b)
			require.NoError(t, err)
			total += len(kids)
		}
		assert.Equal(t, loaded, total, "server %d: loaded znodes", m.ID)
		mntr := mntrValues(t, ctx, m.ClientAddr)
		n, err := strconv.Atoi(mntr["zk_znode_count"])
		require.NoError(t, err, "server %d: zk_znode_count %q", m.ID, mntr["zk_znode_count"])
		counts = append(counts, n)
		// Every member is ZooKeeper again: it checked the digests of the
		// snapshots and txns zabd wrote and sent against its own tree.
		assert.Equal(t, "0", mntr["zk_digest_mismatches_count"], "server %d: digest mismatches", m.ID)
		c.Close()
	}
	assert.Greater(t, counts[0], loaded)
	assert.Equal(t, slices.Repeat(counts[:1], len(counts)), counts, "zk_znode_count by member")
	t.Logf("every member holds the %d loaded znodes; zk_znode_count %v", loaded, counts)
}

// mntrValues is a member's mntr output as key/value pairs.
func mntrValues(t *testing.T, ctx context.Context, addr string) map[string]string {
	t.Helper()
	out, err := zkprocess.FourLetterWord(ctx, addr, "mntr")
	require.NoError(t, err)
	values := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			values[k] = v
		}
	}
	return values
}

// zookeeperLeaderSync excuses a sync-then-read violation whose sync a
// ZooKeeper 3.8.0 leader answered: its commit processor answers a sync of
// the leader's own client as a read, in that session's order, without
// waiting to apply the txns it has already committed (CommitProcessor's
// matchSyncs is false on a leader), so a read after it can miss a write
// another member already acknowledged. That is ZooKeeper's own behaviour
// (docs/compatibility.md), seen once in this test in a ZooKeeper-only
// epoch; a sync answered by zabd, or by a ZooKeeper follower, is judged as
// always. The server is the one the client's last SyncConnected before the
// sync names; the epoch's leader is the one the test saw lead it.
func zookeeperLeaderSync(e *localens.Ensemble, kinds *memberKinds) func(linearizability.History, linearizability.Violation) string {
	ids := map[string]int64{}
	for _, m := range e.Members {
		ids[m.ClientAddr] = m.ID
	}
	return func(h linearizability.History, v linearizability.Violation) string {
		if len(v.Entries) < 2 || v.Entries[1].Op != linearizability.OpSync || v.Entries[1].Zxid == nil {
			return ""
		}
		sync := v.Entries[1]
		server := ""
		for i := range h {
			ev := &h[i]
			if ev.Kind == linearizability.KindEvent && ev.Type == linearizability.StateSyncConnected &&
				ev.Client == sync.Client && ev.At <= sync.Call {
				server = ev.Server
			}
		}
		epoch := int64(*sync.Zxid) >> 32
		l, ok := kinds.leaderOf(epoch)
		if id, known := ids[server]; !known || !ok || l.id != id || l.kind != zookeeperKind {
			return ""
		}
		return fmt.Sprintf("its sync was answered by ZooKeeper leader %d in epoch %d, which answers its own clients' syncs without waiting to apply what it has committed", l.id, epoch)
	}
}
