// Package localens runs an ensemble of zabd processes on loopback: each
// member with its own directory (dataDir, myid, zoo.cfg, log) and free
// ports, started, signalled (SIGKILL, SIGSTOP, SIGTERM), wiped and
// restarted one by one, and asked for its role with srvr. `zabd ensemble`
// and the real-process tests use it.
package localens
