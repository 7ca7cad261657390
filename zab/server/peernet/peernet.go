package peernet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/peerlink"
)

// Member is one server of the ensemble, as the configuration lists it.
type Member struct {
	ID           int64
	QuorumAddr   string // host:port of its quorum (leader–learner) port
	ElectionAddr string // host:port of its election port
	Observer     bool
}

// Defaults of Config's timing and limits.
const (
	// DefaultDialTimeout is ZooKeeper's cnxTO (zookeeper.cnxTimeout).
	DefaultDialTimeout = peerlink.DefaultDialTimeout
	// DefaultWriteTimeout bounds one write to a peer that does not read.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultHandshakeTimeout bounds the wait for an accepted connection's
	// first message (the InitialMessage, or FOLLOWERINFO).
	DefaultHandshakeTimeout = 5 * time.Second
	// DefaultLeaderDialWindow is how long a learner keeps dialling its
	// leader before it reports the connection lost.
	DefaultLeaderDialWindow = peerlink.DefaultLeaderDialWindow
	// DefaultMaxQueuedBytes bounds what waits to be sent to one peer on
	// the quorum port (peerlink.Backlog).
	DefaultMaxQueuedBytes = peerlink.DefaultMaxQueuedBytes
	// DefaultEventBuffer is the capacity of the Events channel.
	DefaultEventBuffer = 1024
)

// Config configures a Net; zero fields take the defaults above.
type Config struct {
	Self    int64
	Members []Member // every member, this one included
	// QuorumConfig is this member's server list as ZooKeeper prints it
	// (zoo.cfg dynamic syntax): a notification whose list disagrees is
	// refused.
	QuorumConfig []byte
	Log          *slog.Logger
	// QuorumListener and ElectionListener, if set, are used instead of
	// listening on this member's addresses.
	QuorumListener, ElectionListener net.Listener
	// TLS, if set, secures the quorum and election connections.
	TLS *TLS

	MaxField         int // a packet's buffer or string; DefaultMaxField
	MaxSnapshot      int // the snapshot stream after SNAP; DefaultMaxSnapshot
	MaxQueuedBytes   int
	DialTimeout      time.Duration
	WriteTimeout     time.Duration
	HandshakeTimeout time.Duration
	LeaderDialWindow time.Duration
	EventBuffer      int
}

func (c *Config) fillDefaults() {
	setDefault(&c.MaxField, DefaultMaxField)
	setDefault(&c.MaxSnapshot, DefaultMaxSnapshot)
	setDefault(&c.MaxQueuedBytes, DefaultMaxQueuedBytes)
	setDefault(&c.DialTimeout, DefaultDialTimeout)
	setDefault(&c.WriteTimeout, DefaultWriteTimeout)
	setDefault(&c.HandshakeTimeout, DefaultHandshakeTimeout)
	setDefault(&c.LeaderDialWindow, DefaultLeaderDialWindow)
	setDefault(&c.EventBuffer, DefaultEventBuffer)
	if c.Log == nil {
		c.Log = slog.Default()
	}
}

