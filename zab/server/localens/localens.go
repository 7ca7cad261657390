package localens

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zabd/zabd/zab/server/zkprocess"

	"github.com/zabd/zabd/zab/runlog"
	"github.com/zabd/zabd/zab/runlog/runview"
)

// Options describes the ensemble to run.
type Options struct {
	// Binary is the zabd executable.
	Binary string
	// Launch, if set, builds the command that runs member id on its
	// zoo.cfg instead of zabd: e.g. ZooKeeper's QuorumPeerMain, for a
	// ZooKeeper ensemble or a mixed one.
	Launch func(id int64, configPath string) (*exec.Cmd, error)
	// Voters and Observers count the members; observers get the highest
	// ids.
	Voters, Observers int
	// Dir holds one directory per member (its dataDir, myid, zoo.cfg and
	// log); it is created if needed.
	Dir string
	// TickTime, InitLimit and SyncLimit go to every zoo.cfg (defaults
	// 500 ms, 10 and 5).
	TickTime             time.Duration
	InitLimit, SyncLimit int
	// Extra are more zoo.cfg keys for every member.
	Extra map[string]string
	// RunRecord has every member record its share of the run
	// (runRecordFile=Member.RunRecordPath(); ZooKeeper members ignore the
	// key), for WriteView.
	RunRecord bool
}

// Member is one zabd process of the ensemble.
type Member struct {
	ID       int64
	Observer bool
	// ClientAddr, QuorumAddr and ElectionAddr are its loopback addresses.
	ClientAddr, QuorumAddr, ElectionAddr string
	// Dir is its directory: dataDir, with myid, zoo.cfg and zabd.log.
	Dir string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// ConfigPath and LogPath are the member's zoo.cfg and log file.
func (m *Member) ConfigPath() string { return filepath.Join(m.Dir, "zoo.cfg") }
func (m *Member) LogPath() string    { return filepath.Join(m.Dir, "zabd.log") }

// RunRecordPath is where the member records its share of the run, with
// Options.RunRecord.
func (m *Member) RunRecordPath() string { return filepath.Join(m.Dir, "run.jsonl") }

// Ensemble is a running local ensemble.
type Ensemble struct {
	opts    Options
	Members []*Member // by id - 1
}

// Start writes each member's configuration (free loopback ports, its own
// data directory and myid) and starts every member; it does not wait for
// them to serve (see WaitServing).
func Start(opts Options) (*Ensemble, error) {
	if opts.Voters < 1 || opts.Observers < 0 {
		return nil, fmt.Errorf("localens: %d voters and %d observers: at least one voter is needed", opts.Voters, opts.Observers)
	}
	if opts.TickTime <= 0 {
		opts.TickTime = 500 * time.Millisecond
	}
	if opts.InitLimit <= 0 {
		opts.InitLimit = 10
	}
	if opts.SyncLimit <= 0 {
		opts.SyncLimit = 5
	}
	n := opts.Voters + opts.Observers
	ports, err := zkprocess.FreePorts(3 * n)
	if err != nil {
		return nil, fmt.Errorf("localens: %w", err)
	}
	e := &Ensemble{opts: opts}
	for i := 1; i <= n; i++ {
		addr := func(k int) string { return "127.0.0.1:" + strconv.Itoa(ports[3*(i-1)+k]) }
		e.Members = append(e.Members, &Member{
			ID: int64(i), Observer: i > opts.Voters,
			ClientAddr: addr(0), QuorumAddr: addr(1), ElectionAddr: addr(2),
			Dir: filepath.Join(opts.Dir, fmt.Sprintf("server%d", i)),
		})
	}
	for _, m := range e.Members {
		if err := e.writeConfig(m); err != nil {
			return nil, err
		}
	}
	for _, m := range e.Members {
		if err := e.start(m); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// ZooKeeper launches a member as Debian's ZooKeeper 3.8 (QuorumPeerMain).
func ZooKeeper(_ int64, configPath string) (*exec.Cmd, error) {
	return zkprocess.JavaCommand("org.apache.zookeeper.server.quorum.QuorumPeerMain", configPath, filepath.Dir(configPath))
}

// writeConfig writes m's myid and zoo.cfg.
func (e *Ensemble) writeConfig(m *Member) error {
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return fmt.Errorf("localens: %w", err)
	}
	if err := os.WriteFile(filepath.Join(m.Dir, "myid"), []byte(strconv.FormatInt(m.ID, 10)+"\n"), 0o644); err != nil {
		return fmt.Errorf("localens: %w", err)
	}
	abs, err := filepath.Abs(m.Dir)
	if err != nil {
		return fmt.Errorf("localens: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\ninitLimit=%d\nsyncLimit=%d\ndataDir=%s\n", e.opts.TickTime.Milliseconds(), e.opts.InitLimit, e.opts.SyncLimit, abs)
	b.WriteString("4lw.commands.whitelist=*\nadmin.enableServer=false\n")
	for _, k := range slices.Sorted(maps.Keys(e.opts.Extra)) {
		fmt.Fprintf(&b, "%s=%s\n", k, e.opts.Extra[k])
	}
	if e.opts.RunRecord {
		fmt.Fprintf(&b, "runRecordFile=%s\n", filepath.Join(abs, "run.jsonl"))
	}
	for _, o := range e.Members {
		role := "participant"
		if o.Observer {
			role = "observer"
		}
		_, qp, _ := net.SplitHostPort(o.QuorumAddr)
		_, ep, _ := net.SplitHostPort(o.ElectionAddr)
		fmt.Fprintf(&b, "server.%d=127.0.0.1:%s:%s:%s;%s\n", o.ID, qp, ep, role, o.ClientAddr)
	}
	if err := os.WriteFile(m.ConfigPath(), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("localens: %w", err)
	}
	return nil
}

// start runs member m's process, its output appended to its log.
func (e *Ensemble) start(m *Member) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		return fmt.Errorf("localens: server %d is already running", m.ID)
	}
	cmd := exec.Command(e.opts.Binary, "-config", m.ConfigPath())
	if e.opts.Launch != nil {
		var err error
		if cmd, err = e.opts.Launch(m.ID, m.ConfigPath()); err != nil {
			return fmt.Errorf("localens: server %d: %w", m.ID, err)
		}
	}
	logFile, err := os.OpenFile(m.LogPath(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("localens: %w", err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The members die with the process that started them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("localens: start server %d: %w", m.ID, err)
	}
	done := make(chan struct{})
	m.cmd, m.done = cmd, done
	go func() {
		cmd.Wait()
		logFile.Close()
		m.mu.Lock()
		if m.cmd == cmd {
			m.cmd = nil
		}
		m.mu.Unlock()
		close(done)
	}()
	return nil
}

// Running reports whether the member's process is alive (a stopped one,
// SIGSTOP, counts as running).
func (m *Member) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cmd != nil
}

// Pid is the member's process id, or 0.
func (m *Member) Pid() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

// Signal sends sig to the member's process.
func (m *Member) Signal(sig syscall.Signal) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return fmt.Errorf("localens: server %d is not running", m.ID)
	}
	return m.cmd.Process.Signal(sig)
}

