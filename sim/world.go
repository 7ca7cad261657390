package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/sim/randstream"
	"github.com/zabd/zabd/sim/simclient"
	"github.com/zabd/zabd/sim/vtime"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/runlog"
	"github.com/zabd/zabd/zab/storage/vfs"
	"github.com/zabd/zabd/zab/tlatrace"
)

// wallStart is the simulated wall-clock time at monotonic 0: fixed, so that
// txn timestamps (and so digests) are the same on every run.
var wallStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Failure is one thing a run found wrong. Kind groups failures for the
// shrinker (a shrunk schedule must fail with the same kind); Msg explains it.
type Failure struct {
	Kind string
	At   time.Duration
	Msg  string
}

func (f Failure) String() string { return fmt.Sprintf("%s at %s: %s", f.Kind, fmtMono(f.At), f.Msg) }

// Failure kinds.
const (
	KindProtocol   = "protocol"   // a client saw a malformed or misordered reply
	KindDurability = "durability" // an acknowledged txn was lost, or replay changed the tree
	KindZxid       = "zxid"       // zxids did not strictly increase
	KindDigest     = "digest"     // the live tree's digest differs from its last txn's
	KindRecovery   = "recovery"   // start-up refused without cause, or refused without naming file and offset
	KindLiveness   = "liveness"   // work did not finish after the faults stopped
	KindWitness    = "witness"    // the committed txns, in order, do not explain the clients' history
	KindSchedule   = "schedule"   // the schedule itself is invalid; nothing ran
)

// Options tune a run beyond its schedule.
type Options struct {
	// Trace receives the readable trace; nil disables tracing (and its cost).
	Trace io.Writer
	// Bugs switches on deliberate defects in the replica.
	Bugs Bugs
	// Record keeps the run's record (Result.Record) for runview: roles,
	// packets, votes, durable points, faults, operations and failures.
	Record bool
	// RecipeBugs put mistakes back into the recipe clients' algorithms
	// (Schedule.Recipe), to show that the recipe checkers catch them.
	RecipeBugs simclient.RecipeBugs
	// SkipCheckers leaves out the history checkers at the end (the
	// invariants checked during the run still apply).
	SkipCheckers bool
	// OnCrash, if set, sees each server's disk (by server index) right
	// after a crash, with why it crashed: what the next start will read.
	// It must not change the disk (Clone it to keep it).
	OnCrash func(server int, why string, disk *vfs.Sim)
}

// Stats measure a run.
type Stats struct {
	SimTime  time.Duration // monotonic time simulated
	Events   int           // events run off the queue
	Ops      int           // client operations completed (any outcome)
	Crashes  int           // server crashes, injected or after an I/O error
	Refusals int           // starts refused (rightly) over corrupt durable data
	// CrashFlips are the refusals of a record a crash left one bit away
	// from the one written (docs/storage.md, "Limits"), repaired as a
	// flipped bit is.
	CrashFlips int
	// DamagedStarts counts ensemble members started with their log cut at
	// a damaged record (Restored.LogDamaged), to be restored by the others.
	DamagedStarts int
	Epochs        int // epochs a leader established (ensembles)
	Snapshots     int // snapshots written
	// FuzzySnapshots counts snapshots whose serialization overlapped
	// applied txns; FuzzyRecoveries, starts that loaded one of them and
	// replayed those txns over it; FuzzySyncs, SNAPs a leader sent from
	// such a tree before it was whole again.
	FuzzySnapshots  int
	FuzzyRecoveries int
	FuzzySyncs      int
	// ExpiriesTold counts sessions a server told a client were expired
	// before their closeSession committed (ExpiryCarriedOut watched
	// them); ExpiriesDecidedAgain, those closed only by a leader
	// established after the telling (the close was lost with its leader).
	ExpiriesTold         int
	ExpiriesDecidedAgain int
	// NotPromised counts history-checker violations of what ZooKeeper does
	// not promise (linearizability.NotPromised: a sync across a leader
	// change); they are traced, not failures.
	NotPromised int
	// AimedFaults counts the aimed faults that fired (aimed.go);
	// RivalLeaders, the times a member began to lead while another was
	// still leading in discovery or synchronization: two would-be leaders
	// at once.
	AimedFaults  int
	RivalLeaders int
	// RecipeCaveats counts what the recipes (Schedule.Recipe) do not
	// promise once a session expires, seen in the run: a hold that began
	// while an earlier holder, whose session had expired, still believed
	// it held (ZooKeeper's documented caveat, which fencing covers), or a
	// barrier left while a participant whose node went with its expired
	// session had not begun to leave (sim/recipes.go).
	RecipeCaveats int
	// Allowances counts the steps the trace conformance checker accepted
	// only through a named allowance (zab/tlatrace), by allowance.
	Allowances tlatrace.Counts
}

