package tlsconf

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"

	"github.com/zabd/zabd/zab/server/tlsconf/tlstest"
)

// encryptedKeySeed is a well-formed PBES2 EncryptedPrivateKeyInfo with a
// small iteration count (its ciphertext is not a real key).
func encryptedKeySeed(t testing.TB, prf, cipherOID asn1.ObjectIdentifier, ivLen int) []byte {
	t.Helper()
	marshal := func(v any) []byte {
		b, err := asn1.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	kdf := marshal(pbkdf2Params{Salt: []byte("saltsalt"), Iterations: 10, PRF: pkix.AlgorithmIdentifier{Algorithm: prf, Parameters: asn1.NullRawValue}})
	params := marshal(pbes2Params{
		KeyDerivationFunc: pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: asn1.RawValue{FullBytes: kdf}},
		EncryptionScheme:  pkix.AlgorithmIdentifier{Algorithm: cipherOID, Parameters: asn1.RawValue{FullBytes: marshal(make([]byte, ivLen))}},
	})
	return marshal(encryptedPrivateKeyInfo{
		Algorithm:     pkix.AlgorithmIdentifier{Algorithm: oidPBES2, Parameters: asn1.RawValue{FullBytes: params}},
		EncryptedData: make([]byte, 48),
	})
}

// FuzzEncryptedPKCS8: no encrypted key, however malformed, panics the
// parser or the decryption.
func FuzzEncryptedPKCS8(f *testing.F) {
	f.Add(encryptedKeySeed(f, asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}, asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}, 16))
	f.Add(encryptedKeySeed(f, asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}, asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}, 8))
	f.Add(encryptedKeySeed(f, asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}, asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}, 3))
	f.Fuzz(func(t *testing.T, der []byte) {
		k, err := parseEncryptedPKCS8(der)
		if err != nil || k.iterations > 1000 { // keep each run fast
			return
		}
		if plain, err := k.decrypt("password"); err == nil && len(plain) > len(k.ciphertext) {
			t.Fatalf("decrypted %d bytes out of %d", len(plain), len(k.ciphertext))
		}
	})
}

// FuzzPEMKeyStore: no PEM file panics the key store reader, and one it
// accepts yields a key and certificates.
func FuzzPEMKeyStore(f *testing.F) {
	ca := tlstest.NewCA(f, "fuzz CA")
	f.Add(ca.Server(f, "zabd").PEM(f))
	f.Add(tlstest.CertsPEM(ca))
	f.Add([]byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		key, certs, err := parsePEMKeyStore(data, "")
		if err == nil && (key == nil || len(certs) == 0) {
			t.Fatalf("accepted a key store without a key or certificates")
		}
	})
}
