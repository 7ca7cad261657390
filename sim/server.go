package sim

import (
	"errors"
	"fmt"
	mathrand "math/rand"
	mathrand2 "math/rand/v2"
	"slices"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/sim/simclient"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/member"
	"github.com/zabd/zabd/zab/restore"
	"github.com/zabd/zabd/zab/runlog"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// The simulated disk's behaviour outside injected faults: after a crash each
// unsynced sector survives with even odds (real disks reorder writes).
var healthyDisk = vfs.SimConfig{SectorSize: 512, KeepUnsynced: 0.5}

const (
	dataDir     = "/data"
	fsyncBase   = 200 * time.Microsecond // an fsync takes fsyncBase..2×fsyncBase
	restartWait = 100 * time.Millisecond // a stopped process is restarted this long after
	// logPrealloc keeps the simulated log files small: the in-memory disk
	// copies whole files on a crash.
	logPrealloc = 64 << 10
)

// server is one zabd process: the member zabd runs (package zab/member: a
// zab.Peer over a storage.Store, and the executor of its Readys) on a
// simulated disk and network (leaves.go), with its lifecycle and the faults
// injected into it. It outlives crashes: each start is a new incarnation
// (gen).
type server struct {
	w    *world
	id   int   // index in the world's servers
	sid  int64 // the server id (myid): id+1
	disk *vfs.Sim
	cfg  vfs.SimConfig // the disk's fault settings now

	up  bool
	gen int
	// drainPending: a Ready is due once the event loop comes back
	// (Schedule.LoopDelayUs); events stepped before then share it.
	drainPending bool
	// m is the running member (zab/member: the executor zabd runs);
	// peer and store are its Peer and storage.
	m     *member.Member
	peer  *zab.Peer
	store *storage.Store
	conns map[zab.ConnID]*conn
	// ready is the Ready the member is carrying out (between its Ready
	// and Carried hooks); installs, the SNAPs whose snapshots it has yet
	// to write.
	ready    *zab.Ready
	installs []pendingInstall
	// written is the log files as written before the last crash, by path:
	// what a record recovery refuses is compared with (crashLooksFlipped).
	written  map[string][]byte
	entryEnc wire.Encoder // encodes a leader's proposals for the checker, reused

	tickAt   time.Duration // the armed Tick, if any (0: none)
	appended int64         // last zxid appended this incarnation

	wallOffset time.Duration // this server's wall clock's jumps
	role       zab.SoftState // as the Peer last reported it
	logged     []int64       // the zxids the log holds, ascending (durable or not)
	// witnessed is what this server logged under each zxid, across
	// restarts (the latest txn: a truncated zxid may be logged again).
	witnessed zxidMap[loggedTxn]
	snapBase  int64 // the zxid of the newest snapshot written or started from
	damaged   bool  // started with Restored.LogDamaged, not yet synchronized
	// damageOnDisk: the member's disk records a damage cut (a damaged
	// start wrote it) that no DamageRepaired has forgotten since: what
	// its next start must find (Restored.LogDamaged).
	damageOnDisk bool
	// fuzzyUntil: the tree was loaded from a fuzzy snapshot that holds
	// some of the txns up to this zxid. An ensemble member applies its
	// logged txns only once a leader has synchronized it, so until its
	// tree reaches fuzzyUntil again it is no tree any member had at its
	// last zxid, and digest checks wait (0: the tree is whole).
	fuzzyUntil int64
	cutting    string          // a damaged log is being cut (why), until a start finishes the cut
	fsyncRng   *mathrand2.Rand // fsync durations: a stream of their own
	// arrivedFuzzyUntil: the last SNAP that arrived holds txns up to this
	// zxid after its own (0: none); if the Peer installs it, its tree does.
	arrivedFuzzyUntil int64
	// fuzzyInstalled maps the snapshot files written of an installed fuzzy
	// tree (named after the SNAP's zxid) to the zxid up to which they hold
	// later txns: a restart from one loads a tree as fuzzy.
	fuzzyInstalled map[string]int64
	snaps          zab.SnapJoiner // the SNAPs this server streams, gathered

	// The epoch files as this server last read or wrote them (ensembles).
	diskAccepted, diskCurrent int64

	// What must survive: the highest zxid ever reported durable to a Peer,
	// and the tree digest after each appended zxid that may still survive.
	durable int64
	digests zxidMap[int64]

	corrupted    *flippedBit // durable data corrupted: a refusal to start is correct
	failNextSync bool
	noSpaceUntil time.Duration
	slowUntil    time.Duration
	slowDelay    time.Duration
	// holdUntil: an aimed hold-fsync (aimed_hold.go) keeps fsyncs from
	// beginning before this time.
	holdUntil  time.Duration
	restarting bool // a restart is scheduled

	// decidingSince is when this server last began to decide expiry: it
	// established its epoch as leader, or started standalone.
	decidingSince time.Duration
}

func newServer(w *world, id int) *server {
	s := &server{w: w, id: id, sid: int64(id + 1), cfg: healthyDisk}
	rng := mathrand.New(mathrand.NewSource(w.streams.DeriveSeed(fmt.Sprintf("disk/%d", id))))
	s.disk = vfs.NewSim(healthyDisk, rng)
	s.fsyncRng = w.streams.Stream(fmt.Sprintf("fsync/%d", id))
	return s
}

func (s *server) now() zab.Time {
	return zab.Time{Mono: s.w.clock.Mono(), Wall: s.w.clock.WallMillis() + s.wallOffset.Milliseconds()}
}

// start recovers from disk and starts a new incarnation of the member
// (package zab/member, the executor zabd runs), then checks what it
// recovered: everything reported durable, with the digests it had.
func (s *server) start() {
	s.restarting = false
	w := s.w
	var m *member.Member
	var st *member.Started
	var err error
	if s.cutting == "" {
		m, st, err = s.open(false)
		if err != nil && w.ensemble != nil && errors.Is(err, storage.ErrDataLoss) && s.corrupted != nil {
			// A damaged log in an ensemble member: keep what comes before
			// the damage and let the others restore the rest, rather than
			// refuse (an operator's -allow-data-loss).
			w.tr.logf("server %d: log damaged (%v): starting with what precedes the damage", s.sid, err)
			s.cutting, s.damaged = err.Error(), true
		}
	}
	if s.cutting != "" {
		// Once begun, the cut is finished even if a full disk interrupts
		// it: a half-done quarantine can make the damage look like a torn
		// tail to a plain recovery.
		if m, st, err = s.open(true); err != nil && recovering(err) {
			s.couldNotStart("recover a damaged log", err)
			return
		}
		s.cutting, s.corrupted = "", nil // the quarantine made the cut permanent
		s.damageOnDisk = true
		w.stats.DamagedStarts++
	}
	if err != nil {
		switch stage := stageOf(err); {
		case recovering(err) && (errors.Is(err, storage.ErrDataLoss) || s.corrupted != nil):
			s.refused(err)
		case stage == member.StagePeer:
			w.fail(KindRecovery, "server %d: new peer: %v", s.sid, err)
		case stage == member.StageReplay:
			w.fail(KindDurability, "server %d: replay: %v", s.sid, err)
		default:
			// As ZooKeeper, a first start that cannot write its snapshot
			// does not serve: the process exits and is started again.
			s.couldNotStart(string(stage), err)
		}
		return
	}
	rec, peer := st.Recovery, m.Peer
	if (st.Restored.LogDamaged != nil) != s.damageOnDisk {
		w.fail(KindRecovery, "server %d: starts with its log damage recorded %v, but its disk was left with it recorded %v (a damaged start records it, DamageRepaired forgets it)",
			s.sid, st.Restored.LogDamaged != nil, s.damageOnDisk)
		return
	}
	if st.Initialized != "" && w.tr.on() {
		w.tr.logf("server %d: first start: wrote %s, the empty tree", s.sid, st.Initialized)
	}
	last := rec.LastZxid
	w.recordUpDown(s.sid, runlog.KindStart, fmt.Sprintf("incarnation %d, log ends at 0x%x", s.gen, last))
	if w.tr.on() {
		w.tr.logf("server %d: started (incarnation %d), log ends at zxid 0x%x, tree at 0x%x digest %d, %d warnings",
			s.sid, s.gen, last, peer.LastZxid(), peer.Digest(), len(rec.Warnings))
		for _, warn := range rec.Warnings {
			w.tr.logf("server %d: recovery: %s", s.sid, warn)
		}
	}
	damaged := st.Restored.LogDamaged != nil
	s.fuzzyUntil = 0
	if f := s.fuzzyInstalled[rec.Snapshot.Name]; f > peer.LastZxid() {
		// Written of a fuzzy tree a SNAP installed, as a ZooKeeper
		// learner writes it: its digest is the fuzzy tree's, and the txns
		// up to f apply again once a leader commits them.
		s.fuzzyUntil = f
		w.stats.FuzzyRecoveries++
		w.tr.logf("server %d: loaded snapshot %s of an installed fuzzy tree, which holds some txns up to 0x%x: they apply again once a leader commits them", s.sid, rec.Snapshot.Name, f)
	} else if d := rec.Snapshot.Digest; d != nil && d.Zxid > rec.Snapshot.Zxid {
		w.stats.FuzzyRecoveries++
		if peer.LastZxid() < d.Zxid {
			s.fuzzyUntil = d.Zxid
			w.tr.logf("server %d: loaded fuzzy snapshot %s, which holds some txns up to 0x%x: they apply again once a leader commits them", s.sid, rec.Snapshot.Name, d.Zxid)
			if !s.checkFuzzyReplay(s.treeConfig(), rec, damaged) {
				return
			}
		} else {
			w.tr.logf("server %d: recovered from fuzzy snapshot %s, which holds some txns up to 0x%x: replay applied them again", s.sid, rec.Snapshot.Name, d.Zxid)
		}
	}
	if last < s.durable && !damaged {
		w.fail(KindDurability, "server %d recovered to zxid 0x%x but 0x%x had been reported durable (warnings: %q)", s.sid, last, s.durable, rec.Warnings)
		return
	}
	if want, ok := s.digests.get(peer.LastZxid()); ok && want != peer.Digest() && s.fuzzyUntil == 0 {
		w.fail(KindDurability, "server %d: tree digest after replay to 0x%x is %d, but it was %d when that txn was applied", s.sid, peer.LastZxid(), peer.Digest(), want)
		return
	}
	s.digests.deleteAbove(last) // zxids past the recovered end will be reused
	if err := s.readLogged(rec); err != nil {
		w.fail(KindRecovery, "server %d: read back the log: %v", s.sid, err)
		return
	}
	s.snapBase = rec.Snapshot.Zxid
	s.corrupted = nil
	s.durable = last // what recovery read back survived the crash: it is on disk
	s.m, s.peer, s.store, s.up = m, peer, m.Store, true
	s.appended = last
	s.installs = nil
	s.conns = map[zab.ConnID]*conn{}
	s.tickAt = 0
	s.role = zab.SoftState{}
	s.decidingSince = w.clock.Mono() // standalone: it decides from now (see roleChanged)
	s.diskAccepted, s.diskCurrent = st.Restored.AcceptedEpoch, st.Restored.CurrentEpoch
	w.inv.started(s)
	m.Start()
	s.drain()
}

// open opens the data directory and builds the member, as zabd does;
// allowLoss cuts a damaged log instead of refusing.
func (s *server) open(allowLoss bool) (*member.Member, *member.Started, error) {
	w := s.w
	cfg := zab.Config{
		ServerID:               zab.StandaloneServerID,
		Tick:                   ms(w.sched.TickMs),
		SnapCount:              s.snapCount(),
		SnapshotStepNodes:      w.sched.SnapshotStepNodes,
		ContainerCheckInterval: s.reapInterval(),
		Bugs:                   w.opts.Bugs,
	}
	if w.ensemble != nil {
		cfg.ServerID, cfg.Ensemble = s.sid, w.ensemble
	}
	return member.Open(member.Options{
		Storage: storage.Options{
			FS: s.disk, Dir: dataDir, SnapCount: s.snapCount(), PreallocSize: logPrealloc, AllowDataLoss: allowLoss,
			Rand: mathrand.New(mathrand.NewSource(w.streams.DeriveSeed(fmt.Sprintf("log/%d/%d", s.id, s.gen)))),
		},
		Config:             cfg,
		Tree:               s.treeConfig(),
		SnapshotSizeFactor: restore.DefaultSnapshotSizeFactor,
		Now:                s.now(),
		Rand:               w.streams.Stream(fmt.Sprintf("peer/%d/%d", s.id, s.gen)),
		Leaves:             s,
		Observer:           s,
	})
}

// stageOf is the stage at which a member's start failed.
func stageOf(err error) member.Stage {
	var se *member.StartError
	if errors.As(err, &se) {
		return se.Stage
	}
	return ""
}

// recovering reports whether a start failed while opening or recovering
// the data directory (before anything of it could be cut for good).
func recovering(err error) bool {
	stage := stageOf(err)
	return stage == member.StageOpen || stage == member.StageRecover
}

// treeConfig is the tree's configuration in every simulated server.
func (s *server) treeConfig() datatree.Config { return datatree.Config{ExtendedTypesEnabled: true} }

// reapInterval is how often the Peer deletes empty containers and expired
// TTL nodes: the schedule's interval, or, with reaping off, a day (no pass
// within a run).
func (s *server) reapInterval() time.Duration {
	if n := s.w.sched.ReapIntervalMs; n > 0 {
		return ms(n)
	}
	return 24 * time.Hour
}

// snapCount is snapCount for storage and the Peer alike: from the schedule,
// or so large that no snapshot is taken.
func (s *server) snapCount() int {
	if n := s.w.sched.SnapCount; n > 0 {
		return n
	}
	return 1 << 30
}

// couldNotStart handles a start that failed on an I/O error: expected while
// the disk is full — the process exits and its supervisor tries again once
// there is room — and a failure otherwise.
func (s *server) couldNotStart(what string, err error) {
	now := s.w.clock.Mono()
	if errors.Is(err, vfs.ErrNoSpace) && now < s.noSpaceUntil {
		s.w.tr.logf("server %d: cannot start while the disk is full: %s: %v", s.sid, what, err)
		s.scheduleRestart(s.noSpaceUntil - now + restartWait)
		return
	}
	if errors.Is(err, vfs.ErrSimFault) {
		s.w.tr.logf("server %d: cannot start: %s: %v", s.sid, what, err)
		s.scheduleRestart(restartWait)
		return
	}
	s.w.fail(KindRecovery, "server %d: %s: %v", s.sid, what, err)
}

func (s *server) scheduleRestart(after time.Duration) {
	if s.restarting {
		return
	}
	s.restarting = true
	gen := s.gen
	s.w.q.After(after, func() {
		if s.gen == gen && !s.up {
			s.start()
		}
	})
}

// crash stops the process at once; the disk keeps what a crash keeps.
func (s *server) crash(why string, torn bool) { s.stop(why, torn, false) }

// stop is crash; with flush, the quorum packets the process sent before it
// died still reach their peers, each of which then sees its connection
// close (aimed crashes: a process killed between two sends), instead of
// every connection breaking with what is in flight.
func (s *server) stop(why string, torn, flush bool) {
	if !s.up {
		return
	}
	s.w.tr.logf("server %d: crash (%s)", s.sid, why)
	s.w.recordUpDown(s.sid, runlog.KindCrash, why)
	if why != finalCheck {
		s.w.stats.Crashes++
	}
	s.up = false
	s.gen++
	s.drainPending = false
	if s.m != nil {
		s.m.Stop()
	}
	s.m, s.peer, s.store, s.ready, s.installs = nil, nil, nil, nil, nil
	s.snaps = zab.SnapJoiner{}
	s.holdUntil = 0
	s.role = zab.SoftState{}
	// What was not yet durable may go; the durable log stays on the disk
	// (and counts towards a quorum's) while the server is down.
	s.logged = slices.DeleteFunc(s.logged, func(z int64) bool { return z > s.durable })
	for _, id := range s.openConns() {
		s.w.closeConn(simclient.ConnID(id), "server crashed")
	}
	switch {
	case s.w.net != nil && flush:
		s.w.net.serverDownFlushing(s.id)
	case s.w.net != nil:
		s.w.net.serverDown(s.id)
	}
	cfg := s.cfg
	if torn {
		cfg.TornSector = 0.5
	}
	s.disk.SetConfig(cfg)
	s.written = s.logImages()
	s.disk.Crash()
	s.disk.SetConfig(s.cfg)
	if s.w.opts.OnCrash != nil {
		s.w.opts.OnCrash(s.id, why, s.disk)
	}
}

func (s *server) openConns() []zab.ConnID {
	var ids []zab.ConnID
	for id, cn := range s.conns {
		if cn.open {
			ids = append(ids, id)
		}
	}
	sortConnIDs(ids)
	return ids
}

// inject applies a server fault. Crashing a server that is down does
// nothing: its restart is already planned.
func (s *server) inject(f faults.Fault) {
	switch f.Kind {
	case faults.Crash:
		if s.up {
			s.crash("injected", f.Torn)
			s.scheduleRestart(ms(f.DownMs))
		}
	case faults.BitFlip:
		if s.up && !s.w.mayDamage(s) {
			s.w.tr.logf("server %d: bitflip left out: without its log the others would not hold every committed txn on a quorum", s.sid)
			return
		}
		if s.up {
			s.crash("injected before corrupting its disk", false)
			s.corruptDurable()
			s.scheduleRestart(restartWait)
		}
	case faults.NoSpace:
		s.noSpaceUntil = s.w.clock.Mono() + ms(f.ForMs)
		s.cfg.WriteNoSpace = 1
		s.disk.SetConfig(s.cfg)
		s.w.q.At(s.noSpaceUntil, func() {
			if s.w.clock.Mono() >= s.noSpaceUntil {
				s.cfg.WriteNoSpace = 0
				s.disk.SetConfig(s.cfg)
			}
		})
	case faults.SlowFsync:
		s.slowUntil = s.w.clock.Mono() + ms(f.ForMs)
		s.slowDelay = ms(f.Delay)
	case faults.FailFsync:
		s.failNextSync = true
	case faults.ClockJump:
		s.wallOffset += ms(f.JumpMs)
	}
}

// heal ends every disk fault and restarts the server if it is down.
func (s *server) heal() {
	s.cfg = healthyDisk
	s.disk.SetConfig(s.cfg)
	s.failNextSync = false
	s.noSpaceUntil, s.slowUntil, s.holdUntil = 0, 0, 0
	if !s.up {
		s.scheduleRestart(restartWait)
	}
}

const finalCheck = "final recovery check"

// finish crashes and recovers the server once more at the end of the run
// (or just recovers it, if it is down): everything reported durable must
// come back with the same digest.
func (s *server) finish() {
	s.crash(finalCheck, true)
	s.start()
}

// step feeds the Peer one event and carries out what it asks.
func (s *server) step(ev zab.Event) {
	s.peer.Step(s.now(), ev)
	s.loopBack()
}

// loopBack carries out the Peer's Ready once the event loop comes back for
// it: at once, or a while after the first event that waits for it
// (Schedule.LoopDelayUs), so that the events stepped meanwhile share it.
func (s *server) loopBack() {
	delay := time.Duration(s.w.sched.LoopDelayUs) * time.Microsecond
	if delay == 0 {
		s.drain()
		return
	}
	if s.drainPending {
		return
	}
	s.drainPending = true
	gen := s.gen
	s.w.q.After(delay, func() {
		if s.gen == gen {
			s.drainPending = false
			s.drain()
		}
	})
}

// drain carries out the Peer's effects (member.Member.Flush, by the Ready
// contract in zab/member/ready.go) and arms the Tick it asks for.
func (s *server) drain() {
	if !s.up {
		return
	}
	wakeup := s.m.Flush()
	if s.up && len(s.w.failures) == 0 {
		s.armTick(wakeup)
	}
}

// snapshotTime is how long writing a snapshot of n bytes takes.
func snapshotTime(n int) time.Duration {
	return time.Millisecond + time.Duration(n)*time.Microsecond/100
}

// stopOnIOError ends the process after a failed write or fsync: storage
// errors are fatal, never retried. The supervisor restarts it.
func (s *server) stopOnIOError(what string, err error) {
	if !errors.Is(err, storage.ErrFailed) {
		s.w.fail(KindRecovery, "server %d: %s failed without marking the log failed: %v", s.sid, what, err)
		return
	}
	s.crash(fmt.Sprintf("%s failed: %v", what, err), false)
	s.scheduleRestart(restartWait + max(0, s.noSpaceUntil-s.w.clock.Mono()))
}

// armTick schedules the Tick the Peer asked for. A wake-up in the past runs
// a millisecond from now, so a Peer that keeps asking for the past cannot
// stall simulated time.
func (s *server) armTick(at time.Duration) {
	now := s.w.clock.Mono()
	at = max(at, now+time.Millisecond)
	if s.tickAt != 0 && s.tickAt <= at {
		return
	}
	s.tickAt = at
	gen := s.gen
	s.w.q.At(at, func() {
		if s.gen != gen || !s.up || s.tickAt != at {
			return
		}
		s.tickAt = 0
		s.step(zab.Tick{})
	})
}
