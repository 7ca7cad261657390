package sim

import (
	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/wire"
)

// The witness is the run's committed txns in delivery order, each named by
// the request it came from (see linearizability.Witness): the history
// checkers try that order first and search only when it does not explain
// the history, so runs with tens of writes of unknown outcome are decided
// in linear time. The checkers trust nothing in it: an order that does not
// explain every reply under their rules is dropped.
//
// Each server remembers what it logged under every zxid (the latest txn,
// since a truncated zxid may be logged again with another txn); when a
// server delivers a zxid first (invariant.Config.FirstDelivered), the txn it logged
// there joins the witness.

// loggedTxn is what a server remembers of a txn it logged: the header
// fields the witness names it by (kept raw, as every server logs every
// txn: the witness's strings are made once, at delivery).
type loggedTxn struct {
	session int64
	cxid    int32
	op      wire.OpCode
	path    string // deleteContainer: the node the server reaps
}

func loggedTxnOf(t *datatree.Txn) loggedTxn {
	l := loggedTxn{session: t.Header.ClientID, cxid: t.Header.Cxid, op: t.Header.Type}
	if d, ok := t.Body.(*wire.DeleteTxn); ok && t.Header.Type == wire.OpDeleteContainer {
		l.path = d.Path
	}
	return l
}

// delivered adds the txn s logged under zxid z to the witness, as z is
// delivered for the first time.
func (w *world) delivered(s *server, z int64) {
	if t, ok := s.witnessed.get(z); ok {
		w.witness = append(w.witness, linearizability.WitnessTxn{
			Zxid: linearizability.Hex64(z), Session: linearizability.Hex64(t.session), Xid: t.cxid, Op: t.op.String(), Path: t.path,
		})
	}
}
