package sim

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand"
	mathrand2 "math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/sim/simclient"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/restore"
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

// server is one zabd process: a zab.Peer over a storage.Store on a simulated
// disk, and the shell between them (what zab/server does with real files and
// sockets). It outlives crashes: each start is a new incarnation (gen).
type server struct {
	w    *world
	id   int   // index in the world's servers
	sid  int64 // the server id (myid): id+1
	disk *vfs.Sim
	cfg  vfs.SimConfig // the disk's fault settings now

	up    bool
	gen   int
	peer  *zab.Peer
	store *storage.Store
	log   *storage.Log
	snap  *pendingSnapshot // a snapshot stream being gathered
	conns map[zab.ConnID]*conn

	syncing  bool          // an fsync is in flight
	tickAt   time.Duration // the armed Tick, if any (0: none)
	appended int64         // last zxid appended this incarnation

	wallOffset time.Duration // this server's wall clock's jumps
	role       zab.SoftState // as the Peer last reported it
	logged     []int64       // the zxids the log holds, ascending (durable or not)
	// witnessed is what this server logged under each zxid, across
	// restarts (the latest txn: a truncated zxid may be logged again).
	witnessed zxidMap[loggedTxn]
	snapBase  int64 // the zxid of the newest snapshot written or started from
	snapBytes int   // its size, to bound what the log serves a sync
	damaged   bool  // started with Restored.LogDamaged, not yet synchronized
	// fuzzyUntil: the tree was loaded from a fuzzy snapshot that holds
	// some of the txns up to this zxid. An ensemble member applies its
	// logged txns only once a leader has synchronized it, so until its
	// tree reaches fuzzyUntil again it is no tree any member had at its
	// last zxid, and digest checks wait (0: the tree is whole).
	fuzzyUntil int64
	cutting    string          // a damaged log is being cut (why), until a start finishes the cut
	fsyncRng   *mathrand2.Rand // fsync durations: a stream of their own
	entryEnc   wire.Encoder    // encodes the txn entry being appended, reused
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

// flippedBit remembers a corruption so that it can be undone after the
// server rightly refused to start.
type flippedBit struct {
	file string
	off  int64
	bit  uint
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

// start recovers from disk and starts a new incarnation of the Peer.
func (s *server) start() {
	s.restarting = false
	w := s.w
	treeCfg := datatree.Config{ExtendedTypesEnabled: true}
	var store *storage.Store
	var rec *storage.Recovery
	var restored zab.Restored
	var err error
	if s.cutting == "" {
		store, rec, restored, err = s.recoverStore(treeCfg, false)
		if err != nil && w.ensemble != nil && errors.Is(err, storage.ErrDataLoss) && s.corrupted != nil {
			// A damaged log in an ensemble member: keep what comes before
			// the damage and let the others restore the rest, rather than
			// refuse.
			w.tr.logf("server %d: log damaged (%v): starting with what precedes the damage", s.sid, err)
			s.cutting, s.damaged = err.Error(), true
		}
	}
	var damage *zab.LogDamage
	if s.cutting != "" {
		// Once begun, the cut is finished even if a full disk interrupts
		// it: a half-done quarantine can make the damage look like a torn
		// tail to a plain recovery.
		if store, rec, restored, err = s.recoverStore(treeCfg, true); err != nil {
			s.couldNotStart("recover a damaged log", err)
			return
		}
		s.cutting, s.corrupted = "", nil // the quarantine made the cut permanent
		w.stats.DamagedStarts++
	}
	if err == nil && w.ensemble != nil && rec.Damaged != "" {
		// Storage remembers the cut until a leader has synchronized this
		// member, however often it restarts before that.
		damage = &zab.LogDamage{AfterZxid: rec.LastZxid, What: rec.Damaged}
	}
	if err != nil {
		if errors.Is(err, storage.ErrDataLoss) || s.corrupted != nil {
			s.refused(err)
		} else {
			s.couldNotStart("recover", err)
		}
		return
	}
	restored.LogDamaged = damage
	if name, err := restore.Initialize(store, rec); err != nil {
		// As ZooKeeper, a first start that cannot write its snapshot
		// does not serve: the process exits and is started again.
		rec.Log.Close()
		s.couldNotStart("first start", err)
		return
	} else if name != "" && w.tr.on() {
		w.tr.logf("server %d: first start: wrote %s, the empty tree", s.sid, name)
	}
	cfg := zab.Config{
		ServerID:               zab.StandaloneServerID,
		Tick:                   ms(w.sched.TickMs),
		Tree:                   treeCfg,
		SnapCount:              s.snapCount(),
		SnapshotStepNodes:      w.sched.SnapshotStepNodes,
		ContainerCheckInterval: s.reapInterval(),
		Bugs:                   w.opts.Bugs,
	}
	if w.ensemble != nil {
		cfg.ServerID = s.sid
		cfg.Ensemble = w.ensemble
		cfg.TxnLog = simTxnLog{s}
		if restored.AcceptedEpoch, restored.CurrentEpoch, err = store.MemberEpochs(rec.LastZxid); err != nil {
			s.couldNotStart("epoch files", err)
			return
		}
	}
	peer, err := zab.New(cfg, s.now(), w.streams.Stream(fmt.Sprintf("peer/%d/%d", s.id, s.gen)), restored)
	if err != nil {
		w.fail(KindRecovery, "server %d: new peer: %v", s.sid, err)
		return
	}
	if _, err := restore.Replay(peer, rec); err != nil {
		w.fail(KindDurability, "server %d: replay: %v", s.sid, err)
		return
	}
	last := rec.LastZxid
	if w.tr.on() {
		w.tr.logf("server %d: started (incarnation %d), log ends at zxid 0x%x, tree at 0x%x digest %d, %d warnings",
			s.sid, s.gen, last, peer.LastZxid(), peer.Digest(), len(rec.Warnings))
		for _, warn := range rec.Warnings {
			w.tr.logf("server %d: recovery: %s", s.sid, warn)
		}
	}
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
			if !s.checkFuzzyReplay(treeCfg, rec, damage != nil) {
				return
			}
		} else {
			w.tr.logf("server %d: recovered from fuzzy snapshot %s, which holds some txns up to 0x%x: replay applied them again", s.sid, rec.Snapshot.Name, d.Zxid)
		}
	}
	if last < s.durable && damage == nil {
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
	s.snapBase, s.snapBytes = rec.Snapshot.Zxid, snapshotSize(s.disk, rec.Snapshot.Name)
	s.corrupted = nil
	s.durable = last // what recovery read back survived the crash: it is on disk
	s.peer, s.store, s.log, s.up = peer, store, rec.Log, true
	s.snap = nil
	s.appended = last
	s.conns = map[zab.ConnID]*conn{}
	s.tickAt = 0
	s.role = zab.SoftState{}
	s.decidingSince = w.clock.Mono() // standalone: it decides from now (see roleChanged)
	s.diskAccepted, s.diskCurrent = restored.AcceptedEpoch, restored.CurrentEpoch
	w.inv.started(s)
	peer.Start()
	s.drain()
}

// checkFuzzyReplay replays an ensemble member's whole log over the fuzzy
// snapshot it loaded, as a standalone server (and ZooKeeper's
// loadDataBase) would at start, on a copy of the tree: every txn the
// snapshot already holds applies again, the snapshot's digest must match
// when replay reaches its zxid, and the tree at the log's end must have the
// digest its last txn carried. The member itself applies those txns only
// when a leader commits them (and the digest checks of drain judge that).
// Only a log cut at damage may end before the snapshot's digest zxid (the
// snapshot waited for the log to hold its txns durably); the copy is then
// as fuzzy as the member, whose leader sends it the rest.
func (s *server) checkFuzzyReplay(treeCfg datatree.Config, rec *storage.Recovery, damaged bool) bool {
	var tree *datatree.Tree
	path := dataDir + "/" + storage.VersionDir + "/" + rec.Snapshot.Name
	_, err := storage.ReadSnapshotFile(s.disk, path, func(d *wire.Decoder, zxid int64) (err error) {
		tree, err = datatree.Load(treeCfg, d, zxid)
		return err
	})
	if err != nil {
		s.w.fail(KindDurability, "server %d: read fuzzy snapshot %s again: %v", s.sid, rec.Snapshot.Name, err)
		return false
	}
	d := rec.Snapshot.Digest // set: the snapshot is fuzzy
	restored := zab.Restored{Tree: tree, Digest: &zab.SnapshotDigest{Zxid: d.Zxid, Version: d.Version, Digest: d.Digest}}
	replica, err := zab.New(zab.Config{ServerID: s.sid, Tree: treeCfg}, s.now(), s.w.streams.Stream(fmt.Sprintf("fuzzy-check/%d/%d", s.id, s.gen)), restored)
	if err == nil {
		_, err = restore.Replay(replica, rec)
	}
	if err != nil {
		s.w.fail(KindDurability, "server %d: replaying the log over fuzzy snapshot %s: %v", s.sid, rec.Snapshot.Name, err)
		return false
	}
	if replica.LastZxid() < d.Zxid {
		if !damaged {
			s.w.fail(KindDurability, "server %d: the log replayed over fuzzy snapshot %s ends at 0x%x, before the snapshot's last applied txn 0x%x, with no damage to explain it",
				s.sid, rec.Snapshot.Name, replica.LastZxid(), d.Zxid)
			return false
		}
		s.w.tr.logf("server %d: the damaged log ends at 0x%x, before the fuzzy snapshot's last applied txn 0x%x: the leader sends the rest", s.sid, replica.LastZxid(), d.Zxid)
		return true
	}
	if want, ok := s.digests.get(replica.LastZxid()); ok && want != replica.Digest() {
		s.w.fail(KindDurability, "server %d: the log replayed over fuzzy snapshot %s ends at 0x%x with tree digest %d, but it was %d when that txn was applied",
			s.sid, rec.Snapshot.Name, replica.LastZxid(), replica.Digest(), want)
		return false
	}
	s.w.tr.logf("server %d: the log replayed over it as a standalone server would ends at 0x%x with the digest that txn carried", s.sid, replica.LastZxid())
	return true
}

// recoverStore opens the store and recovers it; allowLoss cuts a damaged log
// instead of refusing.
func (s *server) recoverStore(treeCfg datatree.Config, allowLoss bool) (*storage.Store, *storage.Recovery, zab.Restored, error) {
	store, err := storage.Open(storage.Options{
		FS: s.disk, Dir: dataDir, SnapCount: s.snapCount(), PreallocSize: logPrealloc, AllowDataLoss: allowLoss,
		Rand: mathrand.New(mathrand.NewSource(s.w.streams.DeriveSeed(fmt.Sprintf("log/%d/%d", s.id, s.gen)))),
	})
	if err != nil {
		return nil, nil, zab.Restored{}, fmt.Errorf("open storage: %w", err)
	}
	rec, restored, err := restore.Load(store, treeCfg)
	return store, rec, restored, err
}

// readLogged lists the zxids the recovered log holds.
func (s *server) readLogged(rec *storage.Recovery) error {
	s.logged = s.logged[:0]
	it, err := rec.Log.Iterator(rec.Snapshot.Zxid + 1)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		s.logged = append(s.logged, it.Zxid())
	}
	return it.Err()
}

