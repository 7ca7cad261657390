package sessions

import (
	"cmp"
	"slices"
	"time"

	"github.com/zabd/zabd/wire"
)

// Config is what a Tracker needs to know about its server.
type Config struct {
	ServerID int64         // the top byte of the ids it mints
	Tick     time.Duration // tickTime: the expiry bucket width
	Limits   Limits        // timeout bounds; zero means DefaultLimits(Tick)
}

// Session is one entry of the session table: what snapshots hold.
type Session struct {
	ID      int64
	Timeout int32 // negotiated timeout in ms, as the createSession txn recorded it
}

// session is the tracker's state for one live session.
type session struct {
	timeout   int32 // as the createSession txn records it
	committed bool  // its createSession txn has been applied here
	touchTTL  int32 // timeout a touch schedules: the current connection's negotiated one
	closing   bool  // expiry or close decided; no more touches
	owner     int64 // who serves it (a member id); valid when hasOwner
	hasOwner  bool
}

// Tracker is the session table of one member together with the expiry
// schedule of the sessions it is responsible for. Sessions enter when
// created or restored, leave when their closeSession txn is applied
// (Remove). Expire marks the ids it returns as closing: they accept no
// touches while their closeSession txn is on its way.
type Tracker struct {
	cfg    Config
	nextID int64
	byID   map[int64]*session
	queue  *ExpiryQueue
}

// NewTracker returns an empty tracker. now is the monotonic time (for the
// expiry schedule), wallMillis the wall time that seeds the ids it mints.
func NewTracker(cfg Config, now time.Duration, wallMillis int64) *Tracker {
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits(cfg.Tick)
	}
	return &Tracker{
		cfg:    cfg,
		nextID: FirstID(cfg.ServerID, wallMillis),
		byID:   make(map[int64]*session),
		queue:  NewExpiryQueue(cfg.Tick, now),
	}
}

// Limits returns the timeout bounds in force.
func (t *Tracker) Limits() Limits { return t.cfg.Limits }

// Create mints a new session id, tracks it with the given (already
// negotiated) timeout and schedules its expiry. The session is live from
// here on; its createSession txn records it in every member's table.
func (t *Tracker) Create(timeoutMillis int32, now time.Duration) int64 {
	// Skip ids in use: after a restart with the wall clock set back, the
	// minted ids could run into restored sessions.
	id := t.nextID
	for t.byID[id] != nil || id == containerOwner {
		id++
	}
	t.nextID = id + 1
	t.track(id, timeoutMillis, now).committed = false
	return id
}

// Add records that session id's createSession txn has been applied (or
// that a restored table holds it). A session this tracker does not know yet
// is tracked with a full timeout from now: a restart Adds every session of
// the restored table, so each gets a fresh full timeout, as in ZooKeeper. A
// session it knows (created here) keeps its schedule, closing or not, as
// ZooKeeper's commitSession only records the timeout: rescheduling a
// session that expired while its createSession waited for the disk would
// expire it a second time.
func (t *Tracker) Add(id int64, timeoutMillis int32, now time.Duration) {
	if s := t.byID[id]; s != nil {
		s.timeout, s.committed = timeoutMillis, true
		return
	}
	t.track(id, timeoutMillis, now).committed = true
}

func (t *Tracker) track(id int64, timeoutMillis int32, now time.Duration) *session {
	s := t.byID[id]
	if s == nil {
		s = &session{timeout: timeoutMillis, touchTTL: timeoutMillis}
		t.byID[id] = s
	}
	t.queue.Update(id, millis(s.touchTTL), now)
	return s
}

// Track records a session another member created (a learner minted its id
// and forwarded its createSession): it is live, with a full timeout from
// now, until its createSession txn is applied (Add) or it expires. A
// session already known keeps its state.
func (t *Tracker) Track(id int64, timeoutMillis int32, now time.Duration) {
	if t.byID[id] != nil {
		return
	}
	t.track(id, timeoutMillis, now).committed = false
}

// RestartExpiry gives every session that is not closing a full timeout
// from now: a member that takes the lead does, so that a failover never
// expires sessions whose touches went to the old leader (ZooKeeper's new
// leader starts its expiry queue afresh from the session table).
func (t *Tracker) RestartExpiry(now time.Duration) {
	ids := make([]int64, 0, len(t.byID))
	for id := range t.byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if s := t.byID[id]; !s.closing {
			t.queue.Update(id, millis(s.touchTTL), now)
		}
	}
}

