package main

import (
	"fmt"
	"io"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// fatal is the zabtest.TB of a program: a harness failure ends the trace
// with an error instead of a test failure.
type fatal struct{ err error }

func (*fatal) Helper() {}
func (f *fatal) Fatalf(format string, args ...any) {
	f.err = fmt.Errorf(format, args...)
	panic(f)
}

// pipelineTracer prints, after each step of the scenario, what the Peer
// asked of its shell: txns appended to the log, the durable zxid the fake
// disk reported back, the zxid applied to the tree, and the messages
// written to connections (in zabtest's one-line format).
type pipelineTracer struct {
	w      io.Writer
	h      *zabtest.Harness
	logged int   // txns of h.Log already printed
	synced int64 // durable zxid already printed
}

func (t *pipelineTracer) step(title string, do func()) {
	fmt.Fprintf(t.w, "-- %s\n", title)
	do()
	for _, txn := range t.h.Log[t.logged:] {
		entry := wire.TxnEntry{Header: txn.Header, Body: txn.Body, Digest: &txn.Digest}
		fmt.Fprintf(t.w, "   append   %s %s\n", zxid(txn.Header.Zxid), describeTxn(&entry))
	}
	appended := len(t.h.Log) - t.logged
	t.logged = len(t.h.Log)
	if t.h.Durable > t.synced {
		covered := 0
		for _, txn := range t.h.Log {
			if z := txn.Header.Zxid; z > t.synced && z <= t.h.Durable {
				covered++
			}
		}
		fmt.Fprintf(t.w, "   durable  up to %s: one fsync for %d txn(s), reported as LogDurable\n", zxid(t.h.Durable), covered)
		t.synced = t.h.Durable
	} else if appended > 0 {
		fmt.Fprintf(t.w, "   (not durable yet: %d txn(s) wait for an fsync)\n", len(t.h.Pending()))
	}
	fmt.Fprintf(t.w, "   applied  up to %s\n", zxid(t.h.Peer.LastZxid()))
	for _, line := range t.h.Take() {
		fmt.Fprintf(t.w, "   out      %s\n", line)
	}
}

// renderPipeline drives zabd's Peer as a standalone server (an ensemble of
// one: it leads, in epoch 0, and a quorum is itself after its own fsync)
// through zabtest's fake disk, whose fsync the scenario holds back and
// releases.
func renderPipeline(w io.Writer) (err error) {
	tb := &fatal{}
	defer func() {
		if r := recover(); r != nil {
			if r != tb {
				panic(r)
			}
			err = fmt.Errorf("pipeline scenario: %w", tb.err)
		}
	}()
	h := zabtest.New(tb, zab.Config{ServerID: zab.StandaloneServerID}, 1)
	t := &pipelineTracer{w: w, h: h}
	var writer, reader *zabtest.Client
	t.step("c1 connects: a new session is a txn like any write", func() {
		writer = h.Open()
		writer.Connect(10000, 0)
	})
	connected := func(c *zabtest.Client) {
		m := &h.Effects[len(h.Effects)-1]
		r, ok := m.Body.(*wire.ConnectResponse)
		if m.Conn != c.Conn || !ok {
			tb.Fatalf("c%d: no connect response", c.Conn)
		}
		c.Session, c.Passwd, c.Timeout = r.SessionID, r.Passwd, r.TimeOut
	}
	connected(writer)
	t.step("c2 connects", func() {
		reader = h.Open()
		reader.Connect(10000, 0)
	})
	connected(reader)
	t.step(`c1: create /a "v1"`, func() { writer.Create("/a", "v1", wire.ModePersistent) })
	t.step("c2: getData /a, leaving a watch (a read: no txn, answered from the tree)", func() { reader.GetData("/a", true) })
	fmt.Fprintln(w, "-- (from here on the fake disk holds fsyncs back until told)")
	h.Hold()
	t.step(`c1: setData /a "v2"`, func() { writer.SetData("/a", "v2", -1) })
	t.step("c1: getData /a (waits behind c1's own write)", func() { writer.GetData("/a", false) })
	t.step(`c1: create /b "x"`, func() { writer.Create("/b", "x", wire.ModePersistent) })
	t.step("c2: exists /a (another session: answered at once, before the write)", func() { reader.Exists("/a", false) })
	t.step("the disk completes one fsync covering everything appended", func() { h.Release() })
	t.step("c2: getData /a (after its watch event, it sees v2)", func() { reader.GetData("/a", false) })
	return nil
}