// Stop ends the member with sig (SIGTERM stops it gracefully, SIGKILL as a
// crash) and waits until it has exited; a process that does not exit
// within 10 s of SIGTERM is killed.
func (m *Member) Stop(sig syscall.Signal) {
	m.mu.Lock()
	cmd, done := m.cmd, m.done
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(sig)
	cmd.Process.Signal(syscall.SIGCONT) // a stopped process handles nothing else
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// Member returns the member with id.
func (e *Ensemble) Member(id int64) *Member { return e.Members[id-1] }

// Restart starts a stopped member again.
func (e *Ensemble) Restart(id int64) error { return e.start(e.Member(id)) }

// Wipe removes a stopped member's data (its snapshots, log and epochs),
// keeping its myid and zoo.cfg: it restarts as a new, empty server.
func (e *Ensemble) Wipe(id int64) error {
	m := e.Member(id)
	if m.Running() {
		return fmt.Errorf("localens: server %d is running", id)
	}
	if err := os.RemoveAll(filepath.Join(m.Dir, "version-2")); err != nil {
		return fmt.Errorf("localens: %w", err)
	}
	return nil
}

// ConnectString is the client connect string of every member.
func (e *Ensemble) ConnectString() string {
	return strings.Join(e.ClientAddrs(), ",")
}

// ClientAddrs are the members' client addresses, by id.
func (e *Ensemble) ClientAddrs() []string {
	addrs := make([]string, len(e.Members))
	for i, m := range e.Members {
		addrs[i] = m.ClientAddr
	}
	return addrs
}

// Mode asks a member's srvr for its mode: leader, follower, observer, or
// "" while it does not serve (looking or synchronizing, or down).
func (e *Ensemble) Mode(ctx context.Context, id int64) string {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return zkprocess.Mode(ctx, e.Member(id).ClientAddr)
}

// Modes is Mode for every member, by id - 1.
func (e *Ensemble) Modes(ctx context.Context) []string {
	modes := make([]string, len(e.Members))
	var wg sync.WaitGroup
	for i, m := range e.Members {
		wg.Add(1)
		go func() { defer wg.Done(); modes[i] = e.Mode(ctx, m.ID) }()
	}
	wg.Wait()
	return modes
}

// Zxid asks a member's srvr for its last zxid (the last txn it applied).
func (e *Ensemble) Zxid(ctx context.Context, id int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	out, err := zkprocess.FourLetterWord(ctx, e.Member(id).ClientAddr, "srvr")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Zxid: "); ok {
			z, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
			return int64(z), err
		}
	}
	return 0, fmt.Errorf("server %d: srvr has no Zxid line: %q", id, out)
}

