package tlsconf

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server/tlsconf/tlstest"
)

var (
	oidC      = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidCN     = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidOU     = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidO      = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidSerial = asn1.ObjectIdentifier{2, 5, 4, 5}
	oidTitle  = asn1.ObjectIdentifier{2, 5, 4, 12}
	oidDC     = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidUID    = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	oidEmail  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	oidStreet = asn1.ObjectIdentifier{2, 5, 4, 9}
)

// stringValue is an attribute value of the given ASN.1 string tag.
func stringValue(tag int, content []byte) asn1.RawValue {
	return asn1.RawValue{Class: asn1.ClassUniversal, Tag: tag, Bytes: content}
}

func utf8Value(s string) asn1.RawValue { return stringValue(tagUTF8String, []byte(s)) }

// rawName encodes RDNs (first to last, as in the certificate), each a list
// of type/value pairs.
func rawName(t testing.TB, rdns ...[]attributeValue) []byte {
	t.Helper()
	seq := make([]rdnSET, len(rdns))
	for i, r := range rdns {
		seq[i] = r
	}
	der, err := asn1.Marshal(seq)
	require.NoError(t, err)
	return der
}

func av(oid asn1.ObjectIdentifier, v asn1.RawValue) attributeValue {
	return attributeValue{Type: oid, Value: v}
}

