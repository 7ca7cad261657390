package zabtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/invariant"
)

// Cluster wires several Peers together in memory: a network of FIFO links
// (one per direction of each pair, for the quorum channel and for votes),
// a fake disk per member whose durability a test may hold back, and one
// virtual clock. Nothing moves unless the test says so (Deliver,
// Stabilize, Advance), so a test drives any interleaving it wants, and
// every step is written to Trace as a line a reader can follow. It carries
// out each Ready itself rather than through zab/member, because its disks are
// data a test writes and holds at will: it checks the core's contract, and
// the simulator checks zab/member's.
type Cluster struct {
	t     TB
	Now   zab.Time
	Nodes []*Node // by id, ascending
	seed  uint64

	links map[[2]int64]*link // [from, to]
	conns connections
	// cut holds the directed pairs whose traffic is dropped (partitions).
	cut map[[2]int64]bool

	// Trace is every send, delivery, effect and notice, in order.
	Trace []string
	// Notices collects the Peers' notices, prefixed with their id.
	Notices []string

	// sent counts the messages sent, to order a link's two channels.
	sent int
	// loggedAt is the time of the Trace's last line.
	loggedAt time.Duration

	// nextConn numbers client connections across the whole ensemble, so
	// that a connection's name (c1, c2, ...) is unique in the Trace.
	nextConn zab.ConnID

	observers []Observer
	// inv checks Zab's invariants, once CheckInvariants attached it.
	inv *invariant.Checker
}

// Observer watches the members step by step (a test recording what a
// member sends, say; CheckInvariants is fed at finer points). Ready sees
// each Ready before the cluster carries it out; Settled runs once a Step
// and every effect it led to are done; Started runs when a member has
// recovered from its disk, before its first Ready.
type Observer interface {
	Started(n *Node)
	Ready(n *Node, rd *zab.Ready)
	Settled(n *Node)
}

// ClusterConfig chooses the ensemble.
type ClusterConfig struct {
	Voters    int
	Observers int
	// Tweak, if set, adjusts each member's Config before it starts.
	Tweak func(id int64, cfg *zab.Config)
	// StartDown leaves every member crashed, with an empty disk: the test
	// writes the disks it wants (Node.Log, Accepted, Current, Snapshots,
	// Durable) and starts members with Restart.
	StartDown bool
}

// Node is one member: its Peer (nil while crashed) and its disk.
type Node struct {
	ID       int64
	Observer bool
	Cfg      zab.Config
	Peer     *zab.Peer
	gen      int

	// The disk: every txn appended, the last zxid made durable, the epoch
	// files, the snapshots written.
	Log       []datatree.Txn
	Durable   int64
	Accepted  int64
	Current   int64
	Snapshots []Snapshot
	partial   *Snapshot
	snaps     zab.SnapJoiner // the SNAPs being streamed to learners
	// Hold keeps appends from becoming durable until Release.
	Hold bool
	// HoldSnapshots keeps written snapshots from becoming durable (and
	// from being reported with SnapshotWritten) until ReleaseSnapshots; a
	// crash loses them.
	HoldSnapshots bool
	heldSnaps     []Snapshot
	Wakeup        time.Duration
	// LogReadLimit is how many txns the node's log serves a leader's
	// synchronization at most (a shell's "worth sending").
	LogReadLimit int
	// damage, if set, is handed to the next start as Restored.LogDamaged.
	damage *zab.LogDamage
	// fuzzyUntil: the tree was loaded from a fuzzy snapshot that may hold
	// some txns up to this zxid (invariant.Member.FuzzyUntil).
	fuzzyUntil int64

	// Client side: the messages the Peer addressed to client connections.
	Replies []zab.Message
}

// item is one thing in flight on a link.
type item struct {
	vote   *wire.Notification
	packet *zab.PeerMessage
	// closed: the sender closed its quorum connection after what came
	// before; the receiver sees PeerDisconnected.
	closed bool
	// conn numbers the quorum connection a packet or close travels on.
	conn int
	// sent orders everything sent in the cluster: a link delivers the
	// oldest of its two channels' heads first.
	sent int
}

type link struct {
	quorum []item
	votes  []item
}

// The quorum connections. Two members share one connection at a time,
// numbered from 1 (conn, by unordered pair); each side knows which it has
// closed, or learned closed (closedBy, by [side, other side]). A side that
// sends after that opens the next connection. What arrives on a
// connection the receiver has closed is lost, as on a socket that answers
// with a reset; the sender learns of the close when its close (or the
// break) reaches it.
type connections struct {
	conn     map[[2]int64]int
	closedBy map[[2]int64]int
}

