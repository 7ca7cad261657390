package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/sim/simclient"
	"github.com/zabd/zabd/wire"
)

// TestRecipeBugsAreCaught: each recipe mistake put back is caught within
// the first ten seeds that run its recipe, by a seed that passes without
// it: a lock waiter that leaves no watch on its predecessor waits for ever
// (the liveness check), an election that skips the sequence check has two
// leaders while both sessions live (the exclusion checker, whenever two
// candidates' terms meet).
func TestRecipeBugsAreCaught(t *testing.T) {
	for _, c := range []struct{ bug, recipe, kind string }{
		{"lock-no-watch", simclient.RecipeLock, KindLiveness},
		{"election-no-sequence-check", simclient.RecipeElection, KindRecipeExclusion},
	} {
		t.Run(c.bug, func(t *testing.T) {
			bugs, err := ParseRecipeBugs(c.bug)
			require.NoError(t, err)
			tried := 0
			for seed := int64(1); tried < 10 && seed <= 500; seed++ {
				s := ScheduleForSeed(seed)
				if s.Recipe != c.recipe {
					continue
				}
				tried++
				buggy := Run(s, Options{RecipeBugs: bugs})
				if !buggy.Failed() {
					continue
				}
				require.Equal(t, c.kind, buggy.Failures[0].Kind, "seed %d: %v", seed, buggy.Failures[0])
				require.False(t, Run(s, Options{}).Failed(), "seed %d passes without the bug", seed)
				t.Logf("caught by seed %d (%d seeds running the %s recipe tried)", seed, tried, c.recipe)
				return
			}
			t.Fatalf("none of the first %d seeds running the %s recipe caught %s", tried, c.recipe, c.bug)
		})
	}
	_, err := ParseRecipeBugs("lock-no-watch,nonsense")
	require.ErrorContains(t, err, `unknown recipe bug "nonsense"`)
}

func resourceWrite(client int, token string, zxid int64) simclient.Entry {
	return simclient.Entry{Kind: "op", Client: client, Op: simclient.Op{Code: wire.OpSetData, Path: simclient.ResourcePath, Data: token},
		Result: simclient.Result{Zxid: zxid}}
}

// The fencing checker: tokens must grow in zxid order; failed, unknown and
// other writes do not count.
func TestFencingViolations(t *testing.T) {
	ok := []simclient.Entry{resourceWrite(1, "5", 10), resourceWrite(2, "9", 12), resourceWrite(1, "7", 11)}
	require.Empty(t, fencingViolations(ok))
	stale := append(ok, resourceWrite(3, "6", 13))
	failed := resourceWrite(3, "1", 14)
	failed.Result.Err = wire.ErrBadVersion
	unknown := resourceWrite(3, "1", 0)
	unknown.Result.Unknown = true
	elsewhere := resourceWrite(3, "1", 15)
	elsewhere.Op.Path = "/a"
	got := fencingViolations(append(stale, failed, unknown, elsewhere))
	require.Len(t, got, 1)
	require.Contains(t, got[0], "client 3's write of token 0x6 (zxid 0xd) follows client 2's of token 0x9 (zxid 0xc)")
	require.Len(t, fencingViolations([]simclient.Entry{resourceWrite(1, "x", 1)}), 1, "a write that is no token")
}

// The exclusion checker: overlapping holds of two clients are excused only
// when the earlier holder's session closed before the later hold began.
func TestOverlappingHolds(t *testing.T) {
	ms := time.Millisecond
	a := hold{client: 1, session: 0xa, token: 1, from: 0, until: 100 * ms}
	b := hold{client: 2, session: 0xb, token: 2, from: 50 * ms, until: 150 * ms}
	after := hold{client: 3, session: 0xc, token: 3, from: 150 * ms, until: 200 * ms}
	same := hold{client: 2, session: 0xb, token: 4, from: 205 * ms, until: 210 * ms}

	excused, violations := overlaps([]hold{a, b, after, same}, map[int64]time.Duration{0xa: 40 * ms})
	require.Len(t, excused, 1)
	require.Empty(t, violations)
	excused, violations = overlaps([]hold{a, b}, map[int64]time.Duration{0xa: 60 * ms})
	require.Empty(t, excused)
	require.Len(t, violations, 1, "closed only after the later hold began")
	_, violations = overlaps([]hold{a, b}, nil)
	require.Len(t, violations, 1)
	require.Contains(t, violations[0], "client 1 held token 0x1 from 0.000000s to 0.100000s and client 2 held token 0x2 from 0.050000s")
}