// StepDown forgets what only a leader decides: which sessions are closing
// and which member serves each. A leader that steps down calls it. The
// closeSession txns it prepared may never commit (the next leader may not
// have them), and a session whose close is lost lives on in the table, as
// ZooKeeper's next role finds it — its fresh session tracker knows no
// closing marks and no owners. A closing mark left behind refused the
// session's reconnects with SessionExpired (leading again) or dropped its
// requests (following), while no member ever closed it; an owner left
// behind made a learner drop the reads of a session its own client had
// moved to it (SessionMoved). The sessions get an expiry schedule again
// when this member leads (RestartExpiry); a committed closeSession still
// removes them.
func (t *Tracker) StepDown() {
	for _, s := range t.byID {
		s.closing, s.hasOwner = false, false
	}
}

// Touch pushes id's expiry to a full timeout after now. It reports false
// when the session is unknown or already closing, as ZooKeeper's
// touchSession does.
func (t *Tracker) Touch(id int64, now time.Duration) bool {
	s := t.byID[id]
	if s == nil || s.closing {
		return false
	}
	t.queue.Update(id, millis(s.touchTTL), now)
	return true
}

// Revalidate is a reconnect within the session's lifetime: later touches
// use the timeout negotiated for the new connection (as ZooKeeper's touches
// use the connection's timeout), and the session gets a full one from now.
// It reports false for an unknown or closing session.
func (t *Tracker) Revalidate(id int64, timeoutMillis int32, now time.Duration) bool {
	s := t.byID[id]
	if s == nil || s.closing {
		return false
	}
	s.touchTTL = timeoutMillis
	t.queue.Update(id, millis(timeoutMillis), now)
	return true
}

// Expire returns, sorted by id, the sessions whose expiry has passed at now
// and marks them closing.
func (t *Tracker) Expire(now time.Duration) []int64 {
	ids := t.queue.Poll(now)
	for _, id := range ids {
		if s := t.byID[id]; s != nil {
			s.closing = true
		}
	}
	return ids
}

// NextExpiry returns the monotonic time of the next expiry check that can
// expire something.
func (t *Tracker) NextExpiry() time.Duration { return t.queue.NextBoundary() }

// SetClosing marks id closing (an explicit close is on its way) and stops
// its expiry; it reports false if id is unknown.
func (t *Tracker) SetClosing(id int64) bool {
	s := t.byID[id]
	if s == nil {
		return false
	}
	s.closing = true
	t.queue.Remove(id)
	return true
}

// Remove forgets id: its closeSession txn has been applied.
func (t *Tracker) Remove(id int64) {
	delete(t.byID, id)
	t.queue.Remove(id)
}

// Check answers whether a request of session id may proceed when it comes
// through owner: UnknownSession if there is no such session,
// SessionExpired if it is closing, SessionMoved if another owner serves it.
// The first owner to check claims the session.
func (t *Tracker) Check(id int64, owner int64) error {
	s := t.byID[id]
	switch {
	case s == nil:
		return wire.ErrUnknownSession
	case s.closing:
		return wire.ErrSessionExpired
	case !s.hasOwner:
		s.owner, s.hasOwner = owner, true
	case s.owner != owner:
		return wire.ErrSessionMoved
	}
	return nil
}

// SetOwner records that owner now serves id (a reconnect through another
// member); it fails with SessionExpired for an unknown or closing session.
func (t *Tracker) SetOwner(id int64, owner int64) error {
	s := t.byID[id]
	if s == nil || s.closing {
		return wire.ErrSessionExpired
	}
	s.owner, s.hasOwner = owner, true
	return nil
}

// ExpiryBuckets returns the expiry schedule, bucket by bucket in time order.
func (t *Tracker) ExpiryBuckets() []Bucket { return t.queue.Buckets() }

// Table returns every session whose createSession txn has been applied,
// sorted by id: the session table a snapshot stores.
func (t *Tracker) Table() []Session {
	out := make([]Session, 0, len(t.byID))
	for id, s := range t.byID {
		if s.committed {
			out = append(out, Session{ID: id, Timeout: s.timeout})
		}
	}
	slices.SortFunc(out, func(a, b Session) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func millis(ms int32) time.Duration { return time.Duration(ms) * time.Millisecond }
