package sessions

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
)

// PasswordLen is the length of a session password, as ZooKeeper makes it.
const PasswordLen = 16

// zooKeeperSecret is the constant ZooKeeper XORs into the session id to seed
// its password generator (ZooKeeperServer's superSecret). It is public in
// ZooKeeper's source, so it protects nothing; it is kept so that a password
// computed here equals the one ZooKeeper computes for the same id.
const zooKeeperSecret = 0xB3415C00

// Passwords derives session passwords from session ids. Nothing is stored:
// any member computes the same password for an id, so a session survives a
// restart or a move to another member.
//
// The zero value derives them exactly as ZooKeeper 3.8 does, which means
// anyone who knows a session id can compute its password (ids appear in
// logs and four-letter-word output). With Secret set, the password is an
// HMAC-SHA256 of the id under the ensemble's secret: every member must share
// the secret, and sessions made by a ZooKeeper server (or under another
// secret) no longer validate.
type Passwords struct {
	Secret []byte
}

// For returns the password of session id.
func (p Passwords) For(id int64) []byte {
	if len(p.Secret) == 0 {
		return zooKeeperPassword(id)
	}
	mac := hmac.New(sha256.New, p.Secret)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(id))
	mac.Write(b[:])
	return mac.Sum(nil)[:PasswordLen]
}

// Check reports whether passwd is the password of session id. Id 0 never
// has a valid password, as in ZooKeeper. The comparison takes the same time
// whatever the bytes, so it leaks nothing about a secret-derived password.
func (p Passwords) Check(id int64, passwd []byte) bool {
	return id != 0 && subtle.ConstantTimeCompare(passwd, p.For(id)) == 1
}

// zooKeeperPassword is java.util.Random(id ^ 0xB3415C00).nextBytes(new byte[16]).
func zooKeeperPassword(id int64) []byte {
	r := newJavaRandom(id ^ zooKeeperSecret)
	out := make([]byte, PasswordLen)
	r.nextBytes(out)
	return out
}

// javaRandom is java.util.Random's 48-bit linear congruential generator,
// reproduced bit for bit (its constants are part of Java's specification).
type javaRandom struct{ seed uint64 }

const (
	javaMultiplier = 0x5DEECE66D
	javaAddend     = 0xB
	javaMask       = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (uint64(seed) ^ javaMultiplier) & javaMask}
}

// next returns the next `bits` random bits as Java's Random.next does,
// including its truncation to a signed 32-bit int.
func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaMultiplier + javaAddend) & javaMask
	return int32(r.seed >> (48 - bits))
}

// nextBytes fills b as Java's Random.nextBytes does: one nextInt per four
// bytes, least significant byte first, the last int partly used.
func (r *javaRandom) nextBytes(b []byte) {
	for i := 0; i < len(b); {
		rnd := r.next(32)
		for n := min(len(b)-i, 4); n > 0; n-- {
			b[i] = byte(rnd)
			i++
			rnd >>= 8
		}
	}
}