func pair(a, b int64) [2]int64 {
	if a > b {
		a, b = b, a
	}
	return [2]int64{a, b}
}

// open reports whether side considers its connection with other open.
func (cs *connections) open(side, other int64) bool {
	return cs.closedBy[[2]int64{side, other}] < cs.conn[pair(side, other)]
}

// sendOn returns the connection side sends on to other, opening a new
// one if side has closed the last.
func (cs *connections) sendOn(side, other int64) int {
	k := pair(side, other)
	if !cs.open(side, other) {
		cs.conn[k]++
	}
	return cs.conn[k]
}

// close marks the current connection closed on side's end; it reports
// whether it was open there.
func (cs *connections) close(side, other int64) bool {
	was := cs.open(side, other)
	cs.closedBy[[2]int64{side, other}] = cs.conn[pair(side, other)]
	return was
}

// startTime is when a Cluster's clock starts.
var startTime = zab.Time{Mono: time.Hour, Wall: StartWall}

// NewCluster starts the ensemble's members, each looking for a leader.
func NewCluster(t TB, cc ClusterConfig, seed uint64) *Cluster {
	t.Helper()
	c := &Cluster{t: t, Now: startTime, loggedAt: startTime.Mono, seed: seed,
		links: map[[2]int64]*link{}, cut: map[[2]int64]bool{},
		conns: connections{conn: map[[2]int64]int{}, closedBy: map[[2]int64]int{}}}
	ens := &zab.Ensemble{Election: election.Config{FinalizeWait: 50 * time.Millisecond}}
	for i := 1; i <= cc.Voters+cc.Observers; i++ {
		id := int64(i)
		if i <= cc.Voters {
			ens.Voters = append(ens.Voters, id)
		} else {
			ens.Observers = append(ens.Observers, id)
		}
	}
	for _, id := range append(slices.Clone(ens.Voters), ens.Observers...) {
		cfg := zab.Config{ServerID: id, Tick: 200 * time.Millisecond, Tree: datatree.Config{ExtendedTypesEnabled: true},
			Ensemble: ens, Passwords: sessions.Passwords{}}
		if cc.Tweak != nil {
			cc.Tweak(id, &cfg)
		}
		n := &Node{ID: id, Observer: id > int64(cc.Voters), Cfg: cfg, LogReadLimit: 1000}
		if n.Cfg.TxnLog == nil {
			n.Cfg.TxnLog = nodeLog{n}
		}
		c.Nodes = append(c.Nodes, n)
	}
	if cc.StartDown {
		return c
	}
	for _, n := range c.Nodes {
		c.start(n)
	}
	return c
}

// Node returns member id, or nil for a server outside the ensemble.
func (c *Cluster) Node(id int64) *Node {
	if id < 1 || id > int64(len(c.Nodes)) {
		return nil
	}
	return c.Nodes[id-1]
}

func (c *Cluster) linkOf(from, to int64) *link {
	k := [2]int64{from, to}
	l := c.links[k]
	if l == nil {
		l = &link{}
		c.links[k] = l
	}
	return l
}

// logf adds a line to the Trace, after a line with the time if the
// clock moved since the last line ("at 1.25s", from the cluster's start).
func (c *Cluster) logf(format string, args ...any) {
	if c.Now.Mono != c.loggedAt {
		c.loggedAt = c.Now.Mono
		c.Trace = append(c.Trace, fmt.Sprintf("at %v", c.Now.Mono-startTime.Mono))
	}
	c.Trace = append(c.Trace, fmt.Sprintf(format, args...))
}

