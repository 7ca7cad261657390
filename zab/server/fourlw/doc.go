// Package fourlw answers ZooKeeper's four-letter words (ruok, srvr, stat,
// mntr, conf, cons, crst, srst, envi, wchs, wchc, wchp, dump, dirs, isro,
// hash) in ZooKeeper 3.8's exact text formats, so that tools written for
// ZooKeeper parse zabd's answers. It renders what a Source reports and knows
// nothing of the server behind it; the shell fills the Source.
package fourlw
