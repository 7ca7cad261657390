package localens_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/linearizability/record"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/server/localens"
	"github.com/zabd/zabd/zab/server/zkprocess"
	"github.com/zabd/zabd/zab/storage"
)

// Mixed ensembles: zabd and Debian's ZooKeeper 3.8 (QuorumPeerMain) as
// members of one ensemble (issue 16). A layout names each member's kind by
// id, one letter each: 'd' a zabd process, 'Z' a ZooKeeper JVM; observers
// come last. The default run covers each mix of three once with its leader
// killed under recorded load; ZABD_MIXED=long adds the five-member mix,
// observers of either kind, synchronization by DIFF, SNAP and TRUNC in both
// directions, and sessions kept alive and expired across kinds
// (.ci/run sets it). docs/compatibility.md lists what the two kinds do
// differently and which test shows zabd adapting.

const (
	zabdKind      = 'd'
	zookeeperKind = 'Z'
)

func kindName(k byte) string {
	if k == zookeeperKind {
		return "ZooKeeper"
	}
	return "zabd"
}

// mixedEnsemble is a running mixed ensemble and its layout.
type mixedEnsemble struct {
	*localens.Ensemble
	t      *testing.T
	layout string
	// rec records the operations of the scenario helpers' clients
	// (createMany, sameChildren) into history, which checkRecorded checks.
	rec        *record.Recorder
	history    *os.File
	historyDir string // the whole test's, not a subtest's
}

// client opens a recorded client of member id alone, with a 4 s session.
func (m *mixedEnsemble) client(id int64) *record.Client {
	t := m.t
	t.Helper()
	if m.rec == nil {
		f, err := os.Create(filepath.Join(m.historyDir, "history.jsonl"))
		require.NoError(t, err)
		m.rec, m.history = record.New(f), f
	}
	c, err := m.rec.Connect([]string{m.Member(id).ClientAddr}, 4*time.Second)
	require.NoError(t, err)
	return c
}

// checkRecorded checks the history of every recorded client.
func (m *mixedEnsemble) checkRecorded() {
	t := m.t
	t.Helper()
	require.NotNil(t, m.rec, "nothing was recorded")
	require.NoError(t, m.rec.Close())
	require.NoError(t, m.history.Close())
	checkHistory(t, m.history.Name())
}

// kind is member id's kind.
func (m *mixedEnsemble) kind(id int64) byte { return m.layout[id-1] }

// longMixed reports whether the whole matrix runs (ZABD_MIXED=long).
func longMixed() bool { return os.Getenv("ZABD_MIXED") == "long" }

// skipUnlessLong skips a test of the long matrix in the default run.
func skipUnlessLong(t *testing.T) {
	t.Helper()
	if !longMixed() {
		t.Skip("part of the long mixed-ensemble matrix: set ZABD_MIXED=long")
	}
}

// startMixed starts the members of layout (the last observers of them
// observers) with extra zoo.cfg keys, and waits until they serve. It skips
// under -short and when ZooKeeper is not installed; on failure it prints
// the members' log tails.
func startMixed(t *testing.T, layout string, observers int, extra map[string]string) *mixedEnsemble {
	t.Helper()
	return startMixedEditing(t, layout, observers, extra, nil)
}

// startMixedEditing is startMixed with edit, if set, changing a member's
// zoo.cfg text before each of its starts (a setting of one member only).
func startMixedEditing(t *testing.T, layout string, observers int, extra map[string]string, edit func(id int64, cfg string) string) *mixedEnsemble {
	t.Helper()
	if testing.Short() {
		t.Skip("runs zabd and ZooKeeper processes")
	}
	if err := zkprocess.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	// zabd's mixedEnsemble makes its leaders synchronize as ZooKeeper's do
	// (ZooKeeper keeps it as an unused system property).
	cfg := map[string]string{"mixedEnsemble": "true"}
	maps.Copy(cfg, extra)
	e, err := localens.Start(localens.Options{Binary: zabdBinary, Voters: len(layout) - observers, Observers: observers,
		Dir: ensembleDir(t), TickTime: tick, Extra: cfg, RunRecord: true,
		Launch: func(id int64, cfg string) (*exec.Cmd, error) {
			if edit != nil {
				text, err := os.ReadFile(cfg)
				if err != nil {
					return nil, err
				}
				if err := os.WriteFile(cfg, []byte(edit(id, string(text))), 0o644); err != nil {
					return nil, err
				}
			}
			if layout[id-1] == zookeeperKind {
				return localens.ZooKeeper(id, cfg)
			}
			return exec.Command(zabdBinary, "-config", cfg), nil
		}})
	require.NoError(t, err)
	t.Cleanup(func() {
		e.Close()
		if t.Failed() {
			for _, m := range e.Members {
				t.Logf("server %d (%s) log tail:\n%s", m.ID, kindName(layout[m.ID-1]), m.LogTail(60))
			}
			keepView(t, e)
		}
	})
	m := &mixedEnsemble{Ensemble: e, t: t, layout: layout, historyDir: t.TempDir()}
	leader := waitServing(t, e)
	t.Logf("%s: server %d (%s) leads: %q", layout, leader, kindName(m.kind(leader)), e.Modes(context.Background()))
	return m
}