// start recovers a member from its disk, as a shell does, and starts it.
func (c *Cluster) start(n *Node) {
	c.t.Helper()
	n.gen++
	// The damage holds until a leader has synchronized the member
	// (Ready.DamageRepaired), however often it restarts before that.
	restored := zab.Restored{AcceptedEpoch: n.Accepted, CurrentEpoch: n.Current, LogDamaged: n.damage}
	from := int64(0)
	if k := len(n.Snapshots); k > 0 {
		s := n.Snapshots[k-1]
		tree, err := datatree.Load(n.Cfg.Tree, wire.NewDecoder(s.Tree), s.Zxid)
		if err != nil {
			c.t.Fatalf("zabtest: server %d: loading snapshot 0x%x: %v", n.ID, s.Zxid, err)
		}
		d := s.Digest
		restored.Tree, restored.Sessions, restored.Digest = tree, s.Sessions, &d
		from = s.Zxid
	}
	seed := c.seed + uint64(n.ID)*1000 + uint64(n.gen)
	p, err := zab.New(n.Cfg, c.Now, rand.New(rand.NewPCG(seed, seed)), restored)
	if err != nil {
		c.t.Fatalf("zabtest: server %d: %v", n.ID, err)
	}
	for i := range n.Log {
		if n.Log[i].Header.Zxid <= from {
			continue
		}
		if err := p.Replay(n.Log[i]); err != nil {
			c.t.Fatalf("zabtest: server %d: replay: %v", n.ID, err)
		}
	}
	if err := p.ReplayDone(); err != nil {
		c.t.Fatalf("zabtest: server %d: %v", n.ID, err)
	}
	// Nothing sent to the member while it was down reaches the new
	// process (votes, which ZooKeeper queues per peer and sends once it
	// connects, still do).
	for _, k := range c.sortedLinks() {
		if k[1] == n.ID {
			c.links[k].quorum = nil
		}
	}
	n.Peer = p
	c.invStarted(n)
	for _, o := range c.observers {
		o.Started(n)
	}
	p.Start()
	c.settle(n)
}

// Observe adds an observer of every member's steps from now on.
func (c *Cluster) Observe(o Observer) { c.observers = append(c.observers, o) }

// Step feeds one event to a member and carries out its effects.
func (c *Cluster) Step(n *Node, ev zab.Event) {
	if n == nil || n.Peer == nil {
		return
	}
	n.Peer.Step(c.Now, ev)
	c.settle(n)
}

// settle carries out a member's effects and tells the observers.
func (c *Cluster) settle(n *Node) {
	c.collect(n)
	if n.Peer == nil {
		return
	}
	for _, o := range c.observers {
		o.Settled(n)
	}
}

// collect carries out a member's Ready on its disk and the network, until
// it has nothing more to do (durability completes at once unless held).
func (c *Cluster) collect(n *Node) {
	for n.Peer != nil {
		rd := n.Peer.Ready()
		for _, o := range c.observers {
			o.Ready(n, &rd)
		}
		if rd.Installed != nil && c.inv != nil {
			c.inv.Installed(n.ID, *rd.Installed)
		}
		n.Wakeup = rd.Wakeup
		for _, note := range rd.Notices {
			c.Notices = append(c.Notices, fmt.Sprintf("%d: %s", n.ID, note.Text))
			if note.Warn {
				c.logf("%d: warning: %s", n.ID, note.Text)
			} else {
				c.logf("%d: notice: %s", n.ID, note.Text)
			}
		}
		if rd.Truncate != nil {
			z := *rd.Truncate
			n.Log = slices.DeleteFunc(n.Log, func(t datatree.Txn) bool { return t.Header.Zxid > z })
			n.Durable = min(n.Durable, z)
			c.logf("%d: truncate log after %s", n.ID, hex(z))
		}
		if e := rd.Epochs; e != nil && (e.Accepted != n.Accepted || e.Current != n.Current) {
			n.Accepted, n.Current = e.Accepted, e.Current
			c.logf("%d: persist acceptedEpoch=%d currentEpoch=%d", n.ID, e.Accepted, e.Current)
		}
		if rd.DamageRepaired {
			n.damage = nil
			c.logf("%d: forget the log damage", n.ID)
		}
		for i := range rd.Appends {
			c.logf("%d: append %s %s", n.ID, hex(rd.Appends[i].Header.Zxid), describeTxn(&rd.Appends[i]))
		}
		c.invAppended(n, &rd)
		n.Log = append(n.Log, rd.Appends...)
		c.invStepped(n, &rd)
		if s := rd.State; s != nil {
			c.logf("%d: becomes %s (%s) leader=%d epoch=%d", n.ID, s.Role, s.Phase, s.Leader, s.Epoch)
		}
		for i := range rd.Messages {
			c.logf("%d: %s", n.ID, Format(&rd.Messages[i]))
		}
		n.Replies = append(n.Replies, rd.Messages...)
		// Votes go first: a member that has just decided tells the
		// others its vote before it introduces itself to its leader, who
		// may need that very vote to know it leads.
		for i := range rd.Votes {
			v := rd.Votes[i]
			it := item{vote: &v.Notification, sent: c.nextSent()}
			c.logf("%d: send to %d: %s", n.ID, v.To, describeItem(&it))
			c.linkOf(n.ID, v.To).votes = append(c.linkOf(n.ID, v.To).votes, it)
		}
		for i := range rd.PeerMessages {
			c.send(n.ID, &rd.PeerMessages[i])
		}
		done := c.storeSnapshots(n, rd.Snapshots)
		for _, z := range done {
			n.Peer.Step(c.Now, zab.SnapshotWritten{Zxid: z})
		}
		last := n.Durable
		if k := len(n.Log); k > 0 {
			last = n.Log[k-1].Header.Zxid
		}
		if n.Hold || last <= n.Durable {
			if len(done) == 0 {
				return
			}
			continue
		}
		n.Durable = last
		c.logf("%d: durable up to %s", n.ID, hex(last))
		n.Peer.Step(c.Now, zab.LogDurable{Zxid: last})
	}
}

