package peernet

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/zabd/zabd/wire"
)

// The quorum port carries jute records back to back, with no frame around
// them (ZooKeeper's BinaryOutputArchive.writeRecord on the socket), and a
// SNAP packet is followed by the snapshot stream, also unframed. So the
// reader must walk each record's structure to find where it ends: a
// recordReader copies the bytes of one record as it walks it, checking every
// length against the limits before it reads, and the copy is then decoded by
// package wire.

// Limits of the quorum port, as ZooKeeper's BinaryInputArchive has them by
// default: every buffer or string at most jute.maxbuffer plus its extra
// (which defaults to jute.maxbuffer again).
const (
	DefaultMaxField = 2 * wire.DefaultMaxBuffer
	// maxAuthIDs bounds a packet's authinfo vector (a session's identities).
	maxAuthIDs = 1 << 16
	// DefaultMaxSnapshot bounds the snapshot stream after a SNAP.
	DefaultMaxSnapshot = 4 << 30
)

// ErrTooLarge is wrapped by the errors of a record whose field or whole
// exceeds its limit.
var ErrTooLarge = errors.New("larger than the limit")

// recordReader reads one record's bytes from a stream, keeping a copy.
type recordReader struct {
	r        *bufio.Reader
	buf      []byte
	maxField int // a buffer's or string's length
	maxTotal int // the whole record's
	err      error
}

func newRecordReader(r *bufio.Reader, maxField, maxTotal int) *recordReader {
	return &recordReader{r: r, maxField: maxField, maxTotal: maxTotal}
}

// fixed reads n bytes and returns them (valid until the next read).
func (rr *recordReader) fixed(n int, what string) []byte {
	if rr.err != nil {
		return nil
	}
	if len(rr.buf)+n > rr.maxTotal {
		rr.err = fmt.Errorf("%s: the record passes %d bytes: %w", what, rr.maxTotal, ErrTooLarge)
		return nil
	}
	start := len(rr.buf)
	rr.buf = slices.Grow(rr.buf, n)[:start+n]
	if _, err := io.ReadFull(rr.r, rr.buf[start:]); err != nil {
		if err == io.EOF && start == 0 {
			rr.err = io.EOF // a clean end, before the record
			return nil
		}
		rr.err = fmt.Errorf("%s: %w", what, unexpectedEOF(err))
		return nil
	}
	return rr.buf[start:]
}

