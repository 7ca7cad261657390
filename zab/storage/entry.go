package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/zabd/zabd/wire"
)

// A txn entry is what ZooKeeper logs and what a PROPOSAL carries: the jute
// TxnHeader, then the txn body for the header's type, then optionally the
// TxnDigest of the tree after the txn.
const txnHeaderLen = 8 + 4 + 8 + 8 + 4

// Entry is a decoded txn entry.
type Entry struct {
	Header wire.TxnHeader
	Body   wire.Record     // nil for a closeSession logged without a body
	Digest *wire.TxnDigest // nil when the entry carries none
}

// EncodeEntry appends the entry bytes for hdr, body and digest (either of the
// last two may be nil) to e.
func EncodeEntry(e *wire.Encoder, hdr *wire.TxnHeader, body wire.Record, digest *wire.TxnDigest) {
	hdr.Encode(e)
	if body != nil {
		body.Encode(e)
	}
	if digest != nil {
		digest.Encode(e)
	}
}

// EntryZxid returns the zxid of the header at the start of an entry.
func EntryZxid(entry []byte) (int64, error) {
	if len(entry) < txnHeaderLen {
		return 0, fmt.Errorf("txn entry of %d bytes is shorter than a txn header", len(entry))
	}
	return int64(binary.BigEndian.Uint64(entry[12:20])), nil
}

// DecodeEntry decodes an entry. It accepts exactly a header, a body of the
// header's type and either nothing or a TxnDigest after it.
func DecodeEntry(entry []byte) (Entry, error) {
	d := wire.NewDecoder(entry)
	var out Entry
	out.Header.Decode(d)
	if err := d.Err(); err != nil {
		return out, fmt.Errorf("txn header: %w", err)
	}
	body, err := wire.DecodeTxnBody(out.Header.Type, d)
	if err != nil {
		return out, fmt.Errorf("txn body of %v: %w", out.Header.Type, err)
	}
	if out.Header.Type != wire.OpCloseSession || len(entry) > txnHeaderLen {
		out.Body = body
	}
	switch d.Remaining() {
	case 0:
	case 12:
		out.Digest = &wire.TxnDigest{}
		out.Digest.Decode(d)
	default:
		return out, fmt.Errorf("%d bytes after the txn body, which is neither empty nor a txn digest", d.Remaining())
	}
	return out, nil
}
