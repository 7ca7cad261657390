package wire

import "unicode/utf8"

// Jute's ustring is a Java String on both ends, and ZooKeeper converts it
// with two rules that are not plain UTF-8:
//
//   - reading (BinaryInputArchive.readString) is new String(bytes, UTF_8):
//     each malformed sequence becomes one U+FFFD. How many bytes one U+FFFD
//     stands for is the JDK's rule, checked byte for byte against Java 17
//     and ZooKeeper 3.8 (TestJavaStringDecodingMatchesJDK, the differential
//     test): the longest prefix that could still begin a valid sequence (at
//     least one byte), except that a complete three-byte encoding of a UTF-16
//     surrogate (ED A0..BF 80..BF) is one U+FFFD as a whole. A valid
//     four-byte sequence becomes a surrogate pair.
//   - writing (BinaryOutputArchive.writeString) encodes each UTF-16 char on
//     its own, so a character outside the BMP is written as its two
//     surrogates, three bytes each (CESU-8), which the reading rule then
//     turns into two U+FFFD.
//
// A Go string here holds the Java String as UTF-8 (a surrogate pair as the
// one four-byte rune it stands for), so decodeJavaString returns valid
// UTF-8 and appendJavaString writes what Java would.

// decodeJavaString returns b as ZooKeeper reads a ustring.
func decodeJavaString(b []byte) string {
	if utf8.Valid(b) {
		// Java accepts exactly the well-formed sequences Go does.
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			out = append(out, b[i])
			i++
			continue
		}
		n, valid := javaSequence(b[i:])
		if valid {
			out = append(out, b[i:i+n]...)
		} else {
			out = utf8.AppendRune(out, utf8.RuneError)
		}
		i += n
	}
	return string(out)
}

// javaSequence measures the sequence that starts with the non-ASCII byte
// b[0]: its length and whether it decodes to a character, or else how many
// bytes the JDK replaces with one U+FFFD.
func javaSequence(b []byte) (n int, valid bool) {
	lead := b[0]
	var size int
	lo, hi := byte(0x80), byte(0xbf) // the second byte's range; later bytes are always 80..BF
	switch {
	case lead >= 0xc2 && lead <= 0xdf:
		size = 2
	case lead == 0xe0:
		size, lo = 3, 0xa0 // no overlong forms
	case lead >= 0xe1 && lead <= 0xef:
		// ED A0..BF is a surrogate; unlike Unicode's recommendation the
		// JDK accepts it as a second byte and rejects the whole sequence
		// once it is complete.
		size = 3
	case lead == 0xf0:
		size, lo = 4, 0x90
	case lead >= 0xf1 && lead <= 0xf3:
		size = 4
	case lead == 0xf4:
		size, hi = 4, 0x8f // nothing above U+10FFFF
	default:
		return 1, false // a continuation byte, C0, C1 or F5..FF
	}
	n = 1
	for ; n < size && n < len(b); n++ {
		c := b[n]
		if n == 1 && (c < lo || c > hi) || n > 1 && (c < 0x80 || c > 0xbf) {
			return n, false
		}
	}
	if n < size {
		return n, false // cut short by the end of the string
	}
	if lead == 0xed && b[1] >= 0xa0 {
		return n, false
	}
	return n, true
}

// appendJavaString appends s as ZooKeeper writes a ustring: UTF-8, except
// that a rune outside the BMP becomes its two UTF-16 surrogates, three
// bytes each. Bytes that are not valid UTF-8 (which no Java String can
// hold; only Go callers build such strings) are copied as they are.
func appendJavaString(buf []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if s[i] < 0xf0 {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if size != 4 {
			i++ // not a valid four-byte sequence: copied as it is
			continue
		}
		buf = append(buf, s[start:i]...)
		r -= 0x10000
		buf = appendSurrogate(buf, 0xd800+r>>10)
		buf = appendSurrogate(buf, 0xdc00+r&0x3ff)
		i += size
		start = i
	}
	return append(buf, s[start:]...)
}

// appendSurrogate writes a UTF-16 surrogate as Java's three-byte form
// (which utf8.AppendRune refuses to produce).
func appendSurrogate(buf []byte, c rune) []byte {
	return append(buf, byte(0xe0|c>>12), byte(0x80|(c>>6)&0x3f), byte(0x80|c&0x3f))
}
