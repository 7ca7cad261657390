package tlsconf

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// The algorithms of a PBES2-encrypted PKCS#8 key (RFC 8018), which is what
// `openssl pkcs8 -topk8` writes and Java's EncryptedPrivateKeyInfo reads.
var (
	oidPBES2  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}

	pbkdf2PRFs = map[string]func() hash.Hash{
		"1.2.840.113549.2.7":  sha1.New, // hmacWithSHA1, the default
		"1.2.840.113549.2.8":  sha256.New224,
		"1.2.840.113549.2.9":  sha256.New,
		"1.2.840.113549.2.10": sha512.New384,
		"1.2.840.113549.2.11": sha512.New,
	}

	pbes2Ciphers = map[string]struct {
		keyLen int
		block  func(key []byte) (cipher.Block, error)
	}{
		"2.16.840.1.101.3.4.1.2":  {16, aes.NewCipher},          // aes128-CBC
		"2.16.840.1.101.3.4.1.22": {24, aes.NewCipher},          // aes192-CBC
		"2.16.840.1.101.3.4.1.42": {32, aes.NewCipher},          // aes256-CBC
		"1.2.840.113549.3.7":      {24, des.NewTripleDESCipher}, // des-ede3-cbc
	}
)

// maxPBKDF2Iterations bounds the key derivation a key file can ask for, so
// that a corrupt count cannot stall start-up; real files use thousands to a
// few million.
const maxPBKDF2Iterations = 10_000_000

type encryptedPrivateKeyInfo struct {
	Algorithm     pkix.AlgorithmIdentifier
	EncryptedData []byte
}

type pbes2Params struct {
	KeyDerivationFunc pkix.AlgorithmIdentifier
	EncryptionScheme  pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                      `asn1:"optional"`
	PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
}

// pbes2Key is a parsed encrypted PKCS#8 key: everything needed to decrypt
// it with a password.
type pbes2Key struct {
	salt       []byte
	iterations int
	prf        func() hash.Hash
	keyLen     int
	block      func(key []byte) (cipher.Block, error)
	iv         []byte
	ciphertext []byte
}

// parseEncryptedPKCS8 reads an EncryptedPrivateKeyInfo; only PBES2 with
// PBKDF2 (HMAC-SHA1/SHA2) and AES-CBC or 3DES-CBC is supported.
func parseEncryptedPKCS8(der []byte) (*pbes2Key, error) {
	var info encryptedPrivateKeyInfo
	if err := unmarshalAll(der, &info); err != nil {
		return nil, fmt.Errorf("not an encrypted PKCS#8 private key: %w", err)
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("key encryption %v is not supported (use PBES2: openssl pkcs8 -topk8 -v2 aes-256-cbc)", info.Algorithm.Algorithm)
	}
	var params pbes2Params
	if err := unmarshalAll(info.Algorithm.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("PBES2 parameters: %w", err)
	}
	if !params.KeyDerivationFunc.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("key derivation %v is not supported (only PBKDF2)", params.KeyDerivationFunc.Algorithm)
	}
	var kdf pbkdf2Params
	if err := unmarshalAll(params.KeyDerivationFunc.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("PBKDF2 parameters: %w", err)
	}
	if kdf.Iterations < 1 || kdf.Iterations > maxPBKDF2Iterations {
		return nil, fmt.Errorf("PBKDF2 iteration count %d is outside [1, %d]", kdf.Iterations, maxPBKDF2Iterations)
	}
	k := &pbes2Key{salt: kdf.Salt, iterations: kdf.Iterations, prf: sha1.New, ciphertext: info.EncryptedData}
	if len(kdf.PRF.Algorithm) > 0 {
		prf, ok := pbkdf2PRFs[kdf.PRF.Algorithm.String()]
		if !ok {
			return nil, fmt.Errorf("PBKDF2 pseudo-random function %v is not supported", kdf.PRF.Algorithm)
		}
		k.prf = prf
	}
	c, ok := pbes2Ciphers[params.EncryptionScheme.Algorithm.String()]
	if !ok {
		return nil, fmt.Errorf("key cipher %v is not supported (AES-CBC or 3DES-CBC)", params.EncryptionScheme.Algorithm)
	}
	k.keyLen, k.block = c.keyLen, c.block
	if kdf.KeyLength != 0 && kdf.KeyLength != k.keyLen {
		return nil, fmt.Errorf("PBKDF2 key length %d does not fit the cipher's %d", kdf.KeyLength, k.keyLen)
	}
	if err := unmarshalAll(params.EncryptionScheme.Parameters.FullBytes, &k.iv); err != nil {
		return nil, fmt.Errorf("cipher IV: %w", err)
	}
	return k, nil
}

// decrypt returns the PKCS#8 PrivateKeyInfo; a wrong password shows as bad
// padding (or, rarely, as a key that does not parse).
func (k *pbes2Key) decrypt(password string) ([]byte, error) {
	key, err := pbkdf2.Key(k.prf, password, k.salt, k.iterations, k.keyLen)
	if err != nil {
		return nil, err
	}
	block, err := k.block(key)
	if err != nil {
		return nil, err
	}
	bs := block.BlockSize()
	if len(k.iv) != bs {
		return nil, fmt.Errorf("cipher IV is %d bytes, want %d", len(k.iv), bs)
	}
	if len(k.ciphertext) == 0 || len(k.ciphertext)%bs != 0 {
		return nil, errors.New("encrypted key is not a whole number of cipher blocks")
	}
	plain := make([]byte, len(k.ciphertext))
	cipher.NewCBCDecrypter(block, k.iv).CryptBlocks(plain, k.ciphertext)
	pad := int(plain[len(plain)-1])
	if pad < 1 || pad > bs || !bytes.Equal(plain[len(plain)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return nil, errors.New("wrong password (the decrypted key's padding is invalid)")
	}
	return plain[:len(plain)-pad], nil
}

// unmarshalAll is asn1.Unmarshal that refuses trailing bytes.
func unmarshalAll(der []byte, v any) error {
	rest, err := asn1.Unmarshal(der, v)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return errors.New("trailing data")
	}
	return nil
}