// subjectCases are subjects and the names Java 17's
// X500Principal.getName() gives them (TestSubjectDNMatchesJava checks the
// table against the JDK).
func subjectCases(t testing.TB) []struct {
	raw  []byte
	want string
} {
	bmp := []byte{0x00, 'Z', 0x00, 'o', 0x00, 0xeb, 0x65, 0xe5} // "Zoë日" in UTF-16, which Java 17 reads as UTF-8
	return []struct {
		raw  []byte
		want string
	}{
		{rawName(t, []attributeValue{av(oidC, stringValue(tagPrintableString, []byte("NL")))}), "C=NL"},
		{rawName(t, []attributeValue{av(oidO, utf8Value("Example"))}, []attributeValue{av(oidCN, utf8Value("alice"))}), "CN=alice,O=Example"},
		{rawName(t, []attributeValue{av(oidCN, utf8Value(`a,b+c=d<e>f#g;h"i\j`))}), `CN=a\,b\+c\=d\<e\>f\#g\;h\"i\\j`},
		{rawName(t, []attributeValue{av(oidCN, utf8Value("  padded  "))}), `CN=\ \ padded\ \ `},
		{rawName(t, []attributeValue{av(oidCN, utf8Value("#hash\r"))}), `CN=\#hash\` + "\r"},
		{rawName(t, []attributeValue{av(oidCN, utf8Value("Zoë 日本 \U0001F600"))}), "CN=Zoë 日本 \U0001F600"},
		{rawName(t, []attributeValue{av(oidCN, utf8Value("nul\x00byte"))}), `CN=nul\00byte`},
		{rawName(t, []attributeValue{av(oidCN, stringValue(tagPrintableString, []byte("printable")))}), "CN=printable"},
		{rawName(t, []attributeValue{av(oidCN, stringValue(tagIA5String, []byte("ia5")))}), "CN=ia5"},
		{rawName(t, []attributeValue{av(oidCN, stringValue(tagT61String, []byte("caf\xe9")))}), "CN=caf\ufffd"},
		{rawName(t, []attributeValue{av(oidCN, stringValue(tagT61String, []byte("a\xe6\x97x\xff\xffb\xed\xa0\x80\xf0\x9f")))}),
			"CN=a\ufffdx\ufffd\ufffdb\ufffd\ufffd"},
		{rawName(t, []attributeValue{av(oidCN, stringValue(tagT61String, []byte("\xe0\x80\x80|\xf5\x80\x80\x80|\xf0\x80\x80\x80|\xc0\xaf|\xf4\x90\x80\x80|\xe1\x80|\xf1\x80\x41|\xf0\x9f\x98\x80")))}),
			"CN=\ufffd\ufffd\ufffd|\ufffd\ufffd\ufffd\ufffd|\ufffd\ufffd\ufffd\ufffd|\ufffd\ufffd|\ufffd\ufffd\ufffd\ufffd|\ufffd|\ufffdA|\U0001F600"},
		{rawName(t, []attributeValue{av(oidCN, stringValue(tagBMPString, bmp))}), `CN=\00Z\00o\00` + "\ufffde\ufffd"},
		{rawName(t, []attributeValue{av(oidOU, utf8Value("eng")), av(oidCN, utf8Value("multi"))}), "OU=eng+CN=multi"},
		{rawName(t, []attributeValue{av(oidDC, stringValue(tagIA5String, []byte("example")))}, []attributeValue{av(oidUID, utf8Value("u1"))},
			[]attributeValue{av(oidStreet, utf8Value("Main St 1"))}), "STREET=Main St 1,UID=u1,DC=example"},
		{rawName(t, []attributeValue{av(oidSerial, stringValue(tagPrintableString, []byte("42")))}, []attributeValue{av(oidTitle, utf8Value("dr"))},
			[]attributeValue{av(oidEmail, stringValue(tagIA5String, []byte("a@b.c")))}), "1.2.840.113549.1.9.1=#16056140622e63,2.5.4.12=#0c026472,2.5.4.5=#13023432"},
		{rawName(t), ""},
	}
}

func TestSubjectDN(t *testing.T) {
	for _, tc := range subjectCases(t) {
		got, err := SubjectDN(tc.raw)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
	// A value that is no string prints as hex even under a keyword
	// (crypto/x509 refuses such certificates; Java prints them so).
	got, err := SubjectDN(rawName(t, []attributeValue{av(oidCN, asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagInteger, Bytes: []byte{7}})}))
	require.NoError(t, err)
	assert.Equal(t, "CN=#020107", got)
	_, err = SubjectDN([]byte{0x30, 0x03, 0x31, 0x01})
	assert.Error(t, err, "a truncated name")
	_, err = SubjectDN(append(rawName(t), 0))
	assert.ErrorContains(t, err, "trailing data")
}

// TestSubjectDNMatchesJava issues a certificate for every subject of the
// table and has Java 17 print X500Principal.getName() for each: the x509 ids
// zabd gives must be ZooKeeper's.
func TestSubjectDNMatchesJava(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("skipping: java is not installed")
	}
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "test CA")
	cases := subjectCases(t)
	args := []string{filepath.Join("testdata", "PrintSubject.java")}
	for i, tc := range cases {
		c := ca.Client(t, pkix.Name{}, tlstest.Options{RawSubject: tc.raw, DNSNames: []string{"client.example"}})
		args = append(args, tlstest.WriteFile(t, filepath.Join(dir, fmt.Sprintf("%d.der", i)), c.Cert.Raw))
	}
	out, err := exec.Command("java", args...).Output()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		t.Fatalf("java: %v\n%s", err, exitErr.Stderr)
	}
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(cases))
	for i, tc := range cases {
		// PrintSubject escapes control characters and non-ASCII as \uXXXX
		// so that the line survives the pipe whatever Java's encoding.
		assert.Equal(t, javaEscape(tc.want), lines[i], "subject %d", i)
	}
}

// javaEscape writes s as PrintSubject does: printable ASCII as is, every
// other UTF-16 unit as \uXXXX.
func javaEscape(s string) string {
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(s)) {
		if u >= 0x20 && u < 0x7f {
			b.WriteRune(rune(u))
		} else {
			fmt.Fprintf(&b, "\\u%04x", u)
		}
	}
	return b.String()
}

// FuzzSubjectDN: no subject, however malformed, panics the formatter.
func FuzzSubjectDN(f *testing.F) {
	for _, tc := range subjectCases(f) {
		f.Add(tc.raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if dn, err := SubjectDN(raw); err == nil && !utf8.ValidString(dn) {
			t.Fatalf("name %q is not valid UTF-8", dn)
		}
	})
}