func (rr *recordReader) int32(what string) int32 {
	b := rr.fixed(4, what)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// lenPrefixed reads a jute buffer or string (int length, -1 for null) and
// returns its bytes.
func (rr *recordReader) lenPrefixed(what string) []byte {
	n := rr.int32(what + " length")
	switch {
	case rr.err != nil || n == -1:
		return nil
	case n < 0:
		rr.err = fmt.Errorf("%s: negative length %d", what, n)
		return nil
	case int(n) > rr.maxField:
		rr.err = fmt.Errorf("%s: %d bytes, over the limit of %d: %w", what, n, rr.maxField, ErrTooLarge)
		return nil
	}
	return rr.fixed(int(n), what)
}

// count reads a vector's or map's element count: -1 (null) gives 0; each
// element takes at least minSize bytes, so a count the record's limit
// cannot hold is refused before anything is read.
func (rr *recordReader) count(what string, minSize int) int {
	n := rr.int32(what)
	switch {
	case rr.err != nil || n == -1:
		return 0
	case n < 0:
		rr.err = fmt.Errorf("%s: negative count %d", what, n)
		return 0
	case int64(n)*int64(minSize) > int64(rr.maxTotal-len(rr.buf)):
		rr.err = fmt.Errorf("%s: %d elements cannot fit in the limit of %d bytes: %w", what, n, rr.maxTotal, ErrTooLarge)
		return 0
	}
	return int(n)
}

// readPacket reads one QuorumPacket: int type, long zxid, buffer data,
// vector<Id> authinfo. A clean end of stream before it gives io.EOF.
func readPacket(r *bufio.Reader, maxField int) (wire.QuorumPacket, error) {
	rr := newRecordReader(r, maxField, maxField+maxAuthIDs*8+64)
	rr.fixed(12, "packet header")
	if rr.err != nil {
		return wire.QuorumPacket{}, rr.err
	}
	rr.lenPrefixed("packet data")
	ids := rr.count("authinfo count", 8)
	if ids > maxAuthIDs {
		return wire.QuorumPacket{}, fmt.Errorf("authinfo: %d identities, over the limit of %d: %w", ids, maxAuthIDs, ErrTooLarge)
	}
	for i := 0; i < ids; i++ {
		rr.lenPrefixed("authinfo scheme")
		rr.lenPrefixed("authinfo id")
	}
	if rr.err != nil {
		return wire.QuorumPacket{}, unexpectedEOF(rr.err)
	}
	var qp wire.QuorumPacket
	if err := wire.Unmarshal(rr.buf, &qp); err != nil {
		return wire.QuorumPacket{}, fmt.Errorf("packet: %w", err)
	}
	return qp, nil
}

// statPersistedSize is a znode's StatPersisted in a snapshot: czxid, mzxid,
// ctime, mtime (longs), version, cversion, aversion (ints), ephemeralOwner,
// pzxid (longs).
const statPersistedSize = 4*8 + 3*4 + 2*8

// readSnapshotStream reads what follows a SNAP packet (see
// wire.SnapshotSignature): the session table, the tree (ACL cache, nodes
// up to the "/" end marker) and the signature string, and returns those
// bytes as they came. It checks structure and limits only; the Peer decodes
// the tree and checks the signature.
func readSnapshotStream(r *bufio.Reader, maxField, maxTotal int) ([]byte, error) {
	rr := newRecordReader(r, maxField, maxTotal)
	rr.buf = make([]byte, 0, 64<<10)
	sessions := rr.count("session count", 12)
	for i := 0; i < sessions && rr.err == nil; i++ {
		rr.fixed(12, "session")
	}
	acls := rr.count("ACL cache size", 12)
	for i := 0; i < acls && rr.err == nil; i++ {
		rr.fixed(8, "ACL cache key")
		n := rr.count("ACL list length", 12)
		for j := 0; j < n && rr.err == nil; j++ {
			rr.fixed(4, "ACL perms")
			rr.lenPrefixed("ACL scheme")
			rr.lenPrefixed("ACL id")
		}
	}
	for rr.err == nil {
		path := rr.lenPrefixed("node path")
		if rr.err != nil || string(path) == "/" {
			break
		}
		rr.lenPrefixed("node data")
		rr.fixed(8+statPersistedSize, "node ACL and stat")
	}
	rr.lenPrefixed("signature")
	if rr.err != nil {
		return nil, fmt.Errorf("snapshot stream after %d bytes: %w", len(rr.buf), unexpectedEOF(rr.err))
	}
	return rr.buf, nil
}

// unexpectedEOF turns an end of stream inside a record into
// io.ErrUnexpectedEOF: only an end before a record's first byte is clean.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w (%w)", io.ErrUnexpectedEOF, err)
	}
	return err
}

// readInitialMessage reads the handshake an election connection starts
// with (QuorumCnxManager's InitialMessage): long protocol version, long
// server id, int address length, the address. The version must be one
// ZooKeeper 3.8 sends (a bare server id, from before 3.5, is refused) and
// the address 1 to wire.ElectionMaxAddress bytes.
func readInitialMessage(r *bufio.Reader) (wire.InitialMessage, error) {
	rr := newRecordReader(r, wire.ElectionMaxAddress, 20+wire.ElectionMaxAddress)
	head := rr.fixed(8, "initial message")
	if rr.err != nil {
		return wire.InitialMessage{}, rr.err
	}
	switch v := int64(binary.BigEndian.Uint64(head)); {
	case v >= 0:
		return wire.InitialMessage{}, fmt.Errorf("initial message: a bare server id %d (ZooKeeper before 3.5) is not supported", v)
	case v != wire.ElectionProtocolV1 && v != wire.ElectionProtocolV2:
		return wire.InitialMessage{}, fmt.Errorf("initial message: unknown version %d", v)
	}
	head = rr.fixed(12, "initial message")
	if rr.err != nil {
		return wire.InitialMessage{}, unexpectedEOF(rr.err)
	}
	n := int32(binary.BigEndian.Uint32(head[8:]))
	if n <= 0 || n > wire.ElectionMaxAddress {
		return wire.InitialMessage{}, fmt.Errorf("initial message: address length %d is not in 1..%d", n, wire.ElectionMaxAddress)
	}
	rr.fixed(int(n), "initial message address")
	if rr.err != nil {
		return wire.InitialMessage{}, unexpectedEOF(rr.err)
	}
	var m wire.InitialMessage
	if err := wire.Unmarshal(rr.buf, &m); err != nil {
		return wire.InitialMessage{}, fmt.Errorf("initial message: %w", err)
	}
	return m, nil
}
