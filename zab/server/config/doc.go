// Package config reads a ZooKeeper 3.8 zoo.cfg into a typed Config for zabd.
//
// The file is a Java properties file. Every key ZooKeeper's QuorumPeerConfig
// knows is parsed with ZooKeeper's defaults; ZooKeeper turns every other key
// into a "zookeeper.<key>" system property, and real configs rely on that to
// set e.g. DigestAuthenticationProvider.superDigest, snapCount,
// 4lw.commands.whitelist or znode.container.checkIntervalMs, so those
// spellings are recognised here too. A key zabd does not know at all is a
// Warning; a value that does not parse is an error naming the file, the line
// and the key, and start-up stops. Security keys (security.go) are never
// just warned about: zabd implements them (secureClientPort, ssl.*, the x509
// provider), says why one has no effect on a server, or refuses one it does
// not implement (SASL, Kerberos, quorum TLS, ...) with "<key>: not
// supported".
package config
