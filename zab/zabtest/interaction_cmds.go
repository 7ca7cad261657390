package zabtest

import (
	enchex "encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// This file holds the Interaction's commands, one method each.

// addNodesArgs are the add-nodes arguments the driver itself knows.
var addNodesArgs = map[string]bool{"voters": true, "observers": true, "window": true, "log-read-limit": true,
	"tick": true, "init-limit": true, "sync-limit": true, "snap-count": true, "down": true}

// addNodes makes the ensemble:
//
//	add-nodes voters=3 [observers=1] [window=N] [log-read-limit=N]
//	          [tick=200ms] [init-limit=N] [sync-limit=N] [snap-count=N] [down]
//
// Arguments named in Interaction.ConfigArgs are the test's own. window is
// Config.CommittedWindow, log-read-limit how many txns a
// leader's log serves a synchronization (Node.LogReadLimit): small ones
// force SNAP. down leaves every member crashed with an empty disk, for
// write-log and restart.
func (e *Interaction) addNodes(t testing.TB, d *datadriven.TestData) string {
	e.makeCluster(t, d, nil, d.HasArg("down"))
	return ""
}

// makeCluster makes the ensemble a command's add-nodes arguments describe;
// own are the other arguments the command takes. With down, every member
// is left crashed with an empty disk.
func (e *Interaction) makeCluster(t testing.TB, d *datadriven.TestData, own map[string]bool, down bool) {
	if e.C != nil {
		d.Fatalf(t, "%s: the ensemble exists already", d.Cmd)
	}
	window := int(argInt(t, d, "window", 0))
	snapCount := int(argInt(t, d, "snap-count", 0))
	initLimit := int(argInt(t, d, "init-limit", 0))
	syncLimit := int(argInt(t, d, "sync-limit", 0))
	tick := time.Duration(0)
	if s := argString(d, "tick", ""); s != "" {
		var err error
		if tick, err = time.ParseDuration(s); err != nil {
			d.Fatalf(t, "tick: %v", err)
		}
	}
	var extra []string // the test's own arguments present, in the order given
	for _, a := range d.CmdArgs {
		switch {
		case e.ConfigArgs[a.Key] != nil:
			extra = append(extra, a.Key)
		case own[a.Key]:
		case !addNodesArgs[a.Key]:
			// A script run where its argument is unknown (a tool replaying
			// it without the test's ConfigArgs) must not run otherwise.
			d.Fatalf(t, "%s: unknown argument %q (not one of the driver's, nor defined by this test's Interaction.ConfigArgs)", d.Cmd, a.Key)
		}
	}
	cc := ClusterConfig{
		Voters:    int(argInt(t, d, "voters", 0)),
		Observers: int(argInt(t, d, "observers", 0)),
		StartDown: down,
		Tweak: func(_ int64, cfg *zab.Config) {
			for _, name := range extra {
				e.ConfigArgs[name](cfg, argInt(t, d, name, 0))
			}
			if window > 0 {
				cfg.CommittedWindow = window
			}
			if snapCount > 0 {
				cfg.SnapCount = snapCount
			}
			if tick > 0 {
				cfg.Tick = tick
			}
			if initLimit > 0 {
				cfg.Ensemble.InitLimit = initLimit
			}
			if syncLimit > 0 {
				cfg.Ensemble.SyncLimit = syncLimit
			}
		},
	}
	if cc.Voters < 1 {
		d.Fatalf(t, "%s: voters must be at least 1", d.Cmd)
	}
	e.C = NewCluster(t, cc, e.seed)
	if d.HasArg("log-read-limit") {
		for _, n := range e.C.Nodes {
			n.LogReadLimit = int(argInt(t, d, "log-read-limit", 0))
		}
	}
}

// bootstrapArgs are bootstrap's arguments besides add-nodes' (but down).
var bootstrapArgs = map[string]bool{"leader": true, "epoch": true}

// bootstrapRound is how long bootstrap runs at a time (as `run` does, in
// steps of 50ms) before it looks whether every member serves; an
// ensemble of empty logs with nothing lost does in one.
const bootstrapRound = 100 * time.Millisecond

// bootstrapLimit is how long bootstrap waits for an epoch to be
// established before it gives up: a leader in discovery gives up after
// initLimit (2s by default), and the next election may then succeed.
const bootstrapLimit = 30 * time.Second

// bootstrap makes the ensemble, as add-nodes does, and runs it until
// every member serves an established epoch, for scripts whose scenario
// starts in broadcast:
//
//	bootstrap voters=3 [observers=1] [leader=N] [epoch=N]
//	          [any argument of add-nodes but down]
//
// Nothing is skipped or forged: the members elect, discover and
// synchronize on the real core, exactly as `run 100ms` repeated until
// every member is in broadcast would show, and their trace is not
// printed. With the defaults that is one `run 100ms`: add-nodes, trace
// and run 100ms, with everything run printed (election_3.txt shows it),
// leave the ensemble in the same state, clock included.
//
// leader (the largest voter id by default) is the member that leads. With
// equal logs an election elects the largest id it hears from, so the
// voters above leader start only once leader serves (they join its
// epoch as followers); the voters up to leader must be a quorum. epoch (1
// by default) is the epoch established: for each one before it, once it
// is established, every member crashes and restarts, and the next
// election establishes the next.
//
// It prints the clock, then each member's role, leader, epoch and last
// applied zxid.
func (e *Interaction) bootstrap(t testing.TB, d *datadriven.TestData) string {
	voters := argInt(t, d, "voters", 0)
	leader := argInt(t, d, "leader", voters)
	epochs := argInt(t, d, "epoch", 1)
	if d.HasArg("down") {
		d.Fatalf(t, "bootstrap: down is add-nodes' (bootstrap starts the ensemble)")
	}
	if leader < 1 || leader > voters {
		d.Fatalf(t, "bootstrap: leader=%d is not a voter", leader)
	}
	if 2*leader <= voters {
		d.Fatalf(t, "bootstrap: leader=%d: the voters 1..%d must be a quorum of the %d voters "+
			"(an election among equal logs elects the largest id it hears from)", leader, leader, voters)
	}
	if epochs < 1 {
		d.Fatalf(t, "bootstrap: epoch must be at least 1")
	}
	// With the default leader every member starts at once, as add-nodes
	// starts them; otherwise all start down and bootstrap starts them.
	e.makeCluster(t, d, bootstrapArgs, leader != voters)
	for epoch := int64(1); epoch <= epochs; epoch++ {
		if epoch > 1 {
			for _, n := range e.C.Nodes {
				e.C.Crash(n.ID)
			}
		}
		var late []int64 // the voters that start once leader serves
		for _, n := range e.C.Nodes {
			switch {
			case n.Peer != nil:
			case !n.Observer && n.ID > leader:
				late = append(late, n.ID)
			default:
				e.C.Restart(n.ID)
			}
		}
		e.runUntilServing(t, d, leader, epoch)
		if len(late) > 0 {
			for _, id := range late {
				e.C.Restart(id)
			}
			e.runUntilServing(t, d, leader, epoch)
		}
	}
	// What bootstrap did is the starting state, not the scenario: none
	// of it is printed.
	e.shownFrom = len(e.C.Trace)
	var b strings.Builder
	fmt.Fprintf(&b, "at %v\n", e.C.Now.Mono-startTime.Mono)
	for _, n := range e.C.Nodes {
		s := n.Peer.State()
		fmt.Fprintf(&b, "%d: %s leader=%d epoch=%d zxid=%s\n", n.ID, s.Role, s.Leader, s.Epoch, hex(n.Peer.LastZxid()))
	}
	return b.String()
}

// runUntilServing runs the ensemble in rounds of bootstrapRound until
// every running member serves epoch under leader.
func (e *Interaction) runUntilServing(t testing.TB, d *datadriven.TestData, leader, epoch int64) {
	serving := func() bool {
		for _, n := range e.C.Nodes {
			if n.Peer == nil {
				continue
			}
			if s := n.Peer.State(); s.Phase != zab.PhaseBroadcast || s.Leader != leader || s.Epoch != epoch {
				return false
			}
		}
		return true
	}
	for waited := time.Duration(0); !serving(); waited += bootstrapRound {
		if waited >= bootstrapLimit {
			d.Fatalf(t, "bootstrap: epoch %d led by %d not established after %v:\n%s", epoch, leader, waited, e.C.Status())
		}
		e.C.Run(bootstrapRound, 50*time.Millisecond)
	}
}

// trace chooses which kinds of Trace lines commands print:
//
//	trace [hide=(votes,pings,sends,disk)] [show=(...)]
//
// votes and pings are election notifications and PING packets (sent and
// delivered; a PING that reports session touches always shows); sends are the sends of every other packet (their deliveries
// still show); disk is appends and durability reports.
func (e *Interaction) trace(t testing.TB, d *datadriven.TestData) string {
	kinds := map[string]bool{"votes": true, "pings": true, "sends": true, "disk": true}
	for _, key := range []string{"hide", "show"} {
		arg, ok := d.Arg(key)
		if !ok {
			continue
		}
		for _, k := range arg.Vals {
			if !kinds[k] {
				d.Fatalf(t, "trace: unknown kind %q (votes, pings, sends, disk)", k)
			}
			e.hidden[k] = key == "hide"
		}
	}
	return ""
}

// stabilize delivers every message in flight until none is left, or
// only one channel's (votes: elections decide, and the quorum packets
// they lead to wait):
//
//	stabilize [max=N] [channel=quorum|votes]
func (e *Interaction) stabilize(t testing.TB, d *datadriven.TestData) string {
	max := int(argInt(t, d, "max", 100000))
	if n := e.C.StabilizeOn(channelArg(t, d), max); n == max {
		return fmt.Sprintf("stopped after %d deliveries: messages still in flight\n", n)
	}
	return ""
}

// channelArg reads channel=quorum|votes; without it, both.
func channelArg(t testing.TB, d *datadriven.TestData) Channel {
	switch argString(d, "channel", "") {
	case "":
		return AnyChannel
	case "quorum":
		return QuorumChannel
	case "votes":
		return VoteChannel
	}
	d.Fatalf(t, "%s: channel is quorum or votes", d.Cmd)
	return AnyChannel
}

// deliver hands over (or, with drop, loses) the next count messages on
// the link from→to, in the order they were sent, or only those of one
// channel (the quorum channel's packets may overtake the election's
// votes, or the other way round):
//
//	deliver from=1 to=2 [count=N] [drop] [channel=quorum|votes]
func (e *Interaction) deliver(t testing.TB, d *datadriven.TestData) string {
	from, to := argInt(t, d, "from", 0), argInt(t, d, "to", 0)
	count := argInt(t, d, "count", 1)
	ch := channelArg(t, d)
	for i := int64(0); i < count; i++ {
		if !e.C.DeliverOn(from, to, ch, d.HasArg("drop")) {
			return fmt.Sprintf("nothing to deliver from %d to %d (nothing in flight, or partitioned)\n", from, to)
		}
	}
	return ""
}

// advance moves the clock and ticks every member whose wakeup came:
//
//	advance 200ms
func (e *Interaction) advance(t testing.TB, d *datadriven.TestData) string {
	e.C.Advance(bareDuration(t, d))
	return ""
}

// run alternates stabilize and advance(step) for the duration:
//
//	run 2s [step=50ms]
func (e *Interaction) run(t testing.TB, d *datadriven.TestData) string {
	total := bareDuration(t, d)
	step, err := time.ParseDuration(argString(d, "step", "50ms"))
	if err != nil || step <= 0 {
		d.Fatalf(t, "run: bad step")
	}
	e.C.Run(total, step)
	return ""
}

// crash stops members as a power failure would:
//
//	crash 2 [3 ...]
func (e *Interaction) crash(t testing.TB, d *datadriven.TestData) string {
	for _, id := range bareInts(t, d) {
		if e.node(t, d, id).Peer == nil {
			d.Fatalf(t, "crash: server %d is down already", id)
		}
		e.C.Crash(id)
	}
	return ""
}

// restart starts crashed members from their disks:
//
//	restart 2 [3 ...]
func (e *Interaction) restart(t testing.TB, d *datadriven.TestData) string {
	for _, id := range bareInts(t, d) {
		if e.node(t, d, id).Peer != nil {
			d.Fatalf(t, "restart: server %d is running", id)
		}
		e.C.Restart(id)
	}
	return ""
}

// hold keeps members' appends from becoming durable:
//
//	hold 2 [3 ...]
func (e *Interaction) hold(t testing.TB, d *datadriven.TestData) string {
	for _, id := range bareInts(t, d) {
		e.node(t, d, id)
		e.C.Hold(id)
	}
	return ""
}

// release makes members' appends durable again, everything held first:
//
//	release 2 [3 ...]
func (e *Interaction) release(t testing.TB, d *datadriven.TestData) string {
	for _, id := range bareInts(t, d) {
		e.node(t, d, id)
		e.C.Release(id)
	}
	return ""
}

// partition cuts all traffic between groups of members:
//
//	partition 1 | 2 3
func (e *Interaction) partition(t testing.TB, d *datadriven.TestData) string {
	var groups [][]int64
	cur := []int64{}
	for _, a := range d.CmdArgs {
		if a.Key == "|" {
			groups, cur = append(groups, cur), []int64{}
			continue
		}
		id, err := strconv.ParseInt(a.Key, 10, 64)
		if err != nil || len(a.Vals) != 0 {
			d.Fatalf(t, "partition: want server ids separated by |, got %q", a.String())
		}
		e.node(t, d, id)
		cur = append(cur, id)
	}
	groups = append(groups, cur)
	if len(groups) < 2 {
		d.Fatalf(t, "partition: name at least two groups")
	}
	e.C.Partition(groups...)
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = fmt.Sprint(g)
	}
	return "partitioned " + strings.Join(parts, " | ") + "\n"
}

