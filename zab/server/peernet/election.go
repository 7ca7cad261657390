package peernet

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/peerlink"
)

// electionPeer is the election link with one other member: at most one
// connection, dialled by the larger id, carrying notifications both ways,
// as peerlink.Election rules it.
type electionPeer struct {
	n    *Net
	peer Member
	wake chan struct{} // capacity 1: something to do

	mu   sync.Mutex
	link *peerlink.Election[net.Conn, []byte] // frames of notifications
}

// electionPeer returns the link with id, starting its sender on first use.
func (n *Net) electionPeer(id int64) *electionPeer {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.elections[id]
	if p == nil {
		p = &electionPeer{n: n, peer: n.members[id], wake: make(chan struct{}, 1),
			link: peerlink.NewElection[net.Conn, []byte](n.cfg.Self, id)}
		n.elections[id] = p
		n.wg.Add(1)
		go func() { defer n.wg.Done(); p.run() }()
	}
	return p
}

func (p *electionPeer) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// SendVotes queues the Peer's notifications; it never blocks.
func (n *Net) SendVotes(votes []zab.Vote) {
	for i := range votes {
		v := &votes[i]
		if _, err := n.peerMember(v.To); err != nil {
			n.log.Warn("election: not sending a notification", "to", v.To, "why", err.Error())
			continue
		}
		frame := wire.AppendFrame(nil, &v.Notification)
		p := n.electionPeer(v.To)
		p.mu.Lock()
		p.link.Send(frame)
		p.mu.Unlock()
		p.signal()
	}
}

// run is the link's send goroutine: it connects when there is something to
// send (or a smaller id asked to be called back) and writes the pending
// notification.
func (p *electionPeer) run() {
	for {
		select {
		case <-p.wake:
		case <-p.n.ctx.Done():
			return
		}
		for {
			p.mu.Lock()
			step, frame, conn := p.link.Next()
			p.mu.Unlock()
			if step == peerlink.Idle {
				break
			}
			if step == peerlink.Dial {
				var wait time.Duration
				switch p.connect() {
				case connected:
					continue
				case unreachable:
					p.mu.Lock()
					wait = p.link.DialFailed()
					p.mu.Unlock()
				case askedBack:
					wait = peerlink.CallBackWait
				}
				// A smaller id waits for the call back (the wake comes
				// with it); a failed dial waits longer each time.
				if !p.n.sleep(wait, p.wake) {
					return
				}
				continue
			}
			conn.SetWriteDeadline(time.Now().Add(p.n.cfg.WriteTimeout))
			if _, err := conn.Write(frame); err != nil {
				p.mu.Lock()
				p.link.Unsent(frame) // sent on the next connection
				p.mu.Unlock()
				p.drop(conn, fmt.Errorf("write: %w", err))
			}
		}
	}
}

// dialOutcome is what an attempt to connect achieved.
type dialOutcome uint8

const (
	unreachable dialOutcome = iota // the dial or the handshake failed
	askedBack                      // we are the smaller id: the peer will dial us
	connected                      // we are the larger id: the connection is ours
)

// connect dials the peer's election port and sends the handshake. Only a
// larger id keeps the connection; a smaller one closes it, and the peer
// dials back.
func (p *electionPeer) connect() dialOutcome {
	n := p.n
	nc, err := n.dial(p.peer.ElectionAddr)
	if err != nil {
		n.log.Debug("election: cannot reach server", "server", p.peer.ID, "addr", p.peer.ElectionAddr, "err", err)
		if errors.Is(err, syscall.ECONNREFUSED) {
			// Nothing listens there: the peer's process is gone, so the
			// election need not wait for its vote (a timeout proves
			// nothing of the kind and is not reported).
			n.push(zab.PeerUnreachable{Peer: p.peer.ID})
		}
		return unreachable
	}
	hello := wire.InitialMessage{ProtocolVersion: wire.ElectionProtocolV2, ServerID: n.cfg.Self, Address: n.self.ElectionAddr}
	nc.SetWriteDeadline(time.Now().Add(n.cfg.WriteTimeout))
	if _, err := nc.Write(wire.Marshal(&hello)); err != nil {
		n.log.Debug("election: handshake failed", "server", p.peer.ID, "err", err)
		n.untrack(nc)
		return unreachable
	}
	if !p.link.DialSurvives() {
		// The larger id's connection is the one that survives: it will
		// dial us when it reads this.
		n.untrack(nc)
		return askedBack
	}
	p.install(nc, bufio.NewReader(nc))
	return connected
}

// install makes nc the link's connection, replacing any other, and starts
// reading it from br (which holds whatever followed the handshake).
func (p *electionPeer) install(nc net.Conn, br *bufio.Reader) {
	p.mu.Lock()
	old, replaced := p.link.Installed(nc)
	p.mu.Unlock()
	if replaced {
		p.n.untrack(old)
	}
	p.n.log.Info("election: connected", "server", p.peer.ID, "remote", nc.RemoteAddr().String())
	p.n.wg.Add(1)
	go func() { defer p.n.wg.Done(); p.read(nc, br) }()
	p.signal()
}