// leadBy makes a member of kind k lead. At rest every member holds the same
// history, so an election elects the largest id among the members that
// run: leadBy kills the leader and every voter of the other kind whose id
// is above the largest of kind k, which then wins, and restarts them once
// it leads, returning when they serve under it. A leader below that id is
// restarted at once: it cannot outvote the member of kind k, and without
// it the members running may be no quorum (dZdZZ led by 2 leaves 1 and 3).
func (m *mixedEnsemble) leadBy(k byte) int64 {
	t := m.t
	t.Helper()
	leader := waitServing(t, m.Ensemble)
	if m.kind(leader) == k {
		return leader
	}
	top := int64(strings.LastIndexByte(m.layout, k) + 1)
	require.Positive(t, top, "no %s member in %s", kindName(k), m.layout)
	kill := []int64{leader}
	for id := top + 1; id <= int64(len(m.layout)); id++ {
		if id != leader && m.kind(id) != k && !m.Member(id).Observer {
			kill = append(kill, id)
		}
	}
	for _, id := range kill {
		m.Member(id).Stop(syscall.SIGKILL)
	}
	later := kill
	if leader < top {
		require.NoError(t, m.Restart(leader))
		later = kill[1:]
	}
	next := waitServing(t, m.Ensemble)
	t.Logf("killed %v (leader %d, %s) for a %s leader: server %d (%s) leads", kill, leader, kindName(m.kind(leader)), kindName(k), next, kindName(m.kind(next)))
	require.Equal(t, top, next, "with the voters above it down, server %d (%s) must win the election in %s", top, kindName(k), m.layout)
	for _, id := range later {
		require.NoError(t, m.Restart(id))
	}
	require.Equal(t, next, waitServing(t, m.Ensemble), "the restarted members follow server %d", next)
	return next
}

// killLeadersUnderLoad runs the recorded workload (checked with every
// checker) while the leader is killed twice, each time restarted once
// another leads; it returns the kinds that led meanwhile.
func (m *mixedEnsemble) killLeadersUnderLoad(seed uint64) map[byte]bool {
	t := m.t
	led := map[byte]bool{}
	chaos(t, m.Ensemble, seed, func(ctx context.Context) {
		for range 2 {
			leader, ok := leaderAfter(t, ctx, m.Ensemble, 1500*time.Millisecond)
			if !ok {
				return
			}
			led[m.kind(leader)] = true
			m.Member(leader).Stop(syscall.SIGKILL)
			next, err := m.WaitServing(ctx)
			if err == nil {
				led[m.kind(next)] = true
				t.Logf("under load: killed leader %d (%s); server %d (%s) leads", leader, kindName(m.kind(leader)), next, kindName(m.kind(next)))
			} else if ctx.Err() == nil {
				t.Error(err)
			}
			// Restarted even when the faults are over: the checks after
			// the workload need every member.
			if err := m.Restart(leader); err != nil {
				t.Error(err)
			}
			if err != nil {
				return
			}
		}
	})
	return led
}

