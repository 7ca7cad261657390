package datatree

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/zabd/zabd/wire"
)

// Names of ZooKeeper's quota nodes: /zookeeper/quota/<path>/zookeeper_limits
// holds the limits, .../zookeeper_stats the usage the tree keeps current.
const (
	quotaLimitNode = "zookeeper_limits"
	quotaStatNode  = "zookeeper_stats"
)

// quotaIndex is the set of paths with a quota (ZooKeeper's PathTrie of
// quota paths).
type quotaIndex struct {
	paths map[string]struct{}
}

func newQuotaIndex() quotaIndex { return quotaIndex{paths: make(map[string]struct{})} }

// remove drops path and, as removing a PathTrie node does, every quota
// path below it.
func (q *quotaIndex) remove(path string) {
	for p := range q.paths {
		if p == path || strings.HasPrefix(p, path+"/") {
			delete(q.paths, p)
		}
	}
}

// maxPrefix is getMaxPrefixWithQuota: the deepest quota path that is path or
// one of its ancestors; "" when there is none (a quota on "/" never counts).
func (q *quotaIndex) maxPrefix(path string) string {
	if len(q.paths) == 0 || path == "" || path == "/" {
		return ""
	}
	for p := path; p != "/"; p = parentOf(p) {
		if _, ok := q.paths[p]; ok {
			return p
		}
	}
	return ""
}

// statsTrack is ZooKeeper's StatsTrack: "count=..,bytes=.." plus optional
// ";key=value" pairs (countHardLimit, byteHardLimit), -1 for what is absent.
type statsTrack map[string]int64

var statsPairSep = regexp.MustCompile(`[,;]+`)

// parseStats reads a StatsTrack. ok is false where ZooKeeper's parser
// throws: a pair without a value, a value that is not a long.
func parseStats(data []byte) (st statsTrack, ok bool) {
	st = statsTrack{}
	s := string(data)
	if s == "" {
		return st, true
	}
	for _, kv := range statsPairSep.Split(s, -1) {
		parts := javaSplit(kv, "=")
		if len(parts) < 2 {
			return st, false
		}
		v, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil {
			return st, false
		}
		st[parts[0]] = v
	}
	return st, true
}

func (st statsTrack) get(key string) int64 {
	if v, ok := st[key]; ok {
		return v
	}
	return -1
}

// bytes formats the StatsTrack as ZooKeeper does: count and bytes first,
// then "=" and the other keys sorted as ";key=value".
func (st statsTrack) bytes() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "count=%d,bytes=%d", st.get("count"), st.get("bytes"))
	var extra []string
	for k := range st {
		if k != "count" && k != "bytes" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		b.WriteString("=")
		for _, k := range extra {
			fmt.Fprintf(&b, ";%s=%d", k, st[k])
		}
	}
	return []byte(b.String())
}

// quotaNodeCreated keeps the quota index when a limit or stats node appears
// under /zookeeper/quota (DataTree.createNode).
func (t *Tree) quotaNodeCreated(parentPath, name string) {
	if !strings.HasPrefix(parentPath, quotaPath) {
		return
	}
	target := parentPath[len(quotaPath):]
	if target == "" {
		return
	}
	switch name {
	case quotaLimitNode:
		t.quotas.paths[target] = struct{}{}
	case quotaStatNode:
		t.recountQuota(target)
	}
}

// quotaNodeDeleted drops a quota when its limit node goes.
func (t *Tree) quotaNodeDeleted(parentPath, name string) {
	if name != quotaLimitNode || !strings.HasPrefix(parentPath, zookeeperPath) || !strings.HasPrefix(parentPath, quotaPath) {
		return
	}
	if target := parentPath[len(quotaPath):]; target != "" {
		t.quotas.remove(target)
	}
}

// recountQuota writes the usage of the subtree at path into its stats node
// (DataTree.updateQuotaForPath).
func (t *Tree) recountQuota(path string) {
	statPath := quotaNodePath(path, quotaStatNode)
	statNode := t.nodes.get(statPath)
	if statNode == nil {
		return
	}
	var count, bytes int64
	if n := t.nodes.get(path); n != nil {
		count, bytes = t.subtreeUsage(n)
	}
	t.replaceQuotaStats(statPath, statNode, statsTrack{"count": count, "bytes": bytes})
}

func (t *Tree) subtreeUsage(n *node) (count, bytes int64) {
	count, bytes = 1, int64(n.dataLen)
	for _, c := range t.kids(n) {
		cc, cb := t.subtreeUsage(t.child(n, c))
		count += cc
		bytes += cb
	}
	return count, bytes
}