func (c *Cluster) storeSnapshots(n *Node, chunks []zab.SnapshotChunk) (done []int64) {
	for _, ch := range chunks {
		if ch.First {
			n.partial = &Snapshot{Zxid: ch.Zxid, Sessions: ch.Sessions}
		}
		if n.partial == nil || n.partial.Zxid != ch.Zxid {
			c.t.Fatalf("zabtest: server %d: snapshot chunk for 0x%x outside a snapshot", n.ID, ch.Zxid)
		}
		n.partial.Tree = append(n.partial.Tree, ch.Data...)
		if ch.Last {
			n.partial.Digest = ch.Digest
			if n.HoldSnapshots {
				n.heldSnaps = append(n.heldSnaps, *n.partial)
				n.partial = nil
				c.logf("%d: snapshot written at %s, not yet durable", n.ID, hex(ch.Zxid))
				continue
			}
			n.Snapshots = append(n.Snapshots, *n.partial)
			n.partial = nil
			done = append(done, ch.Zxid)
			c.logf("%d: snapshot written at %s", n.ID, hex(ch.Zxid))
		}
	}
	return done
}

// send puts a quorum message on its link.
func (c *Cluster) send(from int64, m *zab.PeerMessage) {
	l := c.linkOf(from, m.To)
	if m.Kind == zab.PeerClose {
		conn := c.conns.conn[pair(from, m.To)]
		if !c.conns.close(from, m.To) {
			return // closed already: there is nothing to close
		}
		c.logf("%d: close the connection to %d", from, m.To)
		l.quorum = append(l.quorum, item{closed: true, conn: conn, sent: c.nextSent()})
		return
	}
	whole := c.Node(from).snaps.Add(m)
	if whole == nil {
		return // a piece of a SNAP's stream: it leaves whole, with its last piece
	}
	mm := *whole
	it := item{packet: &mm, conn: c.conns.sendOn(from, m.To), sent: c.nextSent()}
	c.logf("%d: send to %d: %s", from, m.To, describeItem(&it))
	l.quorum = append(l.quorum, it)
}

func (c *Cluster) nextSent() int {
	c.sent++
	return c.sent
}

// Inject hands to a member a packet as if it had arrived from from on
// their quorum connection, bypassing the link (what a faulty or malicious
// peer would send).
func (c *Cluster) Inject(from, to int64, qp wire.QuorumPacket) {
	n := c.Node(to)
	it := item{packet: &zab.PeerMessage{To: to, Packet: qp}}
	if n == nil || n.Peer == nil {
		c.logf("%d->%d injected but nobody receives it: %s", from, to, describeItem(&it))
		return
	}
	c.logf("%d->%d injected %s", from, to, describeItem(&it))
	c.invReceived(n, from, &qp)
	c.Step(n, zab.PeerPacket{From: from, Packet: qp})
}

// Deliver hands the next message on the link from→to (the election's and
// the quorum channel's, in the order they were sent; DeliverOn picks one)
// to its receiver; drop loses it instead. It reports whether there
// was one to deliver: a link cut by a partition delivers nothing (its
// messages wait for Heal), though drop still loses one.
func (c *Cluster) Deliver(from, to int64, drop bool) bool {
	return c.DeliverOn(from, to, AnyChannel, drop)
}

// Channel names one of a link's two channels, for DeliverOn.
type Channel uint8

const (
	AnyChannel    Channel = iota // the older head of the two
	QuorumChannel                // quorum packets and closes
	VoteChannel                  // election notifications
)

