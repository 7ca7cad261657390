package zab_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// benchEnsemble is three Peers wired in memory: every quorum packet and
// vote is delivered at once, in order, every append is durable at once,
// and packets are encoded and decoded as a shell would (so that the cost
// of the wire is counted). It measures the core alone.
type benchEnsemble struct {
	peers   [4]*zab.Peer // by id, 1..3
	now     zab.Time
	queue   []benchDelivery
	conns   []benchConn
	buf     []byte
	replies int
}

type benchDelivery struct {
	to int64
	ev zab.Event
}

type benchConn struct {
	member int64
	id     zab.ConnID
	path   string
}

func newBenchEnsemble(b *testing.B) *benchEnsemble {
	be := &benchEnsemble{now: zab.Time{Mono: time.Hour, Wall: 1_700_000_000_000}}
	ens := &zab.Ensemble{Voters: []int64{1, 2, 3}, Election: election.Config{FinalizeWait: time.Millisecond}}
	for id := int64(1); id <= 3; id++ {
		p, err := zab.New(zab.Config{ServerID: id, Ensemble: ens, CommittedWindow: 500}, be.now, rand.New(rand.NewPCG(uint64(id), 1)), zab.Restored{})
		if err != nil {
			b.Fatal(err)
		}
		be.peers[id] = p
		p.Start()
	}
	for range 200 {
		be.settle()
		if be.leader() != 0 {
			break
		}
		be.now.Mono += 10 * time.Millisecond
		for id := int64(1); id <= 3; id++ {
			be.peers[id].Step(be.now, zab.Tick{})
		}
	}
	if be.leader() == 0 {
		b.Fatal("no leader")
	}
	for i := range benchSessions {
		member := int64(i%3 + 1)
		c := benchConn{member: member, id: zab.ConnID(i + 1), path: fmt.Sprintf("/s%03d", i)}
		be.conns = append(be.conns, c)
		be.peers[member].Step(be.now, zab.ConnOpened{Conn: c.id, Addr: "127.0.0.1"})
		be.peers[member].Step(be.now, zab.ConnectReceived{Conn: c.id, Req: wire.ConnectRequest{TimeOut: 30000}})
		be.settle()
		be.peers[member].Step(be.now, zab.RequestReceived{Conn: c.id, Xid: 1, Op: wire.OpCreate, Body: &wire.CreateRequest{Path: c.path, Data: make([]byte, 100), ACL: wire.OpenACLUnsafe}})
		be.settle()
	}
	return be
}

func (be *benchEnsemble) leader() int64 {
	for id := int64(1); id <= 3; id++ {
		if s := be.peers[id].State(); s.Role == zab.RoleLeading && s.Phase == zab.PhaseBroadcast {
			return id
		}
	}
	return 0
}

// settle carries out every member's Ready and delivers what they send
// until nothing moves.
func (be *benchEnsemble) settle() {
	for {
		for id := int64(1); id <= 3; id++ {
			be.collect(id)
		}
		if len(be.queue) == 0 {
			return
		}
		q := be.queue
		be.queue = nil
		for _, d := range q {
			be.peers[d.to].Step(be.now, d.ev)
		}
	}
}

func (be *benchEnsemble) collect(id int64) {
	p := be.peers[id]
	for {
		rd := p.Ready()
		be.replies += len(rd.Messages)
		for _, v := range rd.Votes {
			be.queue = append(be.queue, benchDelivery{to: v.To, ev: zab.PeerVote{From: id, Notification: v.Notification}})
		}
		for i := range rd.PeerMessages {
			m := &rd.PeerMessages[i]
			if m.Kind != zab.PeerSend {
				continue
			}
			// Through the wire: encode, decode.
			be.buf = wire.NewEncoder(be.buf).Bytes()
			e := wire.NewEncoder(be.buf)
			m.Packet.Encode(e)
			be.buf = e.Bytes()
			var qp wire.QuorumPacket
			if err := wire.Unmarshal(be.buf, &qp); err != nil {
				panic(err)
			}
			be.queue = append(be.queue, benchDelivery{to: m.To, ev: zab.PeerPacket{From: id, Packet: qp, Snapshot: m.Snapshot}})
		}
		if len(rd.Appends) == 0 {
			return
		}
		p.Step(be.now, zab.LogDurable{Zxid: rd.Appends[len(rd.Appends)-1].Header.Zxid})
	}
}

// BenchmarkEnsembleWrites: 100 sessions spread over a 3-member ensemble
// (two thirds of them on followers, whose writes are forwarded), each
// with one 100-byte setData in flight; a round of 100 is proposed,
// acknowledged, committed, applied on every member and answered. The
// figure is committed writes per second for the whole ensemble, on one
// core.
func BenchmarkEnsembleWrites(b *testing.B) {
	be := newBenchEnsemble(b)
	data := make([]byte, 100)
	b.ReportAllocs()
	b.ResetTimer()
	xid := int32(1)
	for i := 0; i < b.N; i++ {
		s := i % benchSessions
		if s == 0 {
			xid++
		}
		c := be.conns[s]
		be.peers[c.member].Step(be.now, zab.RequestReceived{Conn: c.id, Xid: xid, Op: wire.OpSetData, Body: &wire.SetDataRequest{Path: c.path, Data: data, Version: -1}})
		if s == benchSessions-1 || i == b.N-1 {
			be.settle()
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}