// Result is what a run found.
type Result struct {
	Schedule *faults.Schedule
	Failures []Failure
	History  []simclient.Entry
	// Witness is the committed txns in delivery order (see witness.go).
	Witness linearizability.Witness
	Stats   Stats
	// Record is the run's record, with Options.Record; nil otherwise.
	Record *runlog.Run
	// Disks are the servers' simulated disks as the run left them, by
	// server index: the files a stopped process leaves behind, for tests
	// that load them with another program (zkload_test.go).
	Disks []*vfs.Sim
}

// Failed reports whether anything was found wrong.
func (r *Result) Failed() bool { return len(r.Failures) > 0 }

// conn is one client connection: a pair of in-order pipes between a client
// and one incarnation of a server.
type conn struct {
	id       simclient.ConnID
	client   *simclient.Client
	server   *server
	gen      int           // the server incarnation it belongs to
	open     bool          // neither side has closed it
	toServer time.Duration // last delivery time in each direction, for FIFO
	toClient time.Duration
	// intruded: an intruder's connection; the owner's connections that
	// were open on its server when its connect arrived (see intrusion.go).
	intruded *intrusion
	// session is the session the connection asked for (0: a new one),
	// then the one the server established on it (ExpiryCarriedOut).
	session int64
	// answered: the server answered the connect, in term (server.term);
	// recorded: the client recorded that answer (SyncConnected, Expired).
	answered, recorded bool
	term               string
}

// world is one simulation run.
type world struct {
	// closing lists the sessions a closeSession txn was logged for (by
	// the client or by expiry): such a session's connections go, and a
	// reconnect to it is refused, whoever presents it.
	closing map[int64]bool
	sched   *faults.Schedule
	opts    Options
	clock   *vtime.Clock
	q       *vtime.Queue
	streams randstream.Streams
	rng     *rand.Rand // client-link latencies and fsync times
	tr      tracer
	servers []*server
	// ensemble is the members' shared configuration; nil when the one
	// server is standalone. quorum decides quorums of its voters.
	ensemble *zab.Ensemble
	quorum   election.QuorumVerifier
	net      *network
	inv      *invariants
	aim      aimer // the schedule's aimed faults
	dialRng  *rand.Rand
	dialNext map[int]int // per client: the next server it tries
	clients  []*simclient.Client
	// intruders maps each intruder (after the schedule's clients in
	// clients) to what it intrudes on.
	intruders map[*simclient.Client]*intrusion
	conns     map[simclient.ConnID]*conn
	// unrecorded: closed connections whose connect response the client
	// has not recorded yet (it was paused), for Record.
	unrecorded map[simclient.ConnID]*conn
	nextConn   simclient.ConnID
	history    []simclient.Entry
	notes      []simclient.Note        // what recipe clients believed (Schedule.Recipe)
	closedAt   map[int64]time.Duration // when each session's close was first delivered
	rec        *runlog.Run             // the run's record; nil unless Options.Record
	witness    linearizability.Witness // see witness.go
	failures   []Failure
	// spareFrames are delivered frames, for reuse.
	spareFrames freeList[frame]
	stats       Stats
}

// Run simulates sched and checks everything it can. It is deterministic:
// the same schedule and options give the same result and the same trace.
func Run(sched *faults.Schedule, opts Options) *Result {
	if err := sched.Validate(); err != nil {
		return &Result{Schedule: sched, Failures: []Failure{{Kind: KindSchedule, Msg: err.Error()}}}
	}
	w := newWorld(sched, opts)
	w.run()
	w.stats.SimTime = w.clock.Mono()
	if w.inv.conf != nil {
		w.stats.Allowances = w.inv.conf.Allowed()
	}
	disks := make([]*vfs.Sim, len(w.servers))
	for i, s := range w.servers {
		disks[i] = s.disk
	}
	return &Result{Schedule: sched, Failures: w.failures, History: w.history, Witness: w.witness, Stats: w.stats, Disks: disks, Record: w.rec}
}

