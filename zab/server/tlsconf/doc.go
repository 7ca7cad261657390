// Package tlsconf builds the TLS of zabd's secure client port from a
// ZooKeeper 3.8 zoo.cfg, as ZooKeeper's ClientX509Util and
// X509AuthenticationProvider read it, with Go's crypto/tls:
//
//   - key and trust stores in PEM (ZooKeeper's PemReader: certificates and
//     one PKCS#8 private key, encrypted with PBES2 when a password is given)
//     and PKCS12 (read with software.sslmate.com/src/go-pkcs12); JKS, JCEKS
//     and BCFKS stores are Java-only and refused with the conversion to use;
//   - ssl.clientAuth none, want and need; ssl.protocol and
//     ssl.enabledProtocols; ssl.ciphersuites by their IANA names, defaulting
//     to ZooKeeper's list;
//   - the x509 identity of a verified client certificate: its subject in
//     Java's X500Principal.getName() (RFC 2253) form, the id ZooKeeper's
//     X509AuthenticationProvider gives it.
//
// Every error names the zoo.cfg key (and line) it comes from, as a
// *config.Error.
package tlsconf