// TestMixedThree runs each mix of three: one zabd with two ZooKeepers and
// two zabd with one. Each elects, serves clients on every member, loses its
// leader twice under recorded load (the kinds that lead are logged), and
// ends with each kind having led: if load left one kind out, the leader is
// killed at rest until it leads. The mix of three zabd is
// TestSIGKILLLeaderUnderLoad.
func TestMixedThree(t *testing.T) {
	skipUnderRace(t) // before starting JVMs for a workload it would skip
	for i, layout := range []string{"ZZd", "ddZ"} {
		t.Run(layout, func(t *testing.T) {
			m := startMixed(t, layout, 0, nil)
			writeAndReadEverywhere(t, m.Ensemble, "/before")
			led := m.killLeadersUnderLoad(uint64(10 + i))
			leader := waitServing(t, m.Ensemble)
			led[m.kind(leader)] = true
			for _, k := range []byte{zabdKind, zookeeperKind} {
				if !led[k] {
					leader = m.leadBy(k)
				}
			}
			t.Logf("%s: server %d (%s) leads at the end", layout, leader, kindName(m.kind(leader)))
			writeAndReadEverywhere(t, m.Ensemble, "/after")
		})
	}
}

// TestMixedFive: five voters, two zabd and three ZooKeeper, lose their
// leader and a follower at once under recorded load (12 s), twice; both
// come back.
func TestMixedFive(t *testing.T) {
	skipUnlessLong(t)
	skipUnderRace(t)
	m := startMixed(t, "dZdZZ", 0, nil)
	writeAndReadEverywhere(t, m.Ensemble, "/before")
	led := map[byte]bool{}
	chaosFor(t, m.Ensemble, 20, 12*time.Second, func(ctx context.Context) {
		for range 2 {
			leader, ok := leaderAfter(t, ctx, m.Ensemble, 1500*time.Millisecond)
			if !ok {
				return
			}
			follower := leader%5 + 1
			led[m.kind(leader)] = true
			m.Member(leader).Stop(syscall.SIGKILL)
			m.Member(follower).Stop(syscall.SIGKILL)
			next, err := m.WaitServing(ctx)
			if err == nil {
				led[m.kind(next)] = true
				t.Logf("killed leader %d (%s) and follower %d (%s); server %d (%s) leads", leader, kindName(m.kind(leader)),
					follower, kindName(m.kind(follower)), next, kindName(m.kind(next)))
			} else if ctx.Err() == nil {
				t.Error(err)
			}
			for _, id := range []int64{leader, follower} {
				if err := m.Restart(id); err != nil {
					t.Error(err)
				}
			}
			if err != nil {
				return
			}
		}
	})
	leader := waitServing(t, m.Ensemble)
	led[m.kind(leader)] = true
	for _, k := range []byte{zabdKind, zookeeperKind} {
		if !led[k] {
			m.leadBy(k)
		}
	}
	writeAndReadEverywhere(t, m.Ensemble, "/after")
}

// TestMixedObservers: a zabd observer under a ZooKeeper leader, and a
// ZooKeeper observer under a zabd leader. The observer serves clients
// (writes through it, reads after sync) before and after the leader is
// killed twice under recorded load, the history checked; load may bring
// the other kind to lead meanwhile, so the leader's kind is restored at
// rest before the last check.
func TestMixedObservers(t *testing.T) {
	skipUnlessLong(t)
	skipUnderRace(t)
	for i, c := range []struct {
		layout string
		leader byte
	}{{"dZZd", zookeeperKind}, {"ZddZ", zabdKind}} {
		t.Run(c.layout, func(t *testing.T) {
			m := startMixed(t, c.layout, 1, nil)
			m.leadBy(c.leader)
			require.Equal(t, "observer", m.Mode(context.Background(), 4))
			writeAndReadEverywhere(t, m.Ensemble, "/before")
			m.killLeadersUnderLoad(uint64(30 + i))
			m.leadBy(c.leader)
			assert.Equal(t, "observer", m.Mode(context.Background(), 4))
			writeAndReadEverywhere(t, m.Ensemble, "/after")
		})
	}
}

// syncExtra is the members' configuration for the synchronization tests:
// no synchronization from the txn log (snapshotSizeFactor < 0, which both
// kinds honour), so that a learner behind a leader's committed log gets a
// SNAP; and for ZooKeeper a committed log of 50 txns instead of 500
// (commitLogCount, which zabd ignores: its window stays 500 txns).
var syncExtra = map[string]string{"commitLogCount": "50", "snapshotSizeFactor": "-1"}

