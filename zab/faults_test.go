package zab_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// faultDriver runs an ensemble through a random schedule of deliveries,
// drops, ticks, crashes, restarts, partitions, held durability and client
// writes, with the invariants checked after every step; then it heals
// everything and checks that the ensemble recovers (liveness).
type faultDriver struct {
	t       *rapid.T
	c       *zabtest.Cluster
	clients []*faultClient
	// acked are the paths whose create a client saw succeed.
	acked []string
	cut   bool
}

// faultClient is one client: at most one connection, writes in flight.
type faultClient struct {
	id        int
	cl        *zabtest.ClusterClient
	connected bool
	next      int
	pending   map[int32]string // xid -> path created
}

func newFaultDriver(t *rapid.T) *faultDriver {
	voters := rapid.SampledFrom([]int{3, 3, 5}).Draw(t, "voters")
	observers := rapid.IntRange(0, 1).Draw(t, "observers")
	window := rapid.SampledFrom([]int{3, 500}).Draw(t, "committedWindow")
	snapCount := rapid.SampledFrom([]int{8, 100000}).Draw(t, "snapCount")
	seed := rapid.Uint64Range(1, 1<<20).Draw(t, "seed")
	c := zabtest.NewCluster(t, zabtest.ClusterConfig{Voters: voters, Observers: observers, Tweak: func(id int64, cfg *zab.Config) {
		cfg.CommittedWindow = window
		cfg.SnapCount = snapCount
	}}, seed)
	c.CheckInvariants()
	d := &faultDriver{t: t, c: c}
	for i := range 3 {
		d.clients = append(d.clients, &faultClient{id: i, pending: map[int32]string{}})
	}
	return d
}

// step draws one action and carries it out.
func (d *faultDriver) step() {
	t, c := d.t, d.c
	switch a := rapid.IntRange(0, 99).Draw(t, "action"); {
	case a < 30:
		links := c.InFlight()
		if len(links) == 0 {
			c.Advance(100 * time.Millisecond)
			break
		}
		l := rapid.SampledFrom(links).Draw(t, "link")
		c.Deliver(l[0], l[1], rapid.IntRange(0, 24).Draw(t, "drop") == 0)
	case a < 45:
		// A calm spell: whatever is in flight moves, in order, for a while.
		c.Stabilize(rapid.IntRange(1, 300).Draw(t, "burst"))
		c.Advance(50 * time.Millisecond)
	case a < 52:
		c.Advance(rapid.SampledFrom([]time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond, time.Second}).Draw(t, "advance"))
	case a < 77:
		d.clientAction(d.clients[rapid.IntRange(0, len(d.clients)-1).Draw(t, "client")])
	case a < 80:
		if up := d.up(); len(up) > 0 {
			c.Crash(rapid.SampledFrom(up).Draw(t, "crash"))
		}
	case a < 86:
		if down := d.down(); len(down) > 0 {
			c.Restart(rapid.SampledFrom(down).Draw(t, "restart"))
		}
	case a < 89:
		if d.cut {
			c.Heal()
			d.cut = false
			break
		}
		var g1, g2 []int64
		for _, n := range c.Nodes {
			if rapid.Bool().Draw(t, fmt.Sprintf("side%d", n.ID)) {
				g1 = append(g1, n.ID)
			} else {
				g2 = append(g2, n.ID)
			}
		}
		c.Partition(g1, g2)
		d.cut = true
	case a < 96:
		n := c.Node(rapid.Int64Range(1, int64(len(c.Nodes))).Draw(t, "hold"))
		if n.Hold {
			c.Release(n.ID)
		} else {
			n.Hold = true
		}
	default:
		n := c.Node(rapid.Int64Range(1, int64(len(c.Nodes))).Draw(t, "holdSnapshots"))
		if n.HoldSnapshots {
			c.ReleaseSnapshots(n.ID)
		} else {
			n.HoldSnapshots = true
		}
	}
	d.readReplies()
}

func (d *faultDriver) up() []int64 {
	var out []int64
	for _, n := range d.c.Nodes {
		if n.Peer != nil {
			out = append(out, n.ID)
		}
	}
	return out
}

func (d *faultDriver) down() []int64 {
	var out []int64
	for _, n := range d.c.Nodes {
		if n.Peer == nil {
			out = append(out, n.ID)
		}
	}
	return out
}

