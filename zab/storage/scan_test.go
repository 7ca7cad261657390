package storage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
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

// The padding check reads ahead a window at a time and compares whole
// blocks: a nonzero byte anywhere in the padding, in the first window, on
// a window's edge or far after, is found at its exact offset, and the
// records before it are all read.
func TestScanFindsANonzeroByteAnywhereInThePadding(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "zk38", "version-2", "log.1"))
	require.NoError(t, err)
	records := 0
	end, err := ScanLogFile(bytes.NewReader(data), int64(len(data)), "log.1", func(LogRecord) error { records++; return nil })
	require.NoError(t, err)
	logEnd := end.Offset
	padded := append(bytes.Clone(data[:logEnd]), make([]byte, 5*readAhead)...)
	for _, at := range []int64{logEnd + 12, logEnd + readAhead - 1, logEnd + readAhead, logEnd + 3*readAhead + 7, int64(len(padded)) - 1} {
		bad := bytes.Clone(padded)
		bad[at] = 1
		n := 0
		end, err := ScanLogFile(bytes.NewReader(bad), int64(len(bad)), "log.1", func(LogRecord) error { n++; return nil })
		require.NoError(t, err)
		assert.Equal(t, records, n, "byte at %d", at)
		require.NotNil(t, end.Damage, "byte at %d", at)
		assert.Contains(t, end.Damage.Reason, fmt.Sprintf("nonzero byte at offset %d inside the zero padding", at))
	}
	end, err = ScanLogFile(bytes.NewReader(padded), int64(len(padded)), "log.1", func(LogRecord) error { return nil })
	require.NoError(t, err)
	assert.Nil(t, end.Damage, "zeros only")
}

// firstNonZero agrees with a byte-by-byte search, across block edges.
func TestFirstNonZeroIsTheFirstNonzeroByte(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := make([]byte, rapid.IntRange(0, 3*len(zeroBlock)).Draw(t, "len"))
		for range rapid.IntRange(0, 3).Draw(t, "nonzero") {
			if len(b) > 0 {
				b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] = byte(rapid.IntRange(1, 255).Draw(t, "value"))
			}
		}
		want := -1
		if rest := bytes.TrimLeft(b, "\x00"); len(rest) > 0 {
			want = len(b) - len(rest)
		}
		if got := firstNonZero(b); got != want {
			t.Fatalf("firstNonZero = %d, want %d", got, want)
		}
	})
}
