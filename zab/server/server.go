package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/member"
	"github.com/zabd/zabd/zab/runlog"
	"github.com/zabd/zabd/zab/server/config"
	"github.com/zabd/zabd/zab/server/metrics"
	"github.com/zabd/zabd/zab/server/peernet"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// Version is what srvr, stat, mntr and envi report: ZooKeeper's version
// line, so that tools keyed on "3.8" accept zabd, with zabd named in it.
const Version = "3.8.0-zabd, built on 2026-11-21 00:00 UTC"

// DefaultMaxQueuedBytes bounds the replies and events waiting for one
// connection's writer: a client that stops reading is disconnected when its
// backlog passes this.
const DefaultMaxQueuedBytes = 16 << 20

// Options configures a Server.
type Options struct {
	Config *config.Config
	Log    *slog.Logger // nil: slog.Default()
	// FS is the file system under the data directories; nil means the real
	// one. Tests wrap it to record fsyncs.
	FS vfs.FS
	// Listener, if set, is used instead of listening on the config's
	// client address (tests pass one bound to 127.0.0.1:0);
	// SecureListener likewise for the secure (TLS) client address.
	Listener       net.Listener
	SecureListener net.Listener
	// QuorumListener and ElectionListener, if set, are an ensemble
	// member's peer ports (tests pass ones bound to 127.0.0.1:0, and list
	// their addresses in the config's server lines).
	QuorumListener, ElectionListener net.Listener
	// MaxQueuedBytes overrides DefaultMaxQueuedBytes.
	MaxQueuedBytes int
	// HandshakeTimeout overrides DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// AllowDataLoss lets recovery start past damage that loses durable txns
	// (zabd's -allow-data-loss, which recovery's refusals name).
	AllowDataLoss bool
	// LockWait overrides DefaultLockWait: how long to wait for another
	// process to let go of a data directory's lock before refusing.
	LockWait time.Duration
	// Seed seeds the randomness handed to the core and the log (snapshot
	// and roll points); 0 draws one.
	Seed uint64
}

// Server is a running zabd: standalone, or a member of an ensemble.
type Server struct {
	cfg              *config.Config
	log              *slog.Logger
	maxQueuedBytes   int
	handshakeTimeout time.Duration
	started          time.Time // also the origin of the monotonic clock handed to the Peer

	lock      *dirLock     // the data directories' lock files
	rec       *runRecorder // runRecordFile; nil: not recording
	listeners []clientListener
	tls       *tls.Config // the client ports' TLS; nil without secureClientPort or port unification
	adminTLS  *tls.Config // the admin server's HTTPS; nil without admin.forceHttps or admin.portUnification
	// quorumTLS is the members' TLS; nil without sslQuorum or portUnification.
	quorumTLS *peernet.TLS
	// m is the member (zab/member: the Peer, its storage, and the
	// executor of its Readys); peer is its Peer.
	m    *member.Member
	peer *zab.Peer
	// replayStart is when the start's replay of the log began.
	replayStart time.Time
	// net carries an ensemble member's peer traffic; nil when standalone.
	net *peernet.Net

	events    chan inbound
	queries   chan func()
	disk      *diskRunner
	snapshots *snapshotRunner

	// Owned by the event loop.
	conns map[zab.ConnID]*conn
	stats serverStats
	// role is the member's role as the Peer last reported it, and since
	// when; electionStart is when it last began looking.
	role          zab.SoftState
	roleSince     time.Time
	electionStart time.Time
	// unavailableSince is when the member last stopped serving (zero while
	// it serves), syncStart when its last synchronization began: for the
	// ensemble metrics (measureRole).
	unavailableSince, syncStart time.Time

	admission admission
	// slowReaders counts connections closed for not reading their replies.
	slowReaders atomic.Int64
	// metrics holds ZooKeeper's counters and summaries; measured are the
	// ones the shell feeds.
	metrics  *metrics.Registry
	measured *measured

	nextConn  atomic.Int64 // the last ConnID the accept loops gave
	wg        sync.WaitGroup
	stopOnce  sync.Once
	stopping  chan struct{}
	loopDone  chan struct{}
	fatalErr  error
	fatalOnce sync.Once
	http      []*httpServer
}

// inbound is an event from a connection's reader, with the connection so
// that the event loop can register it.
type inbound struct {
	conn *conn
	ev   zab.Event
}

