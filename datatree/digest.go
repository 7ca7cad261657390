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
// change locally); the root is hashed under the path "". The path and the
// stat go through the tree's scratch buffer: a fresh one per call would be
// an allocation per change.
func (t *Tree) nodeDigest(path string, data []byte, s *stored) uint32 {
	if strings.HasPrefix(path, "/zookeeper/") {
		return 0
	}
	if path == "/" {
		path = ""
	}
	b := append(t.scratch[:0], path...)
	crc := crc32.Update(0, crc32.IEEETable, b)
	crc = crc32.Update(crc, crc32.IEEETable, data)
	b = binary.BigEndian.AppendUint64(b[:0], uint64(s.czxid))
	b = binary.BigEndian.AppendUint64(b, uint64(s.mzxid))
	b = binary.BigEndian.AppendUint64(b, uint64(s.pzxid))
	b = binary.BigEndian.AppendUint64(b, uint64(s.ctime))
	b = binary.BigEndian.AppendUint64(b, uint64(s.mtime))
	b = binary.BigEndian.AppendUint32(b, uint32(s.version))
	b = binary.BigEndian.AppendUint32(b, uint32(s.cversion))
	b = binary.BigEndian.AppendUint32(b, uint32(s.aversion))
	b = binary.BigEndian.AppendUint64(b, uint64(s.owner))
	t.scratch = b
	return crc32.Update(crc, crc32.IEEETable, b)
}
