// Package client is a small wire-level ZooKeeper client: one TCP connection,
// one session, every opcode of ZooKeeper 3.8 (including those that
// go-zookeeper and kazoo lack: addWatch, removeWatches, getEphemerals,
// getAllChildrenNumber, whoAmI, multiRead, create2, setWatches2), with
// pipelined requests matched to replies by xid.
//
// It exists to test servers and to load them (cmd/zabbench), so it hides
// nothing: replies keep their header (zxid, error code), every reply and
// watch event carries its arrival sequence number so a test can check the
// order the server chose, and a test can write raw bytes. It does not
// reconnect: a lost connection fails every call in flight and later ones.
package client
