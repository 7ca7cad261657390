package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

// serverSession is the Session of lines for txns the server issued itself.
const serverSession = "server"

// annotate completes the recorded lines from the server's txn log: each
// write gets its txn's time, each connect its createSession zxid and time,
// and each txn no client line accounts for (reaper deletes, expiries) becomes
// a server line placed before the first reply whose zxid shows it applied.
func annotate(lines []trace.Line, log []trace.LogEntry) []trace.Line {
	byZxid := map[int64]trace.LogEntry{}
	sessionOf := map[int64]int64{} // createSession zxid by session id
	for _, e := range log {
		byZxid[e.Header.Zxid] = e
		if e.Header.Type == wire.OpCreateSession {
			sessionOf[e.Header.ClientID] = e.Header.Zxid
		}
	}
	ids := map[string]int64{}
	claimed := map[int64]bool{}
	for i := range lines {
		l := &lines[i]
		if l.Op == "reconnect" {
			continue
		}
		if l.Op == "connect" {
			ids[l.Session] = l.Resp.SessionID
			if z, ok := sessionOf[l.Resp.SessionID]; ok {
				l.Zxid, l.Time = z, byZxid[z].Header.Time
				claimed[z] = true
			}
			continue
		}
		op, known := trace.OpCode(l.Op)
		if !known || !trace.IsWrite(op) {
			continue
		}
		e, ok := byZxid[l.Zxid]
		if !ok || e.Header.ClientID != ids[l.Session] {
			fmt.Fprintf(os.Stderr, "warning: %s %s at zxid %#x has no txn of its session in the log\n", l.Session, l.Op, l.Zxid)
			continue
		}
		l.Time = e.Header.Time
		claimed[l.Zxid] = true
	}
	var extra []trace.Line
	for _, e := range log {
		if !claimed[e.Header.Zxid] {
			extra = append(extra, serverLine(e))
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].Zxid < extra[j].Zxid })
	out := make([]trace.Line, 0, len(lines)+len(extra))
	for _, l := range lines {
		// Auth replies carry zxid 0 and say nothing about what was applied.
		for len(extra) > 0 && l.Zxid != 0 && extra[0].Zxid <= l.Zxid {
			out = append(out, extra[0])
			extra = extra[1:]
		}
		out = append(out, l)
	}
	return append(out, extra...)
}

func serverLine(e trace.LogEntry) trace.Line {
	l := trace.Line{Session: serverSession, Op: e.Header.Type.String(), Zxid: e.Header.Zxid, Time: e.Header.Time, Err: wire.ErrOK.String()}
	switch b := e.Body.(type) {
	case *wire.DeleteTxn:
		l.Req = &trace.Request{Path: b.Path}
	case *wire.ErrorTxn:
		l.Err = b.Err.String()
	}
	if e.Header.ClientID != 0 {
		l.Note = fmt.Sprintf("txn of session %#x", e.Header.ClientID)
	}
	return l
}