// drop closes nc and settles the link as peerlink.Election.Dropped says
// (the last notification may go again on a new connection).
func (p *electionPeer) drop(nc net.Conn, err error) {
	p.mu.Lock()
	current := p.link.Dropped(nc, peerClosed(err))
	p.mu.Unlock()
	p.n.untrack(nc)
	if !current || p.n.ctx.Err() != nil {
		return
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		p.n.log.Info("election: connection closed", "server", p.peer.ID)
	} else {
		p.n.log.Warn("election: dropping the connection", "server", p.peer.ID, "err", err)
	}
	p.signal()
}

// read delivers the notifications that arrive on nc.
func (p *electionPeer) read(nc net.Conn, br *bufio.Reader) {
	fr := wire.NewFrameReader(br, wire.ElectionMaxMessage)
	for {
		frame, err := fr.ReadFrame()
		if err != nil {
			p.drop(nc, err)
			return
		}
		var note wire.Notification
		if err := wire.Unmarshal(frame, &note); err != nil {
			p.drop(nc, fmt.Errorf("notification: %w", err))
			return
		}
		if err := p.checkConfig(&note); err != nil {
			p.drop(nc, err)
			return
		}
		p.mu.Lock()
		p.link.Heard(nc)
		p.mu.Unlock()
		if !p.n.push(zab.PeerVote{From: p.peer.ID, Notification: note}) {
			return
		}
	}
}

// peerClosed reports whether a read ended because the peer closed the
// connection or its host reset it.
func peerClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// checkConfig refuses a notification whose server list disagrees with
// ours (ids, addresses and roles; client addresses may differ).
func (p *electionPeer) checkConfig(note *wire.Notification) error {
	ours := p.n.cfg.QuorumConfig
	if note.Version <= 1 || len(note.Config) == 0 || len(ours) == 0 {
		return nil
	}
	if serverList(note.Config) == serverList(ours) {
		return nil
	}
	return fmt.Errorf("its server list disagrees with ours: theirs %q, ours %q", note.Config, ours)
}

// serverList reduces a dynamic config to its server lines without client
// addresses, one per line, in order.
func serverList(cfg []byte) string {
	var b strings.Builder
	for _, line := range strings.Split(string(cfg), "\n") {
		if key, val, ok := strings.Cut(line, "="); ok && strings.HasPrefix(key, "server.") {
			addr, _, _ := strings.Cut(val, ";")
			b.WriteString(key + "=" + addr + "\n")
		}
	}
	return b.String()
}

// acceptElection handles a connection to our election port: the
// handshake, then ZooKeeper's rule — a connection from a smaller id is
// closed and we dial back; one from a larger id is kept.
func (n *Net) acceptElection(nc net.Conn) {
	remote := nc.RemoteAddr().String()
	br := bufio.NewReader(nc)
	nc.SetReadDeadline(time.Now().Add(n.cfg.HandshakeTimeout))
	hello, err := readInitialMessage(br)
	nc.SetReadDeadline(time.Time{})
	if err != nil {
		n.log.Warn("election: dropping a connection: bad handshake", "remote", remote, "err", err)
		n.untrack(nc)
		return
	}
	m, err := n.peerMember(hello.ServerID)
	if err == nil {
		err = checkAddress(hello.Address, m.ElectionAddr)
	}
	if err != nil {
		n.log.Warn("election: refusing a connection", "remote", remote, "server", hello.ServerID, "address", hello.Address, "why", err.Error())
		n.untrack(nc)
		return
	}
	p := n.electionPeer(m.ID)
	if m.ID < n.cfg.Self {
		n.untrack(nc)
		p.mu.Lock()
		old, had := p.link.CallBackAsked()
		p.mu.Unlock()
		if had {
			// The peer believes it has no connection: ours is stale.
			n.untrack(old)
		}
		p.signal()
		return
	}
	p.install(nc, br)
}

// checkAddress compares the election address a peer announces (several
// joined by "|" in protocol 2) with the one our configuration lists for
// it: one must name the same port on a host that resolves to a common
// address.
func checkAddress(announced, configured string) error {
	for _, a := range strings.Split(announced, "|") {
		if sameAddress(a, configured) {
			return nil
		}
	}
	return fmt.Errorf("it announces election address %s, our configuration lists %s", announced, configured)
}

func sameAddress(a, b string) bool {
	if a == b {
		return true
	}
	ha, pa, err1 := net.SplitHostPort(a)
	hb, pb, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil || pa != pb {
		return false
	}
	ipsA, err1 := net.LookupHost(ha)
	ipsB, err2 := net.LookupHost(hb)
	if err1 != nil || err2 != nil {
		return false
	}
	for _, x := range ipsA {
		for _, y := range ipsB {
			if x == y {
				return true
			}
		}
	}
	return false
}
