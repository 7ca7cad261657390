package zabtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// Restart crashes the Peer and starts a new one as a shell's recovery
// would: from the newest complete snapshot (or a fresh tree), then every
// durable txn after it replayed through the log's byte encoding. Txns
// never reported durable are lost, as after a power failure; every
// connection is gone.
func (h *Harness) Restart() error {
	durable := h.Log[:0:0]
	for _, t := range h.Log {
		if t.Header.Zxid <= h.Durable {
			durable = append(durable, t)
		}
	}
	h.Log = durable
	h.partial = nil

	restored := zab.Restored{}
	from := int64(0)
	if n := len(h.Snapshots); n > 0 {
		s := h.Snapshots[n-1]
		tree, err := datatree.Load(h.Cfg.Tree, wire.NewDecoder(s.Tree), s.Zxid)
		if err != nil {
			return fmt.Errorf("zabtest: loading snapshot 0x%x: %w", s.Zxid, err)
		}
		d := s.Digest
		restored = zab.Restored{Tree: tree, Sessions: s.Sessions, Digest: &d}
		from = s.Zxid
	}
	p, err := zab.New(h.Cfg, h.Now, rand.New(rand.NewPCG(h.seed, h.seed+1)), restored)
	if err != nil {
		return err
	}
	for i := range h.Log {
		if h.Log[i].Header.Zxid <= from {
			continue
		}
		txn, err := zab.DecodeTxnEntry(zab.EncodeTxnEntry(&h.Log[i]))
		if err != nil {
			return fmt.Errorf("zabtest: re-reading txn 0x%x: %w", h.Log[i].Header.Zxid, err)
		}
		if err := p.Replay(txn); err != nil {
			return err
		}
	}
	if err := p.ReplayDone(); err != nil {
		return err
	}
	h.Peer = p
	return nil
}