// syncPatterns are the log lines that show a synchronization's mode: on
// the learner's side for each kind, and on the leader's side (%d is the
// learner's id). ZooKeeper's leader logs a TRUNC sent to a learner ahead of
// its whole history only at DEBUG, so its TRUNC is checked on the learner.
var syncPatterns = map[byte]struct{ learner, leader map[string]string }{
	zabdKind: {
		learner: map[string]string{"DIFF": `synchronizing with leader \d+ by DIFF`, "SNAP": `synchronizing with leader \d+ by SNAP`, "TRUNC": `synchronizing with leader \d+ by TRUNC`},
		leader:  map[string]string{"DIFF": `leader: synchronizing server %d by DIFF`, "SNAP": `leader: synchronizing server %d by SNAP`, "TRUNC": `leader: synchronizing server %d by TRUNC`},
	},
	zookeeperKind: {
		learner: map[string]string{"DIFF": `Getting a diff from the leader`, "SNAP": `Getting a snapshot from leader`, "TRUNC": `Truncating log to get in sync with the leader`},
		leader:  map[string]string{"DIFF": `Sending DIFF zxid=0x[0-9a-f]+ +for peer sid: %d\b`, "SNAP": `Synchronizing with Learner sid: %d\b(?s:.*)Sending snapshot last zxid of peer`},
	},
}

// logSize is where a member's log ends now: what it logs from here on is
// read from there.
func logSize(t *testing.T, m *localens.Member) int64 {
	fi, err := os.Stat(m.LogPath())
	require.NoError(t, err)
	return fi.Size()
}

// waitLog polls member m's log from offset until it matches pattern (10 s
// at most).
func waitLog(t *testing.T, m *localens.Member, offset int64, pattern string) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(m.LogPath())
		require.NoError(t, err)
		if int64(len(b)) >= offset && re.Match(b[offset:]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %d's log did not show %q within 10s", m.ID, pattern)
		}
		time.Sleep(20 * time.Millisecond) // polling a real process's log
	}
}

// expectSync waits for the learner's and (where it logs one) the leader's
// line naming mode, in what they logged since the given offsets.
func (m *mixedEnsemble) expectSync(leader, learner int64, leaderFrom, learnerFrom int64, mode string) {
	t := m.t
	t.Helper()
	waitLog(t, m.Member(learner), learnerFrom, syncPatterns[m.kind(learner)].learner[mode])
	if p, ok := syncPatterns[m.kind(leader)].leader[mode]; ok {
		waitLog(t, m.Member(leader), leaderFrom, fmt.Sprintf(p, learner))
	}
	t.Logf("%s leader %d synchronized %s learner %d by %s", kindName(m.kind(leader)), leader, kindName(m.kind(learner)), learner, mode)
}

// createMany creates persistent children from to from+n-1 of parent
// through member id (and parent first if it is missing).
func (m *mixedEnsemble) createMany(id int64, parent string, from, n int) {
	t := m.t
	t.Helper()
	c := m.client(id)
	defer c.Close()
	if _, err := c.Create(parent, nil, wire.ModePersistent); err != nil && err != zk.ErrNodeExists {
		require.NoError(t, err)
	}
	for i := from; i < from+n; i++ {
		_, err := c.Create(fmt.Sprintf("%s/n%04d", parent, i), []byte("v"), wire.ModePersistent)
		require.NoError(t, err)
	}
}

// sameChildren checks that every running member, after a sync, holds the
// children that the leader holds under parent.
func (m *mixedEnsemble) sameChildren(leader int64, parent string) {
	t := m.t
	t.Helper()
	read := func(id int64) []string {
		c := m.client(id)
		defer c.Close()
		require.NoError(t, c.Sync(parent))
		kids, err := c.Children(parent, false)
		require.NoError(t, err, "server %d", id)
		return kids
	}
	want := read(leader)
	for _, mem := range m.Members {
		if mem.ID != leader && mem.Running() {
			assert.ElementsMatch(t, want, read(mem.ID), "children of %s on server %d", parent, mem.ID)
		}
	}
}