func setDefault[T int | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Net is one member's peer transport. Start it, read Events, and hand it
// the Peer's Votes and PeerMessages; Close stops it.
type Net struct {
	cfg     Config
	log     *slog.Logger
	self    Member
	members map[int64]Member

	quorumLn, electionLn net.Listener
	events               chan zab.Event
	ctx                  context.Context // cancelled by Close
	started              time.Time       // the origin of now
	cancel               context.CancelFunc
	wg                   sync.WaitGroup

	mu        sync.Mutex
	conns     map[net.Conn]struct{} // every open connection, for Close
	elections map[int64]*electionPeer
	quorums   map[int64]*quorumPeer
	closed    bool
}

// New checks the configuration and listens on this member's quorum and
// election ports (or takes the listeners given); Start serves them.
func New(cfg Config) (*Net, error) {
	cfg.fillDefaults()
	n := &Net{cfg: cfg, log: cfg.Log, started: time.Now(), members: map[int64]Member{}, events: make(chan zab.Event, cfg.EventBuffer),
		conns:     map[net.Conn]struct{}{},
		elections: map[int64]*electionPeer{}, quorums: map[int64]*quorumPeer{}}
	for _, m := range cfg.Members {
		if _, dup := n.members[m.ID]; dup {
			return nil, fmt.Errorf("peernet: server %d listed twice", m.ID)
		}
		n.members[m.ID] = m
	}
	self, ok := n.members[cfg.Self]
	if !ok {
		return nil, fmt.Errorf("peernet: this server (%d) is not among the members", cfg.Self)
	}
	n.self = self
	n.ctx, n.cancel = context.WithCancel(context.Background())
	var err error
	if n.quorumLn, err = listen(cfg.QuorumListener, self.QuorumAddr); err != nil {
		return nil, fmt.Errorf("peernet: quorum port: %w", err)
	}
	if n.electionLn, err = listen(cfg.ElectionListener, self.ElectionAddr); err != nil {
		n.quorumLn.Close()
		return nil, fmt.Errorf("peernet: election port: %w", err)
	}
	return n, nil
}

func listen(given net.Listener, addr string) (net.Listener, error) {
	if given != nil {
		return given, nil
	}
	return net.Listen("tcp", addr)
}

// QuorumAddr and ElectionAddr are where the Net listens.
func (n *Net) QuorumAddr() net.Addr   { return n.quorumLn.Addr() }
func (n *Net) ElectionAddr() net.Addr { return n.electionLn.Addr() }

// Events delivers what peers send, in order per peer.
func (n *Net) Events() <-chan zab.Event { return n.events }

// Start accepts connections and starts a send goroutine per peer's
// election link.
func (n *Net) Start() {
	n.goAccept(n.electionLn, "election port", n.acceptElection)
	n.goAccept(n.quorumLn, "quorum port", n.acceptQuorum)
	for _, id := range n.otherIDs() {
		n.electionPeer(id)
	}
}

func (n *Net) otherIDs() []int64 {
	var ids []int64
	for id := range n.members {
		if id != n.cfg.Self {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// goAccept runs an accept loop on ln, handling each connection in its own
// goroutine.
func (n *Net) goAccept(ln net.Listener, port string, handle func(net.Conn)) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				if !errors.Is(err, net.ErrClosed) && n.ctx.Err() == nil {
					n.log.Error("peer listener failed", "addr", ln.Addr().String(), "err", err)
				}
				return
			}
			if !n.track(nc) {
				return
			}
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				sc, ok := n.secureAccepted(nc, port)
				if !ok || !n.retrack(nc, sc) {
					n.untrack(nc)
					return
				}
				handle(sc)
			}()
		}
	}()
}

// track registers a connection so that Close closes it; false (and the
// connection closed) once the Net is closing.
func (n *Net) track(nc net.Conn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		nc.Close()
		return false
	}
	n.conns[nc] = struct{}{}
	return true
}

// retrack puts sc, the connection readied over nc, in nc's place; false
// once the Net is closing.
func (n *Net) retrack(nc, sc net.Conn) bool {
	if sc == nc {
		return true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	delete(n.conns, nc)
	n.conns[sc] = struct{}{}
	return true
}

func (n *Net) untrack(nc net.Conn) {
	n.mu.Lock()
	delete(n.conns, nc)
	n.mu.Unlock()
	nc.Close()
}

// dial connects to addr, tracked; ctx ends it early on Close.
func (n *Net) dial(addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: n.cfg.DialTimeout}
	nc, err := d.DialContext(n.ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if !n.track(nc) {
		return nil, net.ErrClosed
	}
	sc, err := n.secureDialled(nc, addr)
	if err != nil {
		n.untrack(nc)
		return nil, err
	}
	if !n.retrack(nc, sc) {
		n.untrack(nc)
		return nil, net.ErrClosed
	}
	return sc, nil
}

// push hands an event to the event loop; false once the Net is closing.
func (n *Net) push(ev zab.Event) bool {
	select {
	case n.events <- ev:
		return true
	case <-n.ctx.Done():
		return false
	}
}

// Close stops the Net: listeners and connections close, and every
// goroutine it started has ended when Close returns.
func (n *Net) Close() {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	n.closed = true
	conns := make([]net.Conn, 0, len(n.conns))
	for nc := range n.conns {
		conns = append(conns, nc)
	}
	n.mu.Unlock()
	n.cancel()
	n.quorumLn.Close()
	n.electionLn.Close()
	for _, nc := range conns {
		nc.Close()
	}
	n.wg.Wait()
}

// member returns the member with id, if the configuration lists it and it
// is not this server.
func (n *Net) peerMember(id int64) (Member, error) {
	if id == n.cfg.Self {
		return Member{}, fmt.Errorf("it claims our own id %d", id)
	}
	m, ok := n.members[id]
	if !ok {
		return Member{}, fmt.Errorf("server %d is not a member of the ensemble (members: %v)", id, n.allIDs())
	}
	return m, nil
}

func (n *Net) allIDs() []int64 {
	return append(n.otherIDs(), n.cfg.Self)
}

// sleep waits d, or less if wake fires; false once the Net is closing.
// now is the time since the Net was made, the clock peerlink's rules take.
func (n *Net) now() time.Duration { return time.Since(n.started) }

func (n *Net) sleep(d time.Duration, wake <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	case <-n.ctx.Done():
		return false
	}
	return true
}