// quotaNodePath is the path of the quota on path's node name
// (quotaLimitNode or quotaStatNode).
func quotaNodePath(path, name string) string { return quotaPath + path + "/" + name }

// quotaStats reads the quota on path's node name (quotaLimitNode or
// quotaStatNode): n is nil when there is no such node, and ok is false when
// its data does not parse.
func (t *Tree) quotaStats(path, name string) (n *node, st statsTrack, ok bool) {
	n = t.nodes.get(quotaNodePath(path, name))
	if n == nil {
		return nil, nil, false
	}
	st, ok = parseStats(n.data())
	return n, st, ok
}

// replaceQuotaStats replaces a stats node's data without touching its stat,
// as ZooKeeper does.
func (t *Tree) replaceQuotaStats(path string, n *node, st statsTrack) {
	data := st.bytes()
	before := t.digestOf(path, n)
	t.dataSize += int64(len(data) - int(n.dataLen))
	n.setData(data)
	t.redigest(path, n, before)
}

// updateQuotaUsage adds a change of the node at path to its quota's stats
// (DataTree.updateQuotaStat).
func (t *Tree) updateQuotaUsage(path string, bytesDiff, countDiff int64) {
	prefix := t.quotas.maxPrefix(path)
	if prefix == "" {
		return
	}
	n, st, ok := t.quotaStats(prefix, quotaStatNode)
	if n == nil || !ok {
		// Unparsable stats: ZooKeeper throws in the middle of applying the
		// txn here; the stats are left as they are.
		return
	}
	st["count"] = st.get("count") + countDiff
	st["bytes"] = st.get("bytes") + bytesDiff
	t.replaceQuotaStats(quotaNodePath(prefix, quotaStatNode), n, st)
}

// checkQuota is ZooKeeperServer.checkQuota against the applied tree (as in
// ZooKeeper, pending changes do not count): the write at path adds
// countDiff nodes and changes the data size from oldBytes to newBytes.
// Passing a limit is reported through cfg.Warn; with EnforceQuota, passing
// a hard limit is QuotaExceeded, and limits or stats data that does not
// parse is MarshallingError (ZooKeeper's parser throws).
func (t *Tree) checkQuota(path string, oldBytes, newBytes, countDiff int64) wire.ErrCode {
	if !t.cfg.EnforceQuota && t.cfg.Warn == nil {
		return wire.ErrOK
	}
	unparsable := wire.ErrOK
	if t.cfg.EnforceQuota {
		unparsable = wire.ErrMarshallingError
	}
	prefix := t.quotas.maxPrefix(path)
	if prefix == "" {
		return wire.ErrOK
	}
	limitNode, limits, ok := t.quotaStats(prefix, quotaLimitNode)
	if limitNode == nil {
		return wire.ErrOK
	}
	if !ok {
		return unparsable
	}
	bytesDiff := newBytes - oldBytes
	countLimited := countDiff != 0 && (limits.get("count") > -1 || limits.get("countHardLimit") > -1)
	bytesLimited := bytesDiff != 0 && (limits.get("bytes") > -1 || limits.get("byteHardLimit") > -1)
	if !countLimited && !bytesLimited {
		return wire.ErrOK
	}
	statNode, usage, ok := t.quotaStats(prefix, quotaStatNode)
	if statNode == nil {
		return wire.ErrOK
	}
	if !ok {
		return unparsable
	}
	// check compares one dimension's new usage with its limit: the hard one
	// when set, else the soft one, which only warns.
	check := func(what, limitName string, current, diff, soft, hard int64) wire.ErrCode {
		limit, kind := soft, "soft"
		if hard > -1 {
			limit, kind = hard, "hard"
		}
		if current+diff <= limit {
			return wire.ErrOK
		}
		if t.cfg.Warn != nil {
			t.cfg.Warn(fmt.Sprintf("Quota exceeded: %s [current %s=%d, %s%s=%d]", prefix, what, current+diff, kind, limitName, limit))
		}
		if kind == "hard" && t.cfg.EnforceQuota {
			return wire.ErrQuotaExceeded
		}
		return wire.ErrOK
	}
	if countLimited {
		if e := check("count", "CountLimit", usage.get("count"), countDiff, limits.get("count"), limits.get("countHardLimit")); e != wire.ErrOK {
			return e
		}
	}
	if bytesLimited {
		return check("bytes", "ByteLimit", usage.get("bytes"), bytesDiff, limits.get("bytes"), limits.get("byteHardLimit"))
	}
	return wire.ErrOK
}
