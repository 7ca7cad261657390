// Package runview draws a recorded run (runlog.Run) as one self-contained
// HTML page: a lane per member and per client, time across. Members' lanes
// show role and epoch as bands, downtime, crashes and restarts, durable
// points; every quorum packet and vote is an arrow from its sender's lane
// at the time it left to its receiver's at the time it arrived; clients'
// lanes show each operation as a span coloured by outcome; network faults
// and partitions sit on a lane of their own; a failure is a red line at the
// time it was found, linked to the operations it involves and, for a
// history that could not be linearized, to Porcupine's view of it. The
// page scrolls and zooms in time and needs no network: its script, style
// and data are inside it.
package runview
