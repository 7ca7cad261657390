package tlsconf

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/zabd/zabd/zab/server/config"
)

// The store formats of ZooKeeper's KeyStoreFileType.
const (
	typePEM    = "PEM"
	typePKCS12 = "PKCS12"
	typeJKS    = "JKS"
	typeBCFKS  = "BCFKS"
)

// storeExtensions are KeyStoreFileType's default extensions, by which
// ZooKeeper picks the format when the type key is absent.
var storeExtensions = map[string]string{".jks": typeJKS, ".pem": typePEM, ".p12": typePKCS12, ".bcfks": typeBCFKS}

// Java key stores start with these magic numbers; their formats are Java's
// own (JKS, JCEKS).
var javaStoreMagics = [][]byte{{0xfe, 0xed, 0xfe, 0xed}, {0xce, 0xce, 0xce, 0xce}}

// store is one key or trust store being read: its settings and the keys
// that gave them ("ssl.keyStore" or "ssl.trustStore").
type store struct {
	cfg    *config.Config
	prefix string
	config.Store
}

func (s store) fail(suffix string, err error) error { return s.cfg.ErrorAt(s.prefix+suffix, err) }

// storeType is the store's format as ZooKeeper decides it: the type key
// (any case), else the file name's extension.
func (s store) storeType() (string, error) {
	if s.Type != "" {
		t := strings.ToUpper(s.Type)
		switch t {
		case typePEM, typePKCS12, typeJKS, typeBCFKS:
			return t, nil
		}
		return "", s.fail(".type", fmt.Errorf("%q is not a store type (PEM, PKCS12, JKS or BCFKS)", s.Type))
	}
	if t, ok := storeExtensions[filepath.Ext(s.Location)]; ok {
		return t, nil
	}
	return "", s.fail(".location", fmt.Errorf("cannot tell the store type from the file name %s (name it .pem or .p12, or set %s.type)",
		s.Location, s.prefix))
}

// password is the store's password: the passwordPath file's content (one
// trailing line end dropped, as ZooKeeper's SecretUtils does) or the
// password key.
func (s store) password() (string, error) {
	if s.PasswordPath == "" {
		return s.Password, nil
	}
	b, err := os.ReadFile(s.PasswordPath)
	if err != nil {
		return "", s.fail(".passwordPath", err)
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// read returns the store file's bytes and its format, refusing the
// Java-only formats with the conversion to use.
func (s store) read() ([]byte, string, error) {
	typ, err := s.storeType()
	if err != nil {
		return nil, "", err
	}
	typeKey := ".location"
	if s.Type != "" {
		typeKey = ".type"
	}
	if typ == typeBCFKS {
		return nil, "", s.fail(typeKey, errors.New("BCFKS key stores (Bouncy Castle FIPS) are Java-only: not supported, convert to PKCS12 or PEM"))
	}
	data, err := os.ReadFile(s.Location)
	if err != nil {
		return nil, "", s.fail(".location", err)
	}
	for _, magic := range javaStoreMagics {
		if bytes.HasPrefix(data, magic) {
			if typ != typeJKS {
				typeKey = ".location"
			}
			return nil, "", s.fail(typeKey, fmt.Errorf("%s is a JKS key store, which is Java-only: not supported, convert to PKCS12 "+
				"(keytool -importkeystore -srckeystore %s -destkeystore %s.p12 -deststoretype PKCS12) or PEM",
				s.Location, s.Location, strings.TrimSuffix(s.Location, filepath.Ext(s.Location))))
		}
	}
	if typ == typeJKS {
		// Java 9 and later read a PKCS12 file through the JKS type
		// (keystore.type.compat), and keytool writes PKCS12 by default.
		typ = typePKCS12
	}
	return data, typ, nil
}

// loadKeyStore reads a server's certificate chain and private key.
func loadKeyStore(s store) (tls.Certificate, error) {
	data, typ, err := s.read()
	if err != nil {
		return tls.Certificate{}, err
	}
	password, err := s.password()
	if err != nil {
		return tls.Certificate{}, err
	}
	var key crypto.PrivateKey
	var certs []*x509.Certificate
	if typ == typePEM {
		key, certs, err = parsePEMKeyStore(data, password)
	} else {
		var leaf *x509.Certificate
		var chain []*x509.Certificate
		key, leaf, chain, err = pkcs12.DecodeChain(data, password)
		certs = append([]*x509.Certificate{leaf}, chain...)
	}
	if err != nil {
		return tls.Certificate{}, s.fail(".location", fmt.Errorf("%s: %w", s.Location, err))
	}
	cert, err := keyPair(key, certs)
	if err != nil {
		return tls.Certificate{}, s.fail(".location", fmt.Errorf("%s: %w", s.Location, err))
	}
	return cert, nil
}

// keyPair puts the certificate that belongs to key first, the rest after it
// in file order, as a tls.Certificate.
func keyPair(key crypto.PrivateKey, certs []*x509.Certificate) (tls.Certificate, error) {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, fmt.Errorf("private key of type %T cannot sign", key)
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return tls.Certificate{}, fmt.Errorf("private key of type %T is not supported", key)
	}
	for i, leaf := range certs {
		if !pub.Equal(leaf.PublicKey) {
			continue
		}
		chain := [][]byte{leaf.Raw}
		for j, c := range certs {
			if j != i {
				chain = append(chain, c.Raw)
			}
		}
		return tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: leaf}, nil
	}
	return tls.Certificate{}, fmt.Errorf("none of its %d certificates belongs to its private key", len(certs))
}