// snapWhileWriting restarts learner without its data under a tree of
// several thousand znodes, so that the leader streams its SNAP in several
// pieces (zabd: 1024 znodes a step), while a client writes to the leader
// without pause: the learner installs a fuzzy stream and replays the txns
// that follow it. It must end with the leader's znodes and data. The bulk
// is created outside the recorded history (nothing recorded reads it); the
// znodes the writer sets sort after it, so the stream reaches them after
// some of the writes.
func (m *mixedEnsemble) snapWhileWriting(leader, learner int64) {
	t := m.t
	t.Helper()
	const bulk, written = 5000, 20
	plain := connect(t, m.Member(leader).ClientAddr)
	_, err := plain.Create("/snapstream-bulk", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for from := 0; from < bulk; from += 500 {
		var ops []any
		for i := from; i < from+500; i++ {
			ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/snapstream-bulk/n%05d", i), Data: []byte("bulk"), Acl: zk.WorldACL(zk.PermAll)})
		}
		_, err := plain.Multi(ops...)
		require.NoError(t, err)
	}
	parent := "/snapstream-written"
	m.createMany(leader, parent, 0, written)
	m.Member(learner).Stop(syscall.SIGKILL)
	require.NoError(t, m.Wipe(learner))
	leaderFrom, learnerFrom := logSize(t, m.Member(leader)), logSize(t, m.Member(learner))
	w := m.client(leader)
	defer w.Close()
	stop, done := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		for ; ; n++ {
			select {
			case <-stop:
				done <- n
				return
			default:
			}
			if _, err := w.Set(fmt.Sprintf("%s/n%04d", parent, n%written), []byte(fmt.Sprint(n)), -1); err != nil {
				t.Errorf("write %d during the SNAP: %v", n, err)
				done <- n
				return
			}
		}
	}()
	require.NoError(t, m.Restart(learner))
	m.expectSync(leader, learner, leaderFrom, learnerFrom, "SNAP")
	for m.Mode(context.Background(), learner) == "" {
		time.Sleep(10 * time.Millisecond) // polling srvr until the learner serves
	}
	close(stop)
	t.Logf("%d writes to the leader while server %d took its SNAP", <-done, learner)
	m.sameChildren(leader, parent)
	read := func(id int64) []string {
		c := m.client(id)
		defer c.Close()
		require.NoError(t, c.Sync(parent))
		var values []string
		for i := range written {
			data, err := c.Get(fmt.Sprintf("%s/n%04d", parent, i), false)
			require.NoError(t, err)
			values = append(values, string(data))
		}
		return values
	}
	assert.Equal(t, read(leader), read(learner), "the data under %s on server %d", parent, learner)
	learnerConn := connect(t, m.Member(learner).ClientAddr)
	_, err = learnerConn.Sync("/snapstream-bulk")
	require.NoError(t, err)
	kids, _, err := learnerConn.Children("/snapstream-bulk")
	require.NoError(t, err)
	assert.Len(t, kids, bulk, "the bulk on server %d", learner)
}

// restartBehind lets learner see a few txns, kills it, optionally wipes
// its data, lets the leader commit writes txns without it, restarts it and
// checks that it was synchronized by mode and holds what the leader holds.
func (m *mixedEnsemble) restartBehind(leader, learner int64, wipe bool, writes int, mode string) {
	t := m.t
	t.Helper()
	parent := fmt.Sprintf("/%s-%d-%d", strings.ToLower(mode), leader, learner)
	m.createMany(leader, parent, 0, 3)
	m.sameChildren(leader, parent) // the learner has them: it is behind by exactly what follows
	m.Member(learner).Stop(syscall.SIGKILL)
	if wipe {
		require.NoError(t, m.Wipe(learner))
	}
	m.createMany(leader, parent, 3, writes)
	leaderFrom, learnerFrom := logSize(t, m.Member(leader)), logSize(t, m.Member(learner))
	require.NoError(t, m.Restart(learner))
	require.Equal(t, leader, waitServing(t, m.Ensemble), "the leader kept its lead")
	m.expectSync(leader, learner, leaderFrom, learnerFrom, mode)
	m.sameChildren(leader, parent)
}

// loggedZxids lists the zxids of every txn in member m's log files.
func loggedZxids(t *testing.T, m *localens.Member) []int64 {
	files, err := filepath.Glob(filepath.Join(m.Dir, "version-2", "log.*"))
	require.NoError(t, err)
	var zxids []int64
	for _, name := range files {
		f, err := os.Open(name)
		require.NoError(t, err)
		fi, err := f.Stat()
		require.NoError(t, err)
		_, err = storage.ScanLogFile(f, fi.Size(), name, func(r storage.LogRecord) error {
			zxids = append(zxids, r.Zxid)
			return nil
		})
		f.Close()
		require.NoError(t, err)
	}
	return zxids
}

