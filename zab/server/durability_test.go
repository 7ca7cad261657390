package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/zkprocess"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// fsyncRecorder is a sync hook over the real file system. Each fsync of a
// txn log file first waits a little (so that a reply sent too early would
// reach the client before the fsync completes) and then records the highest
// zxid the file holds: the durable zxid.
type fsyncRecorder struct {
	delay   time.Duration
	durable atomic.Int64
	syncs   atomic.Int64
}

func (r *fsyncRecorder) sync(name string, f vfs.File) error {
	if !strings.HasPrefix(filepath.Base(name), "log.") {
		return f.Sync()
	}
	time.Sleep(r.delay)
	if err := f.Sync(); err != nil {
		return err
	}
	last, err := lastLoggedZxid(f)
	if err != nil {
		return err
	}
	for {
		cur := r.durable.Load()
		if last <= cur || r.durable.CompareAndSwap(cur, last) {
			break
		}
	}
	r.syncs.Add(1)
	return nil
}

// lastLoggedZxid reads a txn log file and returns its last entry's zxid.
func lastLoggedZxid(f vfs.File) (int64, error) {
	size, err := f.Size()
	if err != nil {
		return 0, err
	}
	r, err := wire.NewTxnLogReader(io.NewSectionReader(f, 0, size), 0)
	if err != nil {
		return 0, err
	}
	last := int64(0)
	for {
		entry, _, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return last, nil
			}
			return last, nil // the preallocated zeros after the last entry
		}
		last = entry.Header.Zxid
	}
}