// New checks and locks the data directories, binds the ports, recovers the
// data and builds the replica; Serve starts it. A failure is one line
// naming its cause.
func New(opts Options) (*Server, error) {
	cfg := opts.Config
	if cfg == nil {
		return nil, errors.New("server: no config")
	}
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	seed := opts.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	fsys := opts.FS
	if fsys == nil {
		fsys = vfs.OS{}
	}
	if !cfg.ForceSync {
		fsys = syncHookFS{FS: fsys, sync: skipSync}
		log.Warn("forceSync=no: txns are not fsynced; a machine crash can lose acknowledged writes")
	}
	s := &Server{
		cfg: cfg, log: log, maxQueuedBytes: opts.MaxQueuedBytes,
		started: time.Now(),
		events:  make(chan inbound, 1024), queries: make(chan func()),
		conns: map[zab.ConnID]*conn{}, stopping: make(chan struct{}), loopDone: make(chan struct{}),
		admission: admission{perIP: map[string]int{}, max: cfg.MaxClientCnxns},
		metrics:   metrics.New(),
	}
	s.measured = newMeasured(s.metrics)
	if s.maxQueuedBytes <= 0 {
		s.maxQueuedBytes = DefaultMaxQueuedBytes
	}
	s.handshakeTimeout = opts.HandshakeTimeout
	if s.handshakeTimeout <= 0 {
		s.handshakeTimeout = DefaultHandshakeTimeout
	}
	s.stats.reset()
	if err := s.start(opts, fsys, seed); err != nil {
		s.abandon()
		return nil, err
	}
	return s, nil
}

// start does what New must before the server can serve, in this order: the
// TLS stores load; the data directories exist and are writable and no other
// zabd holds them; every port is bound; only then is anything recovered.
func (s *Server) start(opts Options, fsys vfs.FS, seed uint64) error {
	if err := s.loadTLS(); err != nil {
		return err
	}
	dirs := dataDirs(s.cfg.DataDir, s.cfg.DataLogDir)
	if err := checkDataDirs(dirs); err != nil {
		return err
	}
	wait := opts.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	lock, err := lockDataDirs(dirs, wait, s.log)
	if err != nil {
		return err
	}
	s.lock = lock
	if err := s.listen(opts); err != nil {
		return err
	}
	if err := s.bindHTTP(); err != nil {
		return err
	}
	if s.cfg.Distributed() {
		if s.net, err = newPeerNet(s.cfg, s.log, opts.QuorumListener, opts.ElectionListener, s.quorumTLS); err != nil {
			return err
		}
	}
	if s.cfg.RunRecordFile != "" {
		if s.rec, err = openRunRecorder(s.cfg.RunRecordFile, max(s.cfg.MyID, 1)); err != nil {
			return err
		}
	}
	if err := s.recover(fsys, seed, opts.AllowDataLoss); err != nil {
		return err
	}
	s.rec.add(runlog.Event{Kind: runlog.KindStart, Text: "zabd started, log ends at " + zxidHex(s.m.Log.LastZxid())})
	return nil
}

// bindPort binds addr for what the config key names, saying so in one line
// when another process has the port.
func bindPort(what, key, addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s %s (%s) is in use by another process: %w", what, addr, key, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s (%s): %w", what, addr, key, err)
	}
	return l, nil
}

// abandon releases what a failed New holds: the log, the listeners and the
// data directories' locks.
func (s *Server) abandon() {
	if s.m != nil {
		s.m.Log.Close()
	}
	s.closeListeners()
	for _, h := range s.http {
		h.l.Close()
	}
	if s.net != nil {
		s.net.Close()
	}
	s.rec.close()
	s.lock.release()
}

