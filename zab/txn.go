package zab

import (
	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

// EncodeTxnEntry encodes t as ZooKeeper logs it and as a PROPOSAL carries
// it (header, body, then the digest when the txn has one): the bytes the
// shell hands to its log.
func EncodeTxnEntry(t *datatree.Txn) []byte { return EncodeTxnEntryInto(nil, t) }

// EncodeTxnEntryInto is EncodeTxnEntry reusing buf's storage from its start,
// for a shell that encodes txn after txn into one buffer.
func EncodeTxnEntryInto(buf []byte, t *datatree.Txn) []byte {
	e := wire.NewEncoder(buf)
	WriteTxnEntry(e, t)
	return e.Bytes()
}

// WriteTxnEntry appends t's entry, as EncodeTxnEntry encodes it, to e: a
// shell that encodes txn after txn can Reset and reuse one Encoder.
func WriteTxnEntry(e *wire.Encoder, t *datatree.Txn) {
	entry := wire.TxnEntry{Header: t.Header, Body: t.Body}
	if t.Digest.Version != 0 {
		entry.Digest = &t.Digest
	}
	entry.Encode(e)
}

// DecodeTxnEntry reads back what EncodeTxnEntry wrote (or ZooKeeper logged):
// the txn that Replay takes.
func DecodeTxnEntry(b []byte) (datatree.Txn, error) {
	entry, err := wire.DecodeTxnEntry(b)
	if err != nil {
		return datatree.Txn{}, err
	}
	t := datatree.Txn{Header: entry.Header, Body: entry.Body}
	if entry.Digest != nil {
		t.Digest = *entry.Digest
	}
	if t.Body == nil && t.Header.Type == wire.OpCloseSession {
		t.Body = &wire.CloseSessionTxn{}
	}
	return t, nil
}