// parsePEMKeyStore reads a PEM key store as ZooKeeper's PemReader does:
// every CERTIFICATE block is the chain; the first PRIVATE KEY block is the
// key, in PKCS#8, encrypted (ENCRYPTED PRIVATE KEY, PBES2) exactly when a
// password is given.
func parsePEMKeyStore(data []byte, password string) (crypto.PrivateKey, []*x509.Certificate, error) {
	certs, err := parsePEMCertificates(data)
	if err != nil {
		return nil, nil, err
	}
	if len(certs) == 0 {
		return nil, nil, errors.New("holds no CERTIFICATE block")
	}
	var keyBlock *pem.Block
	for rest := data; keyBlock == nil; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil, nil, errors.New("holds no PRIVATE KEY block")
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			keyBlock = b
		}
	}
	der := keyBlock.Bytes
	switch {
	case keyBlock.Type == "ENCRYPTED PRIVATE KEY" && password == "":
		return nil, nil, errors.New("its private key is encrypted but no password is set")
	case keyBlock.Type == "ENCRYPTED PRIVATE KEY":
		k, err := parseEncryptedPKCS8(der)
		if err != nil {
			return nil, nil, err
		}
		if der, err = k.decrypt(password); err != nil {
			return nil, nil, err
		}
	case password != "":
		return nil, nil, fmt.Errorf("a password is set but its private key (%s) is not encrypted; "+
			"ZooKeeper reads it as an encrypted PKCS#8 key then (openssl pkcs8 -topk8 -v2 aes-256-cbc)", keyBlock.Type)
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err == nil {
		return key, certs, nil
	}
	if _, err1 := x509.ParsePKCS1PrivateKey(der); err1 == nil {
		return nil, nil, errors.New("its private key is PKCS#1; ZooKeeper reads PKCS#8 only (openssl pkcs8 -topk8 -nocrypt converts it)")
	}
	if _, err1 := x509.ParseECPrivateKey(der); err1 == nil {
		return nil, nil, errors.New("its private key is SEC 1; ZooKeeper reads PKCS#8 only (openssl pkcs8 -topk8 -nocrypt converts it)")
	}
	return nil, nil, fmt.Errorf("private key: %w", err)
}

// parsePEMCertificates returns the CERTIFICATE blocks' certificates in file
// order, skipping every other block (ZooKeeper's PemReader does the same).
func parsePEMCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return certs, nil
		}
		if !strings.HasSuffix(b.Type, "CERTIFICATE") {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, c)
	}
}

// loadTrustStore reads the CA certificates client certificates are checked
// against; nil (the system's roots) when no trust store is set.
func loadTrustStore(s store) (*x509.CertPool, error) {
	if s.Location == "" {
		return nil, nil
	}
	data, typ, err := s.read()
	if err != nil {
		return nil, err
	}
	password, err := s.password()
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	if typ == typePEM {
		certs, err = parsePEMCertificates(data)
	} else if certs, err = pkcs12.DecodeTrustStore(data, password); err != nil {
		err = fmt.Errorf("%w (a PKCS12 trust store must hold only trusted certificate entries, as keytool -importcert "+
			"writes them; openssl's exports lack Java's trust attribute: use a PEM trust store instead)", err)
	}
	if err == nil && len(certs) == 0 {
		err = errors.New("holds no certificate")
	}
	if err != nil {
		return nil, s.fail(".location", fmt.Errorf("%s: %w", s.Location, err))
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}