// DeliverOn is Deliver from one channel: the two are separate connections
// in a real ensemble, so one may overtake the other.
func (c *Cluster) DeliverOn(from, to int64, ch Channel, drop bool) bool {
	l := c.links[[2]int64{from, to}]
	if l == nil || c.cut[[2]int64{from, to}] && !drop {
		return false
	}
	quorumFirst := len(l.quorum) > 0 && (len(l.votes) == 0 || l.quorum[0].sent < l.votes[0].sent)
	var it item
	switch {
	case len(l.quorum) > 0 && (ch == QuorumChannel || ch == AnyChannel && quorumFirst):
		it, l.quorum = l.quorum[0], l.quorum[1:]
	case len(l.votes) > 0 && ch != QuorumChannel:
		it, l.votes = l.votes[0], l.votes[1:]
	default:
		return false
	}
	n := c.Node(to)
	if n == nil {
		c.logf("%d->%d lost: no such server: %s", from, to, describeItem(&it))
		return true
	}
	if drop || n.Peer == nil {
		c.logf("%d->%d dropped %s", from, to, describeItem(&it))
		if it.vote == nil && n.Peer != nil {
			// Losing a packet, or the close, is losing the connection
			// (TCP): both ends see it break.
			c.breakConn(from, to)
		}
		return true
	}
	switch {
	case it.vote != nil:
		c.logf("%d->%d %s", from, to, describeItem(&it))
		c.Step(n, zab.PeerVote{From: from, Notification: *it.vote})
	case c.conns.closedBy[[2]int64{to, from}] >= it.conn:
		// The receiver has closed this connection itself: a packet is
		// lost, and its close tells it nothing new.
		if !it.closed {
			c.logf("%d->%d lost on a closed connection: %s", from, to, describeItem(&it))
		}
	case it.closed:
		c.conns.closedBy[[2]int64{to, from}] = it.conn
		c.logf("%d->%d connection closed", from, to)
		c.Step(n, zab.PeerDisconnected{Peer: from})
	default:
		c.logf("%d->%d %s", from, to, describeItem(&it))
		c.invReceived(n, from, &it.packet.Packet)
		c.Step(n, zab.PeerPacket{From: from, Packet: it.packet.Packet, Snapshot: it.packet.Snapshot})
	}
	return true
}

// breakConn breaks the quorum connection between a and b: what is in
// flight either way is lost and both ends see it.
func (c *Cluster) breakConn(a, b int64) {
	c.logf("%d<->%d connection broken", a, b)
	for _, d := range [][2]int64{{a, b}, {b, a}} {
		c.linkOf(d[0], d[1]).quorum = nil
		if n := c.Node(d[0]); c.conns.close(d[0], d[1]) && n != nil {
			c.Step(n, zab.PeerDisconnected{Peer: d[1]})
		}
	}
}

// Stabilize delivers every message in flight, round after round in a
// fixed order (by sender, then receiver), until none is left or max
// deliveries were made. It reports how many it made.
func (c *Cluster) Stabilize(max int) int { return c.StabilizeOn(AnyChannel, max) }

// StabilizeOn is Stabilize on one channel only: with VoteChannel, elections
// run to their decisions while the quorum packets they lead to wait.
func (c *Cluster) StabilizeOn(ch Channel, max int) int {
	count := 0
	for count < max {
		moved := false
		for _, k := range c.sortedLinks() {
			if c.DeliverOn(k[0], k[1], ch, false) {
				moved = true
				count++
			}
		}
		if !moved {
			break
		}
	}
	return count
}

// InFlight returns the links (from, to) with something in flight, in
// order.
func (c *Cluster) InFlight() [][2]int64 {
	var out [][2]int64
	for _, k := range c.sortedLinks() {
		if l := c.links[k]; len(l.quorum) > 0 || len(l.votes) > 0 {
			out = append(out, k)
		}
	}
	return out
}

func (c *Cluster) sortedLinks() [][2]int64 {
	keys := make([][2]int64, 0, len(c.links))
	for k := range c.links {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int64) int {
		if a[0] != b[0] {
			return int(a[0] - b[0])
		}
		return int(a[1] - b[1])
	})
	return keys
}

// Advance moves the clock by d and ticks every member whose wakeup came.
func (c *Cluster) Advance(d time.Duration) {
	c.Now.Mono += d
	c.Now.Wall += d.Milliseconds()
	for _, n := range c.Nodes {
		if n.Peer != nil && n.Wakeup <= c.Now.Mono {
			c.Step(n, zab.Tick{})
		}
	}
}

// Run alternates Stabilize and Advance(step) for total virtual time.
func (c *Cluster) Run(total, step time.Duration) {
	for t := time.Duration(0); t < total; t += step {
		c.Stabilize(100000)
		c.Advance(step)
	}
	c.Stabilize(100000)
}

