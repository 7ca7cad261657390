package sessions

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
)

const tick = 2 * time.Second

func newTestTracker(now time.Duration) *Tracker {
	return NewTracker(Config{ServerID: 1, Tick: tick}, now, 1_700_000_000_000)
}

func TestTrackerCreateMintsSuccessiveIDs(t *testing.T) {
	tr := newTestTracker(0)
	a := tr.Create(4000, 0)
	b := tr.Create(4000, 0)
	assert.Equal(t, FirstID(1, 1_700_000_000_000), a)
	assert.Equal(t, a+1, b)
	assert.Equal(t, int64(1), a>>56)
	assert.Empty(t, tr.Table(), "uncommitted sessions are not in the table")
	tr.Add(b, 4000, 0)
	assert.Equal(t, []Session{{ID: b, Timeout: 4000}}, tr.Table())
}

func TestTrackerTouchDefersExpiry(t *testing.T) {
	tr := newTestTracker(0)
	id := tr.Create(4000, 0)
	now := 3 * time.Second
	require.True(t, tr.Touch(id, now)) // due at roundUp(7 s) = 8 s
	assert.Empty(t, tr.Expire(6*time.Second))
	assert.Equal(t, []int64{id}, tr.Expire(8*time.Second))
	assert.False(t, tr.Touch(id, 8*time.Second), "a closing session takes no touches")
	assert.ErrorIs(t, tr.Check(id, 1), wire.ErrSessionExpired)
	tr.Remove(id)
	assert.ErrorIs(t, tr.Check(id, 1), wire.ErrUnknownSession)
}

func TestTrackerRevalidateUsesNewTimeout(t *testing.T) {
	tr := newTestTracker(0)
	id := tr.Create(4000, 0)
	tr.Add(id, 4000, 0)
	require.True(t, tr.Revalidate(id, 20000, time.Second))
	assert.Empty(t, tr.Expire(20*time.Second))
	require.True(t, tr.Touch(id, 20*time.Second)) // touches now use 20 s
	assert.Empty(t, tr.Expire(40*time.Second))
	assert.Equal(t, []int64{id}, tr.Expire(42*time.Second))
	assert.Equal(t, []Session{{ID: id, Timeout: 4000}}, tr.Table(), "the table keeps the committed timeout")
}

func TestTrackerOwner(t *testing.T) {
	tr := newTestTracker(0)
	id := tr.Create(4000, 0)
	require.NoError(t, tr.Check(id, 7))
	assert.ErrorIs(t, tr.Check(id, 8), wire.ErrSessionMoved)
	require.NoError(t, tr.SetOwner(id, 8))
	assert.NoError(t, tr.Check(id, 8))
	assert.ErrorIs(t, tr.SetOwner(99, 8), wire.ErrSessionExpired)
}

func TestTrackerExpiresManyInIDOrder(t *testing.T) {
	tr := newTestTracker(0)
	var ids []int64
	for range 60 {
		ids = append(ids, tr.Create(4000, 0))
	}
	tr.SetClosing(ids[3]) // an explicit close is on its way: not expired again
	got := tr.Expire(time.Minute)
	want := append(append([]int64(nil), ids[:3]...), ids[4:]...)
	assert.Equal(t, want, got)
}

func TestTrackerCreateSkipsIDsInUse(t *testing.T) {
	tr := newTestTracker(0)
	first := FirstID(1, 1_700_000_000_000)
	tr.Add(first, 4000, 0)   // restored from before a clock step back
	tr.Add(first+1, 4000, 0) // likewise
	assert.Equal(t, first+2, tr.Create(4000, 0))
	assert.Equal(t, first+3, tr.Create(4000, 0))
}

func TestTrackerAddKeepsTheScheduleOfAKnownSession(t *testing.T) {
	tr := newTestTracker(0)
	id := tr.Create(4000, 0) // due at 6 s
	tr.Add(id, 4000, 5*time.Second)
	assert.Equal(t, []int64{id}, tr.Expire(6*time.Second), "committing is not a touch")

	closing := tr.Create(4000, 10*time.Second)
	require.Equal(t, []int64{closing}, tr.Expire(16*time.Second))
	tr.Add(closing, 4000, 17*time.Second) // its createSession commits after it expired
	assert.Empty(t, tr.Expire(time.Hour), "expired once only")
	assert.Equal(t, []Session{{ID: id, Timeout: 4000}, {ID: closing, Timeout: 4000}}, tr.Table(), "in the table until their closeSession txns apply")
}
