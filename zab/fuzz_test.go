package zab_test

import (
	"strings"
	"testing"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// FuzzRequestFrames feeds arbitrary request frames to an established
// session: whatever the bytes, the Peer answers or closes, never panics,
// and a second session is still served afterwards.
func FuzzRequestFrames(f *testing.F) {
	for _, rec := range []struct {
		xid  int32
		op   wire.OpCode
		body wire.Record
	}{
		{1, wire.OpCreate, &wire.CreateRequest{Path: "/a", Data: []byte("x"), ACL: wire.OpenACLUnsafe, Flags: wire.ModeEphemeralSequential}},
		{2, wire.OpGetData, &wire.PathWatchRequest{Path: "/a", Watch: true}},
		{3, wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{{Type: wire.OpCheck, Body: &wire.PathVersionRequest{Path: "/", Version: 3}}}}},
		{6, wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{{Type: wire.OpDelete, Body: &wire.PathVersionRequest{Version: -1}, NullPath: true}}}},
		{7, wire.OpMultiRead, &wire.MultiRequest{Ops: []wire.MultiOp{{Type: wire.OpGetData, Body: &wire.PathWatchRequest{Path: "/"}},
			{Type: wire.OpGetData, Body: &wire.PathWatchRequest{}, NullPath: true}}}},
		{wire.XidSetWatches, wire.OpSetWatches2, &wire.SetWatchesRequest{Persistent: true, DataWatches: []string{"/a"}}},
		{wire.XidAuth, wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}},
		{4, wire.OpSync, &wire.PathRequest{Path: "/"}},
		{5, wire.OpCloseSession, &wire.Empty{}},
	} {
		hdr := wire.RequestHeader{Xid: rec.xid, Type: rec.op}
		f.Add(append(wire.Marshal(&hdr), wire.Marshal(rec.body)...))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		h := zabtest.New(t, zab.Config{ServerID: 1}, 1)
		a := h.Session(10000)
		if ev, ok := zab.DecodeRequest(a.Conn, frame); ok {
			h.Step(ev)
			h.Step(ev) // the same frame twice: retries and duplicates
		}
		b := h.Session(10000)
		b.Exists("/", false)
		if got := h.Take(); len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "c2 reply xid=1 ") {
			t.Fatalf("the other session was not served after the frame: %q", got)
		}
	})
}

// FuzzDecodeTxnEntry: any bytes either fail to decode or give a txn that
// encodes back to bytes that decode to the same txn, and replaying it never
// panics. The one change a round trip may make is jute's: a string holding a
// character beyond the BMP is written as two surrogates and read back as two
// U+FFFD (see wire's javastring.go), so the first round may change such a
// txn, and from the second round on nothing changes.
func FuzzDecodeTxnEntry(f *testing.F) {
	seed := []datatree.Txn{
		{Header: wire.TxnHeader{ClientID: 5, Cxid: 1, Zxid: 1, Time: 9, Type: wire.OpCreateSession}, Body: &wire.CreateSessionTxn{TimeOut: 4000}},
		{Header: wire.TxnHeader{ClientID: 5, Cxid: 2, Zxid: 2, Time: 9, Type: wire.OpCreate}, Body: &wire.CreateTxn{Path: "/x", Data: []byte("d"), ACL: wire.OpenACLUnsafe, ParentCVersion: 1}, Digest: wire.TxnDigest{Version: 2, TreeDigest: 77}},
		{Header: wire.TxnHeader{ClientID: 5, Cxid: 3, Zxid: 3, Time: 9, Type: wire.OpError}, Body: &wire.ErrorTxn{Err: wire.ErrNoNode}},
		{Header: wire.TxnHeader{ClientID: 5, Zxid: 4, Time: 9, Type: wire.OpCloseSession}, Body: &wire.CloseSessionTxn{Paths2Delete: []string{"/x"}}},
	}
	for i := range seed {
		f.Add(zab.EncodeTxnEntry(&seed[i]))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		txn, err := zab.DecodeTxnEntry(b)
		if err != nil {
			return
		}
		first := zab.EncodeTxnEntry(&txn)
		again, err := zab.DecodeTxnEntry(first)
		if err != nil {
			t.Fatalf("re-encoded txn does not decode: %v", err)
		}
		second := zab.EncodeTxnEntry(&again)
		if string(second) != string(first) && !holdsBeyondBMP(b) {
			t.Fatalf("txn without a character beyond the BMP changed across a round trip: %x -> %x", first, second)
		}
		third, err := zab.DecodeTxnEntry(second)
		if err != nil {
			t.Fatalf("twice re-encoded txn does not decode: %v", err)
		}
		if string(zab.EncodeTxnEntry(&third)) != string(second) {
			t.Fatalf("txn changed across a second round trip: %x", second)
		}
		h := zabtest.New(t, zab.Config{ServerID: 1}, 1)
		_ = h.Peer.Replay(txn) // an error is fine; a panic is not
	})
}

// holdsBeyondBMP reports whether b holds a well-formed UTF-8 encoding of a
// character beyond the BMP: the only thing jute does not write back as read.
func holdsBeyondBMP(b []byte) bool {
	for _, r := range string(b) {
		if r > 0xffff {
			return true
		}
	}
	return false
}