// ReleaseTo makes member id's log durable up to zxid only, keeping the
// hold.
func (c *Cluster) ReleaseTo(id, zxid int64) {
	n := c.Node(id)
	if zxid <= n.Durable || n.Peer == nil {
		return
	}
	n.Durable = min(zxid, n.lastLogged())
	c.logf("%d: log durable up to %s", id, hex(n.Durable))
	c.Step(n, zab.LogDurable{Zxid: n.Durable})
}

// ReleaseSnapshots makes member id's held snapshots durable and reports
// them, and ends the hold.
func (c *Cluster) ReleaseSnapshots(id int64) {
	n := c.Node(id)
	n.HoldSnapshots = false
	held := n.heldSnaps
	n.heldSnaps = nil
	for _, s := range held {
		n.Snapshots = append(n.Snapshots, s)
		c.logf("%d: snapshot at %s durable", id, hex(s.Zxid))
		c.Step(n, zab.SnapshotWritten{Zxid: s.Zxid})
	}
}

// Crash stops a member as a power failure would: appends not yet durable
// and snapshots being written or not yet durable are lost (and the disk
// is no longer held); its connections break.
func (c *Cluster) Crash(id int64) {
	n := c.Node(id)
	n.Peer = nil
	n.Log = slices.DeleteFunc(n.Log, func(t datatree.Txn) bool { return t.Header.Zxid > n.Durable })
	n.partial, n.heldSnaps = nil, nil
	n.snaps = zab.SnapJoiner{}
	n.Replies = nil
	n.Hold = false // the stalled writes are lost; the disk works after restart
	c.logf("%d: crashed (durable up to %s)", id, hex(n.Durable))
	for _, k := range c.sortedLinks() {
		if k[0] == id || k[1] == id {
			l := c.links[k]
			l.quorum, l.votes = nil, nil
		}
	}
	for _, o := range c.Nodes {
		if o.ID == id {
			continue
		}
		c.conns.close(id, o.ID)
		if c.conns.close(o.ID, id) && o.Peer != nil {
			c.Step(o, zab.PeerDisconnected{Peer: id})
		}
	}
}

// DamageLog cuts a crashed member's log after zxid, as recovery does when
// it finds a damaged record there, and tells its next start so.
func (c *Cluster) DamageLog(id int64, afterZxid int64, what string) {
	n := c.Node(id)
	n.Log = slices.DeleteFunc(n.Log, func(t datatree.Txn) bool { return t.Header.Zxid > afterZxid })
	n.Durable = min(n.Durable, afterZxid)
	n.damage = &zab.LogDamage{AfterZxid: afterZxid, What: what}
	c.logf("%d: log damaged after %s (%s)", id, hex(afterZxid), what)
}

// Restart starts a crashed member again from its disk.
func (c *Cluster) Restart(id int64) {
	c.logf("%d: restarting", id)
	c.start(c.Node(id))
}

// Hold stops a member's appends from becoming durable (a slow or stuck
// fsync) until Release.
func (c *Cluster) Hold(id int64) {
	c.Node(id).Hold = true
	c.logf("%d: disk held", id)
}

// Release makes everything a member appended durable (one fsync covering
// all of it), reports it, and lets later appends become durable at once.
func (c *Cluster) Release(id int64) {
	n := c.Node(id)
	n.Hold = false
	c.logf("%d: disk released", id)
	if n.Peer != nil {
		c.settle(n)
	}
}

// Partition cuts, from now on, all traffic between the groups (either
// way), as a network black hole does: nothing crosses, and no connection
// notices (TCP keeps retrying) until a member's own timers give up on
// its peers. What is sent across waits on its link until Heal, unless
// the receiver has closed that connection meanwhile.
func (c *Cluster) Partition(groups ...[]int64) {
	for i, g := range groups {
		for _, h := range groups[i+1:] {
			for _, a := range g {
				for _, b := range h {
					c.cut[[2]int64{a, b}], c.cut[[2]int64{b, a}] = true, true
				}
			}
		}
	}
}

// Heal ends every partition.
func (c *Cluster) Heal() { clear(c.cut) }

// Leader returns the id of the member that leads an established epoch,
// or 0.
func (c *Cluster) Leader() int64 {
	for _, n := range c.Nodes {
		if n.Peer != nil {
			if s := n.Peer.State(); s.Role == zab.RoleLeading && s.Phase == zab.PhaseBroadcast {
				return n.ID
			}
		}
	}
	return 0
}

