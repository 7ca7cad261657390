// Package clienttest holds scenarios that drive any ZooKeeper-compatible
// server through wire/client, covering the opcodes go-zookeeper and kazoo
// lack. The same scenarios run against Debian's ZooKeeper 3.8 (in
// wire/client's tests) and against zabd (in zab/server's), so what they
// assert is ZooKeeper's behaviour.
package clienttest