// lastLogged is the highest zxid in member m's log files.
func lastLogged(t *testing.T, m *localens.Member) int64 {
	last := int64(0)
	for _, z := range loggedZxids(t, m) {
		last = max(last, z)
	}
	return last
}

// orphanProposal leaves the leader old holding a txn in its log that no
// other member has: its followers are stopped (SIGSTOP), a client
// connecting to it makes it propose and log the session's createSession,
// and it is killed before anyone acknowledges. The followers, which may
// hold the proposal unread in their sockets, are killed and restarted
// from their disks and elect a new leader among themselves. It returns the
// orphan's zxid and the new leader. First it waits until no session is
// left to expire (mntr's zk_global_sessions), and no client connects
// meanwhile, so the new leader's history ends where the old epoch's
// committed history ends.
func (m *mixedEnsemble) orphanProposal(old int64) (int64, int64) {
	t := m.t
	t.Helper()
	require.Equal(t, "leader", m.Mode(context.Background(), old))
	m.waitNoSessions(old)
	before := lastLogged(t, m.Member(old))
	var followers []int64
	for _, mem := range m.Members {
		if mem.ID != old {
			followers = append(followers, mem.ID)
			require.NoError(t, mem.Signal(syscall.SIGSTOP))
			waitStopped(t, mem)
		}
	}
	c, _, err := zk.Connect([]string{m.Member(old).ClientAddr}, 4*time.Second, zk.WithLogger(quietLogger{}))
	require.NoError(t, err)
	deadline := time.Now().Add(5 * time.Second)
	orphan := before
	for orphan == before {
		if time.Now().After(deadline) {
			t.Fatalf("server %d logged nothing past %#x within 5s of a client connecting", old, before)
		}
		time.Sleep(5 * time.Millisecond) // polling the member's log files
		orphan = lastLogged(t, m.Member(old))
	}
	m.Member(old).Stop(syscall.SIGKILL)
	c.Close()
	for _, id := range followers {
		m.Member(id).Stop(syscall.SIGKILL)
		require.NoError(t, m.Restart(id))
	}
	next := waitServing(t, m.Ensemble)
	t.Logf("server %d (%s) logged %#x alone and was killed; server %d (%s) leads", old, kindName(m.kind(old)), orphan, next, kindName(m.kind(next)))
	return orphan, next
}

// waitStopped polls until member m's process is stopped (state T).
func waitStopped(t *testing.T, m *localens.Member) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.Pid()))
		require.NoError(t, err)
		// pid (comm) state ...: the state follows the last ')'.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i+1:]), " T") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %d did not stop within 5s of SIGSTOP", m.ID)
		}
		time.Sleep(time.Millisecond) // polling the kernel's process state
	}
}

// waitNoSessions polls member id's mntr until it counts no session (15 s
// at most: sessions of closed or killed clients expire within 4 s).
func (m *mixedEnsemble) waitNoSessions(id int64) {
	t := m.t
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		out, err := zkprocess.FourLetterWord(ctx, m.Member(id).ClientAddr, "mntr")
		cancel()
		if err == nil && regexp.MustCompile(`(?m)^zk_global_sessions\t0$`).MatchString(out) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %d still counts sessions after 15s:\n%s", id, out)
		}
		time.Sleep(50 * time.Millisecond) // polling a real server
	}
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// truncateOrphan arranges a learner holding a txn the leader never
// committed: learner leads and commits a few txns (so that a ZooKeeper
// leader-to-be holds them in its committed log: one whose committed log is
// empty after a restart sends a SNAP where it could TRUNC), logs an orphan
// proposal and is killed; the others elect leader; with crossEpoch the new
// leader commits txns of its epoch before learner returns. It checks the
// mode learner is synchronized by and, for TRUNC, that the orphan has left
// its log.
func (m *mixedEnsemble) truncateOrphan(learner, leader int64, crossEpoch bool, mode string) {
	t := m.t
	t.Helper()
	m.leadBy(m.kind(learner))
	require.Equal(t, "leader", m.Mode(context.Background(), learner), "server %d leads", learner)
	parent := fmt.Sprintf("/orphan-%d-%d-%v", learner, leader, crossEpoch)
	m.createMany(learner, parent, 0, 3)
	orphan, next := m.orphanProposal(learner)
	require.Equal(t, leader, next, "the new leader")
	if crossEpoch {
		m.createMany(leader, parent, 3, 2)
	}
	leaderFrom, learnerFrom := logSize(t, m.Member(leader)), logSize(t, m.Member(learner))
	require.NoError(t, m.Restart(learner))
	require.Equal(t, leader, waitServing(t, m.Ensemble), "the leader kept its lead")
	m.expectSync(leader, learner, leaderFrom, learnerFrom, mode)
	if mode == "TRUNC" {
		assert.NotContains(t, loggedZxids(t, m.Member(learner)), orphan, "the orphan proposal %#x is cut from server %d's log", orphan, learner)
	}
	m.createMany(leader, parent, 5, 3)
	m.sameChildren(leader, parent)
}

