package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
)

// setQuota writes the nodes zkCli's setquota writes.
func (h *harness) setQuota(path, limits string) {
	h.t.Helper()
	quotaNode := quotaPath
	for _, part := range javaSplit(path[1:], "/") {
		quotaNode += "/" + part
		h.create(1, quotaNode, "", wire.ModePersistent)
	}
	require.Equal(h.t, wire.ErrOK, h.create(1, quotaNode+"/"+quotaLimitNode, limits, wire.ModePersistent).Err)
	require.Equal(h.t, wire.ErrOK, h.create(1, quotaNode+"/"+quotaStatNode, "count=0,bytes=0", wire.ModePersistent).Err)
}

func (h *harness) quotaStats(path string) string {
	data, _, err := h.tree.GetData(quotaPath+path+"/"+quotaStatNode, nil, false, 0)
	require.Equal(h.t, wire.ErrOK, err)
	return string(data)
}

// TestQuotaStats: creating the stats node counts the subtree; creates,
// deletes and setData keep it current, in ZooKeeper's StatsTrack format.
func TestQuotaStats(t *testing.T) {
	h := newHarness(t, Config{})
	h.create(1, "/app", "abc", wire.ModePersistent)
	h.create(1, "/app/x", "12345", wire.ModePersistent)
	h.setQuota("/app", "count=10,bytes=100")
	assert.Equal(t, "count=2,bytes=8", h.quotaStats("/app"))
	h.create(1, "/app/x/y", "zz", wire.ModePersistent)
	assert.Equal(t, "count=3,bytes=10", h.quotaStats("/app"))
	assert.Equal(t, walkedDataSize(h.tree), h.tree.ApproximateDataSize(), "the stats node's rewrites count in approximate_data_size")
	h.setData("/app/x", "1", -1)
	assert.Equal(t, "count=3,bytes=6", h.quotaStats("/app"))
	h.delete("/app/x/y", -1)
	assert.Equal(t, "count=2,bytes=4", h.quotaStats("/app"))
	h.create(1, "/other", "zzzz", wire.ModePersistent)
	assert.Equal(t, "count=2,bytes=4", h.quotaStats("/app"))
	// The stats node's stat does not move with the usage.
	st := h.stat(quotaPath + "/app/" + quotaStatNode)
	assert.Equal(t, int32(0), st.Version)
	// Deleting the limits node ends the quota.
	h.delete(quotaPath+"/app/"+quotaLimitNode, -1)
	h.create(1, "/app/z", "zz", wire.ModePersistent)
	assert.Equal(t, "count=2,bytes=4", h.quotaStats("/app"))
}

// TestQuotaLimits: passing a soft limit warns; passing a hard limit fails
// with QuotaExceeded only when enforced.
func TestQuotaLimits(t *testing.T) {
	var warnings []string
	cfg := Config{EnforceQuota: true, Warn: func(m string) { warnings = append(warnings, m) }}
	h := newHarness(t, cfg)
	h.create(1, "/soft", "", wire.ModePersistent)
	h.setQuota("/soft", "count=2,bytes=5")
	assert.Equal(t, wire.ErrOK, h.create(1, "/soft/a", "", wire.ModePersistent).Err)
	assert.Empty(t, warnings)
	assert.Equal(t, wire.ErrOK, h.create(1, "/soft/b", "", wire.ModePersistent).Err)
	assert.Equal(t, []string{"Quota exceeded: /soft [current count=3, softCountLimit=2]"}, warnings)

	h.create(1, "/hard", "", wire.ModePersistent)
	h.setQuota("/hard", "count=-1,bytes=-1=;byteHardLimit=4;countHardLimit=2")
	assert.Equal(t, wire.ErrOK, h.create(1, "/hard/a", "1234", wire.ModePersistent).Err)
	assert.Equal(t, wire.ErrQuotaExceeded, h.create(1, "/hard/b", "", wire.ModePersistent).Err)
	r, _ := h.setData("/hard/a", "12345", -1)
	assert.Equal(t, wire.ErrQuotaExceeded, r.Err)
	r, _ = h.setData("/hard/a", "123", -1)
	assert.Equal(t, wire.ErrOK, r.Err)
	assert.Equal(t, "count=2,bytes=3", h.quotaStats("/hard"))

	off := newHarness(t, Config{})
	off.create(1, "/hard", "", wire.ModePersistent)
	off.setQuota("/hard", "count=-1,bytes=-1=;byteHardLimit=4;countHardLimit=1")
	assert.Equal(t, wire.ErrOK, off.create(1, "/hard/a", "123456", wire.ModePersistent).Err, "not enforced")
}

func TestStatsTrackFormat(t *testing.T) {
	st, ok := parseStats([]byte("count=4,bytes=5=;countHardLimit=10;byteHardLimit=-1"))
	require.True(t, ok)
	assert.Equal(t, int64(4), st.get("count"))
	assert.Equal(t, int64(5), st.get("bytes"))
	assert.Equal(t, int64(10), st.get("countHardLimit"))
	assert.Equal(t, int64(-1), st.get("missing"))
	assert.Equal(t, "count=4,bytes=5=;byteHardLimit=-1;countHardLimit=10", string(st.bytes()))
	assert.Equal(t, "count=1,bytes=2", string(statsTrack{"count": 1, "bytes": 2}.bytes()))
	for _, bad := range []string{"garbage", "count=", ",count=1", "count=x", "count=1,bytes"} {
		_, ok := parseStats([]byte(bad))
		assert.False(t, ok, "%q", bad)
	}
	_, ok = parseStats([]byte(""))
	assert.True(t, ok)
}
