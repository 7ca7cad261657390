package storage

import (
	"encoding/binary"
	"fmt"
)

// A txn entry is what ZooKeeper logs and what a PROPOSAL carries: the jute
// TxnHeader, the txn body for the header's type and optionally the
// TxnDigest (wire.TxnEntry encodes and wire.DecodeTxnEntry decodes one).
// The log handles entries as bytes, so the shell can log the bytes it got
// in a proposal without re-encoding them.

// txnHeaderLen is the encoded size of a wire.TxnHeader; its zxid is at 12.
const txnHeaderLen = 8 + 4 + 8 + 8 + 4

// EntryZxid returns the zxid of the header at the start of an entry.
func EntryZxid(entry []byte) (int64, error) {
	if len(entry) < txnHeaderLen {
		return 0, fmt.Errorf("txn entry of %d bytes is shorter than a txn header", len(entry))
	}
	return int64(binary.BigEndian.Uint64(entry[12:20])), nil
}
