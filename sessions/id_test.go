package sessions

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

func TestFirstIDShape(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sid := rapid.Int64Range(0, 254).Draw(t, "server")
		wall := rapid.Int64Range(0, 1<<45).Draw(t, "wall")
		id := FirstID(sid, wall)
		assert.Equal(t, sid, int64(uint64(id)>>56), "server id in the top byte")
		assert.Equal(t, uint64(wall)&(1<<40-1), (uint64(id)>>16)&(1<<40-1), "low 40 bits of the time next")
		if id != containerOwner+1 { // the one id moved off the container marker
			assert.Zero(t, id&0xFFFF, "low 16 bits left for counting")
		}
	})
}

func TestFirstIDAvoidsContainerOwner(t *testing.T) {
	// Server 128 at a time whose low 40 bits are zero would mint exactly
	// the container marker.
	assert.Equal(t, int64(containerOwner)+1, FirstID(128, 1<<40))
}

func TestValidateServerID(t *testing.T) {
	assert.NoError(t, ValidateServerID(0, true))
	assert.NoError(t, ValidateServerID(255, false))
	assert.Error(t, ValidateServerID(255, true))
	assert.Error(t, ValidateServerID(256, false))
	assert.Error(t, ValidateServerID(-1, false))
}

func TestNegotiate(t *testing.T) {
	l := DefaultLimits(2000 * 1e6)
	assert.Equal(t, Limits{MinMillis: 4000, MaxMillis: 40000}, l)
	assert.Equal(t, int32(4000), l.Negotiate(0))
	assert.Equal(t, int32(4000), l.Negotiate(-5))
	assert.Equal(t, int32(10000), l.Negotiate(10000))
	assert.Equal(t, int32(40000), l.Negotiate(1<<30))
	assert.Equal(t, int32(10), Limits{MinMillis: 20, MaxMillis: 10}.Negotiate(15), "max wins over a misconfigured min, as in ZooKeeper")
}
