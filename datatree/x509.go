package datatree

import (
	"encoding/asn1"
	"encoding/hex"
	"strings"

	"github.com/zabd/zabd/wire"
)

// The x509 scheme is ZooKeeper's X509AuthenticationProvider: a TLS client's
// verified certificate authenticates the connection as ("x509", subject),
// the subject in RFC 2253 form as Java prints it (the shell computes it).
// ZooKeeper registers the scheme only when a secure client port is
// configured (or an authProvider names it): Config.X509Enabled.

// CertificateIdentities are the ids a connection whose TLS client presented
// a verified certificate with subject gets, as ZooKeeper's
// X509AuthenticationProvider.handleAuthentication adds them: ("super",
// subject) first when subject is the configured super user, then ("x509",
// subject). None when the scheme is not enabled.
func CertificateIdentities(cfg Config, subject string) []wire.Id {
	if !cfg.X509Enabled {
		return nil
	}
	var ids []wire.Id
	if cfg.X509SuperUser != "" && subject == cfg.X509SuperUser {
		ids = append(ids, wire.Id{Scheme: "super", ID: subject})
	}
	return append(ids, wire.Id{Scheme: "x509", ID: subject})
}

// x500Keywords are the attribute keywords Java's X500Principal(String)
// accepts (its AVAKeyword table), upper case.
var x500Keywords = map[string]bool{
	"CN": true, "C": true, "L": true, "S": true, "ST": true, "O": true, "OU": true, "T": true, "IP": true,
	"STREET": true, "DC": true, "DNQUALIFIER": true, "DNQ": true, "SURNAME": true, "GIVENNAME": true,
	"INITIALS": true, "GENERATION": true, "EMAIL": true, "EMAILADDRESS": true, "UID": true, "SERIALNUMBER": true,
}

// validX500Name is X509AuthenticationProvider.isValid: whether Java's
// X500Principal(String) parses name (which decides whether an ACL may
// name the x509 id). It follows Java's parser, quirks included: RDNs split
// at ',' or ';' unless escaped or inside quotes, values at '+' unless right
// after a backslash; each value a keyword or OID, '=', then a #hex DER value,
// a quoted string or an escaped string.
func validX500Name(name string) bool {
	if name == "" {
		return true
	}
	for _, rdn := range splitX500(name) {
		if !validRDN(rdn) {
			return false
		}
	}
	return true
}

// splitX500 splits a name into RDN strings as Java's X500Name.parseDN does.
func splitX500(dn string) []string {
	var rdns []string
	start, search, quotes := 0, 0, 0
	for {
		end := strings.IndexAny(dn[search:], ",;")
		if end < 0 {
			return append(rdns, dn[start:])
		}
		end += search
		quotes += countQuotes(dn, search, end)
		if quotes != 1 && !escapedAt(dn, end, search) {
			rdns = append(rdns, dn[start:end])
			start, quotes = end+1, 0
		}
		search = end + 1
	}
}

// countQuotes counts the '"' in s[from:to] that are not right after a
// backslash (the first counts regardless), as Java's X500Name.countQuotes.
func countQuotes(s string, from, to int) int {
	n := 0
	for i := from; i < to; i++ {
		if s[i] == '"' && (i == from || s[i-1] != '\\') {
			n++
		}
	}
	return n
}

// escapedAt reports whether the separator at end is escaped, as Java's
// X500Name.escaped decides it: one backslash before it, or an odd number of
// backslashes in all of s[search:end] when the two before it are both
// backslashes.
func escapedAt(s string, end, search int) bool {
	switch {
	case end == 1 && s[0] == '\\':
		return true
	case end > 1 && s[end-1] == '\\' && s[end-2] != '\\':
		return true
	case end > 1 && s[end-1] == '\\':
		return strings.Count(s[search:end], `\`)%2 == 1
	}
	return false
}

// validRDN checks one RDN: values split at '+' (a separator unless it is
// the first character, right after a backslash, or inside quotes), none
// empty.
func validRDN(rdn string) bool {
	start, search, quotes := 0, 0, 0
	for {
		plus := strings.IndexByte(rdn[search:], '+')
		if plus < 0 {
			return validAVA(rdn[start:])
		}
		plus += search
		quotes += countQuotes(rdn, search, plus)
		if plus > 0 && rdn[plus-1] != '\\' && quotes != 1 {
			if !validAVA(rdn[start:plus]) {
				return false
			}
			start, quotes = plus+1, 0
		}
		search = plus + 1
	}
}

// validAVA checks keyword=value as Java's AVA(Reader) parses it in its
// default format. Like Java, it stops reading the value at a terminator and
// ignores the rest.
func validAVA(ava string) bool {
	keyword, value, ok := strings.Cut(ava, "=")
	if !ok || !validX500Keyword(keyword) {
		return false
	}
	value = strings.TrimLeft(value, " \n")
	switch {
	case value == "":
		return true
	case value[0] == '#':
		return validHexValue(value[1:])
	case value[0] == '"':
		return validQuotedValue(value[1:])
	}
	return validStringValue(value)
}

func validX500Keyword(keyword string) bool {
	keyword = strings.ToUpper(strings.TrimSpace(keyword))
	if x500Keywords[keyword] {
		return true
	}
	keyword = strings.TrimPrefix(keyword, "OID.")
	parts := strings.Split(keyword, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	// ObjectIdentifier: the first arc is 0, 1 or 2; under 0 and 1 the second
	// is below 40.
	first := strings.TrimLeft(parts[0], "0")
	second := strings.TrimLeft(parts[1], "0")
	switch first {
	case "", "1":
		return len(second) < 2 || (len(second) == 2 && second < "40")
	case "2":
		return true
	}
	return false
}

// validHexValue: hex digits up to a terminator, an even non-zero number of
// them, encoding exactly one DER value.
func validHexValue(s string) bool {
	if end := strings.IndexAny(s, ",+;"); end >= 0 {
		s = s[:end]
	}
	der, err := hex.DecodeString(s)
	if err != nil || len(der) == 0 {
		return false
	}
	var v asn1.RawValue
	rest, err := asn1.Unmarshal(der, &v)
	return err == nil && len(rest) == 0
}

// validQuotedValue: the rest of a quoted value up to its closing quote,
// then only blanks.
func validQuotedValue(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return strings.Trim(s[i+1:], " \n") == ""
		case c == '\\':
			if i+1 >= len(s) {
				return false
			}
			if isHexDigit(rune(s[i+1])) {
				if i+2 >= len(s) || !isHexDigit(rune(s[i+2])) {
					return false
				}
				i += 2
				continue
			}
			if !strings.ContainsRune(",=\n+<>#;\\\"", rune(s[i+1])) {
				return false
			}
			i++
		}
	}
	return false // no closing quote
}

// validStringValue: an unquoted value up to a terminator (',', '+' or ';');
// a backslash escapes a hex pair or one of ,=\n+<>#;\" and space; ,+<>;"
// may not appear unescaped.
func validStringValue(s string) bool {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && isHexDigit(rune(s[i+1])):
			if i+2 >= len(s) || !isHexDigit(rune(s[i+2])) {
				return false
			}
			i += 3
		case c == '\\':
			if i+1 >= len(s) || !strings.ContainsRune(",=\n+<>#;\\\" ", rune(s[i+1])) {
				return false
			}
			i += 2
		case strings.IndexByte(`,+<>;"`, c) >= 0:
			return false
		default:
			i++
		}
		if i < len(s) && strings.IndexByte(",+;", s[i]) >= 0 {
			return true // a terminator ends the value; Java reads no further
		}
	}
	return true
}

func isHexDigit(c rune) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
