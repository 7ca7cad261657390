package zab

// snapshotState decides when a snapshot starts and advances the fuzzy
// serialization between applies.
type snapshotState struct {
	txnsSinceSnapshot int
	// threshold: a snapshot starts once more txns than this have been
	// applied since the last one began (SnapCount/2 plus a random roll
	// below SnapCount/2, as ZooKeeper's SyncRequestProcessor draws it, so
	// that members of an ensemble do not all snapshot at once).
	threshold int
}

// rearm draws the next snapshot point.
func (s *snapshotState) rearm(p *Peer) {
	s.threshold = p.cfg.SnapCount/2 + p.rand.IntN(p.cfg.SnapCount/2)
}

// advance starts a snapshot when one is due.
func (s *snapshotState) advance(p *Peer) {}

// written handles the shell's report that a snapshot is on disk.
func (s *snapshotState) written(p *Peer, e SnapshotWritten) {}
