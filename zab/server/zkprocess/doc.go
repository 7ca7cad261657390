// Package zkprocess starts and stops a private Apache ZooKeeper 3.8
// (Debian's packages) on a free loopback port, for differential tests,
// format captures and benchmarks that compare zabd with the real thing.
package zkprocess