// TestNoReplyBeforeItsFsync: every reply a client receives carries a zxid
// that an fsync already covered.
func TestNoReplyBeforeItsFsync(t *testing.T) {
	rec := &fsyncRecorder{delay: 3 * time.Millisecond}
	ts := startServer(t, nil, func(o *Options) { o.FS = syncHookFS{FS: vfs.OS{}, sync: rec.sync} })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Dial(ctx, ts.addr, client.Session{Timeout: 10 * time.Second})
			if err != nil {
				errs <- err
				return
			}
			defer c.CloseSession(ctx)
			for round := range 10 {
				var calls []*client.Call
				for i := range 16 {
					path := fmt.Sprintf("/d-%d-%d-%d", w, round, i)
					call, err := c.Send(wire.OpCreate, &wire.CreateRequest{Path: path, ACL: client.OpenACL})
					if err != nil {
						errs <- err
						return
					}
					calls = append(calls, call)
				}
				for _, call := range calls {
					r, err := call.Wait(ctx)
					if err != nil {
						errs <- err
						return
					}
					if durable := rec.durable.Load(); r.Header.Zxid > durable {
						errs <- fmt.Errorf("reply with zxid 0x%x arrived when only 0x%x was fsynced", r.Header.Zxid, durable)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Less(t, rec.syncs.Load(), int64(4*10*16), "group commit: fewer fsyncs than writes")
}

// buildZabd builds cmd/zabd into dir.
func buildZabd(t *testing.T, dir string) string {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	bin := filepath.Join(dir, "zabd")
	out, err := exec.Command(goTool, "build", "-o", bin, "github.com/zabd/zabd/cmd/zabd").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// zabdProcess is zabd as a separate process.
type zabdProcess struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

func startZabdProcess(t *testing.T, bin, cfgPath, addr string) *zabdProcess {
	t.Helper()
	logFile, err := os.OpenFile(cfgPath+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	cmd := exec.Command(bin, "-config", cfgPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	p := &zabdProcess{cmd: cmd, addr: addr, done: make(chan struct{})}
	go func() { cmd.Wait(); logFile.Close(); close(p.done) }()
	t.Cleanup(func() { p.kill() })
	eventually(t, "zabd answers srvr", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		out, err := zkprocess.FourLetterWord(ctx, addr, "srvr")
		return err == nil && strings.Contains(out, "Mode: standalone")
	})
	return p
}

func (p *zabdProcess) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// TestSIGKILLKeepsAcknowledgedWrites kills zabd while clients write, restarts
// it, and checks that the state holds every acknowledged write, plus for each
// session a prefix of its unacknowledged ones (its writes apply in order).
func TestSIGKILLKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs zabd processes")
	}
	dir := t.TempDir()
	bin := buildZabd(t, dir)
	port, err := zkprocess.FreePort()
	require.NoError(t, err)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cfgPath := filepath.Join(dir, "zoo.cfg")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(
		"tickTime=200\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\nsnapCount=200\n",
		filepath.Join(dir, "data"), port)), 0o644))
	proc := startZabdProcess(t, bin, cfgPath, addr)

	const writers, inFlight = 4, 8
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acked := make([]atomic.Int64, writers) // per writer: writes 0..acked-1 acknowledged
	sent := make([]atomic.Int64, writers)  // per writer: writes 0..sent-1 sent
	// Each writer writes under its own parent, so that the history checker
	// sees one component per writer, each with at most inFlight writes of
	// unknown outcome.
	rec := newHistoryRecorder()
	var wg sync.WaitGroup
	for w := range writers {
		c := dial(t, ctx, addr)
		parent := fmt.Sprintf("/w%d", w)
		entry := rec.call(w, c.SessionID(), linearizability.Entry{Op: linearizability.OpCreate, Path: parent, Data: new(string), Mode: wire.ModePersistent.String()})
		r, err := c.Do(ctx, wire.OpCreate, &wire.CreateRequest{Path: parent, ACL: client.OpenACL})
		require.NoError(t, err)
		require.Equal(t, wire.ErrOK, r.Header.Err)
		rec.returned(entry, r, func(e *linearizability.Entry) { e.Created = e.Path })
		wg.Add(1)
		go func() {
			defer wg.Done()
			type pending struct {
				call  *client.Call
				entry int
			}
			// Calls still in the window when the server dies keep no return
			// in the history: their outcome is unknown.
			var window []pending
			for i := 0; ; i++ {
				path := fmt.Sprintf("%s/%06d", parent, i)
				entry := rec.call(w, c.SessionID(), linearizability.Entry{Op: linearizability.OpCreate, Path: path, Data: new(string), Mode: wire.ModePersistent.String()})
				call, err := c.Send(wire.OpCreate, &wire.CreateRequest{Path: path, ACL: client.OpenACL})
				if err != nil {
					return
				}
				sent[w].Store(int64(i + 1))
				window = append(window, pending{call, entry})
				if len(window) < inFlight {
					continue
				}
				r, err := window[0].call.Wait(ctx)
				if err != nil {
					return
				}
				rec.returned(window[0].entry, r, func(e *linearizability.Entry) { e.Created = e.Path })
				if r.Header.Err != wire.ErrOK {
					return
				}
				acked[w].Add(1)
				window = window[1:]
			}
		}()
	}
	eventually(t, "some writes are acknowledged", func() bool { return acked[writers-1].Load() > 300 })
	proc.kill()
	wg.Wait()

	startZabdProcess(t, bin, cfgPath, addr)
	c := dial(t, ctx, addr)
	defer c.CloseSession(ctx)
	present := make([]map[int]bool, writers)
	for w := range present {
		parent := fmt.Sprintf("/w%d", w)
		entry := rec.call(writers, c.SessionID(), linearizability.Entry{Op: linearizability.OpGetChildren, Path: parent})
		r, err := c.Do(ctx, wire.OpGetChildren, &wire.PathWatchRequest{Path: parent})
		require.NoError(t, err)
		var listing wire.StringsResponse
		require.NoError(t, r.Decode(&listing))
		rec.returned(entry, r, func(e *linearizability.Entry) { e.Children = listing.Strings })
		present[w] = map[int]bool{}
		for _, k := range listing.Strings {
			var i int
			if _, err := fmt.Sscanf(k, "%06d", &i); err == nil {
				present[w][i] = true
			}
		}
	}
	for w := range writers {
		survived := len(present[w])
		assert.GreaterOrEqual(t, int64(survived), acked[w].Load(), "writer %d: every acknowledged write survives", w)
		assert.LessOrEqual(t, int64(survived), sent[w].Load(), "writer %d: nothing that was never sent", w)
		for i := range survived {
			assert.True(t, present[w][i], "writer %d: write %d missing though write %d survived (not a prefix)", w, i, survived-1)
		}
		t.Logf("writer %d: %d acknowledged, %d sent, %d survived", w, acked[w].Load(), sent[w].Load(), survived)
	}
	rec.check(t, filepath.Join(dir, "sigkill-history.jsonl"))
}

// historyRecorder records a history in the linearizability package's format
// (docs/history-format.md) from several goroutines.
type historyRecorder struct {
	mu      sync.Mutex
	start   time.Time
	entries linearizability.History
	seq     map[int]int64
}

func newHistoryRecorder() *historyRecorder {
	return &historyRecorder{start: time.Now(), seq: map[int]int64{}}
}

func (h *historyRecorder) now() int64 { return int64(time.Since(h.start)) }

// call records an operation issued by a client and returns its index.
func (h *historyRecorder) call(client int, session int64, e linearizability.Entry) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq[client]++
	e.Kind, e.Client, e.Session, e.Seq, e.Call = linearizability.KindOp, client, linearizability.Hex64(session), h.seq[client], h.now()
	h.entries = append(h.entries, e)
	return len(h.entries) - 1
}

// returned records a reply; fill adds what a successful reply carries.
func (h *historyRecorder) returned(i int, r *client.Reply, fill func(*linearizability.Entry)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := &h.entries[i]
	ret, zxid := h.now(), linearizability.Hex64(r.Header.Zxid)
	e.Return, e.Err, e.Zxid = &ret, r.Header.Err.String(), &zxid
	if r.Header.Err == wire.ErrOK {
		fill(e)
	}
}

