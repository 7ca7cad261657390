package peernet

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/peerlink"
)

// errQueueFull is why a peer that fell too far behind loses its connection.
var errQueueFull = errors.New("send queue full: the peer does not keep up")

// quorumPeer is the quorum link with one other member: at most one
// connection at a time (ours to our leader, or our learner's to us), a
// bounded queue of what the Peer sent it, and a send goroutine.
type quorumPeer struct {
	n    *Net
	peer Member
	wake chan struct{} // capacity 1

	// deliver serializes this peer's events into the Net's channel, so
	// that a connection's loss is reported before anything its successor
	// carries. Lock order: deliver, then mu.
	deliver sync.Mutex

	mu      sync.Mutex
	queue   []zab.PeerMessage
	backlog peerlink.Backlog // counts queue
	conn    *quorumConn
}

// quorumConn is one connection of a quorum link.
type quorumConn struct {
	nc net.Conn
	w  *bufio.Writer // the send goroutine's
	// done: the connection is closed and its end settled — either the
	// Peer asked for it (no event), or its loss was reported once.
	// Guarded by the peer's mu.
	done bool
	// why, if set, is the reason the connection was closed from our side
	// (its queue overflowed), reported in place of the read or write
	// error that the close causes. Guarded by the peer's mu.
	why error
}

func (n *Net) quorumPeer(id int64) *quorumPeer {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.quorums[id]
	if p == nil {
		p = &quorumPeer{n: n, peer: n.members[id], wake: make(chan struct{}, 1)}
		n.quorums[id] = p
		n.wg.Add(1)
		go func() { defer n.wg.Done(); p.run() }()
	}
	return p
}

func (p *quorumPeer) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// SendPeer queues the Peer's quorum messages, in order per peer; it never
// blocks. A peer whose queue would pass MaxQueuedBytes loses its
// connection and what was queued (peerlink.Backlog). A SNAP's stream goes as its pieces come
// (zab.PeerSnapshotPart), written after their SNAP as the bytes that
// follow it.
func (n *Net) SendPeer(msgs []zab.PeerMessage) {
	for i := range msgs {
		m := msgs[i]
		if _, err := n.peerMember(m.To); err != nil {
			n.log.Warn("quorum: not sending", "to", m.To, "packet", m.Packet.Type.String(), "why", err.Error())
			continue
		}
		p := n.quorumPeer(m.To)
		p.mu.Lock()
		if p.backlog.Overflows(&m, n.cfg.MaxQueuedBytes) {
			clear(p.queue)
			p.queue = p.queue[:0]
			p.backlog.Reset()
			if c := p.conn; c != nil && c.why == nil {
				// Its reader or writer reports the loss; closing
				// also ends a write the peer does not read.
				c.why = errQueueFull
				c.nc.Close()
			}
		}
		p.queue = append(p.queue, m)
		p.backlog.Add(&m)
		p.mu.Unlock()
		p.signal()
	}
}

// run is the link's send goroutine.
func (p *quorumPeer) run() {
	for {
		select {
		case <-p.wake:
		case <-p.n.ctx.Done():
			return
		}
		for p.sendNext() {
		}
	}
}

// sendNext carries out the next queued message; false when the queue is
// empty (everything written has been flushed) or the Net is closing.
func (p *quorumPeer) sendNext() bool {
	p.mu.Lock()
	if len(p.queue) == 0 {
		p.mu.Unlock()
		return false
	}
	m := p.queue[0]
	p.queue[0] = zab.PeerMessage{}
	p.queue = p.queue[1:]
	p.backlog.Remove(&m)
	c := p.conn
	more := len(p.queue) > 0
	p.mu.Unlock()
	switch {
	case m.Kind == zab.PeerClose:
		if c != nil {
			p.closeAsked(c)
		}
		return true
	case m.Packet.Type == wire.PacketFollowerInfo || m.Packet.Type == wire.PacketObserverInfo:
		// A learner introduces itself on a new connection to its leader.
		if c != nil {
			p.closeAsked(c)
		}
		if c = p.dialLeader(); c == nil {
			return p.n.ctx.Err() == nil
		}
	case c == nil:
		// The connection this was meant for is gone (and reported, or
		// closed as asked): what was sent on it is lost with it.
		p.n.log.Debug("quorum: no connection, dropping", "server", p.peer.ID, "packet", m.Packet.Type.String())
		return true
	}
	if err := p.write(c, &m, more); err != nil {
		p.lost(c, err)
	}
	return true
}

