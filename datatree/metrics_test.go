package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zabd/zabd/wire"
)

// TestReportedSizes: znode_count and approximate_data_size count as
// ZooKeeper's node map does, the root twice: a fresh tree is 5 nodes and
// 44 (1+10+16+17, the paths "/", "/zookeeper", "/zookeeper/quota",
// "/zookeeper/config"), as Debian's ZooKeeper 3.8 reports.
func TestReportedSizes(t *testing.T) {
	h := newHarness(t, Config{})
	assert.Equal(t, 5, h.tree.ZooKeeperNodeCount())
	assert.Equal(t, int64(44), h.tree.ApproximateDataSize())
	h.create(1, "/é", "abc", wire.ModePersistent)
	assert.Equal(t, int64(44+2+3), h.tree.ApproximateDataSize(), "path length in UTF-16 units, as Java's")
	h.setData("/", "rr", -1)
	assert.Equal(t, int64(44+2+3+4), h.tree.ApproximateDataSize(), "the root's data counts twice")
}

// TestQuotaMetrics: limits and usage per top-level namespace, summed over
// nested quotas, hard limits first, as ZooKeeper's QuotaMetricsUtils.
func TestQuotaMetrics(t *testing.T) {
	h := newHarness(t, Config{})
	assert.Empty(t, h.tree.QuotaMetrics())
	h.create(1, "/a", "z", wire.ModePersistent)
	h.create(1, "/a/b", "y", wire.ModePersistent)
	h.setQuota("/a", "count=10,bytes=-1")
	h.create(1, "/a/c", "", wire.ModePersistent)
	h.create(1, "/a/c/d", "1234", wire.ModePersistent)
	h.setQuota("/a/c", "count=-1,bytes=100;byteHardLimit=50")
	h.create(1, "/x", "", wire.ModePersistent)
	h.setQuota("/x", "count=3,bytes=7")
	got := h.tree.QuotaMetrics()
	a := got["a"]
	assert.Equal(t, int64(10+(-1)), a.CountLimit)
	assert.Equal(t, int64(-1+50), a.BytesLimit)
	assert.Equal(t, int64(4+2), a.CountUsage, "/a's stats (a, a/b, a/c, a/c/d) and /a/c's")
	assert.Equal(t, int64(6+4), a.BytesUsage)
	assert.True(t, a.HasLimit() && a.HasUsage())
	assert.Equal(t, int64(3), got["x"].CountLimit)
	assert.Equal(t, int64(1), got["x"].CountUsage)
	assert.Len(t, got, 2)
}

// walkedDataSize is approximate_data_size computed as ZooKeeper's
// DataTree.approximateDataSize walks its node map (the root twice): what
// the kept figure must equal.
func walkedDataSize(t *Tree) int64 {
	size := int64(len(t.root.data()))
	for path, n := range allNodes(t) {
		size += int64(utf16Len(path)) + int64(len(n.data()))
	}
	return size
}
