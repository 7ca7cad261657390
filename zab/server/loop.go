package server

import (
	"math"
	"time"

	"github.com/zabd/zabd/datatree"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// maxEventsPerReady bounds how many events the loop steps before it collects
// Ready: enough to batch a burst of pipelined writes into one append (and
// one fsync), few enough to keep replies flowing.
const maxEventsPerReady = 256

// loop is the event loop: the only goroutine that touches the Peer and the
// connection table.
func (s *Server) loop() {
	defer close(s.loopDone)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var peerEvents <-chan zab.Event // nil when standalone: never ready
	if s.net != nil {
		peerEvents = s.net.Events()
	}
	s.flushReady(timer) // what Start asked for: an ensemble member's first votes
	for {
		select {
		case in := <-s.events:
			s.step(in)
			s.stepWaiting()
		case ev := <-peerEvents:
			s.stepPeer(ev)
			s.stepPeersWaiting(peerEvents)
		case j := <-s.disk.done:
			if err := s.m.DiskDone(s.now(), j); err != nil {
				s.fatal(err)
				s.shutdownLoop()
				return
			}
		case j := <-s.snapshots.done:
			s.m.SnapshotDone(s.now(), j)
		case <-timer.C:
			s.m.Peer.Step(s.now(), zab.Tick{})
		case fn := <-s.queries:
			fn()
			continue
		case <-s.stopping:
			s.shutdownLoop()
			return
		}
		s.flushReady(timer)
	}
}

// stepWaiting steps the events already waiting, up to maxEventsPerReady in
// all, so that their effects share one Ready.
func (s *Server) stepWaiting() {
	for n := 1; n < maxEventsPerReady; n++ {
		select {
		case in := <-s.events:
			s.step(in)
		default:
			return
		}
	}
}

// stepPeer feeds one event from the peer transport to the Peer.
func (s *Server) stepPeer(ev zab.Event) {
	switch e := ev.(type) {
	case zab.PeerPacket:
		s.measurePeerTraffic(nil, &e.Packet)
	case zab.PeerDisconnected:
		s.m.ConnectionGone(e.Peer) // what waited to go on it is lost with it
	}
	s.rec.received(ev)
	s.peer.Step(s.now(), ev)
}

// stepPeersWaiting steps the peer events already waiting, up to
// maxEventsPerReady in all, so that a burst of proposals shares one append.
func (s *Server) stepPeersWaiting(events <-chan zab.Event) {
	for n := 1; n < maxEventsPerReady; n++ {
		select {
		case ev := <-events:
			s.stepPeer(ev)
		default:
			return
		}
	}
}

// step feeds one connection event to the Peer, keeping the shell's table of
// connections and its counters.
func (s *Server) step(in inbound) {
	c := in.conn
	switch ev := in.ev.(type) {
	case zab.ConnOpened:
		s.conns[c.id] = c
		s.log.Info("connection opened", c.logAttrs()...)
	case zab.ConnClosed:
		delete(s.conns, c.id)
		s.log.Info("connection closed", append(c.logAttrs(), "session", sessionHex(c.session))...)
	case zab.RequestReceived:
		s.stats.received++
		c.inflight[ev.Xid] = inflightRequest{at: time.Now(), op: ev.Op}
		c.lastOp, c.hasLastOp, c.lastCxid = ev.Op, true, ev.Xid
	case zab.ConnectReceived:
		s.stats.received++
		s.measured.connectionRequests.Add(1)
	}
	s.peer.Step(s.now(), in.ev)
}

// flushReady carries out the Peer's effects (member.Member.Flush: the
// Ready contract in zab/member/ready.go) and arms the timer for its next
// Tick.
func (s *Server) flushReady(timer *time.Timer) {
	wakeup := s.m.Flush()
	if err := s.rec.flush(); err != nil {
		s.log.Warn(err.Error())
	}
	wait := wakeup - s.now().Mono
	if wait < time.Millisecond {
		wait = time.Millisecond
	}
	timer.Reset(wait)
}

// roleChanged logs the member's new role (one line per change of role or
// leader), with how long the election took, and measures it.
func (s *Server) roleChanged(st zab.SoftState) {
	prev := s.role
	s.role = st
	now := time.Now()
	if st.Elections > prev.Elections && st.Role != zab.RoleLooking {
		s.electionStart = now // a whole election within one Ready
	}
	if s.net != nil {
		s.measureRole(prev, st, now)
	}
	if !s.roleSince.IsZero() && st.Role == prev.Role && st.Leader == prev.Leader {
		if st.Phase != prev.Phase {
			s.log.Info("phase: "+st.Phase.String(), "role", st.Role.String(), "epoch", st.Epoch, "since_role_change", now.Sub(s.roleSince).Round(time.Millisecond))
		}
		return
	}
	s.roleSince = now
	attrs := []any{"phase", st.Phase.String(), "epoch", st.Epoch}
	switch st.Role {
	case zab.RoleLooking:
		s.electionStart = now
		s.log.Info("role: looking for a leader", attrs...)
	case zab.RoleLeading:
		s.log.Info("role: leading", append(attrs, "election_took", now.Sub(s.electionStart).Round(time.Millisecond))...)
	default:
		s.log.Info("role: "+st.Role.String(), append(attrs, "leader", st.Leader, "election_took", now.Sub(s.electionStart).Round(time.Millisecond))...)
	}
}

// logSessionTxns logs the sessions that txns create and end. An end that no
// connection of the session asked for is an expiry.
func (s *Server) logSessionTxns(txns []datatree.Txn) {
	for i := range txns {
		h := &txns[i].Header
		switch h.Type {
		case wire.OpCreateSession:
			timeout := int32(0)
			if body, ok := txns[i].Body.(*wire.CreateSessionTxn); ok {
				timeout = body.TimeOut
			}
			s.log.Info("session created", "session", sessionHex(h.ClientID), "timeout_ms", timeout, "zxid", zxidHex(h.Zxid))
		case wire.OpCloseSession:
			if s.closeRequested(h.ClientID) {
				s.log.Info("session closed", "session", sessionHex(h.ClientID), "zxid", zxidHex(h.Zxid))
			} else {
				s.log.Info("session expired", "session", sessionHex(h.ClientID), "zxid", zxidHex(h.Zxid))
			}
		}
	}
}

// closeRequested reports whether a connection of the session sent
// closeSession.
func (s *Server) closeRequested(session int64) bool {
	for _, c := range s.conns {
		if c.session == session && c.hasLastOp && c.lastOp == wire.OpCloseSession {
			return true
		}
	}
	return false
}

// dispatch queues one message on its connection.
func (s *Server) dispatch(m *zab.Message, now time.Time) {
	c := s.conns[m.Conn]
	if c == nil {
		return // the connection went while its reply was being made
	}
	switch m.Kind {
	case zab.Close:
		c.closeAfterQueued()
		return
	case zab.Connect:
		if resp, ok := m.Body.(*wire.ConnectResponse); ok && resp.TimeOut > 0 {
			if c.session == 0 || c.session != resp.SessionID {
				s.log.Info("connection bound to session", append(c.logAttrs(), "session", sessionHex(resp.SessionID), "timeout_ms", resp.TimeOut)...)
			}
			c.session, c.timeout = resp.SessionID, time.Duration(resp.TimeOut)*time.Millisecond
		}
	case zab.Reply:
		frame := m.AppendFrame(nil)
		s.measureReply(c, m, len(frame)-4, now)
		if m.Header.Xid != wire.XidNotification {
			s.stats.sent++
			if m.Header.Zxid > 0 {
				c.lastZxid = m.Header.Zxid
			}
			c.lastResp = now
		}
		c.enqueue(frame)
		return
	}
	c.enqueue(m.AppendFrame(nil))
}

// shutdownLoop ends the loop's part of a stop: the member stops, the disk
// job in flight finishes and the log closes; every connection closes.
func (s *Server) shutdownLoop() {
	s.m.Stop()
	if err := s.rec.close(); err != nil {
		s.log.Warn("runRecordFile: " + err.Error())
	}
	if s.net != nil {
		s.net.Close()
	}
	close(s.disk.jobs)
	close(s.snapshots.in)
	for _, c := range s.conns {
		c.nc.Close()
	}
	s.wg.Wait()
	if err := s.m.Log.Close(); err != nil {
		s.log.Error("closing the txn log", "err", err)
	}
}

// latencyStats keeps min/avg/max of request latencies in ms.
type latencyStats struct {
	count, total, min, max int64
}

func (l *latencyStats) add(ms int64) {
	if l.count == 0 || ms < l.min {
		l.min = ms
	}
	l.max = max(l.max, ms)
	l.count++
	l.total += ms
}

// avg is the mean rounded half-up to 4 decimals, as ZooKeeper reports it.
func (l *latencyStats) avg() float64 {
	if l.count == 0 {
		return 0
	}
	return math.Floor(float64(l.total)/float64(l.count)*1e4+0.5) / 1e4
}

// serverStats are the server-wide counters of srvr and mntr that srst
// resets.
type serverStats struct {
	received, sent int64
	latency        latencyStats
	responseSize   bufferStats
}

func (st *serverStats) reset() { *st = serverStats{responseSize: newBufferStats()} }
