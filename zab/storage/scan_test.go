package storage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScanLogFileReadsZooKeepersLogAndStopsAtDamage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "zk38", "version-2", "log.1"))
	require.NoError(t, err)
	var offsets, zxids []int64
	end, err := ScanLogFile(bytes.NewReader(data), int64(len(data)), "log.1", func(r LogRecord) error {
		offsets, zxids = append(offsets, r.Offset), append(zxids, r.Zxid)
		z, err := EntryZxid(r.Entry)
		require.NoError(t, err)
		assert.Equal(t, r.Zxid, z)
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, zxids)
	assert.Equal(t, int64(1), zxids[0])
	assert.Nil(t, end.Damage)
	assert.Equal(t, int64(len(data)), end.Offset)
	assert.Equal(t, int64(fileHeaderLen), offsets[0])

	// Flip a byte inside the third record: the scan stops there.
	bad := bytes.Clone(data)
	bad[offsets[2]+14] ^= 0x40
	var n int
	end, err = ScanLogFile(bytes.NewReader(bad), int64(len(bad)), "log.1", func(LogRecord) error { n++; return nil })
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	require.NotNil(t, end.Damage)
	assert.Equal(t, offsets[2], end.Damage.Offset)
	assert.Contains(t, end.Damage.Reason, "checksum")

	_, err = ScanLogFile(bytes.NewReader([]byte("nope")), 4, "x", func(LogRecord) error { return nil })
	var ce *CorruptError
	assert.ErrorAs(t, err, &ce)
}
