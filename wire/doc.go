// Package wire is the jute codec of ZooKeeper 3.8, byte for byte: the
// primitives, the data records (Stat, ACL, Id), the client protocol's
// requests and responses (multi and multiRead included), watch events, the
// txn records and the txn log's file layout, the framing of the client port,
// and the shapes of the peer protocol (quorum packets, learner info, and the
// hand-packed election handshake and notifications), and the payloads of
// each quorum packet type (DecodePacketData). It depends on nothing
// else in zabd.
//
// Encoding appends to a reusable buffer (Encoder, AppendFrame); decoding
// reads from a byte slice with a sticky error, so a record's Decode reads
// every field and its caller checks Decoder.Err once. NewRequest and
// NewResponse give the body a request or reply of an opcode carries, so that
// no caller switches on opcodes itself. FrameReader reads length-prefixed
// frames into one reusable buffer, refusing a length beyond its limit
// (DefaultMaxBuffer, ZooKeeper's jute.maxbuffer) before allocating, and
// recognises a four-letter command in place of a connection's first length.
//
// Bad input is an error value (*DecodeError, *FrameError, *UnknownOpError,
// *TxnLogError), never a panic. Every length and count is checked against
// the input left before anything is allocated, so what a decoder allocates
// is bounded by a small multiple of its input (five times at most: Go's
// records are wider than their encodings). Decoded strings and buffers
// are copies: a Decoder retains its input only when Alias is set.
//
// The golden tests hold the codec to bytes captured from ZooKeeper 3.8.0 and
// its clients (testdata/golden, recorded by testdata/capture/capture.sh).
package wire
