package datatree

import (
	"encoding/binary"
	"hash/crc32"
	"strings"
)

// nodeDigest is one node's term of the tree digest, ZooKeeper's
// DigestCalculator version 2: CRC32 (IEEE) over the path bytes, the data and
// the stored stat as czxid, mzxid, pzxid, ctime, mtime (longs), version,
// cversion, aversion (ints), ephemeralOwner (long), big-endian. Nodes under
// "/zookeeper/" count 0 (ZooKeeper leaves them out because quota nodes
// change locally); the root is hashed under the path "". All of it is
// copied into the tree's scratch buffer and checksummed in one call: a
// node's term is computed again on every change (nodes do not keep it),
// and one call over the whole takes the carry-less-multiply path for most
// of the bytes, where three calls (path, data, stat) took the slower
// table path for two of them, at twice the cost.
func (t *Tree) nodeDigest(path string, data []byte, s *stored) uint32 {
	if strings.HasPrefix(path, "/zookeeper/") {
		return 0
	}
	if path == "/" {
		path = ""
	}
	b := append(t.scratch[:0], path...)
	b = append(b, data...)
	b = binary.BigEndian.AppendUint64(b, uint64(s.czxid))
	b = binary.BigEndian.AppendUint64(b, uint64(s.mzxid))
	b = binary.BigEndian.AppendUint64(b, uint64(s.pzxid))
	b = binary.BigEndian.AppendUint64(b, uint64(s.ctime))
	b = binary.BigEndian.AppendUint64(b, uint64(s.mtime))
	b = binary.BigEndian.AppendUint32(b, uint32(s.version))
	b = binary.BigEndian.AppendUint32(b, uint32(s.cversion))
	b = binary.BigEndian.AppendUint32(b, uint32(s.aversion))
	b = binary.BigEndian.AppendUint64(b, uint64(s.owner))
	if cap(b) <= maxScratch {
		t.scratch = b
	}
	return crc32.ChecksumIEEE(b)
}

// maxScratch bounds the scratch buffer nodeDigest keeps: a node with a
// megabyte of data should not leave a megabyte behind.
const maxScratch = 4096