func newWorld(sched *faults.Schedule, opts Options) *world {
	clock := vtime.NewClock(wallStart)
	w := &world{
		sched: sched, opts: opts, clock: clock, q: vtime.NewQueue(clock),
		streams: randstream.New(sched.Seed), conns: map[simclient.ConnID]*conn{}, unrecorded: map[simclient.ConnID]*conn{}, closing: map[int64]bool{},
		intruders: map[*simclient.Client]*intrusion{}, closedAt: map[int64]time.Duration{},
	}
	w.tr = tracer{w: opts.Trace, clock: clock}
	if opts.Record {
		w.rec = newRunRecord(sched)
	}
	w.aim = newAimer(w)
	w.rng = w.streams.Stream("net")
	w.dialRng = w.streams.Stream("dial")
	w.dialNext = map[int]int{}
	// An entry per operation and up to about one more per two (watch and
	// session events): sized once, the history is not copied as it grows,
	// entry by 400-byte entry.
	w.history = make([]simclient.Entry, 0, sched.Clients*(sched.OpsPerClient*8/5+4))
	if sched.Ensemble {
		w.ensemble = simEnsemble(sched)
		w.quorum = w.ensemble.Quorum
		w.net = newNetwork(w, sched.Servers)
	}
	w.inv = newInvariants(w)
	for i := range sched.Servers {
		w.servers = append(w.servers, newServer(w, i))
	}
	for i := 1; i <= sched.Clients; i++ {
		cfg := simclient.Config{ID: i, SessionTimeout: ms(sched.SessionTimeoutMs), Ops: sched.OpsPerClient,
			MaxOutstanding: 3, MaxThink: ms(sched.MaxThinkMs)}
		if i <= sched.RecipeClients {
			cfg.Recipe, cfg.RecipeBugs, cfg.Parties = sched.Recipe, opts.RecipeBugs, sched.RecipeClients
		}
		w.clients = append(w.clients, simclient.New(cfg, w, w.streams.Stream(fmt.Sprintf("client/%d", i))))
	}
	return w
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func (w *world) fail(kind, format string, args ...any) {
	f := Failure{Kind: kind, At: w.clock.Mono(), Msg: fmt.Sprintf(format, args...)}
	w.failures = append(w.failures, f)
	w.tr.logf("FAILURE %s", f)
	if w.rec.On() && !strings.HasPrefix(kind, KindHistory) {
		w.recordFailure(&f, nil, "")
	}
}

func (w *world) run() {
	if w.tr.on() {
		io.WriteString(w.opts.Trace, w.sched.String())
	}
	for _, s := range w.servers {
		s.start()
	}
	for _, c := range w.clients {
		c.Start()
	}
	for _, f := range w.sched.Faults {
		w.q.At(f.At(), func() { w.inject(f) })
	}
	safety := ms(w.sched.SafetyMs)
	end := safety + ms(w.sched.LivenessMs)
	w.q.At(safety, w.heal)
	lastFault := time.Duration(0)
	if n := len(w.sched.Faults); n > 0 {
		lastFault = w.sched.Faults[n-1].At()
	}
	for {
		at, ok := w.q.NextAt()
		if !ok || at > end || (w.clock.Mono() >= lastFault && w.allDone() && w.converged() && w.inv.expiriesSettled()) {
			break
		}
		w.q.Step()
		w.stats.Events++
		w.inv.checkExpiries()
		if len(w.failures) > 0 {
			return // the first failure is the interesting one; its trace ends here
		}
	}
	w.finish()
}

func (w *world) allDone() bool {
	for _, c := range w.clients {
		if !c.Done() {
			return false
		}
	}
	return true
}

// converged reports whether an ensemble is whole again: every server up,
// one leader in broadcast, every other server in broadcast under it, and
// every tree at the leader's zxid with the leader's digest. A standalone
// server has nothing to converge with, but must be up: a run that ended
// while its restart was pending left nothing to check at the end but a
// disk still corrupted (hunt seed 104713: the queue checker found the
// queue unknown and judged its items lost).
func (w *world) converged() bool {
	if w.ensemble == nil {
		return w.servers[0].up
	}
	l := w.leader()
	if l < 0 {
		return false
	}
	lead := w.servers[l]
	for _, s := range w.servers {
		if !s.up || s.role.Phase != zab.PhaseBroadcast || s.role.Leader != lead.sid ||
			s.peer.LastZxid() != lead.peer.LastZxid() || s.peer.Digest() != lead.peer.Digest() {
			return false
		}
	}
	return true
}

// mayDamage reports whether s's log may be damaged: while the voters whose
// logs are intact are a quorum (a standalone server refuses to start
// instead, which is always allowed). However few of the others hold a
// committed txn, nothing committed is lost: a damaged member abstains from
// elections until a leader has synchronized it, so every quorum that
// elects meets each txn's commit quorum in an intact member that holds the
// txn, and the most recent history among the quorum wins.
func (w *world) mayDamage(s *server) bool {
	if w.ensemble == nil {
		return true
	}
	var intact []int64
	for _, o := range w.servers {
		if o != s && !o.damaged && slices.Contains(w.ensemble.Voters, o.sid) {
			intact = append(intact, o.sid)
		}
	}
	return w.quorum.ContainsQuorum(intact)
}

// leader is the index of the server that leads an established epoch (the
// newest, if an old leader has not noticed yet), or -1.
func (w *world) leader() int {
	best := -1
	for i, s := range w.servers {
		if s.up && s.role.Role == zab.RoleLeading && s.role.Phase == zab.PhaseBroadcast &&
			(best < 0 || s.role.Epoch > w.servers[best].role.Epoch) {
			best = i
		}
	}
	return best
}

// inject carries out one fault of the schedule.
func (w *world) inject(f faults.Fault) {
	w.tr.logf("fault %s", f)
	switch f.Kind {
	case faults.Drop:
		w.recordFault(f, 0)
		for _, id := range w.openConnsOf(w.clients[f.Client-1]) {
			w.closeConn(id, "dropped by the network")
		}
	case faults.Pause:
		w.recordFault(f, 0)
		w.clients[f.Client-1].Pause(ms(f.ForMs))
	case faults.Intrude:
		w.recordFault(f, 0)
		w.intrude(f)
	case faults.Partition, faults.BreakConn, faults.Clog, faults.SlowLink:
		w.recordFault(f, 0)
		w.net.inject(f)
	default:
		w.recordFault(f, int64(f.Server+1))
		w.servers[f.Server].inject(f)
	}
}

// heal starts the liveness phase: faults stop, and every server that is down
// restarts with a healthy disk.
func (w *world) heal() {
	w.tr.logf("liveness phase: faults healed")
	w.rec.Add(runlog.Event{At: w.now(), Kind: runlog.KindFault, Name: "heal", Text: "liveness phase: every fault healed"})
	if w.net != nil {
		w.net.heal()
	}
	for _, s := range w.servers {
		s.heal()
	}
}

// finish checks what must hold at the end of a run.
func (w *world) finish() {
	for _, c := range w.clients {
		if !c.Done() {
			w.fail(KindLiveness, "%s did not finish %s into the liveness phase", c.Progress(), fmtMono(ms(w.sched.LivenessMs)))
		}
	}
	if !w.converged() {
		w.fail(KindLiveness, "the ensemble did not converge %s into the liveness phase: %s", fmtMono(ms(w.sched.LivenessMs)), w.status())
	}
	// The queue as the run leaves it: before the final restarts, after
	// which an ensemble member applies only what a leader commits again;
	// after them if every server is down now (a standalone server, which
	// replays its whole log).
	queueLeft, known := w.finalQueue()
	for _, s := range w.servers {
		s.finish()
	}
	if !known {
		queueLeft, _ = w.finalQueue()
	}
	if len(w.failures) == 0 && !w.opts.SkipCheckers {
		w.checkHistory()
		w.checkRecipes(queueLeft)
	}
}

// status is one line per server, for a liveness failure.
func (w *world) status() string {
	var parts []string
	for _, s := range w.servers {
		if !s.up {
			parts = append(parts, fmt.Sprintf("server %d down", s.sid))
			continue
		}
		acc, cur := s.peer.Epochs()
		parts = append(parts, fmt.Sprintf("server %d %s (%s) leader=%d epoch=%d accepted=%d current=%d applied=0x%x logged=0x%x digest=%d",
			s.sid, s.role.Role, s.role.Phase, s.role.Leader, s.role.Epoch, acc, cur, s.peer.LastZxid(), s.appended, s.peer.Digest()))
	}
	return strings.Join(parts, "; ")
}

// initLimitTicks is the ensembles' initLimit, in ticks: how long discovery
// and synchronization may take.
const initLimitTicks = 10

// simEnsemble is the members' configuration: voters first, then observers,
// with the simulator's timing (syncLimit short against the session
// timeouts, so that a learner cut off from its leader drops its clients
// before the leader could expire their sessions).
func simEnsemble(sched *faults.Schedule) *zab.Ensemble {
	e := &zab.Ensemble{
		InitLimit: initLimitTicks, SyncLimit: 2, ZooKeeperSync: sched.ZooKeeperSync,
		Election: election.Config{
			FinalizeWait:            ms(2 * sched.TickMs),
			MaxNotificationInterval: ms(20 * sched.TickMs),
		},
	}
	// The schedule was validated before the run: its quorum rule builds.
	e.Quorum, _ = sched.Quorum()
	for i := 1; i <= sched.Servers; i++ {
		if i <= sched.Voters() {
			e.Voters = append(e.Voters, int64(i))
		} else {
			e.Observers = append(e.Observers, int64(i))
		}
	}
	return e
}

func (w *world) openConnsOf(c *simclient.Client) []simclient.ConnID {
	var ids []simclient.ConnID
	for id, cn := range w.conns {
		if cn.client == c && cn.open {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids) // map order must not reach the trace
	return ids
}

// latency draws a one-way network delay.
func (w *world) latency() time.Duration {
	return 100*time.Microsecond + time.Duration(w.rng.Int64N(int64(2*time.Millisecond)))
}

// deliverAt schedules f on one direction of a connection, never before what
// was sent earlier that way (TCP keeps order).
func (w *world) deliverAt(last *time.Duration, f func()) { w.q.At(w.arrival(last), f) }

// arrival is when something sent now on one direction of a connection
// arrives: after a latency, and never before what was sent earlier that way
// (TCP keeps order). last is that direction's latest arrival.
func (w *world) arrival(last *time.Duration) time.Duration {
	at := w.clock.Mono() + w.latency()
	if at < *last {
		at = *last
	}
	*last = at
	return at
}

// frame is a request or a reply on its way over a client connection: the
// bulk of a run's messages, so each is a reused struct run by the queue
// rather than a closure.
type frame struct {
	w        *world
	cn       *conn
	toServer bool
	request  wire.RequestHeader // toServer
	reply    wire.ReplyHeader   // to the client
	body     wire.Record
}

// sendFrame schedules f's delivery in order on its direction of f.cn.
func (w *world) sendFrame(f frame) {
	last := &f.cn.toClient
	if f.toServer {
		last = &f.cn.toServer
	}
	w.q.Schedule(w.arrival(last), w.spareFrames.get(f))
}

// Run delivers the frame, then gives it back for reuse.
func (f *frame) Run() {
	if f.toServer {
		f.cn.server.request(f.cn, f.request, f.body)
	} else {
		f.cn.client.Reply(f.cn.id, f.reply, f.body)
	}
	f.w.spareFrames.put(f)
}

// closeConn closes a connection from the network's side: both ends learn of
// it after a delay.
func (w *world) closeConn(id simclient.ConnID, why string) {
	cn := w.conns[id]
	if cn == nil || !cn.open {
		return
	}
	cn.open = false
	if w.tr.on() {
		w.tr.logf("conn %d (client %d) closed: %s", id, cn.client.ID(), why)
	}
	w.deliverAt(&cn.toClient, func() {
		delete(w.conns, id)
		if cn.answered && !cn.recorded {
			w.unrecorded[id] = cn
		}
		cn.client.Lost(id)
	})
	w.deliverAt(&cn.toServer, func() { cn.server.connClosed(cn) })
}

// The simclient.Env of every client.

func (w *world) Now() time.Duration              { return w.clock.Mono() }
func (w *world) After(d time.Duration, f func()) { w.q.After(d, f) }

func (w *world) Dial(c *simclient.Client, req *wire.ConnectRequest) simclient.ConnID {
	w.nextConn++
	id := w.nextConn
	s := w.servers[w.nextServer(c.ID())]
	if !s.up {
		w.tr.logf("client %d: connect refused: server %d is down", c.ID(), s.sid)
		w.q.After(w.latency(), func() { c.Lost(id) })
		return id
	}
	cn := &conn{id: id, client: c, server: s, gen: s.gen, open: true, intruded: w.intruders[c]}
	w.conns[id] = cn
	if w.tr.on() {
		w.tr.logf("client %d: conn %d to server %d connect %s", c.ID(), id, s.sid, wire.Describe(req))
	}
	r := *req
	w.deliverAt(&cn.toServer, func() { s.connect(cn, r) })
	return id
}

// nextServer is the server a client dials next: as ZooKeeper's client
// does, it starts at a random one and moves to the next on every
// reconnect, so a client whose server failed finds another.
func (w *world) nextServer(client int) int {
	n := len(w.servers)
	i, ok := w.dialNext[client]
	if !ok {
		i = w.dialRng.IntN(n)
	}
	w.dialNext[client] = (i + 1) % n
	return i
}

func (w *world) Send(id simclient.ConnID, hdr wire.RequestHeader, body wire.Record) {
	cn := w.conns[id]
	if cn == nil || !cn.open {
		return // lost on a closed connection; the client hears of the close
	}
	if w.tr.on() && hdr.Xid != wire.XidPing {
		w.tr.logf("client %d -> %s", cn.client.ID(), describeMessage(&hdr, body))
	}
	w.sendFrame(frame{w: w, cn: cn, toServer: true, request: hdr, body: body})
}

func (w *world) Hangup(id simclient.ConnID) {
	cn := w.conns[id]
	if cn == nil {
		return
	}
	delete(w.conns, id)
	if !cn.open {
		return
	}
	cn.open = false
	w.deliverAt(&cn.toServer, func() { cn.server.connClosed(cn) })
}

func (w *world) Record(e simclient.Entry) {
	if e.Kind == "op" {
		w.stats.Ops++
	}
	if e.Conn != 0 {
		cn := w.conns[e.Conn]
		if cn == nil {
			cn = w.unrecorded[e.Conn]
			delete(w.unrecorded, e.Conn)
		}
		if cn != nil {
			e.Server, e.Term = cn.server.sid, cn.term
			cn.recorded = true
		}
	}
	if w.tr.on() {
		w.tr.logf("client %d history %s", e.Client, describeEntry(&e))
	}
	w.recordEntry(len(w.history), &e)
	w.history = append(w.history, e)
}

// Note keeps what a recipe client believed, for the recipe checkers.
func (w *world) Note(n simclient.Note) {
	w.notes = append(w.notes, n)
	w.tr.logf("client %d recipe: %s token 0x%x", n.Client, n.Kind, n.Token)
}

func (w *world) Violation(c *simclient.Client, msg string) {
	w.fail(KindProtocol, "client %d: %s", c.ID(), msg)
}

// describeMessage renders a request or reply header and its body for the
// trace.
func describeMessage(hdr, body wire.Record) string {
	s := wire.Describe(hdr)
	if b := wire.Describe(body); b != "" {
		s += " " + b
	}
	return s
}

// describeEntry renders a history entry for the trace.
func describeEntry(e *simclient.Entry) string {
	if e.Kind == "event" {
		if e.Type == wire.EventNone {
			return fmt.Sprintf("event %s session=%s", e.State, wire.SessionString(e.Session))
		}
		return fmt.Sprintf("event %s %s", e.Type, e.Path)
	}
	op := e.Op.Name
	if e.Op.Path != "" {
		op += " " + e.Op.Path
	}
	return fmt.Sprintf("op %s -> %s zxid=%s", op, e.Result.Err.String(), wire.ZxidString(e.Result.Zxid))
}

func sortConnIDs(ids []zab.ConnID) { slices.Sort(ids) }