// Status is one line per member: role, phase, epochs, last zxid, digest.
func (c *Cluster) Status() string {
	var b strings.Builder
	for _, n := range c.Nodes {
		if n.Peer == nil {
			fmt.Fprintf(&b, "%d: down (durable %s)\n", n.ID, hex(n.Durable))
			continue
		}
		s := n.Peer.State()
		acc, cur := n.Peer.Epochs()
		fmt.Fprintf(&b, "%d: %s %s leader=%d epoch=%d accepted=%d current=%d applied=%s logged=%s digest=%#x\n",
			n.ID, s.Role, s.Phase, s.Leader, s.Epoch, acc, cur, hex(n.Peer.LastZxid()), hex(n.lastLogged()), uint64(n.Peer.Digest()))
	}
	return b.String()
}

func (n *Node) lastLogged() int64 {
	if k := len(n.Log); k > 0 {
		return n.Log[k-1].Header.Zxid
	}
	return 0
}

func hex(z int64) string {
	if z < 0 {
		return fmt.Sprint(z)
	}
	return fmt.Sprintf("0x%x", z)
}

func describeItem(it *item) string {
	switch {
	case it.closed:
		return "close"
	case it.vote != nil:
		v := it.vote
		return fmt.Sprintf("vote %s leader=%d zxid=%s round=%d peerEpoch=%d", v.State, v.Leader, hex(v.Zxid), v.ElectionEpoch, v.PeerEpoch)
	}
	qp := &it.packet.Packet
	s := fmt.Sprintf("%s %s", qp.Type, hex(qp.Zxid))
	switch qp.Type {
	case wire.PacketProposal, wire.PacketInform:
		if t, err := zab.DecodeTxnEntry(qp.Data); err == nil {
			s += " " + describeTxn(&t)
		}
	case wire.PacketSnap:
		s += fmt.Sprintf(" (%d bytes of snapshot)", len(it.packet.Snapshot))
	case wire.PacketRequest:
		var fr wire.ForwardedRequest
		if wire.Unmarshal(qp.Data, &fr) == nil {
			s += fmt.Sprintf(" %s session=%#x cxid=%d", fr.Type, fr.SessionID, fr.Cxid)
		}
	case wire.PacketAckEpoch:
		var a wire.AckEpoch
		if wire.Unmarshal(qp.Data, &a) == nil {
			s += fmt.Sprintf(" currentEpoch=%d", a.CurrentEpoch)
		}
	case wire.PacketRevalidate:
		// The learner asks with the timeout; the leader answers whether the
		// session is valid. The two records differ in length.
		var rq wire.RevalidateRequest
		var rp wire.RevalidateReply
		if wire.Unmarshal(qp.Data, &rq) == nil {
			s += fmt.Sprintf(" session=%#x timeout=%d", rq.SessionID, rq.Timeout)
		} else if wire.Unmarshal(qp.Data, &rp) == nil {
			s += fmt.Sprintf(" session=%#x valid=%t", rp.SessionID, rp.Valid)
		}
	case wire.PacketPing:
		var pt wire.PingTouches
		if len(qp.Data) > 0 && wire.Unmarshal(qp.Data, &pt) == nil {
			for _, t := range pt.Touches {
				s += fmt.Sprintf(" touch=%#x", t.SessionID)
			}
		}
	}
	return s
}

func describeTxn(t *datatree.Txn) string {
	s := fmt.Sprintf("%s", t.Header.Type)
	switch b := t.Body.(type) {
	case *wire.CreateTxn:
		s += " " + b.Path
	case *wire.SetDataTxn:
		s += " " + b.Path
	case *wire.DeleteTxn:
		s += " " + b.Path
	case *wire.CreateSessionTxn:
		s += fmt.Sprintf(" session=%#x", t.Header.ClientID)
	case *wire.CloseSessionTxn:
		s += fmt.Sprintf(" session=%#x", t.Header.ClientID)
	}
	return s
}

// ClusterClient is a client connection to one member of a Cluster.
type ClusterClient struct {
	c       *Cluster
	Node    *Node
	Conn    zab.ConnID
	Session int64
	Passwd  []byte
	xid     int32
	gen     int // the member's incarnation the connection was opened to
}

// Connect opens a connection to member id and asks for a new session (or
// resumes session, with its password, if set).
func (c *Cluster) Connect(id int64, session int64, passwd []byte, timeoutMs int32) *ClusterClient {
	n := c.Node(id)
	c.nextConn++
	cl := &ClusterClient{c: c, Node: n, Conn: c.nextConn, Session: session, Passwd: passwd, gen: n.gen}
	if session == 0 {
		c.logf("%d: c%d connects for a new session", id, cl.Conn)
	} else {
		c.logf("%d: c%d connects to resume session %#x", id, cl.Conn, session)
	}
	c.Step(n, zab.ConnOpened{Conn: cl.Conn, Addr: "127.0.0.1"})
	if passwd == nil {
		passwd = make([]byte, sessions.PasswordLen)
	}
	c.Step(n, zab.ConnectReceived{Conn: cl.Conn, Req: wire.ConnectRequest{TimeOut: timeoutMs, SessionID: session, Passwd: passwd}})
	return cl
}

