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
// server delivers a zxid first (invariants.applied), the txn it logged
// there joins the witness.

// witnessTxn names txn t for the witness.
func witnessTxn(t *datatree.Txn) linearizability.WitnessTxn {
	w := linearizability.WitnessTxn{
		Zxid:    linearizability.Hex64(t.Header.Zxid),
		Session: linearizability.Hex64(t.Header.ClientID),
		Xid:     t.Header.Cxid,
		Op:      t.Header.Type.String(),
	}
	if d, ok := t.Body.(*wire.DeleteTxn); ok && t.Header.Type == wire.OpDeleteContainer {
		w.Path = d.Path
	}
	return w
}

// delivered adds the txn s logged under zxid z to the witness, as z is
// delivered for the first time.
func (w *world) delivered(s *server, z int64) {
	if t, ok := s.witnessed.get(z); ok {
		w.witness = append(w.witness, t)
	}
}
