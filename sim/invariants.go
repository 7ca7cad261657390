package sim

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// KindInvariant prefixes the failures of the ensemble invariants; the
// invariant's name follows (as Zab.tla and ZooKeeper's system spec name
// them), so the shrinker keeps to the same invariant.
const KindInvariant = "invariant: "

// invariants checks, after every step of every server, what Zab promises
// across the ensemble:
//
//   - Leadership: at most one server establishes itself leader of an
//     epoch.
//   - Agreement (one txn per zxid): every server that logs a zxid logs
//     the same txn under it (ensembles only: a standalone server reuses
//     the zxids a crash took before they were durable).
//   - PrefixConsistency and TotalOrder: the txns each server applies, in
//     the order it applies them, are a prefix of one sequence, the
//     delivered sequence; so a txn delivered anywhere is never skipped
//     or replaced on another server (LocalPrimaryOrder and
//     GlobalPrimaryOrder follow: the sequence is ordered by zxid, and so
//     by epoch and by each primary's order of proposal).
//   - PrimaryIntegrity and leader log completeness: a leader that
//     establishes an epoch holds every delivered txn in its history.
//   - One tree digest per zxid: every server that has applied up to a
//     zxid has the same tree there.
//   - EpochOrder: acceptedEpoch ≥ currentEpoch on every disk, whenever
//     either is written and at every start.
//   - A reply to a client carries a zxid durable on a quorum of voters
//     (a standalone server: on its own disk), so an acknowledged write
//     survives any crash pattern that leaves a quorum's disks intact.
//   - ExpiryCarriedOut: a session a server told its client was expired
//     is closed by a closeSession txn within a bound (expiry.go).
//
// A violation names the invariant, the servers and the zxids.
type invariants struct {
	w *world
	// txns is the hash of the txn logged under each zxid (ensembles).
	txns zxidMap[uint64]
	// digests is the tree digest after each applied zxid.
	digests zxidMap[int64]
	// delivered is the one sequence every server's applied txns follow.
	delivered []int64
	// leaders is the server that established each epoch.
	leaders map[int64]int64
	// per server: how much of delivered it has applied, and the zxid it
	// had applied at the last check.
	at      []int
	lastApp []int64
	// maxReplied is the highest zxid a reply to a client carried.
	maxReplied int64
	// holders is scratch space for durableOnQuorumWithout.
	holders []int64
	// expiries are the sessions told expired whose close is not yet
	// committed, in the order they were told; closedSessions, the
	// sessions a closeSession txn was delivered for.
	expiries       []expiryWatch
	closedSessions map[int64]bool
	// timeouts is the longest timeout negotiated for each session.
	timeouts map[int64]time.Duration
}

func newInvariants(w *world, servers int) *invariants {
	return &invariants{w: w, leaders: map[int64]int64{}, closedSessions: map[int64]bool{},
		timeouts: map[int64]time.Duration{}, at: make([]int, servers), lastApp: make([]int64, servers)}
}

// violate records a broken invariant.
func (w *world) violate(name, format string, args ...any) {
	w.fail(KindInvariant+name, format, args...)
}

// logged checks Agreement as a server appends zxid with entry.
func (inv *invariants) logged(s *server, zxid int64, entry []byte) bool {
	if inv.w.ensemble == nil {
		return true
	}
	h := fnv.New64a()
	h.Write(entry)
	sum := h.Sum64()
	if prev, ok := inv.txns.get(zxid); ok && prev != sum {
		inv.w.violate("Agreement", "server %d logs a txn under zxid 0x%x that differs from the txn another server logged under it", s.sid, zxid)
		return false
	}
	inv.txns.put(zxid, sum)
	return true
}

// applied checks PrefixConsistency and the digest once a server's tree has
// moved.
func (inv *invariants) applied(s *server) {
	now, digest := s.peer.LastZxid(), s.peer.Digest()
	if want, ok := inv.digests.get(now); ok && want != digest && now != 0 && s.fuzzyUntil == 0 {
		inv.w.violate("OneDigestPerZxid", "server %d has tree digest %d at zxid 0x%x, another server had %d there", s.sid, digest, now, want)
		return
	}
	if now != 0 && s.fuzzyUntil == 0 {
		inv.digests.put(now, digest)
	}
	before := inv.lastApp[s.id]
	inv.lastApp[s.id] = now
	if now == before {
		return
	}
	if now < before || s.installed || !s.holdsInLog(now) {
		s.installed = false
		// A restart from a snapshot, or a SNAP from the leader: the tree
		// is whatever it was at now, which must be a delivered zxid (or
		// the empty tree).
		inv.jumpTo(s, now)
		return
	}
	lo, _ := slices.BinarySearch(s.logged, before+1)
	hi, _ := slices.BinarySearch(s.logged, now+1)
	for _, z := range s.logged[lo:hi] {
		i := inv.at[s.id]
		if i < len(inv.delivered) {
			if inv.delivered[i] != z {
				inv.w.violate("PrefixConsistency", "server %d applied zxid 0x%x as txn #%d, but 0x%x was delivered as #%d elsewhere",
					s.sid, z, i+1, inv.delivered[i], i+1)
				return
			}
		} else {
			inv.delivered = append(inv.delivered, z)
			inv.w.delivered(s, z)
			if t, ok := s.witnessed.get(z); ok && t.op == wire.OpCloseSession {
				inv.sessionClosed(t.session, z)
			}
		}
		inv.at[s.id] = i + 1
	}
}

