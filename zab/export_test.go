package zab

// SetCounterLimit makes limit the last zxid counter a leader configured
// with cfg may propose in an epoch, so that a test reaches the counter
// rollover (ZooKeeper's 0xffffffff) in a few writes.
func SetCounterLimit(cfg *Config, limit int64) { cfg.counterLimit = limit }