// check writes the history to path, validates it and runs every checker.
func (h *historyRecorder) check(t *testing.T, path string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, linearizability.WriteHistory(f, h.entries))
	require.NoError(t, f.Close())
	require.NoError(t, h.entries.Validate(), "history %s", path)
	report := linearizability.CheckAll(h.entries, linearizability.Options{})
	if !report.OK() {
		var b strings.Builder
		report.Print(&b)
		t.Errorf("history %s fails its checks:\n%s", path, b.String())
	}
}

// TestSnapshotsAndAutopurge: with a small snapCount the server takes
// snapshots in the background while serving, autopurge keeps the newest
// snapRetainCount of them, and a restart recovers from them.
func TestSnapshotsAndAutopurge(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.SnapCount = 20
	cfg.SnapRetainCount = 3
	cfg.PurgeInterval = time.Nanosecond // purge after every snapshot
	ts := startServer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.addr)
	_, err := c.Create(ctx, "/snap", nil, client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	snapshots := func() []string {
		names, _ := filepath.Glob(filepath.Join(cfg.DataDir, "version-2", "snapshot.*"))
		return names
	}
	taken := func() int64 { return ts.measured.snapshotTime.Count() }
	for i := 0; taken() < 6; i++ {
		require.Less(t, i, 2000, "no 6 snapshots after 2000 writes")
		_, err := c.SetData(ctx, "/snap", []byte(fmt.Sprint(i)), -1)
		require.NoError(t, err)
	}
	eventually(t, "autopurge keeps 3 snapshots", func() bool { return len(snapshots()) == 3 })
	data, st, err := c.GetData(ctx, "/snap", false)
	require.NoError(t, err)
	c.Close()

	ts.stop(t)
	restarted := startServer(t, cfg)
	c2 := dial(t, ctx, restarted.addr)
	defer c2.CloseSession(ctx)
	data2, st2, err := c2.GetData(ctx, "/snap", false)
	require.NoError(t, err)
	assert.Equal(t, data, data2)
	assert.Equal(t, st, st2, "the same node, stat and all, after recovery from snapshot + log")
}

// fsyncFailer is a sync hook that fails every fsync of a txn log file once
// armed.
type fsyncFailer struct{ armed atomic.Bool }

func (h *fsyncFailer) sync(name string, f vfs.File) error {
	if h.armed.Load() && strings.HasPrefix(filepath.Base(name), "log.") {
		return errors.New("injected fsync failure")
	}
	return f.Sync()
}

// TestFailedFsyncStopsTheServer: a write whose fsync fails is never
// acknowledged, and the server stops with the error rather than carry on
// with a log it cannot trust.
func TestFailedFsyncStopsTheServer(t *testing.T) {
	failer := &fsyncFailer{}
	ts := startServer(t, nil, func(o *Options) { o.FS = syncHookFS{FS: vfs.OS{}, sync: failer.sync} })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.addr)
	defer c.Close()
	failer.armed.Store(true)
	_, err := c.Create(ctx, "/doomed", nil, client.OpenACL, wire.ModePersistent)
	require.ErrorIs(t, err, client.ErrClosed, "no acknowledgement, the connection closes")
	select {
	case err := <-ts.errc:
		require.ErrorContains(t, err, "injected fsync failure")
		close(ts.errc)
	case <-ctx.Done():
		t.Fatal("the server did not stop after a failed fsync")
	}
}

// TestForceSyncNo: with forceSync=no the server writes and serves as usual
// but fsyncs no file; the same writes with the default do fsync.
func TestForceSyncNo(t *testing.T) {
	for _, forceSync := range []bool{true, false} {
		var syncs atomic.Int64
		countSyncs := func(_ string, f vfs.File) error {
			syncs.Add(1)
			return f.Sync()
		}
		cfg := testConfig(t.TempDir())
		cfg.ForceSync = forceSync
		ts := startServer(t, cfg, func(o *Options) { o.FS = syncHookFS{FS: vfs.OS{}, sync: countSyncs} })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c := dial(t, ctx, ts.addr)
		_, err := c.Create(ctx, "/n", []byte("x"), client.OpenACL, wire.ModePersistent)
		require.NoError(t, err)
		data, _, err := c.GetData(ctx, "/n", false)
		require.NoError(t, err)
		require.Equal(t, "x", string(data))
		require.NoError(t, c.CloseSession(ctx))
		cancel()
		if forceSync {
			require.NotZero(t, syncs.Load(), "forceSync=yes fsyncs the log")
		} else {
			require.Zero(t, syncs.Load(), "forceSync=no fsyncs nothing")
		}
	}
}
