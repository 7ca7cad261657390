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
// change locally); the root is hashed under the path "".
func nodeDigest(path string, data []byte, s *stored) uint32 {
	if strings.HasPrefix(path, "/zookeeper/") {
		return 0
	}
	if path == "/" {
		path = ""
	}
	// The path goes through a stack buffer: converting it to a []byte
	// would allocate on every change.
	var buf [256]byte
	crc := uint32(0)
	for p := path; len(p) > 0; {
		n := copy(buf[:], p)
		crc = crc32.Update(crc, crc32.IEEETable, buf[:n])
		p = p[n:]
	}
	crc = crc32.Update(crc, crc32.IEEETable, data)
	b := buf[:60]
	binary.BigEndian.PutUint64(b[0:], uint64(s.czxid))
	binary.BigEndian.PutUint64(b[8:], uint64(s.mzxid))
	binary.BigEndian.PutUint64(b[16:], uint64(s.pzxid))
	binary.BigEndian.PutUint64(b[24:], uint64(s.ctime))
	binary.BigEndian.PutUint64(b[32:], uint64(s.mtime))
	binary.BigEndian.PutUint32(b[40:], uint32(s.version))
	binary.BigEndian.PutUint32(b[44:], uint32(s.cversion))
	binary.BigEndian.PutUint32(b[48:], uint32(s.aversion))
	binary.BigEndian.PutUint64(b[52:], uint64(s.owner))
	return crc32.Update(crc, crc32.IEEETable, b)
}
