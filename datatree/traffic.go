package datatree

// Traffic receives the size of each read and write as ZooKeeper 3.8's
// DataTree measures them for its read_per_namespace and write_per_namespace
// summary sets, keyed by the top-level namespace of the node's path.
// Config.Traffic is called synchronously by the tree's owner, so an
// implementation must be cheap: it is on the path of every request.
//
// What counts (ZooKeeper's DataTree.updateReadStat and updateWriteStat,
// checked against Debian's 3.8.0):
//
//   - a write is a create of any kind, a delete or a setData that the tree
//     applies, from whatever source: a client's txn, a multi's sub-txn, a
//     closed session's ephemerals, a reaped container or TTL node, and the
//     txn log replayed at start-up; its size is the path's length plus the
//     data's (0 for a delete, the new data for a setData). setACL, check
//     and error txns do not count.
//   - a read is a getData, exists or getChildren (getChildren2, and a
//     multiRead's getData and getChildren ops) that finds its node and, for
//     getData and getChildren, may read it; its size is the path's length
//     plus the data's (getData) or the children's names' lengths summed
//     (getChildren), plus statOverheadBytes.
//
// Lengths of paths and names are Java's String.length(): UTF-16 units.
type Traffic interface {
	Read(namespace string, bytes int64)
	Write(namespace string, bytes int64)
}

// statOverheadBytes is ZooKeeper's DataTree.STAT_OVERHEAD_BYTES, which every
// read is charged on top of its path and payload: six longs and five ints.
const statOverheadBytes = 6*8 + 5*4

// topNamespace is ZooKeeper's PathUtils.getTopNamespace: the second field
// of path.split("/"), Java's split dropping trailing empty fields. So "/a/b"
// is in "a", "/zookeeper/quota" in "zookeeper", and the root ("/", or its
// alias "") in none, like any path without a '/' (only a path that no node
// has, e.g. "//x", would give the empty namespace). It returns a substring of
// path, allocating nothing.
func topNamespace(path string) (string, bool) {
	i := indexSlash(path, 0)
	if i < 0 {
		return "", false
	}
	end := indexSlash(path, i+1)
	if end < 0 {
		end = len(path)
	}
	if end > i+1 {
		return path[i+1 : end], true
	}
	// The field is empty: Java keeps it only if a non-empty field follows.
	for j := end; j < len(path); j++ {
		if path[j] != '/' {
			return "", true
		}
	}
	return "", false
}

// indexSlash is the index of the first '/' in path at or after from, or -1.
func indexSlash(path string, from int) int {
	for j := from; j < len(path); j++ {
		if path[j] == '/' {
			return j
		}
	}
	return -1
}

// countRead reports a read of path that returned payload bytes besides its
// stat (data, or the children's names).
func (t *Tree) countRead(path string, payload int) {
	if t.cfg.Traffic == nil {
		return
	}
	if ns, ok := topNamespace(path); ok {
		t.cfg.Traffic.Read(ns, int64(utf16Len(path)+payload+statOverheadBytes))
	}
}

// countWrite reports a write of path that stored data bytes.
func (t *Tree) countWrite(path string, data int) {
	if t.cfg.Traffic == nil {
		return
	}
	if ns, ok := topNamespace(path); ok {
		t.cfg.Traffic.Write(ns, int64(utf16Len(path)+data))
	}
}

// namesLength is the children's names' lengths summed, as getChildren's read
// is charged.
func (t *Tree) namesLength(n *node) int {
	total := 0
	for _, c := range t.kids(n) {
		total += utf16Len(c)
	}
	return total
}