// write encodes one message on c; it flushes unless more is queued.
func (p *quorumPeer) write(c *quorumConn, m *zab.PeerMessage, more bool) error {
	c.nc.SetWriteDeadline(time.Now().Add(p.n.cfg.WriteTimeout))
	if m.Kind != zab.PeerSnapshotPart { // a part is more of the SNAP's stream
		if _, err := c.w.Write(wire.Marshal(&m.Packet)); err != nil {
			return fmt.Errorf("write %s: %w", m.Packet.Type, err)
		}
	}
	if _, err := c.w.Write(m.Snapshot); err != nil {
		return fmt.Errorf("write the snapshot after SNAP: %w", err)
	}
	if more && c.w.Buffered() < c.w.Size()/2 {
		return nil
	}
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", m.Packet.Type, err)
	}
	return nil
}

// dialLeader opens a connection to the peer's quorum port, trying again
// as peerlink.LeaderDial says; it returns nil, after reporting the loss, if the
// leader cannot be reached, or nil at once if the Peer has given up on it
// meanwhile (a PeerClose is queued).
func (p *quorumPeer) dialLeader() *quorumConn {
	n := p.n
	attempts := peerlink.StartLeaderDial(n.now(), n.cfg.LeaderDialWindow)
	for {
		nc, err := n.dial(p.peer.QuorumAddr)
		if err == nil {
			c := &quorumConn{nc: nc, w: bufio.NewWriterSize(nc, 64<<10)}
			p.install(c, errors.New("replaced by our connection to it as our leader"))
			n.log.Info("quorum: connected to leader", "server", p.peer.ID, "addr", p.peer.QuorumAddr)
			n.wg.Add(1)
			go func() { defer n.wg.Done(); p.read(c, bufio.NewReaderSize(nc, 64<<10)) }()
			return c
		}
		if n.ctx.Err() != nil || p.closeQueued() {
			return nil
		}
		wait, again := attempts.Failed(n.now())
		if !again {
			n.log.Warn("quorum: cannot reach leader", "server", p.peer.ID, "addr", p.peer.QuorumAddr, "err", err)
			p.deliver.Lock()
			n.push(zab.PeerDisconnected{Peer: p.peer.ID})
			p.deliver.Unlock()
			return nil
		}
		if !n.sleep(wait, nil) {
			return nil
		}
	}
}

// closeQueued reports whether the Peer has asked to close the link since.
func (p *quorumPeer) closeQueued() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.queue {
		if p.queue[i].Kind == zab.PeerClose {
			return true
		}
	}
	return false
}

// closeAsked closes c as the Peer asked: no event.
func (p *quorumPeer) closeAsked(c *quorumConn) {
	p.mu.Lock()
	c.done = true
	if p.conn == c {
		p.conn = nil
	}
	p.mu.Unlock()
	c.w.Flush()
	p.n.untrack(c.nc)
}

// lost ends c after a failure, reporting PeerDisconnected once, unless the
// Peer closed it or it was already settled.
func (p *quorumPeer) lost(c *quorumConn, err error) {
	p.deliver.Lock()
	defer p.deliver.Unlock()
	p.lostLocked(c, err)
}