// recover opens storage, loads the newest snapshot, replays the log and
// builds the Peer.
func (s *Server) recover(fsys vfs.FS, seed uint64, allowDataLoss bool) error {
	cfg := s.cfg
	s.log.Info("recovery: opening data directory", "dir", cfg.DataDir, "log_dir", cfg.DataLogDir)
	treeCfg := datatree.Config{
		SuperDigest: cfg.SuperDigest, ExtendedTypesEnabled: cfg.ExtendedTypesEnabled, EnforceQuota: cfg.EnforceQuota,
		X509Enabled: cfg.X509AuthEnabled, X509SuperUser: cfg.X509SuperUser,
		Warn:    func(msg string) { s.log.Warn(msg) },
		Traffic: namespaceTraffic{s.measured},
	}
	zcfg := zab.Config{
		ServerID:               zab.StandaloneServerID,
		Tick:                   cfg.TickTime,
		SessionLimits:          sessions.Limits{MinMillis: int32(cfg.MinSessionTimeout.Milliseconds()), MaxMillis: int32(cfg.MaxSessionTimeout.Milliseconds())},
		SnapCount:              cfg.SnapCount,
		ContainerCheckInterval: cfg.ContainerCheckInterval,
		EnforceAuthSchemes:     cfg.EnforceAuthSchemes,
	}
	if cfg.Distributed() {
		zcfg.ServerID, zcfg.Ensemble = cfg.MyID, ensembleOf(cfg)
	}
	s.disk = newDiskRunner(s.measured)
	s.snapshots = newSnapshotRunner(nil, s.log, s.stopping, cfg.PurgeInterval, cfg.SnapRetainCount, s.measured.snapshotTime)
	loadStart := time.Now()
	m, st, err := member.Open(member.Options{
		Storage: storage.Options{
			FS: fsys, Dir: cfg.DataDir, LogDir: cfg.DataLogDir, SnapCount: cfg.SnapCount,
			Rand: newMathRand(seed), AllowDataLoss: allowDataLoss, AllowDataLossName: "-allow-data-loss", // zabd's flag
			Logf: func(format string, args ...any) { s.log.Warn("recovery: " + fmt.Sprintf(format, args...)) },
		},
		Config: zcfg,
		Tree:   treeCfg,
		// A negative snapshotSizeFactor turns the DIFF from the txn log
		// off, as in ZooKeeper: a learner behind the committed window gets
		// a SNAP.
		SnapshotSizeFactor: cfg.SnapshotSizeFactor,
		Now:                s.now(),
		Rand:               rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		Leaves:             shell{s: s},
		Observer:           shell{s: s},
	})
	if err != nil {
		var se *member.StartError
		if errors.As(err, &se) {
			switch se.Stage {
			case member.StageOpen:
				return fmt.Errorf("open data directory: %w", se.Err)
			case member.StageFirstStart:
				return fmt.Errorf("first start in %s: %w", cfg.DataDir, se.Err)
			case member.StageReplay:
				return fmt.Errorf("replay the txn log: %w", se.Err)
			case member.StagePeer:
				return se.Err
			}
			return fmt.Errorf("recover %s: %w", cfg.DataDir, se.Err)
		}
		return err
	}
	rec := st.Recovery
	switch {
	case st.Initialized != "":
		s.log.Info("recovery: first start, wrote the empty tree's snapshot", "file", st.Initialized)
	case rec.Snapshot.Name != "":
		s.log.Info("recovery: loaded snapshot", "file", rec.Snapshot.Name, "zxid", zxidHex(rec.Snapshot.Zxid), "sessions", len(rec.Snapshot.Sessions))
	default:
		s.log.Info("recovery: no snapshot, starting from an empty tree")
	}
	if st.DamageForgotten != "" {
		// -allow-data-loss cut damaged txns, and no other member can
		// restore them: the operator accepted the loss.
		s.log.Warn("recovery: a standalone server starts without the txns the damage cut", "damage", st.DamageForgotten)
	}
	if cfg.Distributed() {
		s.log.Info("recovery: ensemble member", "myid", cfg.MyID, "accepted_epoch", st.Restored.AcceptedEpoch, "current_epoch", st.Restored.CurrentEpoch)
	}
	s.measureRecovery(loadStart, s.replayStart, st.Replayed)
	s.log.Info("recovery: replayed txn log", "txns", st.Replayed, "last_zxid", zxidHex(rec.LastZxid))
	m.Start()
	s.m, s.peer = m, m.Peer
	s.snapshots.store = m.Store
	s.role, s.electionStart = m.Peer.State(), s.started
	return nil
}

// ensembleOf is the ensemble a zoo.cfg lists, for the Peer.
func ensembleOf(cfg *config.Config) *zab.Ensemble {
	e := &zab.Ensemble{InitLimit: cfg.InitLimit, SyncLimit: cfg.SyncLimit, ZooKeeperSync: cfg.MixedEnsemble,
		Election: election.Config{QuorumConfig: []byte(cfg.DynamicConfig()), FinalizeWait: cfg.ElectionFinalizeWait, FixedFinalizeWait: cfg.MixedEnsemble,
			MinNotificationInterval: cfg.ElectionMinNotificationInterval, MaxNotificationInterval: cfg.ElectionMaxNotificationInterval}}
	for _, m := range cfg.Servers {
		if m.Role == config.Observer {
			e.Observers = append(e.Observers, m.ID)
		} else {
			e.Voters = append(e.Voters, m.ID)
		}
	}
	// Parse checked the groups: an error here cannot happen.
	if q, err := cfg.Quorum(); err == nil && q != nil {
		e.Quorum = q
	}
	return e
}

