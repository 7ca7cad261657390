package tlsconf

import (
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"strings"
	"unicode/utf8"
)

// attributeValue is one AttributeTypeAndValue of a distinguished name, its
// value kept as encoded: Java prints values of unknown types, and every value
// of a type without an RFC 2253 keyword, as the hex of their DER encoding.
type attributeValue struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rdnSET is a RelativeDistinguishedName (asn1 reads a slice type whose name
// ends in SET as a SET OF).
type rdnSET []attributeValue

// rfc2253Keywords are the attribute types Java's X500Principal.getName()
// prints by name (its AVAKeyword table, RFC 2253 column); every other type
// prints as its dotted OID.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.9":                    "STREET",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"0.9.2342.19200300.100.1.1":  "UID",
	"0.9.2342.19200300.100.1.25": "DC",
}

// The ASN.1 string tags Java prints as text (AVA.isDerString, not
// canonical).
const (
	tagUTF8String      = 12
	tagPrintableString = 19
	tagT61String       = 20
	tagIA5String       = 22
	tagGeneralString   = 27
	tagBMPString       = 30
)

// SubjectDN is the distinguished name in rawSubject (a certificate's
// RawSubject, DER) as Java's X500Principal.getName() prints it — RFC 2253:
// the RDNs last to first, separated by ','; the values of a multi-valued RDN
// in encoded order, joined by '+' — which is the id ZooKeeper's
// X509AuthenticationProvider gives the certificate ("x509:<SubjectDN>").
func SubjectDN(rawSubject []byte) (string, error) {
	var rdns []rdnSET
	rest, err := asn1.Unmarshal(rawSubject, &rdns)
	if err != nil {
		return "", err
	}
	if len(rest) > 0 {
		return "", errors.New("trailing data after the subject name")
	}
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		if i < len(rdns)-1 {
			b.WriteByte(',')
		}
		for j, av := range rdns[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			writeAttribute(&b, av)
		}
	}
	return b.String(), nil
}

// writeAttribute prints one type=value as Java's AVA.toRFC2253String does.
func writeAttribute(b *strings.Builder, av attributeValue) {
	oid := av.Type.String()
	keyword, named := rfc2253Keywords[oid]
	if !named {
		keyword = oid
	}
	b.WriteString(keyword)
	b.WriteByte('=')
	text, isString := valueText(av.Value)
	if !named || !isString {
		b.WriteByte('#')
		b.WriteString(hex.EncodeToString(av.Value.FullBytes))
		return
	}
	writeEscaped(b, text)
}

// valueText decodes a string-typed value as Java 17 does — ZooKeeper 3.8's
// Debian runtime — for every string type: its bytes read as UTF-8. (Java 21
// and later read BMPString as UTF-16 and the 8-bit types as ISO-8859-1; the
// ids of such certificates differ between the two.) false for any other
// type.
func valueText(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal || v.IsCompound {
		return "", false
	}
	switch v.Tag {
	case tagPrintableString, tagT61String, tagIA5String, tagGeneralString, tagBMPString, tagUTF8String:
		return javaUTF8(v.Bytes), true
	}
	return "", false
}

// javaUTF8 decodes b as Java's UTF-8 decoder (sun.nio.cs.UTF_8, which
// new String(bytes, UTF_8) follows) does with replacement: a malformed
// sequence becomes one U+FFFD per the lengths Java reports for it (one or
// two bytes; three for an encoded surrogate), and an incomplete sequence at
// the end one U+FFFD in all.
func javaUTF8(b []byte) string {
	var out strings.Builder
	for len(b) > 0 {
		r, n := javaDecodeRune(b)
		out.WriteRune(r)
		b = b[n:]
	}
	return out.String()
}

// javaDecodeRune decodes the sequence at the start of b (non-empty): the
// rune, or U+FFFD for a malformed one, and how many bytes it took.
func javaDecodeRune(b []byte) (rune, int) {
	cont := func(i int) bool { return b[i]&0xc0 == 0x80 }
	bad := utf8.RuneError
	switch b1 := b[0]; {
	case b1 < 0x80:
		return rune(b1), 1
	case b1 >= 0xc2 && b1 <= 0xdf:
		if len(b) < 2 {
			return bad, len(b)
		}
		if !cont(1) {
			return bad, 1
		}
		return rune(b1&0x1f)<<6 | rune(b[1]&0x3f), 2
	case b1 >= 0xe0 && b1 <= 0xef:
		overlong := b1 == 0xe0 && len(b) > 1 && b[1]&0xe0 == 0x80
		if len(b) < 3 {
			if len(b) > 1 && (overlong || !cont(1)) {
				return bad, 1
			}
			return bad, len(b)
		}
		if overlong || !cont(1) {
			return bad, 1
		}
		if !cont(2) {
			return bad, 2
		}
		r := rune(b1&0x0f)<<12 | rune(b[1]&0x3f)<<6 | rune(b[2]&0x3f)
		if r >= 0xd800 && r <= 0xdfff {
			return bad, 3 // a surrogate
		}
		return r, 3
	case b1 >= 0xf0 && b1 <= 0xf7:
		secondBad := len(b) > 1 && (b1 > 0xf4 || (b1 == 0xf0 && (b[1] < 0x90 || b[1] > 0xbf)) ||
			(b1 == 0xf4 && b[1]&0xf0 != 0x80) || !cont(1))
		if len(b) < 4 {
			switch {
			case b1 > 0xf4 || secondBad:
				return bad, 1
			case len(b) > 2 && !cont(2):
				return bad, 2
			}
			return bad, len(b)
		}
		r := rune(b1&0x07)<<18 | rune(b[1]&0x3f)<<12 | rune(b[2]&0x3f)<<6 | rune(b[3]&0x3f)
		if cont(1) && cont(2) && cont(3) && r >= 0x10000 && r <= 0x10ffff {
			return r, 4
		}
		switch {
		case secondBad:
			return bad, 1
		case !cont(2):
			return bad, 2
		}
		return bad, 3
	}
	return bad, 1
}

// writeEscaped escapes a value as Java's AVA does for RFC 2253: a backslash
// before each of ,=+<>#;"\ and NUL as \00, anywhere; then a backslash before
// each leading and each trailing space or carriage return.
func writeEscaped(b *strings.Builder, value string) {
	var escaped []rune
	for _, r := range value {
		switch {
		case strings.ContainsRune(`,=+<>#;"\`, r):
			escaped = append(escaped, '\\', r)
		case r == 0:
			escaped = append(escaped, '\\', '0', '0')
		default:
			escaped = append(escaped, r)
		}
	}
	blank := func(r rune) bool { return r == ' ' || r == '\r' }
	lead := 0
	for lead < len(escaped) && blank(escaped[lead]) {
		lead++
	}
	trail := len(escaped) - 1
	for trail >= 0 && blank(escaped[trail]) {
		trail--
	}
	for i, r := range escaped {
		if i < lead || i > trail {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
}
