package sim

import (
	"fmt"
	"strings"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// Bugs are deliberately broken replica behaviours, switched on only to show
// that the simulator catches each of them (tests and `zabsim -bugs`). They
// are carried out by the simulator's server shell around an unmodified
// zab.Peer (see the functions below and docs/simulator.md): what a client or
// the disk sees is what a core with that bug would produce.
type Bugs struct {
	// ReplyBeforeFsync: the replica is told its txns are durable as soon as
	// they are appended, so it answers writes before the fsync.
	ReplyBeforeFsync bool
	// WatchAfterReply: a watch event is written after the reply that
	// follows it on its connection.
	WatchAfterReply bool
	// ExpireWithoutCloseTxn: closeSession txns are applied but never
	// logged, so a restart brings expired sessions and their ephemerals back.
	ExpireWithoutCloseTxn bool
	// ReadOvertakesWrite: a session's getData is evaluated when it arrives,
	// before that session's earlier writes are applied, and its (stale)
	// result sent in the reply's place.
	ReadOvertakesWrite bool
}

// bugSwitches names every switch, in a fixed order, for flags and reports.
var bugSwitches = []struct {
	name string
	on   func(*Bugs) *bool
}{
	{"reply-before-fsync", func(b *Bugs) *bool { return &b.ReplyBeforeFsync }},
	{"watch-after-reply", func(b *Bugs) *bool { return &b.WatchAfterReply }},
	{"expire-without-close-txn", func(b *Bugs) *bool { return &b.ExpireWithoutCloseTxn }},
	{"read-overtakes-write", func(b *Bugs) *bool { return &b.ReadOvertakesWrite }},
}

// BugNames lists the names ParseBugs accepts.
func BugNames() []string {
	names := make([]string, len(bugSwitches))
	for i, s := range bugSwitches {
		names[i] = s.name
	}
	return names
}

// ParseBugs reads a comma-separated list of bug names ("" is none).
func ParseBugs(list string) (Bugs, error) {
	var b Bugs
	if list == "" {
		return b, nil
	}
next:
	for _, name := range strings.Split(list, ",") {
		for _, s := range bugSwitches {
			if s.name == strings.TrimSpace(name) {
				*s.on(&b) = true
				continue next
			}
		}
		return b, fmt.Errorf("unknown bug %q (known: %s)", name, strings.Join(BugNames(), ", "))
	}
	return b, nil
}

// FormatBugs is the inverse of ParseBugs.
func FormatBugs(b Bugs) string {
	var on []string
	for _, s := range bugSwitches {
		if *s.on(&b) {
			on = append(on, s.name)
		}
	}
	return strings.Join(on, ",")
}

// watchAfterReply moves each notification behind the next reply on its
// connection: the bug WatchAfterReply.
func watchAfterReply(msgs []zab.Message) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Kind != zab.Reply || msgs[i].Header.Xid != wire.XidNotification {
			continue
		}
		for j := i + 1; j < len(msgs); j++ {
			if msgs[j].Conn == msgs[i].Conn && msgs[j].Kind == zab.Reply && msgs[j].Header.Xid >= 0 {
				ev := msgs[i]
				copy(msgs[i:j], msgs[i+1:j+1])
				msgs[j] = ev
				break
			}
		}
	}
}

// unloggedExpiry replaces the closeSession txn of an expiry (the server's
// own, cxid 0) by an error txn in what is logged: the bug
// ExpireWithoutCloseTxn. The replica applies the close; a replay does not.
func unloggedExpiry(t *datatree.Txn) {
	if t.Header.Type == wire.OpCloseSession && t.Header.Cxid == 0 {
		t.Header.Type = wire.OpError
		t.Body = &wire.ErrorTxn{Err: wire.ErrOK}
		t.Digest = wire.TxnDigest{}
	}
}

// isWrite reports whether op changes the tree (what a later read of the
// same session must wait for).
func isWrite(op wire.OpCode) bool {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL, wire.OpDelete,
		wire.OpSetData, wire.OpSetACL, wire.OpMulti, wire.OpCheck:
		return true
	}
	return false
}

// staleRead is a getData evaluated early for ReadOvertakesWrite.
type staleRead struct {
	zxid int64
	body wire.Record
	err  wire.ErrCode
}

// readEarly evaluates a getData against the tree as it is now, ignoring the
// session's pending writes: the bug ReadOvertakesWrite.
func readEarly(peer *zab.Peer, req *wire.PathWatchRequest) staleRead {
	tree := peer.Tree()
	data, stat, code := tree.GetData(req.Path, nil, false, 0)
	r := staleRead{zxid: tree.LastZxid(), err: code}
	if code == wire.ErrOK {
		r.body = &wire.GetDataResponse{Data: data, Stat: stat}
	}
	return r
}
