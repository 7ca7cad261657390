package zab_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// benchPeer is a Peer with 100 established sessions, one node each, and
// durability that completes as soon as it is asked for.
type benchPeer struct {
	p      *zab.Peer
	now    zab.Time
	conns  []zab.ConnID
	paths  []string
	encode bool
	buf    []byte
}

const benchSessions = 100

func newBenchPeer(b *testing.B, encode bool) *benchPeer {
	now := zab.Time{Mono: time.Hour, Wall: 1_700_000_000_000}
	p, err := zab.New(zab.Config{ServerID: 1}, now, rand.New(rand.NewPCG(1, 1)), zab.Restored{})
	if err != nil {
		b.Fatal(err)
	}
	bp := &benchPeer{p: p, now: now, encode: encode}
	for i := range benchSessions {
		c := zab.ConnID(i + 1)
		p.Step(now, zab.ConnOpened{Conn: c, Addr: "127.0.0.1"})
		p.Step(now, zab.ConnectReceived{Conn: c, Req: wire.ConnectRequest{TimeOut: 30000}})
		bp.conns = append(bp.conns, c)
		bp.paths = append(bp.paths, fmt.Sprintf("/s%03d", i))
		bp.flush()
		p.Step(now, zab.RequestReceived{Conn: c, Xid: 1, Op: wire.OpCreate, Body: &wire.CreateRequest{Path: bp.paths[i], Data: make([]byte, 100), ACL: wire.OpenACLUnsafe}})
		bp.flush()
	}
	return bp
}

// flush carries out a Ready as a shell would: the appends are "durable" at
// once (and encoded, if asked), the messages encoded into one buffer.
func (bp *benchPeer) flush() {
	for {
		rd := bp.p.Ready()
		if bp.encode {
			bp.buf = bp.buf[:0]
			for i := range rd.Messages {
				bp.buf = rd.Messages[i].AppendFrame(bp.buf)
			}
			for i := range rd.Appends {
				bp.buf = append(bp.buf, zab.EncodeTxnEntry(&rd.Appends[i])...)
			}
		}
		if len(rd.Appends) == 0 {
			return
		}
		bp.p.Step(bp.now, zab.LogDurable{Zxid: rd.Appends[len(rd.Appends)-1].Header.Zxid})
	}
}

// run sends b.N requests round-robin over the sessions, one per session in
// flight, made durable (group commit) once per round.
func (bp *benchPeer) run(b *testing.B, op wire.OpCode, body func(i int) wire.Record) {
	b.ReportAllocs()
	b.ResetTimer()
	xid := int32(1)
	for i := 0; i < b.N; i++ {
		s := i % benchSessions
		if s == 0 {
			xid++
		}
		bp.p.Step(bp.now, zab.RequestReceived{Conn: bp.conns[s], Xid: xid, Op: op, Body: body(s)})
		if s == benchSessions-1 || i == b.N-1 {
			bp.flush()
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkPipelineWrites: 100-byte setData through the whole pipeline
// (prepare, propose, durable, commit, apply, reply), 100 sessions.
func BenchmarkPipelineWrites(b *testing.B) {
	for _, encode := range []bool{false, true} {
		b.Run(fmt.Sprintf("encode=%v", encode), func(b *testing.B) {
			bp := newBenchPeer(b, encode)
			data := make([]byte, 100)
			bp.run(b, wire.OpSetData, func(s int) wire.Record {
				return &wire.SetDataRequest{Path: bp.paths[s], Data: data, Version: -1}
			})
		})
	}
}

// BenchmarkPipelineReads: getData of a 100-byte node, 100 sessions.
func BenchmarkPipelineReads(b *testing.B) {
	for _, encode := range []bool{false, true} {
		b.Run(fmt.Sprintf("encode=%v", encode), func(b *testing.B) {
			bp := newBenchPeer(b, encode)
			bodies := make([]wire.Record, benchSessions)
			for s := range bodies {
				bodies[s] = &wire.PathWatchRequest{Path: bp.paths[s]}
			}
			bp.run(b, wire.OpGetData, func(s int) wire.Record { return bodies[s] })
		})
	}
}
