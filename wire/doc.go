// Package wire is the jute codec of ZooKeeper 3.8: the primitives, the data
// records (Stat, ACL, Id), the client protocol's requests and responses, the
// txn records of the log and of proposals, and the framing of the client
// port. It depends on nothing else in zabd.
//
// Encoding appends to a reusable buffer and decoding reads from a byte slice
// with a sticky error, so a record's Decode reads every field and its caller
// checks Decoder.Err once; no input makes a decoder panic or allocate more
// than the input could hold.
package wire