// Send sends a request and returns its xid.
func (cl *ClusterClient) Send(op wire.OpCode, body wire.Record) int32 {
	cl.xid++
	cl.SendXid(cl.xid, op, body)
	return cl.xid
}

// SendXid sends a request with the given xid (a ping's is wire.XidPing).
func (cl *ClusterClient) SendXid(xid int32, op wire.OpCode, body wire.Record) {
	s := fmt.Sprintf("%d: c%d request xid=%d %s", cl.Node.ID, cl.Conn, xid, op)
	if path := requestPath(body); path != "" {
		s += " " + path
	}
	if w, ok := body.(*wire.PathWatchRequest); ok && w.Watch {
		s += " watch"
	}
	cl.c.logf("%s", s)
	cl.c.Step(cl.Node, zab.RequestReceived{Conn: cl.Conn, Xid: xid, Op: op, Body: body})
}

// requestPath is the path a request body names, if any.
func requestPath(body wire.Record) string {
	switch b := body.(type) {
	case *wire.CreateRequest:
		return b.Path
	case *wire.SetDataRequest:
		return b.Path
	case *wire.PathVersionRequest:
		return b.Path
	case *wire.PathWatchRequest:
		return b.Path
	case *wire.PathRequest:
		return b.Path
	}
	return ""
}

// Take returns the messages addressed to this client since the last Take,
// formatted as zabtest.Format does, and learns the session from a connect
// response.
func (cl *ClusterClient) Take() []string {
	var out []string
	for _, m := range cl.TakeMessages() {
		out = append(out, Format(&m))
	}
	return out
}

// TakeMessages returns the messages addressed to this client since the
// last Take, and learns the session from a connect response.
func (cl *ClusterClient) TakeMessages() []zab.Message {
	if cl.Node.gen != cl.gen {
		return nil // the member restarted: the connection died with it
	}
	var out []zab.Message
	rest := cl.Node.Replies[:0]
	for _, m := range cl.Node.Replies {
		if m.Conn != cl.Conn {
			rest = append(rest, m)
			continue
		}
		if r, ok := m.Body.(*wire.ConnectResponse); ok && m.Kind == zab.Connect && r.TimeOut > 0 {
			cl.Session, cl.Passwd = r.SessionID, r.Passwd
		}
		out = append(out, m)
	}
	cl.Node.Replies = rest
	return out
}

// Up reports whether the member the client is connected to still runs
// the incarnation the connection was opened to.
func (cl *ClusterClient) Up() bool { return cl.Node.Peer != nil && cl.Node.gen == cl.gen }

// nodeLog reads a node's fake log for a leader's synchronization.
type nodeLog struct{ n *Node }

func (l nodeLog) ReadAfter(after, upTo int64) ([]datatree.Txn, bool) {
	log := l.n.Log
	i, found := slices.BinarySearchFunc(log, after, func(t datatree.Txn, z int64) int { return cmpZxid(t.Header.Zxid, z) })
	if !found && !(i == 0 && after == 0) {
		return nil, false
	}
	if found {
		i++
	}
	j, found := slices.BinarySearchFunc(log, upTo, func(t datatree.Txn, z int64) int { return cmpZxid(t.Header.Zxid, z) })
	if !found || j+1-i > l.n.LogReadLimit {
		return nil, false
	}
	return slices.Clone(log[i : j+1]), true
}

func cmpZxid(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// RequireAgreement fails the test if two running members that have
// applied the same zxid hold different trees (by digest) there: the
// cheapest check that no member applied a txn another did not.
func RequireAgreement(t TB, c *Cluster) {
	t.Helper()
	byZxid := map[int64]int64{}
	owner := map[int64]int64{}
	for _, n := range c.Nodes {
		if n.Peer == nil {
			continue
		}
		z, d := n.Peer.LastZxid(), n.Peer.Digest()
		if prev, ok := byZxid[z]; ok && prev != d {
			t.Fatalf("servers %d and %d both applied up to %s with different trees (digest %#x vs %#x)\n%s", owner[z], n.ID, hex(z), uint64(prev), uint64(d), c.Status())
		}
		byZxid[z], owner[z] = d, n.ID
	}
}