// jumpTo places a server whose tree was replaced at zxid in the delivered
// sequence.
func (inv *invariants) jumpTo(s *server, zxid int64) {
	if zxid == 0 {
		inv.at[s.id] = 0
		return
	}
	i, found := slices.BinarySearch(inv.delivered, zxid)
	if !found {
		inv.w.violate("PrefixConsistency", "server %d holds a tree at zxid 0x%x, which was never delivered (last delivered: %s)",
			s.sid, zxid, inv.lastDelivered())
		return
	}
	inv.at[s.id] = i + 1
}

// committedEnd is the highest zxid known committed: delivered somewhere,
// or carried by a reply.
func (inv *invariants) committedEnd() int64 {
	end := inv.maxReplied
	if n := len(inv.delivered); n > 0 {
		end = max(end, inv.delivered[n-1])
	}
	return end
}

func (inv *invariants) lastDelivered() string {
	if len(inv.delivered) == 0 {
		return "none"
	}
	return fmt.Sprintf("0x%x", inv.delivered[len(inv.delivered)-1])
}

// roleChanged checks Leadership and leader log completeness when a server
// establishes an epoch.
func (inv *invariants) roleChanged(s *server) {
	st := s.role
	if st.Phase == zab.PhaseBroadcast && s.fuzzyUntil != 0 {
		inv.w.violate("FuzzyTreeServed", "server %d serves in epoch %d from a tree at 0x%x loaded from a fuzzy snapshot that holds txns up to 0x%x it has not applied again",
			s.sid, st.Epoch, s.peer.LastZxid(), s.fuzzyUntil)
		return
	}
	if st.Role != zab.RoleLeading || st.Phase != zab.PhaseBroadcast || inv.w.ensemble == nil {
		return
	}
	if prev, ok := inv.leaders[st.Epoch]; ok && prev != s.sid {
		inv.w.violate("Leadership", "servers %d and %d both established epoch %d", prev, s.sid, st.Epoch)
		return
	}
	if _, ok := inv.leaders[st.Epoch]; !ok {
		inv.w.stats.Epochs++
	}
	inv.leaders[st.Epoch] = s.sid
	for _, z := range inv.delivered {
		if z > s.snapBase && !s.holdsInLog(z) {
			inv.w.violate("LeaderLogCompleteness", "server %d established epoch %d without delivered txn 0x%x in its history (log %s, snapshot at 0x%x)",
				s.sid, st.Epoch, z, describeZxids(s.logged), s.snapBase)
			return
		}
	}
}

// durableOnQuorum reports whether zxid is durable on a quorum of voters.
func (inv *invariants) durableOnQuorum(zxid int64) bool { return inv.durableOnQuorumWithout(zxid, nil) }

// durableOnQuorumWithout reports whether zxid is durable on a quorum of
// voters other than except.
func (inv *invariants) durableOnQuorumWithout(zxid int64, except *server) bool {
	ids := inv.holders[:0] // checked for every reply: no allocation
	for _, s := range inv.w.servers {
		if s != except && s.durablyHolds(zxid) {
			ids = append(ids, s.sid)
		}
	}
	inv.holders = ids
	if inv.w.ensemble == nil {
		return len(ids) == 1
	}
	return inv.w.quorum.ContainsQuorum(voters(inv.w, ids))
}

func voters(w *world, ids []int64) []int64 {
	return slices.DeleteFunc(ids, func(id int64) bool { return !slices.Contains(w.ensemble.Voters, id) })
}

// durableReport says which servers hold zxid durably, for a failure.
func (inv *invariants) durableReport(zxid int64) string {
	var parts []string
	for _, s := range inv.w.servers {
		parts = append(parts, fmt.Sprintf("server %d durable to 0x%x holds it: %v", s.sid, s.durable, s.durablyHolds(zxid)))
	}
	return strings.Join(parts, "; ")
}

// holdsInLog reports whether the server's log holds zxid.
func (s *server) holdsInLog(zxid int64) bool {
	_, found := slices.BinarySearch(s.logged, zxid)
	return found
}

// durablyHolds reports whether the server's disk holds zxid durably: in
// its log up to the durable point, or in a snapshot.
func (s *server) durablyHolds(zxid int64) bool {
	return zxid <= s.snapBase || (zxid <= s.durable && s.holdsInLog(zxid))
}

func describeZxids(zs []int64) string {
	if len(zs) == 0 {
		return "empty"
	}
	return fmt.Sprintf("%d txns 0x%x..0x%x", len(zs), zs[0], zs[len(zs)-1])
}
