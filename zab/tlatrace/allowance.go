package tlatrace

// Allowance names one place where zabd does, on purpose, what the spec's
// actions do not allow or do not model. The checker accepts such a step
// only through its allowance, counts it (Checker.Allowed) and tells the
// shell (Config.Note): none is accepted silently. doc.go says why each is
// safe.
type Allowance uint8

// The allowances, in the order of the table in doc.go.
const (
	// IntroductionToNonLeader: a learner introduces itself (FOLLOWERINFO,
	// OBSERVERINFO) to a member that does not lead, or no longer does:
	// the spec's ConnectAndFollowerSendFOLLOWERINFO needs the target to
	// lead at that moment; in zabd, as in ZooKeeper, the election's
	// outcome reaches members at different times, and a member that does
	// not lead refuses the connection.
	IntroductionToNonLeader Allowance = iota
	// PacketFromFormerLeader: a learner takes a packet its leader sent
	// before it stepped down: the spec's LeaderShutdown sends every
	// learner back to LOOKING in the same step; over TCP the learners
	// learn of it from the close that follows the packets sent before.
	PacketFromFormerLeader
	// PacketToAnotherRole: a packet reaches a member whose role cannot
	// take it (a leader's packet at a member that does not follow it, a
	// learner's at a member that does not lead it): a Ready's packets
	// leave once its disk operations are done, by which time the role that
	// asked for them may be over, and a broken connection is dialled again
	// to the peer's next incarnation. The member refuses the packet, as
	// the spec's FilterNonexistentMessage discards it; anything it did
	// with it would be refused as a step of its own.
	PacketToAnotherRole
	// EpochAboveTempMax: a leader proposes an epoch above the spec's
	// tempMaxEpoch (one above every acceptedEpoch it heard from voters):
	// zabd's leader also stays above its own currentEpoch and the epochs
	// of its log, which matters only when acceptedEpoch fell behind them,
	// and above the acceptedEpoch of the observers introduced, which the
	// spec does not model (ZooKeeper's getEpochToPropose counts them).
	EpochAboveTempMax
	// EpochFromConnectedLearners: a leader proposes an epoch below the
	// spec's tempMaxEpoch, but above the acceptedEpoch of every learner
	// still connected: zabd's leader forgets the FOLLOWERINFO of a
	// learner whose connection went (ZooKeeper's connectingFollowers
	// keeps it); that learner, back with its higher acceptedEpoch, makes
	// the leader look again.
	EpochFromConnectedLearners
	// DiffCarriesCommitted: DIFF's zxid is the leader's last committed
	// txn (ZooKeeper 3.8's rule, docs/compatibility.md point 8), where
	// the spec puts the learner's last zxid, which its learner ignores.
	DiffCarriesCommitted
	// DiffFromEpochStart: a learner at a new epoch's start (counter 0,
	// a zxid that names no txn) is sent a DIFF of what follows, not the
	// TRUNC of the spec's SyncFollower (compatibility point 9).
	DiffFromEpochStart
	// SnapInsteadOfTrunc: a learner past the leader's committed txns is
	// sent a SNAP where the spec's SyncFollower sends TRUNC (a learner at
	// a new epoch's start; compatibility points 9 and 10).
	SnapInsteadOfTrunc
	// SnapBelowApplied: a learner sent a SNAP of a zxid below the last txn
	// it applied keeps its tree and its log up to that txn, as after a
	// TRUNC to it, and skips the leader's txns up to it, where the spec's
	// learner replaces its history with the leader's: those txns are
	// committed, so the leader's history holds them too, and installing
	// the snapshot would take them back on disk until the txns after it
	// were durable again (a SNAP from a leader whose tree lags its log,
	// under Ensemble.ZooKeeperSync).
	SnapBelowApplied
	// OutstandingAfterNewLeader: the proposals outstanding when a learner
	// is synchronized follow NEWLEADER instead of preceding it
	// (ZOOKEEPER-4394, compatibility point 16).
	OutstandingAfterNewLeader
	// LoggedBeforeNewLeader: a learner logs a synchronization's txns as
	// they arrive, where the spec keeps them in packetsNotCommitted until
	// NEWLEADER: they are logged, never applied, before UPTODATE.
	LoggedBeforeNewLeader
	// NoAckOfSyncTxns: a learner's NEWLEADER ACK vouches for the txns of
	// its synchronization, and it sends none of the ACKs the spec's
	// FollowerProcessNEWLEADER sends for them (compatibility point 18).
	NoAckOfSyncTxns
	// EarlyAckOfSyncTxns: a leader ignores a learner's ACK of a txn of its
	// synchronization that arrives before its NEWLEADER ACK (a ZooKeeper
	// 3.8.0 learner's, ZOOKEEPER-4685), where the spec's leader counts
	// ACKs only after.
	EarlyAckOfSyncTxns
	// ProposeOnceEstablished: a leader proposes once a quorum ACKed
	// NEWLEADER (Zab.tla's LeaderProcessRequest), before a quorum of its
	// followers has processed UPTODATE (the system spec's guard, a bound
	// on its state space that ZooKeeper's leader does not have).
	ProposeOnceEstablished
	// Observers: a step of an observer, which the specs do not model:
	// OBSERVERINFO, the txns an observer takes with INFORM (PROPOSAL and
	// COMMIT in one), its NEWLEADER ACK; observers never count in a
	// quorum.
	Observers
	// UpdatingEpoch: a member starts with a currentEpoch above the one it
	// wrote, from the updatingEpoch mark of its log (ZooKeeper 3.8's
	// loadDataBase): its log holds a txn of the epoch whose NEWLEADER it
	// had taken.
	UpdatingEpoch

	numAllowances
)

var allowanceNames = [numAllowances]string{
	IntroductionToNonLeader:    "IntroductionToNonLeader",
	PacketFromFormerLeader:     "PacketFromFormerLeader",
	PacketToAnotherRole:        "PacketToAnotherRole",
	EpochAboveTempMax:          "EpochAboveTempMax",
	EpochFromConnectedLearners: "EpochFromConnectedLearners",
	DiffCarriesCommitted:       "DiffCarriesCommitted",
	DiffFromEpochStart:         "DiffFromEpochStart",
	SnapInsteadOfTrunc:         "SnapInsteadOfTrunc",
	SnapBelowApplied:           "SnapBelowApplied",
	OutstandingAfterNewLeader:  "OutstandingAfterNewLeader",
	LoggedBeforeNewLeader:      "LoggedBeforeNewLeader",
	NoAckOfSyncTxns:            "NoAckOfSyncTxns",
	EarlyAckOfSyncTxns:         "EarlyAckOfSyncTxns",
	ProposeOnceEstablished:     "ProposeOnceEstablished",
	Observers:                  "Observers",
	UpdatingEpoch:              "UpdatingEpoch",
}

func (a Allowance) String() string { return allowanceNames[a] }

// Allowances lists every allowance, in order.
func Allowances() []Allowance {
	out := make([]Allowance, numAllowances)
	for i := range out {
		out[i] = Allowance(i)
	}
	return out
}

// Counts is how often each allowance was taken.
type Counts [numAllowances]int

// Add adds o's counts to c.
func (c *Counts) Add(o Counts) {
	for i := range c {
		c[i] += o[i]
	}
}
