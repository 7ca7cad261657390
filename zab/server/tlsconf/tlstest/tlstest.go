// Package tlstest makes throw-away certificate authorities, certificates and
// key and trust store files for tests, with crypto/x509 at run time: no
// private key is checked in.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// Cert is a certificate, its private key and the CA that issued it (nil for
// a self-signed CA).
type Cert struct {
	Cert   *x509.Certificate
	Key    *ecdsa.PrivateKey
	Issuer *Cert
}

// Options adjust a certificate being issued.
type Options struct {
	// NotBefore and NotAfter default to an hour ago and a day from now.
	NotBefore, NotAfter time.Time
	// RawSubject, if set, replaces the subject's encoding (for names
	// crypto/x509 would not write, such as BMPString values).
	RawSubject []byte
	// DNSNames are subject alternative names (a certificate with an empty
	// subject needs one).
	DNSNames []string
}

func newCert(t testing.TB, tmpl *x509.Certificate, issuer *Cert, opts Options) *Cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("tlstest: generate key: %v", err)
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)); err != nil {
		t.Fatalf("tlstest: serial number: %v", err)
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if !opts.NotBefore.IsZero() {
		tmpl.NotBefore = opts.NotBefore
	}
	if !opts.NotAfter.IsZero() {
		tmpl.NotAfter = opts.NotAfter
	}
	tmpl.RawSubject = opts.RawSubject
	tmpl.DNSNames = append(tmpl.DNSNames, opts.DNSNames...)
	parent, signer := tmpl, key
	if issuer != nil {
		parent, signer = issuer.Cert, issuer.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatalf("tlstest: create certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("tlstest: parse certificate: %v", err)
	}
	return &Cert{Cert: cert, Key: key, Issuer: issuer}
}

// NewCA is a self-signed certificate authority named cn.
func NewCA(t testing.TB, cn string) *Cert {
	t.Helper()
	return newCert(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, Options{})
}

// Server issues a server certificate for localhost and 127.0.0.1 (Java
// clients verify the server's host name by default).
func (ca *Cert) Server(t testing.TB, cn string) *Cert {
	t.Helper()
	return newCert(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca, Options{})
}

// Member issues an ensemble member's certificate, good for both ends of a
// quorum connection (a member dials and is dialled with the same
// certificate): for localhost and 127.0.0.1, or for opts.DNSNames alone
// when given.
func (ca *Cert) Member(t testing.TB, cn string, opts Options) *Cert {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if len(opts.DNSNames) > 0 {
		tmpl.DNSNames, tmpl.IPAddresses = nil, nil
	}
	return newCert(t, tmpl, ca, opts)
}

// Client issues a client certificate with subject.
func (ca *Cert) Client(t testing.TB, subject pkix.Name, opts Options) *Cert {
	t.Helper()
	return newCert(t, &x509.Certificate{
		Subject: subject, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, opts)
}

// Chain is the certificate and its issuers up to the root, DER.
func (c *Cert) Chain() [][]byte {
	var chain [][]byte
	for x := c; x != nil; x = x.Issuer {
		chain = append(chain, x.Cert.Raw)
	}
	return chain
}

// TLS is the certificate as crypto/tls presents it.
func (c *Cert) TLS() tls.Certificate {
	return tls.Certificate{Certificate: c.Chain(), PrivateKey: c.Key, Leaf: c.Cert}
}

// Pool is a pool of the given CAs.
func Pool(cas ...*Cert) *x509.CertPool {
	p := x509.NewCertPool()
	for _, ca := range cas {
		p.AddCert(ca.Cert)
	}
	return p
}

// PEM is the certificate chain followed by the unencrypted PKCS#8 key: a
// ZooKeeper PEM key store.
func (c *Cert) PEM(t testing.TB) []byte {
	t.Helper()
	var out []byte
	for _, der := range c.Chain() {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	key, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		t.Fatalf("tlstest: marshal key: %v", err)
	}
	return append(out, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key})...)
}

// CertsPEM is a PEM trust store of the certificates.
func CertsPEM(certs ...*Cert) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Cert.Raw})...)
	}
	return out
}

// PKCS12 is a PKCS12 key store of the certificate, its issuers and its key.
func (c *Cert) PKCS12(t testing.TB, password string) []byte {
	t.Helper()
	var cas []*x509.Certificate
	for x := c.Issuer; x != nil; x = x.Issuer {
		cas = append(cas, x.Cert)
	}
	data, err := pkcs12.Modern.Encode(c.Key, c.Cert, cas, password)
	if err != nil {
		t.Fatalf("tlstest: encode PKCS12: %v", err)
	}
	return data
}

// PKCS12TrustStore is a Java-style PKCS12 trust store of the certificates.
func PKCS12TrustStore(t testing.TB, password string, certs ...*Cert) []byte {
	t.Helper()
	var xs []*x509.Certificate
	for _, c := range certs {
		xs = append(xs, c.Cert)
	}
	data, err := pkcs12.Modern.EncodeTrustStore(xs, password)
	if err != nil {
		t.Fatalf("tlstest: encode PKCS12 trust store: %v", err)
	}
	return data
}

// WriteFile writes data to path, failing the test on error.
func WriteFile(t testing.TB, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatalf("tlstest: %v", err)
	}
	return path
}
