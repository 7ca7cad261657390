// Package runlog is the record of one run of an ensemble that people look
// at: members' roles and epochs, the quorum packets and votes between them,
// durable points, crashes, restarts and network faults, the clients'
// operations with their outcomes, and failures with the operations they
// involve. The simulator fills one from a seeded run; zabd members can
// write their share of one as they serve. runview draws it as a
// self-contained HTML page; ShiViz renders it for the ShiViz log viewer.
//
// Times are microseconds on the run's own clock (the simulator's monotonic
// time, or wall time for real members). A message is one event, recorded
// when it arrives, with the time it left in Sent.
package runlog
