package datatree

import (
	"strings"
	"unicode/utf16"
)

// ApproximateDataSize is ZooKeeper's approximate_data_size: the sum over
// its node map of each path's length in UTF-16 units and its data's length.
// ZooKeeper's map holds the root twice, as "" and "/", so the root's data
// counts twice. It is kept as the tree changes (a walk of a million nodes
// on every mntr, srvr or /metrics scrape stalled the event loop for a
// tenth of a second each).
func (t *Tree) ApproximateDataSize() int64 {
	return t.dataSize + int64(t.root.dataLen) // and the "" alias
}

// nodeSize is one node map entry's share of ApproximateDataSize.
func nodeSize(path string, data []byte) int64 { return int64(utf16Len(path)) + int64(len(data)) }

// ZooKeeperNodeCount is znode_count as ZooKeeper reports it: its node map's
// size, in which the root is there twice ("" and "/").
func (t *Tree) ZooKeeperNodeCount() int { return t.nodes.len() + 1 }

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// QuotaUsage is one top-level namespace's quotas, summed over every quota
// under it, as ZooKeeper's QuotaMetricsUtils reports them: the count and
// byte limits (a hard limit where set, else the soft one; -1 for none) and
// the usage the stats nodes record.
type QuotaUsage struct {
	CountLimit, BytesLimit, CountUsage, BytesUsage int64
	hasLimit, hasUsage                             bool
}

// QuotaMetrics returns the quota_*_per_namespace figures, by namespace (the
// first component of each quota's path). Like ZooKeeper it reads the leaves
// of /zookeeper/quota named zookeeper_limits and zookeeper_stats; a leaf
// whose data does not parse is skipped (ZooKeeper's parser would throw).
func (t *Tree) QuotaMetrics() map[string]QuotaUsage {
	out := map[string]QuotaUsage{}
	var walk func(path string, n *node)
	walk = func(path string, n *node) {
		kids := t.kids(n)
		if len(kids) > 0 {
			for _, c := range kids {
				walk(path+"/"+c, t.child(n, c))
			}
			return
		}
		limits := strings.HasSuffix(path, "/"+quotaLimitNode)
		if !limits && !strings.HasSuffix(path, "/"+quotaStatNode) {
			return
		}
		// PathUtils.getTopNamespace of the path with /zookeeper/quota cut.
		parts := strings.Split(strings.TrimPrefix(path, quotaPath), "/")
		if len(parts) < 2 {
			return
		}
		st, ok := parseStats(n.data())
		if !ok || n.dataLen == 0 {
			return
		}
		q := out[parts[1]]
		if limits {
			q.CountLimit += pick(st.get("countHardLimit"), st.get("count"))
			q.BytesLimit += pick(st.get("byteHardLimit"), st.get("bytes"))
			q.hasLimit = true
		} else {
			q.CountUsage += st.get("count")
			q.BytesUsage += st.get("bytes")
			q.hasUsage = true
		}
		out[parts[1]] = q
	}
	if n := t.nodes.get(quotaPath); n != nil {
		walk(quotaPath, n)
	}
	return out
}

// HasLimit and HasUsage say whether the namespace has limits nodes and
// stats nodes: ZooKeeper reports the limit and the usage figures only for
// the namespaces that have them.
func (q QuotaUsage) HasLimit() bool { return q.hasLimit }
func (q QuotaUsage) HasUsage() bool { return q.hasUsage }

// pick is QuotaMetricsUtils.getQuotaLimit: the hard limit takes precedence
// if set.
func pick(hard, soft int64) int64 {
	if hard > -1 {
		return hard
	}
	return soft
}
