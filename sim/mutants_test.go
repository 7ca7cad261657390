package sim

// The catalogue of mutants that TestMutants (mutate_test.go) runs: each
// breaks one rule of the protocol or of the Ready contract with a small
// source patch, the kind of slip a reviewer could miss. An edit replaces
// text that must occur exactly once in its file (after the mutant's earlier
// edits), so a catalogue that no longer matches the code fails
// TestMutantsApply instead of testing nothing. docs/simulator.md
// ("Mutation testing") lists them with the last run's results.

// mutantEdit replaces old, which must occur exactly once in file (a path
// from the module root), with new.
type mutantEdit struct {
	file, old, new string
}

// mutant is one deliberately broken rule.
type mutant struct {
	name string
	// rule is the rule the patch breaks, in one sentence.
	rule string
	// equivalent, if set, says why the patch cannot change what the
	// simulator runs (the rule is kept elsewhere, or the simulator never
	// reaches the code): a survivor that is no gap in the sweep's aim.
	equivalent string
	edits      []mutantEdit
}

var mutants = []mutant{
	// Discovery.
	{
		name: "learner-acceptedepoch-not-durable",
		rule: "A learner's acceptedEpoch is durable before its ACKEPOCH leaves (the patch keeps the new one in memory until the next epoch write, at the NEWLEADER ACK).",
		edits: []mutantEdit{{"zab/learner.go",
			`	case epoch > p.acceptedEpoch:
		p.setAcceptedEpoch(epoch)
`,
			`	case epoch > p.acceptedEpoch:
		p.acceptedEpoch = epoch
`}},
	},
	{
		name: "leaderinfo-below-acceptedepoch",
		rule: "A learner never takes a LEADERINFO below its acceptedEpoch: it promised a later leader.",
		equivalent: "a zabd leader never sends a LEADERINFO below the acceptedEpoch a learner announced: it proposes above every acceptedEpoch " +
			"of its gathering quorum and gives the lead up when a later FOLLOWERINFO announces more (leader-keeps-lead-below-late-accepted, " +
			"killed), and a learner's acceptedEpoch cannot grow between its FOLLOWERINFO and the LEADERINFO on that connection, since it " +
			"follows one leader at a time; the rule guards against ZooKeeper 3.8 leaders, which answer such a learner anyway (zab's " +
			"crash_between_epochs.txt and bad_leaderinfo.txt inject that LEADERINFO)",
		edits: []mutantEdit{{"zab/learner.go",
			"\tcase epoch == p.acceptedEpoch:\n",
			"\tcase epoch <= p.acceptedEpoch:\n"}},
	},
	{
		name: "epoch-ignores-learners-accepted",
		rule: "The new epoch exceeds the acceptedEpoch of every voter whose FOLLOWERINFO made the gathering quorum.",
		edits: []mutantEdit{{"zab/leader.go",
			"\t\tepoch = max(epoch, h.acceptedEpoch)\n",
			""}},
	},
	{
		name: "ackepoch-counted-when-accepted-before",
		rule: "An ACKEPOCH counts towards the epoch's quorum only when the learner accepted the epoch from this LEADERINFO (currentEpoch is not -1), not one it had accepted before.",
		edits: []mutantEdit{{"zab/leader.go",
			"\tif h.currentEpoch != -1 {\n",
			"\tif p.quorum.ackEpoch(h.sid); h.currentEpoch != -1 {\n"}},
	},
	{
		name: "leader-ignores-more-recent-learner",
		rule: "A leader that learns from an ACKEPOCH that a learner's history is more recent than its own gives up the lead.",
		edits: []mutantEdit{{"zab/leader.go",
			"\t\tif h.currentEpoch > p.currentEpoch || (h.currentEpoch == p.currentEpoch && h.lastZxid > p.lastProposed) {\n",
			"\t\tif false && (h.currentEpoch > p.currentEpoch || (h.currentEpoch == p.currentEpoch && h.lastZxid > p.lastProposed)) {\n"}},
	},
	{
		name: "leader-currentepoch-before-log-durable",
		rule: "A leader makes the new epoch its currentEpoch only once its own log is durable (ZOOKEEPER-4643, the leader's side).",
		equivalent: "zab/member keeps the rule too: the leader's acceptedEpoch write at its epoch proposal is a barrier, fsynced after every " +
			"append before it (Ready rule 6), and its LEADERINFOs wait for that job (rule 8); a leader in discovery appends nothing, so " +
			"by the time a quorum's ACKEPOCHs arrive its log is durable and the patched test is always true",
		edits: []mutantEdit{{"zab/leader.go",
			"\tif l.stage != leaderEpochProposed || !p.quorum.epochAcked() || p.durableZxid() < p.lastProposed {\n",
			"\tif l.stage != leaderEpochProposed || !p.quorum.epochAcked() {\n"}},
	},
	{
		name: "quorum-counts-observers",
		rule: "Only voters count towards the leader's quorums; the patch counts every member it is given, so observers heard from keep a leader cut off from the voters leading.",
		edits: []mutantEdit{{"zab/quorum.go",
			`		if q.m.isVoter(id) {
			vs = append(vs, id)
`,
			`		if q.m.isVoter(id) || true {
			vs = append(vs, id)
`}},
	},

	{
		name: "leader-acceptedepoch-not-durable",
		rule: "A leader's new epoch is durable as its acceptedEpoch before its LEADERINFO leaves (the patch keeps it in memory until the next epoch write).",
		edits: []mutantEdit{{"zab/leader.go",
			"\tl.epoch, l.stage = epoch, leaderEpochProposed\n\tp.setAcceptedEpoch(epoch)\n",
			"\tl.epoch, l.stage = epoch, leaderEpochProposed\n\tp.acceptedEpoch = epoch\n"}},
	},
	{
		name: "leader-ignores-own-acceptedepoch",
		rule: "A leader's new epoch exceeds its own acceptedEpoch, not only its currentEpoch: it may have accepted an epoch from a leader that never established it.",
		edits: []mutantEdit{{"zab/leader.go",
			"\tepoch := p.acceptedEpoch\n",
			"\tepoch := p.currentEpoch\n"}},
	},
	{
		name: "leader-keeps-lead-below-late-accepted",
		rule: "A leader that hears, after proposing its epoch, from a learner that accepted a later one looks again: the learner will never take its epoch (the patch is one epoch short).",
		edits: []mutantEdit{{"zab/leader.go",
			"h.acceptedEpoch > l.epoch {",
			"h.acceptedEpoch > l.epoch+1 {"}},
	},
	{
		name: "sync-before-epoch-acked",
		rule: "A leader synchronizes a learner only once a quorum acknowledged the epoch and the epoch is its currentEpoch, not at the learner's own ACKEPOCH.",
		edits: []mutantEdit{{"zab/leader.go",
			"\tif l.stage >= leaderSynchronizing {\n",
			"\tif l.stage >= leaderEpochProposed {\n"}},
	},
	{
		name: "leader-currentepoch-not-durable",
		rule: "A leader's new currentEpoch is durable before it synchronizes any learner (the patch keeps it in memory until the next epoch write).",
		edits: []mutantEdit{{"zab/leader.go",
			"\tp.setCurrentEpoch(l.epoch)\n",
			"\tp.currentEpoch = l.epoch\n"}},
	},
	{
		name: "establish-counts-undurable-leader",
		rule: "A leader counts itself towards the NEWLEADER quorum only once its own log holds the initial history durably.",
		equivalent: "the leader made the epoch current only once its log was durable to its last zxid, which is the initial history's end " +
			"(maybeEpochAcked), and what it counts durable never goes down while it leads (a SNAP's pending snapshot, the only thing that " +
			"zeroes it, is installed as a learner and written before that wait can pass), so the patched test is always true where it runs",
		edits: []mutantEdit{{"zab/leader.go",
			"\tif p.durableZxid() >= l.initialEnd {\n",
			"\tif true {\n"}},
	},
	// Synchronization.
	{
		name: "currentepoch-before-synced-durable",
		rule: "currentEpoch is written only after the synchronized txns are durable (the patch writes it as NEWLEADER arrives; the ACK still waits).",
		edits: []mutantEdit{{"zab/learner.go",
			"\t\tl.stage, l.newLeaderEnd = learnerNewLeaderSeen, p.lastProposed\n",
			"\t\tl.stage, l.newLeaderEnd = learnerNewLeaderSeen, p.lastProposed\n\t\tp.setCurrentEpoch(l.newEpoch)\n"}},
	},
	{
		name: "newleader-ack-before-currentepoch-durable",
		rule: "currentEpoch is durable before the NEWLEADER ACK leaves (the patch keeps it in memory until the next epoch write).",
		edits: []mutantEdit{{"zab/learner.go",
			"\tp.setCurrentEpoch(l.newEpoch)\n\tl.stage = learnerNewLeaderAcked\n",
			"\tp.currentEpoch = l.newEpoch\n\tl.stage = learnerNewLeaderAcked\n"}},
	},
	{
		name: "trunc-past-leader-as-diff",
		rule: "TRUNC, not DIFF, for a learner whose log runs past what the leader can vouch for: it may hold txns the leader lacks.",
		edits: []mutantEdit{{"zab/sync.go",
			"\t\treturn syncPlan{mode: syncTrunc, after: h.last}\n",
			"\t\treturn syncPlan{mode: syncDiff, after: peerLast}\n"}},
	},
	{
		name: "no-snap-behind-window",
		rule: "SNAP (or a DIFF read from the txn log) for a learner behind everything the leader can send from memory, never a DIFF or TRUNC that leaves a gap.",
		edits: []mutantEdit{{"zab/sync.go",
			"\tcase peerLast < h.knownFrom:\n\t\treturn syncPlan{mode: syncSnap}\n",
			""}},
	},
	{
		name: "diverged-log-as-diff",
		rule: "TRUNC, not DIFF, for a learner whose last txn is inside the leader's history range but not in it (a proposal of an epoch that never committed it).",
		edits: []mutantEdit{{"zab/sync.go",
			"\treturn syncPlan{mode: syncTrunc, after: common}\n",
			"\treturn syncPlan{mode: syncDiff, after: peerLast}\n"}},
	},
	{
		name: "newleader-ack-before-synced-durable",
		rule: "A learner ACKs NEWLEADER (and writes currentEpoch) only once every txn it took before NEWLEADER is durable (the patch waits only for what is durable already).",
		edits: []mutantEdit{{"zab/learner.go",
			"\t\tl.stage, l.newLeaderEnd = learnerNewLeaderSeen, p.lastProposed\n",
			"\t\tl.stage, l.newLeaderEnd = learnerNewLeaderSeen, p.durableZxid()\n"}},
	},
	{
		name: "trunc-not-written",
		rule: "A TRUNC cuts the log on disk (Ready.Truncate) before anything is logged after it, not only the Peer's memory of it.",
		edits: []mutantEdit{{"zab/learner.go",
			"\tp.durable = min(p.durable, zxid)\n\tp.out.Truncate = &zxid\n",
			"\tp.durable = min(p.durable, zxid)\n"}},
	},
	{
		name: "damaged-member-votes",
		rule: "A member whose log lost txns to damage abstains from elections until a leader has synchronized it: it may have acknowledged txns it no longer holds.",
		edits: []mutantEdit{{"zab/peer.go",
			"\t\tp.election.SetAbstain(true)\n",
			""}},
	},
	{
		name: "trunc-keeps-durable-mark",
		rule: "A TRUNC lowers what the Peer counts durable, so that txns logged again after it wait for their own fsync before they are ACKed.",
		edits: []mutantEdit{{"zab/learner.go",
			"\tp.durable = min(p.durable, zxid)\n",
			""}},
	},
	{
		name: "snap-ack-before-snapshot-written",
		rule: "Ready rule 3: a SNAP's NEWLEADER ACK waits until SnapshotWritten came back for the snapshot it installed.",
		edits: []mutantEdit{
			{"zab/learner.go",
				"\tif l.stage != learnerNewLeaderSeen || p.snapInstall.pending {\n",
				"\tif l.stage != learnerNewLeaderSeen {\n"},
			{"zab/peer.go",
				"\tif p.snapInstall.pending {\n\t\treturn 0\n\t}\n",
				""},
		},
	},
	{
		name: "appends-before-installed-snapshot",
		rule: "No txn after a SNAP reaches the log before the snapshot that SNAP installed is durable (ZOOKEEPER-3642's class).",
		edits: []mutantEdit{{"zab/peer.go",
			"\tif p.snapInstall.pending {\n\t\theld, rd.Appends = rd.Appends, nil",
			"\tif false {\n\t\theld, rd.Appends = rd.Appends, nil"}},
	},
	{
		name: "snap-below-applied-installed",
		rule: "A learner sent a SNAP below the last txn it applied keeps its tree and log up to that txn: installing it takes delivered txns back, on disk too, until the txns after it are durable again.",
		edits: []mutantEdit{{"zab/learner.go",
			"\t\t\tif applied := p.tree.LastZxid(); qp.Zxid < applied {\n",
			"\t\t\tif applied := p.tree.LastZxid(); false && qp.Zxid < applied {\n"}},
	},
	{
		name: "newleader-quorum-counts-unacked",
		rule: "The epoch is established by a quorum of NEWLEADER ACKs, not of NEWLEADERs sent.",
		edits: []mutantEdit{{"zab/leader.go",
			"\t\tif h.stage >= handlerNewLeaderAcked && !h.observer {\n",
			"\t\tif h.stage >= handlerNewLeaderSent && !h.observer {\n"}},
	},
	{
		name: "newleader-ack-credits-later-proposals",
		rule: "A NEWLEADER ACK vouches only for the txns sent before NEWLEADER, not for proposals forwarded after it (simulator seed 575).",
		edits: []mutantEdit{{"zab/leader.go",
			"p.quorum.ack(h.sid, h.syncedUpTo)",
			"p.quorum.ack(h.sid, h.proposedUpTo)"}},
	},
	{
		name: "uptodate-before-established",
		rule: "The leader sends UPTODATE only once a quorum has ACKed NEWLEADER and the epoch is established.",
		edits: []mutantEdit{{"zab/leader.go",
			`		if l.stage == leaderBroadcasting {
			// Its ACK may complete a quorum`,
			`		if l.stage != leaderBroadcasting {
			p.sendUpToDate(h)
		}
		if l.stage == leaderBroadcasting {
			// Its ACK may complete a quorum`}},
	},
	{
		name: "uptodate-commits-new-epoch",
		rule: "UPTODATE commits only the initial history (the txns of older epochs), not the new epoch's proposals that followed NEWLEADER.",
		edits: []mutantEdit{{"zab/learner.go",
			"epochOf(z) < l.newEpoch {",
			"epochOf(z) <= l.newEpoch {"}},
	},
	{
		name: "observer-sent-uncommitted",
		rule: "A synchronization sends an observer only committed txns: it never votes, and learns later commits by INFORM with the txn.",
		edits: []mutantEdit{{"zab/sync.go",
			"\tif h.observer {\n\t\treturn committed\n\t}\n\treturn p.lastProposed\n",
			"\treturn p.lastProposed\n"}},
	},
	{
		name: "snap-stream-misses-proposals",
		rule: "A learner whose SNAP is still streaming is forwarded (in its backlog) every proposal made meanwhile, in zxid order, not only learners already sent NEWLEADER.",
		edits: []mutantEdit{{"zab/learner_handler.go",
			"if h.stage < handlerSyncing || h.observer || zxid <= h.proposedUpTo {",
			"if h.stage < handlerNewLeaderSent || h.observer || zxid <= h.proposedUpTo {"}},
	},
	{
		name: "observer-commits-one-short",
		rule: "An INFORM tells an observer that its txn is committed, not only the txns before it (the patch applies each one INFORM late, and answers a sync before the last write it waits for).",
		edits: []mutantEdit{{"zab/observer.go",
			"\tl.committed = max(l.committed, qp.Zxid)\n\tif l.stage == learnerUpToDate {\n",
			"\tl.committed = max(l.committed, qp.Zxid-1)\n\tif l.stage == learnerUpToDate {\n"}},
	},
	{
		name: "learner-serves-before-uptodate",
		rule: "A learner takes clients only once UPTODATE has come.",
		edits: []mutantEdit{{"zab/pipeline.go",
			"p.learn != nil && p.learn.stage == learnerUpToDate\n",
			"p.learn != nil && p.learn.stage >= learnerNewLeaderAcked\n"}},
	},

	// Broadcast.
	{
		name: "follower-acks-before-durable",
		rule: "Ready rule 3: a follower ACKs a proposal only once LogDurable says it is in its log.",
		edits: []mutantEdit{{"zab/follower.go",
			"\td := p.durableZxid()\n",
			"\td := p.lastProposed\n"}},
	},
	{
		name: "commit-applies-later-proposals",
		rule: "A COMMIT commits the proposals up to its zxid only; later ones wait for their own COMMIT.",
		edits: []mutantEdit{{"zab/follower.go",
			"\tl.committed = max(l.committed, qp.Zxid)\n",
			"\tl.committed = max(l.committed, p.lastProposed)\n"}},
	},
	{
		name: "leader-acks-own-undurable-proposals",
		rule: "A leader counts itself towards a proposal's quorum only once its own log holds it durably (the patch counts every proposal at the next fsync).",
		edits: []mutantEdit{{"zab/pipeline.go",
			"\t\tp.ackOwnLog(zxid)\n",
			"\t\tp.ackOwnLog(p.lastProposed)\n"}},
	},
	{
		name: "commit-counts-acks-one-short",
		rule: "A proposal commits once a quorum acknowledged it or a later one (the patch also counts voters one zxid short of it).",
		edits: []mutantEdit{{"zab/quorum.go",
			"\t\t\tif q.acked[v] >= z {\n",
			"\t\t\tif q.acked[v] >= z-1 {\n"}},
	},
	{
		name: "reconnect-keeps-old-acks",
		rule: "A learner's proposal ACKs from an earlier connection stop counting when it reconnects: its new synchronization may truncate them.",
		edits: []mutantEdit{{"zab/leader.go",
			"\tp.quorum.forget(from)\n",
			""}},
	},
	{
		name: "majority-is-half",
		rule: "A majority quorum is more than half of the voters (the patch takes half: one of three, two of five).",
		edits: []mutantEdit{{"election/quorum.go",
			"return len(sids) > len(m.voters)/2",
			"return len(sids) >= len(m.voters)/2"}},
	},

	// Election.
	{
		name: "vote-ignores-peer-epoch",
		rule: "A vote is compared by the candidate's currentEpoch first, then its last zxid, then its id; the patch skips the epoch.",
		edits: []mutantEdit{{"election/vote.go",
			"\tif v.PeerEpoch != o.PeerEpoch {\n",
			"\tif false && v.PeerEpoch != o.PeerEpoch {\n"}},
	},
	{
		name: "vote-prefers-older-zxid",
		rule: "Between candidates of one currentEpoch the later last zxid wins.",
		edits: []mutantEdit{{"election/vote.go",
			"\t\treturn v.Zxid > o.Zxid\n",
			"\t\treturn v.Zxid < o.Zxid\n"}},
	},
	{
		name: "vote-compares-zxid-counters",
		rule: "Between candidates of one currentEpoch the later last zxid wins, its epoch included (the patch compares the counters: 0x2_00000009 beats 0x3_00000002).",
		edits: []mutantEdit{{"election/vote.go",
			"\t\treturn v.Zxid > o.Zxid\n",
			"\t\treturn v.Zxid&0xffffffff > o.Zxid&0xffffffff\n"}},
	},
	{
		name: "vote-ignores-server-id",
		rule: "Votes equal in epoch and zxid are ordered by server id, so that every member ranks every vote the same way and the votes converge.",
		edits: []mutantEdit{{"election/vote.go",
			"\treturn v.Leader > o.Leader\n",
			"\treturn false\n"}},
	},
	{
		name: "vote-with-acceptedepoch",
		rule: "A member votes with its currentEpoch, not an epoch it has only accepted.",
		edits: []mutantEdit{{"zab/looking.go",
			"p.election.Start(p.now.Mono, p.lastProposed, p.currentEpoch)",
			"p.election.Start(p.now.Mono, p.lastProposed, p.acceptedEpoch)"}},
	},

	// Sessions.
	{
		name: "new-leader-keeps-expiry-schedule",
		rule: "A leader gives every live session a full timeout when it establishes its epoch: the sessions' touches went to the old leader.",
		edits: []mutantEdit{{"zab/leader.go",
			"\tp.sessions.RestartExpiry(p.now.Mono)\n",
			""}},
	},
	{
		name: "learner-expires-sessions",
		rule: "Only the established leader expires sessions: a learner's (or a looking member's) copy of a session's deadline is touched only by its own clients.",
		edits: []mutantEdit{{"zab/pipeline.go",
			"\tif p.lead == nil || p.lead.stage != leaderBroadcasting || p.sessions.NextExpiry() > p.now.Mono {\n",
			"\tif p.lead != nil && p.lead.stage != leaderBroadcasting || p.sessions.NextExpiry() > p.now.Mono {\n"}},
	},
	{
		name: "closing-session-writes-accepted",
		rule: "A write of a session whose close or expiry is decided fails with SessionExpired instead of taking effect after the closeSession.",
		edits: []mutantEdit{{"sessions/tracker.go",
			"\tcase s.closing:\n\t\treturn wire.ErrSessionExpired\n\tcase !s.hasOwner:\n",
			"\tcase !s.hasOwner:\n"}},
	},
	{
		name: "expiry-not-marked-closing",
		rule: "An expired session is closing at once: no touch or reconnect revives it while its closeSession is on its way.",
		equivalent: "Expire's one caller, the established leader's expireSessions, proposes a closeSession for every session it returns " +
			"in the same loop, and propose marks the session closing (SetClosing) before it returns; the one way out before that, the " +
			"zxid counter running out, steps the leader down, and stepping down clears every closing mark (Tracker.StepDown) whether " +
			"Expire set it or not; nothing reads the marks between Expire and those calls",
		edits: []mutantEdit{{"sessions/tracker.go",
			"if s := t.byID[id]; s != nil {\n\t\t\ts.closing = true\n",
			"if s := t.byID[id]; s != nil && false {\n\t\t\ts.closing = true\n"}},
	},

	// The executor of the Ready (zab/member: its ready.go numbers the rules).
	{
		name: "member-sends-before-barrier",
		rule: "Rule 8: a Ready's sends wait for the job that carries out its epoch write or truncation (the patch sends them at once unless earlier sends are held).",
		edits: []mutantEdit{{"zab/member/ready.go",
			"\tif gate > m.doneOp || len(m.outbox) > 0 {\n",
			"\tif len(m.outbox) > 0 {\n"}},
	},
	{
		name: "member-no-fsync-before-barrier",
		rule: "Rule 6: a job fsyncs the appends before any other operation, so the stream is durable in its order (the patch fsyncs only at the job's end).",
		equivalent: "the job still fsyncs at its end, before any of its Ready's sends (rule 8), and every operation that is not an append is " +
			"durable by itself (storage's Truncate, SetAcceptedEpoch, SetCurrentEpoch, ClearDamage); of those, only currentEpoch and " +
			"ClearDamage vouch for earlier appends, and no undurable append precedes them in the stream: a learner writes currentEpoch " +
			"only once LogDurable covers its synchronized history (killed as currentepoch-before-synced-durable), a leader appends " +
			"nothing between its acceptedEpoch barrier, whose job ends with an fsync before its LEADERINFOs leave, and its " +
			"currentEpoch, and ClearDamage comes at UPTODATE, after the NEWLEADER ACK's durable wait",
		edits: []mutantEdit{{"zab/member/disk.go",
			"\t\tif op.kind != opAppend {\n\t\t\tif j.err = j.sync(); j.err != nil {\n",
			"\t\tif op.kind == opInstall {\n\t\t\tif j.err = j.sync(); j.err != nil {\n"}},
	},
	{
		name: "member-durable-ignores-truncate",
		rule: "Rule 6: LogDurable reports the log's durable zxid, which a truncation lowers (the patch never lets it go down, so txns appended again after a TRUNC count as durable before their fsync).",
		edits: []mutantEdit{{"zab/member/disk.go",
			"\t\tm.durable = durable\n",
			"\t\tm.durable = max(m.durable, durable)\n\t\tdurable = m.durable\n"}},
	},
	{
		name: "member-snapshot-before-durable",
		rule: "Rule 9: a snapshot file is finished only once the log holds every txn in it durably (the patch finishes it at its last chunk).",
		edits: []mutantEdit{{"zab/member/snapshot.go",
			"\tif !m.snapWaiting || m.durable < m.snap.digest.Zxid {\n",
			"\tif !m.snapWaiting {\n"}},
	},
	{
		name: "member-install-passed",
		rule: "Rule 7: no job passes a SNAP's snapshot before its last chunk arrived (the patch lets the operations behind it run first).",
		edits: []mutantEdit{{"zab/member/disk.go",
			"\tfor n < len(m.queue) && (m.queue[n].kind != opInstall || m.queue[n].whole) {\n",
			"\tfor n < len(m.queue) && m.queue[n].kind != opInstall {\n"}},
	},
	{
		name: "member-truncate-after-appends",
		rule: "Rule 1: a Ready's truncation comes before its appends in the stream (the patch queues it after them).",
		edits: []mutantEdit{
			{"zab/member/ready.go",
				"\tif rd.Truncate != nil {\n\t\tgate = m.enqueue(diskOp{kind: opTruncate, zxid: *rd.Truncate})\n\t}\n",
				""},
			{"zab/member/ready.go",
				"\tfor i := range rd.Snapshots {\n\t\tm.snapshotChunk(&rd.Snapshots[i])\n\t}\n",
				"\tif rd.Truncate != nil {\n\t\tgate = m.enqueue(diskOp{kind: opTruncate, zxid: *rd.Truncate})\n\t}\n\tfor i := range rd.Snapshots {\n\t\tm.snapshotChunk(&rd.Snapshots[i])\n\t}\n"},
		},
	},
	{
		name: "member-current-epoch-skipped",
		rule: "Rule 3: an epoch write writes currentEpoch too (the patch writes acceptedEpoch only).",
		edits: []mutantEdit{{"zab/member/disk.go",
			"\t\t\tif err := m.Store.SetCurrentEpoch(op.epochs.Current); err != nil {\n",
			"\t\t\tif err := error(nil); err != nil {\n"}},
	},
	{
		name: "member-no-updatingepoch-mark",
		rule: "Rule 5: the updatingEpoch mark is written before a batch of txns of an epoch newer than currentEpoch (the patch never writes it).",
		edits: []mutantEdit{{"zab/member/disk.go",
			"\tif err := m.Store.CoverEpoch(last); err != nil {\n",
			"\tif err := error(nil); err != nil {\n"}},
	},
	{
		name: "member-truncate-skipped",
		rule: "Rule 2: a truncation cuts the log on disk (the patch reports it done and leaves the log as it was).",
		edits: []mutantEdit{{"zab/member/disk.go",
			"\t\t\tif err := m.Log.Truncate(op.zxid); err != nil {\n",
			"\t\t\tif err := error(nil); err != nil {\n"}},
	},
	{
		name: "member-damage-not-forgotten",
		rule: "Rule 4: DamageRepaired forgets the damage on disk (the patch leaves it recorded, so every restart abstains again).",
		edits: []mutantEdit{{"zab/member/disk.go",
			"\t\t\tif err := m.Store.ClearDamage(); err != nil {\n",
			"\t\t\tif err := error(nil); err != nil {\n"}},
	},
	{
		name: "member-failed-job-ignored",
		rule: "Rule 10: a failed disk job is fatal to the process (the patch goes on as if it had succeeded).",
		edits: []mutantEdit{{"zab/member/disk.go",
			"\tm.running = nil\n\tif j.err != nil {\n\t\treturn j.err\n\t}\n",
			"\tm.running = nil\n"}},
	},
	{
		name: "member-late-wakeup",
		rule: "Rule 11: the shell steps a Tick by the time the Peer asked for (the patch asks a second later).",
		edits: []mutantEdit{{"zab/member/ready.go",
			"\twakeup := rd.Wakeup\n",
			"\twakeup := rd.Wakeup + time.Second\n"}},
	},
}
