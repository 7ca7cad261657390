package wire

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// allocatedBy returns the bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestDecodeAllocationIsBoundedByInput feeds decoders inputs built to make
// them allocate as much as possible: a length or count claiming far more
// than the input holds, and the densest vectors a frame can hold. What a
// decoder allocates stays within five times its input plus 64 KiB (Go's
// in-memory records are wider than their encodings: an empty string is 4
// bytes on the wire and 16 in a []string; the smallest create op in a multi
// is 25 bytes on the wire and 104 in memory).
func TestDecodeAllocationIsBoundedByInput(t *testing.T) {
	const frame = DefaultMaxBuffer
	dense := func(count, elem int) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(count))
		return append(b, make([]byte, count*elem)...)
	}
	huge := binary.BigEndian.AppendUint32(nil, 0x7fffffff)
	// Multis of as many of the smallest ops or results as fit in a frame
	// (a MultiHeader is 9 bytes).
	multi := func(h MultiHeader, body Record) []byte {
		var e Encoder
		for e.Len() < frame-2*9-len(Marshal(body)) {
			h.Encode(&e)
			body.Encode(&e)
		}
		multiEnd.Encode(&e)
		return e.Bytes()
	}
	cases := []struct {
		name  string
		input []byte
		op    OpCode
		resp  bool
	}{
		{"buffer claiming 2 GiB", append(append([]byte{0, 0, 0, 1, '/'}, huge...), 0, 0, 0, 0), OpSetData, false},
		{"children claiming 2^31", huge, OpGetChildren, true},
		{"frame of empty children", dense((frame-4)/4, 4), OpGetChildren, true},
		{"frame of empty ACL entries", append(dense((frame-4)/12, 12), make([]byte, StatSize)...), OpGetACL, true},
		{"frame of empty whoAmI entries", dense((frame-4)/8, 8), OpWhoAmI, true},
		{"frame of tiny multi deletes", multi(MultiHeader{Type: OpDelete, Err: -1}, &PathVersionRequest{}), OpMulti, false},
		{"frame of tiny multi creates", multi(MultiHeader{Type: OpCreate, Err: -1}, &CreateRequest{ACL: []ACL{}}), OpMulti, false},
		{"frame of multi check results", multi(MultiHeader{Type: OpCheck}, &Empty{}), OpMulti, true},
		{"frame of empty watch paths", append(append(make([]byte, 8), dense((frame-20)/4, 4)...),
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), OpSetWatches, false},
	}
	for _, tc := range cases {
		var err error
		n := allocatedBy(func() {
			if tc.resp {
				_, err = DecodeResponse(tc.op, tc.input)
			} else {
				_, err = DecodeRequest(tc.op, tc.input)
			}
		})
		t.Logf("%s: %d input bytes, %d allocated, err %v", tc.name, len(tc.input), n, err)
		assert.LessOrEqual(t, n, uint64(5*len(tc.input)+64<<10), "%s: bytes allocated for %d bytes of input",
			tc.name, len(tc.input))
	}
}