// newPeerNet builds an ensemble member's transport, listening on its own
// quorum and election ports.
func newPeerNet(cfg *config.Config, log *slog.Logger, quorumLn, electionLn net.Listener, quorumTLS *peernet.TLS) (*peernet.Net, error) {
	pc := peernet.Config{Self: cfg.MyID, QuorumConfig: []byte(cfg.DynamicConfig()), Log: log,
		QuorumListener: quorumLn, ElectionListener: electionLn, TLS: quorumTLS}
	for _, m := range cfg.Servers {
		pc.Members = append(pc.Members, peernet.Member{ID: m.ID, QuorumAddr: m.QuorumAddr(), ElectionAddr: m.ElectionAddr(), Observer: m.Role == config.Observer})
	}
	n, err := peernet.New(pc)
	if err != nil {
		return nil, fmt.Errorf("server.%d: %w", cfg.MyID, err)
	}
	return n, nil
}

// now reads the two clocks the core wants.
func (s *Server) now() zab.Time {
	return zab.Time{Mono: time.Since(s.started), Wall: time.Now().UnixMilli()}
}

// Serve runs the server until ctx ends or Stop is called, then stops
// gracefully: listeners close, the fsync in flight finishes, the log is
// closed. It returns a fatal error (a failed log write) if one stopped it.
func (s *Server) Serve(ctx context.Context) error {
	if s.cfg.PurgeInterval > 0 {
		s.snapshots.purge() // ZooKeeper's autopurge also runs once at start
	}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.disk.run() }()
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.snapshots.run() }()
	if s.net != nil {
		s.net.Start()
	}
	go s.loop()
	s.serveHTTP()
	var accepting sync.WaitGroup
	for _, l := range s.listeners {
		accepting.Add(1)
		go func() { defer accepting.Done(); s.acceptLoop(l) }()
	}
	// "serving" only once the event loop answers: from here a client that
	// connects is served (by an ensemble member once it leads or follows).
	if s.query(func() {}) {
		msg, attrs := "serving clients", []any{"data_dir", absPath(s.cfg.DataDir), "data_log_dir", absPath(s.cfg.DataLogDir)}
		if s.net != nil {
			msg, attrs = "accepting clients, served once this member leads or follows", append(attrs, "server_id", s.cfg.MyID)
		}
		for _, l := range s.listeners {
			s.log.Info(msg, append([]any{"addr", l.Addr().String(), "tls", l.secure}, attrs...)...)
		}
	}
	select {
	case <-ctx.Done():
	case <-s.stopping:
	}
	s.Stop()
	accepting.Wait()
	<-s.loopDone
	s.lock.release()
	return s.fatalErr
}

// absPath is path made absolute for the logs, or path if that fails.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// Stop begins a graceful stop; Serve returns when it is complete.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		close(s.stopping)
		s.closeListeners()
		s.stopHTTP()
	})
}

// fatal stops the server because its state can no longer be trusted.
func (s *Server) fatal(err error) {
	s.fatalOnce.Do(func() {
		s.fatalErr = err
		s.measured.unrecoverable.Add(1)
		s.log.Error("stopping: fatal error", "err", err)
	})
	s.Stop()
}

// DefaultHandshakeTimeout is how long a new connection may take to send its
// first frame (ZooKeeper's zookeeper.nio.sessionlessCnxnTimeout default).
const DefaultHandshakeTimeout = 10 * time.Second

// deliver hands an event to the event loop; after a stop it is dropped.
func (s *Server) deliver(c *conn, ev zab.Event) {
	select {
	case s.events <- inbound{conn: c, ev: ev}:
	case <-s.loopDone:
	}
}

// query runs fn on the event loop (where the Peer and the connection table
// may be read) and waits for it; false if the loop has stopped.
func (s *Server) query(fn func()) bool {
	done := make(chan struct{})
	select {
	case s.queries <- func() { fn(); close(done) }:
		<-done
		return true
	case <-s.loopDone:
		return false
	}
}

// admission counts connections per client IP for maxClientCnxns.
type admission struct {
	mu    sync.Mutex
	perIP map[string]int
	max   int // 0: no limit
}

func (a *admission) admit(ip string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.max > 0 && a.perIP[ip] >= a.max {
		return false
	}
	a.perIP[ip]++
	return true
}

func (a *admission) release(ip string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.perIP[ip]--; a.perIP[ip] <= 0 {
		delete(a.perIP, ip)
	}
}

func zxidHex(z int64) string    { return fmt.Sprintf("0x%x", z) }
func sessionHex(s int64) string { return fmt.Sprintf("0x%x", s) }