// heal ends every partition.
func (e *Interaction) heal(t testing.TB, d *datadriven.TestData) string {
	e.C.Heal()
	return "healed\n"
}

// status prints each member's role, epochs, zxids and digest.
func (e *Interaction) status(t testing.TB, d *datadriven.TestData) string {
	return e.C.Status()
}

// logs prints each member's txn log, with what is durable:
//
//	logs [2 3 ...]
func (e *Interaction) logs(t testing.TB, d *datadriven.TestData) string {
	ids := []int64{}
	if len(d.CmdArgs) > 0 {
		ids = bareInts(t, d)
	} else {
		for _, n := range e.C.Nodes {
			ids = append(ids, n.ID)
		}
	}
	var b strings.Builder
	for _, id := range ids {
		n := e.node(t, d, id)
		fmt.Fprintf(&b, "%d: durable up to %s:", id, hex(n.Durable))
		if len(n.Log) == 0 {
			b.WriteString(" empty")
		}
		for i := range n.Log {
			txn := &n.Log[i]
			fmt.Fprintf(&b, " %s(%s)", hex(txn.Header.Zxid), describeTxn(txn))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// writeLog writes, on crashed members' disks, count create txns (of nodes
// /w<counter in hex>) with consecutive zxids from a first one, and sets
// their epoch files:
//
//	write-log node=(1,2,3) from=0x1fffffffd count=2 [accepted=1] [current=1]
//
// The txns are appended after what the disks hold, and durable.
func (e *Interaction) writeLog(t testing.TB, d *datadriven.TestData) string {
	first := argInt(t, d, "from", 0)
	count := argInt(t, d, "count", 1)
	var b strings.Builder
	for _, id := range argInts(t, d, "node") {
		n := e.node(t, d, id)
		if n.Peer != nil {
			d.Fatalf(t, "write-log: server %d is running; crash it first", id)
		}
		// Prepare each txn against the tree the log so far builds, so
		// that the txns are what a leader would have proposed.
		scratch := datatree.New(n.Cfg.Tree)
		for i := range n.Log {
			scratch.Apply(&n.Log[i], nil)
		}
		for z := first; z < first+count; z++ {
			if k := len(n.Log); k > 0 && n.Log[k-1].Header.Zxid >= z {
				d.Fatalf(t, "write-log: server %d's log already reaches %s", id, hex(n.Log[k-1].Header.Zxid))
			}
			req := datatree.Request{Op: wire.OpCreate, Internal: true, Body: &wire.CreateRequest{
				Path: fmt.Sprintf("/w%x", z&0xffffffff), ACL: wire.OpenACLUnsafe,
			}}
			txn := scratch.Prepare(&req, z, e.C.Now.Wall)
			scratch.Apply(&txn, nil)
			n.Log = append(n.Log, txn)
			n.Durable = z
		}
		n.Accepted = argInt(t, d, "accepted", n.Accepted)
		n.Current = argInt(t, d, "current", n.Current)
		fmt.Fprintf(&b, "%d: log up to %s, acceptedEpoch=%d currentEpoch=%d\n", id, hex(n.Durable), n.Accepted, n.Current)
	}
	return b.String()
}

// inject hands a member a packet as if from another server (which need
// not be a member):
//
//	inject from=1 to=2 type=COMMIT zxid=0x100000005 [data=<hex>] [truncate=N]
//	       [current-epoch=N] [path=/x]
//
// type is a packet name or number. Without data, the packet carries what
// its type calls for: a txn (a create of path) for PROPOSAL and INFORM,
// LeaderInfo, AckEpoch (current-epoch, default -1) or LearnerInfo (the
// sender's id). truncate cuts that payload to N bytes.
func (e *Interaction) inject(t testing.TB, d *datadriven.TestData) string {
	from, to := argInt(t, d, "from", 0), argInt(t, d, "to", 0)
	typ := parsePacketType(t, d, argString(d, "type", ""))
	qp := wire.QuorumPacket{Type: typ, Zxid: argInt(t, d, "zxid", 0)}
	switch typ {
	case wire.PacketProposal, wire.PacketInform:
		req := datatree.Request{Op: wire.OpCreate, Internal: true, Body: &wire.CreateRequest{
			Path: argString(d, "path", "/injected"), ACL: wire.OpenACLUnsafe,
		}}
		txn := e.C.Node(to).treeForInjection().Prepare(&req, qp.Zxid, e.C.Now.Wall)
		qp.Data = zab.EncodeTxnEntry(&txn)
	case wire.PacketLeaderInfo:
		qp.Data = wire.Marshal(&wire.LeaderInfo{ProtocolVersion: wire.ProtocolVersion})
	case wire.PacketAckEpoch:
		qp.Data = wire.Marshal(&wire.AckEpoch{CurrentEpoch: int32(argInt(t, d, "current-epoch", -1))})
	case wire.PacketFollowerInfo, wire.PacketObserverInfo:
		qp.Data = wire.Marshal(&wire.LearnerInfo{ServerID: from, ProtocolVersion: wire.ProtocolVersion})
	}
	if s, ok := d.Arg("data"); ok {
		b, err := enchex.DecodeString(s.SingleVal(t))
		if err != nil {
			d.Fatalf(t, "inject: data: %v", err)
		}
		qp.Data = b
	}
	if d.HasArg("truncate") {
		if n := int(argInt(t, d, "truncate", 0)); n < len(qp.Data) {
			qp.Data = qp.Data[:n]
		}
	}
	e.C.Inject(from, to, qp)
	return ""
}

// treeForInjection is a tree to prepare an injected txn against: a copy
// would be costly, so a fresh one; the txn need only decode.
func (n *Node) treeForInjection() *datatree.Tree {
	if n == nil {
		return datatree.New(datatree.Config{})
	}
	return datatree.New(n.Cfg.Tree)
}

func parsePacketType(t testing.TB, d *datadriven.TestData, s string) wire.PacketType {
	if v, err := strconv.ParseInt(s, 0, 32); err == nil {
		return wire.PacketType(v)
	}
	for pt := wire.PacketRequest; pt <= wire.PacketInformAndActivate; pt++ {
		if pt.String() == s {
			return pt
		}
	}
	d.Fatalf(t, "inject: unknown packet type %q", s)
	return 0
}

// connect opens client N+1 (N clients so far) on a member, with a new
// session, or resuming an earlier client's session:
//
//	connect node=2 [session-of=1] [timeout=4000]
func (e *Interaction) connect(t testing.TB, d *datadriven.TestData) string {
	n := e.node(t, d, argInt(t, d, "node", 0))
	if n.Peer == nil {
		d.Fatalf(t, "connect: server %d is down", n.ID)
	}
	var session int64
	var passwd []byte
	if k := argInt(t, d, "session-of", 0); k != 0 {
		if k < 1 || k > int64(len(e.clients)) || e.clients[k-1].Session == 0 {
			d.Fatalf(t, "connect: client %d has no session", k)
		}
		session, passwd = e.clients[k-1].Session, e.clients[k-1].Passwd
	}
	cl := e.C.Connect(n.ID, session, passwd, int32(argInt(t, d, "timeout", 4000)))
	e.clients = append(e.clients, cl)
	if int(cl.Conn) != len(e.clients) {
		d.Fatalf(t, "connect: client %d got connection c%d", len(e.clients), cl.Conn)
	}
	return ""
}

// create sends a create:
//
//	create client=1 path=/a [data=x] [ephemeral] [sequential]
func (e *Interaction) create(t testing.TB, d *datadriven.TestData) string {
	cl := e.client(t, d)
	mode := wire.ModePersistent
	if d.HasArg("ephemeral") {
		mode = wire.ModeEphemeral
	}
	if d.HasArg("sequential") {
		mode |= wire.ModePersistentSequential
	}
	cl.Send(wire.OpCreate, &wire.CreateRequest{Path: argString(d, "path", ""), Data: []byte(argString(d, "data", "")),
		ACL: wire.OpenACLUnsafe, Flags: mode})
	return ""
}

// set sends a setData of any version:
//
//	set client=1 path=/a data=y
func (e *Interaction) set(t testing.TB, d *datadriven.TestData) string {
	cl := e.client(t, d)
	cl.Send(wire.OpSetData, &wire.SetDataRequest{Path: argString(d, "path", ""), Data: []byte(argString(d, "data", "")), Version: -1})
	return ""
}

// delete sends a delete of any version:
//
//	delete client=1 path=/a
func (e *Interaction) delete(t testing.TB, d *datadriven.TestData) string {
	cl := e.client(t, d)
	cl.Send(wire.OpDelete, &wire.PathVersionRequest{Path: argString(d, "path", ""), Version: -1})
	return ""
}

// get sends a getData, leaving a data watch with watch:
//
//	get client=1 path=/a [watch]
func (e *Interaction) get(t testing.TB, d *datadriven.TestData) string {
	cl := e.client(t, d)
	cl.Send(wire.OpGetData, &wire.PathWatchRequest{Path: argString(d, "path", ""), Watch: d.HasArg("watch")})
	return ""
}

// sync sends a sync:
//
//	sync client=1 [path=/]
func (e *Interaction) sync(t testing.TB, d *datadriven.TestData) string {
	cl := e.client(t, d)
	cl.Send(wire.OpSync, &wire.PathRequest{Path: argString(d, "path", "/")})
	return ""
}

// ping sends a client ping (what keeps an idle session alive):
//
//	ping client=1
func (e *Interaction) ping(t testing.TB, d *datadriven.TestData) string {
	cl := e.client(t, d)
	cl.SendXid(wire.XidPing, wire.OpPing, nil)
	return ""
}

// closeSession sends closeSession:
//
//	close client=1
func (e *Interaction) closeSession(t testing.TB, d *datadriven.TestData) string {
	cl := e.client(t, d)
	cl.Send(wire.OpCloseSession, nil)
	return ""
}

// hangUp closes a client's connection without closing its session:
//
//	hang-up client=1
func (e *Interaction) hangUp(t testing.TB, d *datadriven.TestData) string {
	cl := e.client(t, d)
	cl.c.logf("%d: c%d hung up", cl.Node.ID, cl.Conn)
	cl.c.Step(cl.Node, zab.ConnClosed{Conn: cl.Conn})
	return ""
}