// TestMixedSync synchronizes learners of one kind from a leader of the
// other, both ways, by every mode: DIFF (restarted a few txns behind), SNAP
// (restarted without its data, 100 txns behind: beyond ZooKeeper's
// committed log here), and TRUNC (holding a proposal the new leader never
// had — see orphanProposal). Where the orphan is from an older epoch than
// the leader's next txn, ZooKeeper's leader sends a SNAP instead of a TRUNC
// across epochs, and so does zabd's to a ZooKeeper learner. Servers 1 and 2
// are zabd, 3 ZooKeeper: the highest id among survivors wins at rest, so
// killing the leader chooses the next kind. The scenario's writes and
// reads are recorded, and the history passes every checker.
func TestMixedSync(t *testing.T) {
	skipUnlessLong(t)
	m := startMixed(t, "ddZ", 0, syncExtra)
	t.Run("zabd leader, ZooKeeper learner", func(t *testing.T) {
		m.t = t
		leader := m.leadBy(zabdKind)
		m.restartBehind(leader, 3, false, 10, "DIFF")
		m.restartBehind(leader, 3, true, 100, "SNAP")
	})
	t.Run("ZooKeeper learner takes a SNAP a zabd leader streams while it serves", func(t *testing.T) {
		m.t = t
		m.snapWhileWriting(m.leadBy(zabdKind), 3)
	})
	t.Run("ZooKeeper leader, zabd learner", func(t *testing.T) {
		m.t = t
		leader := m.leadBy(zookeeperKind)
		m.restartBehind(leader, 1, false, 10, "DIFF")
		m.restartBehind(leader, 1, true, 100, "SNAP")
	})
	t.Run("ZooKeeper learner truncated by a zabd leader", func(t *testing.T) {
		m.t = t
		m.truncateOrphan(3, 2, false, "TRUNC")
	})
	t.Run("ZooKeeper learner behind an epoch boundary from a zabd leader", func(t *testing.T) {
		m.t = t
		m.truncateOrphan(3, 2, true, "SNAP")
	})
	t.Run("zabd learner truncated by a ZooKeeper leader", func(t *testing.T) {
		m.t = t
		m.truncateOrphan(2, 3, false, "TRUNC")
	})
	t.Run("zabd learner behind an epoch boundary from a ZooKeeper leader", func(t *testing.T) {
		m.t = t
		m.truncateOrphan(2, 3, true, "SNAP")
	})
	t.Run("zabd learner at a new epoch's start rejoins a zabd leader", func(t *testing.T) {
		m.t = t
		m.newEpochStartRejoin()
	})
	m.t = t
	writeAndReadEverywhere(t, m.Ensemble, "/end")
	m.checkRecorded()
}