// clientAction connects a client that has no live connection, or sends a
// write on a connected one.
func (d *faultDriver) clientAction(fc *faultClient) {
	if fc.cl == nil || !fc.cl.Up() {
		up := d.up()
		if len(up) == 0 {
			return
		}
		fc.reset()
		fc.cl = d.c.Connect(rapid.SampledFrom(up).Draw(d.t, "connect"), 0, nil, 4000)
		return
	}
	if !fc.connected {
		return
	}
	fc.next++
	path := fmt.Sprintf("/c%d-%d", fc.id, fc.next)
	xid := fc.cl.Send(wire.OpCreate, &wire.CreateRequest{Path: path, Data: []byte(path), ACL: wire.OpenACLUnsafe})
	fc.pending[xid] = path
}

func (fc *faultClient) reset() {
	fc.cl, fc.connected = nil, false
	clear(fc.pending)
}

// readReplies takes every client's replies: a successful create is
// acknowledged; a close ends the connection (its pending writes are of
// unknown outcome).
func (d *faultDriver) readReplies() {
	for _, fc := range d.clients {
		if fc.cl == nil {
			continue
		}
		if !fc.cl.Up() {
			fc.reset()
			continue
		}
		for _, m := range fc.cl.TakeMessages() {
			switch m.Kind {
			case zab.Connect:
				if r := m.Body.(*wire.ConnectResponse); r.TimeOut > 0 {
					fc.connected = true
				}
			case zab.Close:
				fc.reset()
			case zab.Reply:
				if path, ok := fc.pending[m.Header.Xid]; ok {
					delete(fc.pending, m.Header.Xid)
					if m.Header.Err == wire.ErrOK {
						d.acked = append(d.acked, path)
					}
				}
			}
			if fc.cl == nil {
				break
			}
		}
	}
}

// recover ends every fault and checks that the ensemble serves again:
// one established leader followed by every member, the same tree
// everywhere, and every acknowledged write in it.
func (d *faultDriver) recover() {
	c := d.c
	c.Heal()
	for _, n := range c.Nodes {
		if n.Peer == nil {
			c.Restart(n.ID)
		}
		if n.Hold {
			c.Release(n.ID)
		}
		if n.HoldSnapshots {
			c.ReleaseSnapshots(n.ID)
		}
	}
	// 60 s of a fair random schedule: every message in flight is
	// delivered, in a random order across links, while the clock moves
	// by random steps. A lockstep schedule (every link in turn, the clock
	// in fixed steps) can keep symmetric members electing in step forever
	// — no election is live under every schedule — so liveness is asked
	// of a schedule with the jitter a real network has.
	seed := rapid.Uint64().Draw(d.t, "recoverySeed")
	rng := rand.New(rand.NewPCG(seed, seed))
	for end := c.Now.Mono + 60*time.Second; c.Now.Mono < end; {
		for range 1 + rng.IntN(20) {
			links := c.InFlight()
			if len(links) == 0 {
				break
			}
			l := links[rng.IntN(len(links))]
			c.Deliver(l[0], l[1], false)
		}
		c.Advance(time.Duration(1+rng.IntN(60)) * time.Millisecond)
	}
	if n := c.Stabilize(20000); n == 20000 {
		d.fatal("the members keep exchanging messages without time passing")
	}
	c.Stabilize(20000)
	d.readReplies()
	leader := c.Leader()
	if leader == 0 {
		d.fatal("no leader 60 s after the faults ended")
	}
	ref := c.Node(leader).Peer
	for _, n := range c.Nodes {
		st := n.Peer.State()
		if st.Phase != zab.PhaseBroadcast || st.Leader != leader {
			d.fatal("server %d is not serving under leader %d 60 s after the faults ended", n.ID, leader)
		}
		if n.Peer.LastZxid() != ref.LastZxid() || n.Peer.Digest() != ref.Digest() {
			d.fatal("server %d's tree differs from the leader's", n.ID)
		}
		for _, path := range d.acked {
			if _, err := n.Peer.Tree().Exists(path, false, 0); err != wire.ErrOK {
				d.fatal("server %d lost %s, whose create was acknowledged: %v", n.ID, path, err)
			}
		}
	}
}

// fatal fails the run with the members' status, their notices and the end
// of the trace.
func (d *faultDriver) fatal(format string, args ...any) {
	c := d.c
	tail := func(l []string, n int) string { return strings.Join(l[max(0, len(l)-n):], "\n") }
	d.t.Fatalf("%s\n%s\nnotices:\n%s\ntrace:\n%s", fmt.Sprintf(format, args...), c.Status(), tail(c.Notices, 30), tail(c.Trace, 120))
}