// snapshotSize is the size of the named snapshot file (0 if none).
func snapshotSize(disk *vfs.Sim, name string) int {
	if name == "" {
		return 0
	}
	f, err := disk.Open(dataDir + "/" + storage.VersionDir + "/" + name)
	if err != nil {
		return 0
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0
	}
	return int(size)
}

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

// refused handles a recovery that refused to start over its data: correct only when durable data was
// corrupted, and then only with an error that names file and offset.
func (s *server) refused(err error) {
	w := s.w
	var c *storage.CorruptError
	named := errors.As(err, &c) && c.File != ""
	w.tr.logf("server %d: refused to start: %v", s.sid, err)
	switch {
	case s.corrupted == nil:
		w.fail(KindRecovery, "server %d refused to start although no durable data was corrupted: %v", s.sid, err)
	case !named:
		w.fail(KindRecovery, "server %d refused to start without naming file and offset: %v", s.sid, err)
	default:
		// The right answer. Undo the corruption (an operator restoring the
		// file) and start again: now everything durable must come back.
		w.stats.Refusals++
		f := s.corrupted
		if ferr := s.disk.FlipBit(f.file, f.off, f.bit); ferr != nil {
			w.fail(KindRecovery, "server %d: undo corruption of %s: %v", s.sid, f.file, ferr)
			return
		}
		s.corrupted = nil
		s.scheduleRestart(restartWait)
	}
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
	if why != finalCheck {
		s.w.stats.Crashes++
	}
	s.up = false
	s.gen++
	s.peer, s.store, s.log, s.snap = nil, nil, nil, nil
	s.snaps = zab.SnapJoiner{}
	s.syncing = false
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

// corruptDurable flips one bit inside the records of a log file, the newest
// included. A flipped bit in a record written in full is never what a crash
// leaves (docs/storage.md), so recovery must refuse naming file and offset,
// or recover without losing anything durable (a bit in bytes it does not
// read, or in a tail a crash left torn anyway).
func (s *server) corruptDurable() {
	dir := dataDir + "/" + storage.VersionDir
	names, err := s.disk.List(dir)
	if err != nil {
		s.w.fail(KindRecovery, "server %d: list %s: %v", s.sid, dir, err)
		return
	}
	type logFile struct {
		name string
		zxid uint64
	}
	var logs []logFile
	for _, n := range names {
		if hex, ok := strings.CutPrefix(n, "log."); ok {
			if z, err := strconv.ParseUint(hex, 16, 64); err == nil {
				logs = append(logs, logFile{n, z})
			}
		}
	}
	slices.SortFunc(logs, func(a, b logFile) int { return cmp.Compare(a.zxid, b.zxid) })
	if len(logs) == 0 {
		return
	}
	r := s.w.streams.Stream(fmt.Sprintf("corrupt/%d/%d", s.id, s.gen))
	name := dir + "/" + logs[r.IntN(len(logs))].name
	end, err := s.recordsEnd(name)
	if err != nil {
		s.w.fail(KindRecovery, "server %d: read %s: %v", s.sid, name, err)
		return
	}
	if end <= 16 {
		return // only the file header: no txn in it
	}
	f := &flippedBit{file: name, off: r.Int64N(end), bit: uint(r.IntN(8))}
	if err := s.disk.FlipBit(f.file, f.off, f.bit); err != nil {
		s.w.fail(KindRecovery, "server %d: corrupt %s: %v", s.sid, name, err)
		return
	}
	s.w.tr.logf("server %d: flipped bit %d of %s at offset %d", s.sid, f.bit, f.file, f.off)
	s.corrupted = f
	s.damaged = s.w.ensemble != nil // counts as failed from now until synchronized
}

// recordsEnd is where a log file's non-zero bytes end (its records; the
// preallocated rest is zeros).
func (s *server) recordsEnd(name string) (int64, error) {
	buf, err := vfs.ReadFull(s.disk, name)
	if err != nil {
		return 0, err
	}
	end := len(buf)
	for end > 0 && buf[end-1] == 0 {
		end--
	}
	return int64(end), nil
}

// Events from the network.

func (s *server) connect(cn *conn, req wire.ConnectRequest) {
	if !s.live(cn) {
		return
	}
	id := zab.ConnID(cn.id)
	s.conns[id] = cn
	cn.session = req.SessionID
	if cn.intruded != nil {
		s.intruderArrived(cn)
	}
	s.peer.Step(s.now(), zab.ConnOpened{Conn: id, Addr: "127.0.0.1"})
	s.step(zab.ConnectReceived{Conn: id, Req: req})
}

func (s *server) request(cn *conn, hdr wire.RequestHeader, body wire.Record) {
	if !s.live(cn) {
		return
	}
	s.step(zab.RequestReceived{Conn: zab.ConnID(cn.id), Xid: hdr.Xid, Op: hdr.Type, Body: body})
}

func (s *server) connClosed(cn *conn) {
	if s.up && cn.gen == s.gen {
		delete(s.conns, zab.ConnID(cn.id))
		s.step(zab.ConnClosed{Conn: zab.ConnID(cn.id)})
	}
}

// live reports whether a frame on cn reaches the running incarnation.
func (s *server) live(cn *conn) bool { return s.up && cn.gen == s.gen && cn.open }

// term names, for the history (linearizability.Entry.Term), the term in
// which s answers a connect on cn: a standalone server's incarnation, or
// the epoch of the leader an ensemble member leads or follows while it
// serves clients. A member leaves its epoch only by closing every client
// connection, so every reply on cn comes from that term. "" when s is not
// serving: its state is reported before the messages of the same step, so
// it may already have left the epoch the connect was answered in (and
// the connection is closed in the same step).
func (s *server) term(cn *conn) string {
	if s.w.ensemble == nil {
		return fmt.Sprintf("start %d", cn.gen+1)
	}
	if s.role.Phase != zab.PhaseBroadcast || s.role.Epoch == 0 {
		return ""
	}
	return fmt.Sprintf("epoch %d", s.role.Epoch)
}

// step feeds the Peer one event and carries out what it asks.
func (s *server) step(ev zab.Event) {
	s.peer.Step(s.now(), ev)
	s.drain()
}

// drain checks the tree against the digest its last applied txn carries,
// then carries out the Peer's effects in the order Ready's contract
// demands: truncation, epochs (durable before any message leaves),
// appends (then an fsync), snapshots, then every message.
func (s *server) drain() {
	if s.up && s.peer != nil {
		peer := s.peer
		rd := peer.Ready()
		if rd.Installed != nil {
			s.w.inv.installed(s, *rd.Installed)
			s.fuzzyUntil = s.arrivedFuzzyUntil // the tree is the leader's
			if s.fuzzyUntil != 0 {
				s.w.stats.FuzzySyncs++
				s.w.tr.logf("server %d: installed a SNAP of a fuzzy tree, which holds some txns up to 0x%x: they apply again once committed", s.sid, s.fuzzyUntil)
			}
		}
		if s.fuzzyUntil != 0 && s.peer.LastZxid() >= s.fuzzyUntil {
			s.fuzzyUntil = 0 // applied again: whole
		}
		if want, ok := s.digests.get(s.peer.LastZxid()); ok && want != s.peer.Digest() && s.fuzzyUntil == 0 {
			s.w.fail(KindDigest, "server %d: tree digest after applying 0x%x is %d, but the txn says %d", s.sid, s.peer.LastZxid(), s.peer.Digest(), want)
			return
		}
		if rd.Truncate != nil && !s.truncate(*rd.Truncate) {
			return
		}
		if rd.Epochs != nil {
			moment := s.epochsMoment(&rd)
			if !s.writeEpochs(rd.Epochs) {
				return
			}
			if s.w.aim.syncCrash != nil && s.aimSyncWrite(moment, fmt.Sprintf("persisted acceptedEpoch=%d currentEpoch=%d; dies before the rest of that Ready (appends, sends)", rd.Epochs.Accepted, rd.Epochs.Current)) {
				return
			}
		}
		if rd.DamageRepaired {
			if err := s.store.ClearDamage(); err != nil {
				s.stopOnIOError("forget the log damage", err)
				return
			}
			s.w.tr.logf("server %d: the log damage is repaired: forgotten on disk", s.sid)
		}
		if rd.Installed != nil {
			// A SNAP replaced the tree: what was recorded of the old one
			// is void, and an error txn next leaves the new one as it is
			// (a fuzzy one is no tree of its zxid: nothing to record).
			s.digests.clear()
			if s.fuzzyUntil == 0 {
				s.digests.put(s.peer.LastZxid(), s.peer.Digest())
			}
		}
		if len(rd.Appends) > 0 {
			if !s.appendTxns(rd.Appends) {
				return
			}
			s.startSync()
		}
		s.w.inv.stepped(s)
		for i := range rd.Snapshots {
			s.snapshotChunk(&rd.Snapshots[i])
		}
		if rd.State != nil {
			s.roleChanged(*rd.State)
		}
		for _, n := range rd.Notices {
			s.w.tr.logf("server %d: %s", s.sid, n.Text)
		}
		for i := range rd.Messages {
			s.send(&rd.Messages[i])
		}
		acked := -1 // an ACKEPOCH or NEWLEADER ACK sent, for sync-write-crash
		for i := range rd.PeerMessages {
			if s.w.aim.fanout != nil && s.aimFanout(rd.PeerMessages, i) {
				return
			}
			s.w.net.sendPeer(s.id, &rd.PeerMessages[i])
			if s.w.aim.syncCrash != nil && isSyncAck(&rd.PeerMessages[i]) {
				acked = i
			}
		}
		if acked >= 0 && s.aimAfterAck(&rd.PeerMessages[acked]) {
			return
		}
		for i := range rd.Votes {
			s.w.net.sendVote(s.id, &rd.Votes[i])
		}
		if len(s.w.failures) > 0 {
			return
		}
		s.armTick(rd.Wakeup)
		if s.peer == peer {
			peer.Release(&rd) // everything above copied what it keeps
		}
	}
}

// truncate cuts the log after zxid (a TRUNC, or a SNAP replacing the
// history). Zxids strictly increase again from there.
func (s *server) truncate(zxid int64) bool {
	s.w.tr.logf("server %d: truncate the log after 0x%x", s.sid, zxid)
	if err := s.log.Truncate(zxid); err != nil {
		s.stopOnIOError("truncate", err)
		return false
	}
	s.appended = min(s.appended, zxid)
	s.durable = min(s.durable, zxid)
	s.logged = slices.DeleteFunc(s.logged, func(z int64) bool { return z > zxid })
	s.digests.deleteAbove(zxid)
	return true
}

// writeEpochs makes the epoch files durable before anything else of the
// Ready leaves.
func (s *server) writeEpochs(e *zab.EpochWrite) bool {
	s.w.tr.logf("server %d: persist acceptedEpoch=%d currentEpoch=%d", s.sid, e.Accepted, e.Current)
	if err := s.store.SetAcceptedEpoch(e.Accepted); err != nil {
		s.stopOnIOError("write acceptedEpoch", err)
		return false
	}
	s.diskAccepted = e.Accepted
	if err := s.store.SetCurrentEpoch(e.Current); err != nil {
		s.stopOnIOError("write currentEpoch", err)
		return false
	}
	s.diskCurrent = e.Current
	return true
}

// roleChanged traces a role or phase change and counts established epochs.
func (s *server) roleChanged(st zab.SoftState) {
	was := s.role
	s.role = st
	if st.Phase == zab.PhaseBroadcast {
		s.damaged = false // synchronized: the leader restored what it lost
	}
	if st.Role == zab.RoleLeading && st.Phase == zab.PhaseBroadcast && was != st {
		s.decidingSince = s.w.clock.Mono()
	}
	if st.Role == zab.RoleLeading && st.Phase == zab.PhaseDiscovery && was != st && s.w.net != nil {
		s.w.leaderStarting(s)
	}
	if s.w.tr.on() {
		from := "start"
		if was != (zab.SoftState{}) {
			from = fmt.Sprintf("%s (%s)", was.Role, was.Phase)
		}
		s.w.tr.logf("server %d: %s -> %s (%s) leader=%d epoch=%d: %s", s.sid, from, st.Role, st.Phase, st.Leader, st.Epoch, phaseGloss(st))
	}
	s.w.inv.roleChanged(s)
}

// phaseGloss says in a few words what a member does in its role and
// phase, for someone reading the trace to learn Zab.
func phaseGloss(st zab.SoftState) string {
	leads := st.Role == zab.RoleLeading
	switch st.Phase {
	case zab.PhaseElection:
		return "fast leader election: exchanging votes (epoch, zxid, id) until a quorum agrees"
	case zab.PhaseDiscovery:
		if leads {
			return "discovery: gathering FOLLOWERINFO from a quorum to choose a new epoch above every accepted one"
		}
		if st.Role == zab.RoleObserving {
			return "discovery: OBSERVERINFO sent; waiting for the leader's new epoch (LEADERINFO), to accept it durably and ACKEPOCH"
		}
		return "discovery: FOLLOWERINFO sent; waiting for the leader's new epoch (LEADERINFO), to accept it durably and ACKEPOCH"
	case zab.PhaseSync:
		if leads {
			return "synchronization: bringing each learner to its history by DIFF, TRUNC or SNAP, then NEWLEADER; established once a quorum ACKs"
		}
		return "synchronization: taking the leader's DIFF, TRUNC or SNAP, making it durable, then ACKing NEWLEADER; serving at UPTODATE"
	case zab.PhaseBroadcast:
		if leads {
			return "broadcast: serving; each write is a PROPOSAL, committed once a quorum has logged it and ACKed"
		}
		if st.Role == zab.RoleObserving {
			return "broadcast: serving reads, forwarding writes; each committed txn arrives by INFORM, logged and applied (observers never vote or ACK)"
		}
		return "broadcast: serving reads, forwarding writes; each PROPOSAL logged and ACKed, applied at its COMMIT"
	}
	return st.Phase.String()
}

// appendTxns writes txns to the log and checks that zxids strictly increase.
// A failed write is fatal for the process, as storage demands.
func (s *server) appendTxns(txns []datatree.Txn) bool {
	for i := range txns {
		t := &txns[i]
		z := t.Header.Zxid
		if z <= s.appended {
			s.w.fail(KindZxid, "server %d appended txn 0x%x after 0x%x", s.sid, z, s.appended)
			return false
		}
		if t.Header.Type == wire.OpCloseSession {
			s.w.closing[t.Header.ClientID] = true
		}
		if t.Digest.Version != 0 {
			s.digests.put(z, t.Digest.TreeDigest)
		} else if prev, ok := s.digests.get(s.appended); ok {
			s.digests.put(z, prev) // an error txn leaves the tree as it was
		}
		s.entryEnc.Reset()
		zab.WriteTxnEntry(&s.entryEnc, t)
		entry := s.entryEnc.Bytes() // the log copies it
		if !s.w.inv.appended(s, z, entry) {
			return false
		}
		s.witnessed.put(z, loggedTxnOf(t))
		if err := s.store.CoverEpoch(z); err != nil {
			s.stopOnIOError("mark updatingEpoch", err)
			return false
		}
		if s.w.aim.syncCrash != nil && z>>32 > s.appended>>32 && s.hasUpdatingMark() &&
			s.aimSyncWrite(faults.AfterMark, fmt.Sprintf("the updatingEpoch mark covers epoch %d; dies before appending 0x%x", z>>32, z)) {
			return false
		}
		if _, err := s.log.Append(entry); err != nil {
			s.stopOnIOError("append", err)
			return false
		}
		s.appended = z
		s.logged = append(s.logged, z)
		if s.w.tr.on() {
			if d, ok := t.Body.(*wire.DeleteTxn); ok && t.Header.Type == wire.OpDeleteContainer {
				s.w.tr.logf("server %d: append txn 0x%x %s %s (the server's own deletion: an empty container or an expired TTL node)", s.sid, z, t.Header.Type, d.Path)
			} else {
				s.w.tr.logf("server %d: append txn 0x%x %s session=0x%x cxid=%d", s.sid, z, t.Header.Type, t.Header.ClientID, t.Header.Cxid)
			}
		}
	}
	return true
}

// pendingSnapshot gathers a snapshot stream until its last chunk.
type pendingSnapshot struct {
	zxid     int64
	sessions []storage.Session
	data     []byte
	steps    int // chunks so far: the steps of the fuzzy serialization
	// installed: the snapshot is of a tree a SNAP installed.
	installed bool
	// installedFuzzyUntil: the snapshot is of a tree a SNAP installed that
	// holds txns up to this zxid after its own (0: whole, or not installed).
	installedFuzzyUntil int64
}

// snapshotChunk collects the Peer's snapshot stream; at its end the
// snapshot is written (taking simulated time, while the Peer goes on) and
// reported with SnapshotWritten. A failed snapshot is not fatal: the log
// still holds everything; a failed install of the tree a SNAP brought
// (storage.ErrFailed) stops the process, as in zab/server.
func (s *server) snapshotChunk(ch *zab.SnapshotChunk) {
	if ch.First {
		s.snap = &pendingSnapshot{zxid: ch.Zxid, installed: ch.Installed}
		if ch.Installed {
			s.snap.installedFuzzyUntil = s.fuzzyUntil
		}
		for _, sess := range ch.Sessions {
			s.snap.sessions = append(s.snap.sessions, storage.Session{ID: sess.ID, Timeout: sess.Timeout})
		}
	}
	if s.snap == nil {
		return // the stream began before a restart
	}
	s.snap.data = append(s.snap.data, ch.Data...)
	s.snap.steps++
	if !ch.Last {
		return
	}
	snap, digest, gen := s.snap, ch.Digest, s.gen
	s.snap = nil
	// The tree went on applying txns while it was serialized: the
	// snapshot is named after the zxid it started at but holds some of the
	// later txns too, which a recovery from it replays again.
	fuzzy := digest.Zxid > snap.zxid
	if fuzzy {
		s.w.stats.FuzzySnapshots++
		s.w.tr.logf("server %d: fuzzy snapshot 0x%x serialized in %d steps while txns up to 0x%x were applied", s.sid, snap.zxid, snap.steps, digest.Zxid)
	}
	s.w.q.After(snapshotTime(len(snap.data))+s.held(), func() {
		if s.gen != gen || !s.up {
			return
		}
		if s.log.DurableZxid() < digest.Zxid {
			// A learner applies what the leader committed before its own
			// log has made it durable; storage's contract wants every txn
			// of a snapshot — up to the last one applied while the fuzzy
			// snapshot ran — durable in the log first (a crash would leave a
			// log ending before the snapshot: seed 22540), so fsync first,
			// as ZooKeeper's SyncRequestProcessor flushes before it
			// snapshots.
			if _, err := s.syncLog(); err != nil {
				s.stopOnIOError("fsync before a snapshot", err)
				return
			}
		}
		st := &storage.Snapshot{
			Zxid: snap.zxid, Sessions: snap.sessions,
			WriteTree: func(out io.Writer) error { _, err := out.Write(snap.data); return err },
			Digest: func() storage.ZxidDigest {
				return storage.ZxidDigest{Zxid: digest.Zxid, Version: digest.Version, Digest: digest.Digest}
			},
		}
		var name string
		var err error
		if snap.installed {
			// As zab/server installs it (SnapshotChunk.Installed): the
			// updatingEpoch mark covers the snapshot's epoch first, so that
			// a crash before NEWLEADER's currentEpoch leaves files a
			// restart accepts; the log is cut to the snapshot, and its old
			// files, this member's own history, go once it is written.
			name, err = s.store.InstallSnapshot(s.log, st)
			if errors.Is(err, storage.ErrFailed) {
				s.stopOnIOError("install the leader's snapshot", err)
				return
			}
			if err == nil {
				s.logged = slices.DeleteFunc(s.logged, func(z int64) bool { return z <= snap.zxid })
			}
		} else {
			name, err = s.store.WriteSnapshot(st)
		}
		s.w.tr.logf("server %d: snapshot 0x%x written as %s (err %v)", s.sid, snap.zxid, name, err)
		if err == nil {
			s.w.stats.Snapshots++
			s.snapBase, s.snapBytes = snap.zxid, len(snap.data)
			if f := snap.installedFuzzyUntil; f != 0 {
				if s.fuzzyInstalled == nil {
					s.fuzzyInstalled = map[string]int64{}
				}
				s.fuzzyInstalled[name] = f
			}
			if snap.installed && s.w.aim.syncCrash != nil &&
				s.aimSyncWrite(faults.AfterSnapshot, fmt.Sprintf("wrote snapshot %s of the tree a SNAP installed; dies before the Peer hears of it", name)) {
				return
			}
		}
		s.step(zab.SnapshotWritten{Zxid: snap.zxid, Err: err})
	})
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

// startSync begins an fsync of everything appended so far, unless one is
// in flight (group commit: the next one covers what arrives meanwhile).
func (s *server) startSync() {
	if s.syncing || !s.up {
		return
	}
	w := s.w
	if held := s.held(); held > 0 {
		// An aimed hold: this fsync begins when it ends, covering what
		// was appended by then (nothing appended meanwhile is durable).
		s.syncing = true
		gen := s.gen
		w.q.After(held, func() {
			if s.gen == gen && s.up {
				s.syncing = false
				s.startSync()
			}
		})
		return
	}
	s.syncing = true
	delay := fsyncBase + time.Duration(s.fsyncRng.Int64N(int64(fsyncBase)))
	if w.clock.Mono() < s.slowUntil {
		delay += s.slowDelay
	}
	// The fsync covers what was appended when it began, not what arrives
	// while it runs (a real disk writer lags the same way): the data is
	// on the disk at once, the report comes after the delay, and appends
	// meanwhile wait for the next fsync.
	durable, err := s.syncLog()
	gen := s.gen
	w.q.After(delay, func() {
		if s.gen != gen || !s.up {
			return
		}
		s.syncing = false
		if err != nil {
			s.stopOnIOError("fsync", err)
			return
		}
		s.reportDurable(min(durable, s.log.DurableZxid())) // a TRUNC meanwhile cut what it covered
	})
}

// syncLog fsyncs the log; after a failfsync fault, this one fsync fails.
func (s *server) syncLog() (int64, error) {
	if !s.failNextSync {
		return s.log.Sync()
	}
	s.failNextSync = false
	failing := s.cfg
	failing.SyncFail = 1
	s.disk.SetConfig(failing)
	defer s.disk.SetConfig(s.cfg)
	return s.log.Sync()
}

func (s *server) reportDurable(durable int64) {
	if durable > s.durable {
		s.durable = durable
	}
	if s.w.tr.on() {
		s.w.tr.logf("server %d: durable to 0x%x", s.sid, durable)
	}
	if s.w.aim.syncCrash != nil && (s.role.Phase == zab.PhaseDiscovery || s.role.Phase == zab.PhaseSync) &&
		s.aimSyncWrite(faults.AfterFsync, fmt.Sprintf("an fsync made its log durable to 0x%x in %s; dies before the Peer hears of it", durable, s.role.Phase)) {
		return
	}
	s.step(zab.LogDurable{Zxid: durable})
	if s.up && s.appended > durable {
		s.startSync()
	}
}

// send carries one message to its connection. Every reply header's zxid
// must already be durable: the server answers nothing it could lose.
func (s *server) send(m *zab.Message) {
	w := s.w
	cn := s.conns[m.Conn]
	if cn == nil || !cn.open {
		return
	}
	if m.Kind == zab.Connect {
		if _, ok := m.Body.(*wire.ConnectResponse); !ok {
			w.fail(KindProtocol, "server %d: connect response body is %T", s.sid, m.Body)
			return
		}
	}
	s.expiryAnnounced(cn, m)
	switch m.Kind {
	case zab.Reply:
		w.inv.replied(s, cn, &m.Header)
		if w.tr.on() && m.Header.Xid != wire.XidPing {
			w.tr.logf("server %d -> client %d %s", s.sid, cn.client.ID(), describeMessage(&m.Header, m.Body))
		}
		w.sendFrame(frame{w: w, cn: cn, reply: m.Header, body: m.Body})
	case zab.Connect:
		r, id := *m.Body.(*wire.ConnectResponse), cn.id // checked above
		cn.answered, cn.term = true, s.term(cn)
		if w.tr.on() {
			w.tr.logf("server %d -> client %d connect %s", s.sid, cn.client.ID(), wire.Describe(&r))
		}
		if cn.intruded != nil {
			s.intruderAnswered(cn, &r)
		}
		w.deliverAt(&cn.toClient, func() { cn.client.Connected(id, r) })
	case zab.Close:
		w.closeConn(cn.id, "closed by the server")
	}
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

// simTxnLog reads the server's log back for a leader's synchronization,
// bounded as ZooKeeper bounds it (restore.SyncLogBudget).
type simTxnLog struct{ s *server }

func (l simTxnLog) ReadAfter(after, upTo int64) ([]datatree.Txn, bool) {
	s := l.s
	if s.log == nil {
		return nil, false
	}
	it, err := s.log.Iterator(after)
	if err != nil {
		return nil, false
	}
	defer it.Close()
	return restore.ReadForSync(it, after, upTo, s.snapBase, restore.SyncLogBudget(int64(s.snapBytes), restore.DefaultSnapshotSizeFactor))
}