func (p *quorumPeer) lostLocked(c *quorumConn, err error) {
	p.mu.Lock()
	settled := c.done
	c.done = true
	if p.conn == c {
		p.conn = nil
	}
	if c.why != nil {
		err = c.why
	}
	p.mu.Unlock()
	p.n.untrack(c.nc)
	if settled || p.n.ctx.Err() != nil {
		return
	}
	if errors.Is(err, io.EOF) {
		p.n.log.Info("quorum: connection closed by peer", "server", p.peer.ID)
	} else {
		p.n.log.Warn("quorum: dropping the connection", "server", p.peer.ID, "err", err)
	}
	p.n.push(zab.PeerDisconnected{Peer: p.peer.ID})
}

// read delivers the packets that arrive on c, until it fails or is
// replaced.
func (p *quorumPeer) read(c *quorumConn, br *bufio.Reader) {
	for {
		qp, snap, err := p.n.readQuorumPacket(br)
		if err != nil {
			p.lost(c, err)
			return
		}
		if !p.deliverFrom(c, zab.PeerPacket{From: p.peer.ID, Packet: qp, Snapshot: snap}) {
			return
		}
	}
}

// deliverFrom pushes ev if c is still the link's connection.
func (p *quorumPeer) deliverFrom(c *quorumConn, ev zab.Event) bool {
	p.deliver.Lock()
	defer p.deliver.Unlock()
	p.mu.Lock()
	current := p.conn == c
	p.mu.Unlock()
	if !current {
		p.n.untrack(c.nc)
		return false
	}
	return p.n.push(ev)
}

// readQuorumPacket reads one packet and, after a SNAP, the snapshot.
func (n *Net) readQuorumPacket(br *bufio.Reader) (wire.QuorumPacket, []byte, error) {
	qp, err := readPacket(br, n.cfg.MaxField)
	if err != nil {
		return qp, nil, err
	}
	if qp.Type != wire.PacketSnap {
		return qp, nil, nil
	}
	snap, err := readSnapshotStream(br, n.cfg.MaxField, n.cfg.MaxSnapshot)
	return qp, snap, err
}

// acceptQuorum handles a learner's connection to our quorum port: its
// first packet must be FOLLOWERINFO or OBSERVERINFO from a member; the
// connection replaces any earlier connection of that learner, and its
// packets go to the core at once (the core holds a learner that arrives
// while the member still looks: zab/hold.go).
func (n *Net) acceptQuorum(nc net.Conn) {
	remote := nc.RemoteAddr().String()
	br := bufio.NewReaderSize(nc, 64<<10)
	nc.SetReadDeadline(time.Now().Add(n.cfg.HandshakeTimeout))
	qp, _, err := n.readQuorumPacket(br)
	nc.SetReadDeadline(time.Time{})
	var info wire.LearnerInfo
	switch {
	case err != nil:
	case qp.Type != wire.PacketFollowerInfo && qp.Type != wire.PacketObserverInfo:
		err = fmt.Errorf("its first packet is %s, not FOLLOWERINFO or OBSERVERINFO", qp.Type)
	default:
		if err = wire.Unmarshal(qp.Data, &info); err != nil {
			err = fmt.Errorf("its LearnerInfo: %w", err)
		} else {
			_, err = n.peerMember(info.ServerID)
		}
	}
	if err != nil {
		n.log.Warn("quorum: dropping a connection", "remote", remote, "err", err)
		n.untrack(nc)
		return
	}
	p := n.quorumPeer(info.ServerID)
	c := &quorumConn{nc: nc, w: bufio.NewWriterSize(nc, 64<<10)}
	n.log.Info("quorum: learner connected", "server", info.ServerID, "remote", remote, "as", qp.Type.String())
	p.install(c, errors.New("replaced by the learner's new connection"))
	if p.deliverFrom(c, zab.PeerPacket{From: info.ServerID, Packet: qp}) {
		p.read(c, br)
	}
}

// install makes c the link's connection. One it replaces is reported lost
// (unless already settled) before anything from c can be delivered.
func (p *quorumPeer) install(c *quorumConn, why error) {
	p.deliver.Lock()
	defer p.deliver.Unlock()
	p.mu.Lock()
	old := p.conn
	p.conn = c
	p.mu.Unlock()
	if old != nil {
		p.lostLocked(old, why)
	}
}