// WaitCaughtUp polls until every member has applied what the leader had
// applied when it was called: no lag left, as the README's migration steps
// ask before the next member goes down. A leader that has proposed nothing
// in its epoch yet reports the epoch's start (counter 0), which no follower
// applies: WaitCaughtUp waits up to two seconds for its first txn, and with
// none there is no lag to wait for (every serving member was synchronized
// with the leader's whole history).
func (e *Ensemble) WaitCaughtUp(ctx context.Context, leader int64) error {
	var target int64
	quiet := time.Now().Add(2 * time.Second)
	for {
		z, err := e.Zxid(ctx, leader)
		if err != nil {
			return fmt.Errorf("leader %d: %w", leader, err)
		}
		if target = z; z&0xffffffff != 0 {
			break
		}
		if time.Now().After(quiet) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	for _, m := range e.Members {
		for {
			z, err := e.Zxid(ctx, m.ID)
			if err == nil && z >= target {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("server %d has not applied 0x%x (at 0x%x, %v): %w", m.ID, target, z, err, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// ErrNotServing is WaitServing's error when ctx ends first.
var ErrNotServing = errors.New("localens: the ensemble did not come to serve")

// WaitServing polls until every running member serves and exactly one
// leads, and returns the leader's id.
func (e *Ensemble) WaitServing(ctx context.Context) (int64, error) {
	for {
		if leader := e.servingLeader(ctx); leader != 0 {
			return leader, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%w: modes %q", ErrNotServing, e.Modes(context.Background()))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (e *Ensemble) servingLeader(ctx context.Context) int64 {
	leader := int64(0)
	for i, mode := range e.Modes(ctx) {
		m := e.Members[i]
		switch {
		case !m.Running():
		case mode == "leader" && leader == 0:
			leader = m.ID
		case mode == "follower" || mode == "observer":
		default:
			return 0
		}
	}
	return leader
}

// Close stops every member gracefully.
func (e *Ensemble) Close() {
	var wg sync.WaitGroup
	for _, m := range e.Members {
		wg.Add(1)
		go func() { defer wg.Done(); m.Stop(syscall.SIGTERM) }()
	}
	wg.Wait()
}

// LogTail returns the last n lines of a member's log, for failures.
func (m *Member) LogTail(n int) string {
	f, err := os.Open(m.LogPath())
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// WriteView merges the run records the members wrote (Options.RunRecord;
// members that wrote none, such as ZooKeeper's, are left out) into
// runview's page at path.
func (e *Ensemble) WriteView(path, title string) error {
	var records []*runlog.Run
	for _, m := range e.Members {
		f, err := os.Open(m.RunRecordPath())
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("localens: %w", err)
		}
		r, _, err := runlog.ReadMember(f, m.RunRecordPath())
		f.Close()
		if err != nil {
			return fmt.Errorf("localens: %w", err)
		}
		records = append(records, r)
	}
	run, err := runlog.Merge(records)
	if err != nil {
		return fmt.Errorf("localens: %w", err)
	}
	run.Title = title
	if err := runlog.WriteFile(path, func(w io.Writer) error { return runview.Write(w, run) }); err != nil {
		return fmt.Errorf("localens: %w", err)
	}
	return nil
}