func queueOp(client int, code wire.OpCode, name string, err wire.ErrCode, unknown bool) simclient.Entry {
	return simclient.Entry{Kind: "op", Client: client, Op: simclient.Op{Code: code, Path: simclient.QueuePath + "/" + name},
		Result: simclient.Result{Err: err, Unknown: unknown}}
}

// The queue checker: an item produced is taken (surely or perhaps) or
// still queued; no node is taken twice.
func TestQueueViolations(t *testing.T) {
	history := []simclient.Entry{
		queueOp(1, wire.OpCreate, "c1p0-", wire.ErrOK, false),
		queueOp(1, wire.OpCreate, "c1p1-", wire.ErrOK, false),
		queueOp(2, wire.OpCreate, "c2p0-", wire.ErrOK, false),
		queueOp(2, wire.OpCreate, "c2p1-", wire.ErrConnectionLoss, true), // perhaps produced: not owed
		queueOp(2, wire.OpDelete, "c1p0-0000000000", wire.ErrOK, false),
		queueOp(1, wire.OpDelete, "c1p0-0000000000", wire.ErrNoNode, false),
		queueOp(1, wire.OpDelete, "c2p0-0000000002", wire.ErrConnectionLoss, true), // perhaps taken
	}
	require.Empty(t, queueViolations(history, []string{"c1p1-0000000001"}))
	got := queueViolations(history, nil)
	require.Equal(t, []string{"item c1p1-, produced by client 1, was never taken and is not in the queue: lost"}, got)
	twice := append(history, queueOp(1, wire.OpDelete, "c1p0-0000000000", wire.ErrOK, false))
	require.Equal(t, []string{"item c1p0-0000000000 was taken 2 times"}, queueViolations(twice, []string{"c1p1-0000000001"}))
}

func barrierJoin(client, round int, session int64, call time.Duration) simclient.Entry {
	return simclient.Entry{Kind: "op", Client: client, Session: session, Call: call,
		Op: simclient.Op{Code: wire.OpCreate, Path: fmt.Sprintf("%s/r%d/c%d", simclient.BarrierPath, round, client)}}
}

func barrierNote(client int, kind simclient.NoteKind, round int, at time.Duration) simclient.Note {
	return simclient.Note{Client: client, Kind: kind, Token: int64(round), At: int64(at)}
}

// The barrier checker: none enters a round before every participant began
// to join it, none leaves before every participant began to leave it —
// unless that participant's session, one it joined with, had closed.
func TestBarrierFindings(t *testing.T) {
	ms := time.Millisecond
	history := []simclient.Entry{barrierJoin(1, 0, 0xa, 1*ms), barrierJoin(2, 0, 0xb, 2*ms)}
	good := []simclient.Note{
		barrierNote(1, simclient.NoteEntered, 0, 3*ms), barrierNote(1, simclient.NoteLeaving, 0, 3*ms),
		barrierNote(2, simclient.NoteEntered, 0, 4*ms), barrierNote(2, simclient.NoteLeaving, 0, 4*ms),
		barrierNote(1, simclient.NoteLeft, 0, 5*ms), barrierNote(2, simclient.NoteLeft, 0, 6*ms),
	}
	excused, violations := barrierFindings(good, history, nil, 2)
	require.Empty(t, excused)
	require.Empty(t, violations)

	early := []simclient.Note{barrierNote(1, simclient.NoteEntered, 0, 1500*time.Microsecond)}
	_, violations = barrierFindings(early, history, nil, 2)
	require.Equal(t, []string{"client 1 entered round 0 at 0.001500s before client 2 began to join it"}, violations)

	left := []simclient.Note{barrierNote(1, simclient.NoteLeaving, 0, 3*ms), barrierNote(1, simclient.NoteLeft, 0, 5*ms)}
	excused, violations = barrierFindings(left, history, nil, 2)
	require.Empty(t, excused)
	require.Equal(t, []string{"client 1 left round 0 at 0.005000s before client 2 began to leave it"}, violations)
	excused, violations = barrierFindings(left, history, map[int64]time.Duration{0xb: 4 * ms}, 2)
	require.Len(t, excused, 1, "client 2's session had closed: its node went with it")
	require.Empty(t, violations)
}