// newEpochStartRejoin: a ZooKeeper leader's SNAP to a member joining an
// epoch with no txn yet carries the epoch's start, epoch<<32, which names
// no txn; zabd 2, so synchronized and killed, reports it when it returns.
// Meanwhile the ZooKeeper leader commits txns of that epoch, which zabd 1
// logs, and dies; zabd 1, whose committed window holds txns from before
// the epoch and after, leads (its zxid beats 2's) and synchronizes zabd 2
// by a DIFF from epoch<<32, as ZooKeeper's leaders do (zabd's rule had
// been a TRUNC to the window's txn before it, which asked zabd 2 to cut
// what its snapshot holds: it left the epoch at every attempt).
func (m *mixedEnsemble) newEpochStartRejoin() {
	t := m.t
	t.Helper()
	parent := "/new-epoch-start"
	m.createMany(waitServing(t, m.Ensemble), parent, 0, 2) // txns of an older epoch in zabd 1's window
	// A ZooKeeper leader of a new epoch with no txn in it yet: no session
	// is left to expire into it, and no client connects until the SNAP.
	// Killing zabd 2 or 3 when they lead leaves zabd 1 and its window up.
	m.waitNoSessions(waitServing(t, m.Ensemble))
	m.leadBy(zabdKind)
	zk := m.leadBy(zookeeperKind)
	learnerFrom := logSize(t, m.Member(2))
	m.Member(2).Stop(syscall.SIGKILL)
	require.NoError(t, m.Wipe(2))
	require.NoError(t, m.Restart(2))
	require.Equal(t, zk, waitServing(t, m.Ensemble))
	waitLog(t, m.Member(2), learnerFrom, `synchronizing with leader 3 by SNAP to 0x[0-9a-f]+00000000"`)
	m.Member(2).Stop(syscall.SIGKILL)
	m.createMany(zk, parent, 2, 5)
	m.sameChildren(zk, parent) // zabd 1 has them
	m.Member(zk).Stop(syscall.SIGKILL)
	leaderFrom := logSize(t, m.Member(1))
	require.NoError(t, m.Restart(2))
	require.Equal(t, int64(1), waitServing(t, m.Ensemble), "zabd 1, holding the epoch's txns, leads")
	waitLog(t, m.Member(1), leaderFrom, `leader: synchronizing server 2 by DIFF from 0x[0-9a-f]+00000000 `)
	m.sameChildren(1, parent)
	require.NoError(t, m.Restart(zk))
	waitServing(t, m.Ensemble)
	m.sameChildren(1, parent)
}

// TestMixedSessions: a client connected only to a follower of one kind,
// under a leader of the other, keeps its session (and its ephemeral) alive
// for twice its timeout through the follower's PING replies, which carry
// its touches to the leader; cut off (frozen), it is expired by the leader
// within its timeout and a tick bucket, and its ephemeral goes, watched by
// a client on a member of the leader's kind. Both ways; the recorded
// history passes every checker.
func TestMixedSessions(t *testing.T) {
	skipUnlessLong(t)
	m := startMixed(t, "ddZ", 0, nil)
	const timeout = 4 * time.Second // m.client's
	for _, c := range []struct {
		leader   byte
		follower int64 // the kind opposite the leader's
	}{{zabdKind, 3}, {zookeeperKind, 1}} {
		leader := m.leadBy(c.leader)
		holder, watcher := m.client(c.follower), m.client(leader)
		eph := fmt.Sprintf("/eph-on-%d-under-%d", c.follower, leader)
		_, err := holder.Create(eph, []byte("alive"), wire.ModeEphemeral)
		require.NoError(t, err)
		session := holder.SessionID()
		after(context.Background(), 2*timeout) // the session must outlive its timeout
		exists, err := watcher.Exists(eph, true)
		require.NoError(t, err)
		require.True(t, exists, "%s's ephemeral after twice its timeout", kindName(m.kind(c.follower)))
		require.Equal(t, session, holder.SessionID(), "the holder kept its session")

		holder.Freeze()
		frozen := time.Now()
		for exists {
			require.Less(t, time.Since(frozen), timeout+5*time.Second, "the frozen session's ephemeral %s is still there", eph)
			// Polled every half second, not faster: the reads check is
			// exponential in the reads that overlap an expiry whose time the
			// history cannot bound (since c71b89a, in an ensemble), and with
			// one every 50 ms (80 per expiry) it ran out of its deadline.
			time.Sleep(500 * time.Millisecond) // polling a real server
			exists, err = watcher.Exists(eph, false)
			require.NoError(t, err)
		}
		gone := time.Since(frozen)
		assert.Greater(t, gone, timeout-tick, "expired before its timeout")
		t.Logf("a client of %s follower %d under %s leader %d: alive for %v; frozen, expired after %v",
			kindName(m.kind(c.follower)), c.follower, kindName(c.leader), leader, 2*timeout, gone.Round(time.Millisecond))
		// Thawed, it learns of the expiry and opens a new session; it is
		// closed once that is done, as the workload's expired client is.
		holder.Thaw()
		deadline := time.Now().Add(2*timeout + 10*time.Second)
		for holder.SessionID() == session {
			require.True(t, time.Now().Before(deadline), "the thawed holder got no new session")
			time.Sleep(50 * time.Millisecond) // polling the client's state
		}
		holder.Close()
		watcher.Close()
	}
	m.checkRecorded()
}
