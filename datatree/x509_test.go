package datatree

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
)

// x500Names are names and whether Java's X500Principal(String) accepts
// them (TestX500NamesMatchJava checks the table against the JDK).
var x500Names = []struct {
	name  string
	valid bool
}{
	{"", true},
	{"CN=alice", true},
	{"CN=alice,O=Example,C=NL", true},
	{"cn=alice; o=Example", true},
	{" CN = alice , OU = eng + O = x ", true},
	{"CN=", true},
	{"CN=  ", true},
	{`CN=a\,b\+c\=d\<e\>f\#g\;h\"i\\j`, true},
	{`CN=\ \ padded\ \ `, true},
	{`CN=\#hash`, true},
	{`CN=a=b#c`, true},
	{`CN=caf\c3\a9`, true},
	{`CN=bad\c`, false},
	{`CN=bad\x`, false},
	{`CN=trailing\`, false},
	{`CN="quoted, with comma"`, true},
	{`CN="quoted" `, true},
	{`CN="unterminated`, false},
	{`CN="quoted" trailing`, false},
	{`CN="esc\"aped"`, true},
	{`CN="bad \ escape"`, false},
	{"CN=#0c02616c", true},
	{"CN=#0c02616", false},
	{"CN=#0c0261", false},
	{"CN=#", false},
	{"CN=#zz", false},
	{"CN=#0c02616c00", false},
	{"2.5.4.3=alice", true},
	{"OID.2.5.4.3=alice", true},
	{"oid.0.9.2342.19200300.100.1.25=example", true},
	{"1.40.1=x", false},
	{"1.39.1=x", true},
	{"2.999.1=x", true},
	{"3.1=x", false},
	{"1=x", false},
	{"1..2=x", false},
	{"FOO=bar", false},
	{"EMAILADDRESS=a@b.c,UID=u,DC=example,SERIALNUMBER=7,STREET=s,T=t,SURNAME=s,GIVENNAME=g,INITIALS=i,GENERATION=g,DNQ=d,IP=1.2.3.4,S=s,L=l", true},
	{"alice", false},
	{"CN=a,,O=b", false},
	{"CN=a,", false},
	{",CN=a", false},
	{"CN=a+", false},
	{"+CN=a", false},
	{"CN=a+O=b", true},
	{"CN=x<y", false},
	{"CN=x>y", false},
	{`CN=x"y`, false},
	{`CN=a\\,O=b`, true},
	{`CN=a\\\,O=b`, true},
	{`CN=a\\\\,O=b`, true},
	{"CN=line\nbreak", true},
	{"CN=Zoë 日本", true},
}

func TestValidX500Name(t *testing.T) {
	for _, tc := range x500Names {
		assert.Equal(t, tc.valid, validX500Name(tc.name), "%q", tc.name)
	}
}

// TestX500NamesMatchJava runs every name of the table through Java's
// X500Principal.
func TestX500NamesMatchJava(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("skipping: java is not installed")
	}
	var in strings.Builder
	for _, tc := range x500Names {
		for _, u := range utf16.Encode([]rune(tc.name)) {
			fmt.Fprintf(&in, `\u%04x`, u)
		}
		in.WriteByte('\n')
	}
	cmd := exec.Command("java", filepath.Join("testdata", "ValidPrincipal.java"))
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		t.Fatalf("java: %v\n%s", err, exitErr.Stderr)
	}
	require.NoError(t, err)
	got := strings.Fields(string(out))
	require.Len(t, got, len(x500Names))
	for i, tc := range x500Names {
		assert.Equal(t, fmt.Sprint(tc.valid), got[i], "Java on %q", tc.name)
	}
}

func FuzzValidX500Name(f *testing.F) {
	for _, tc := range x500Names {
		f.Add(tc.name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		validX500Name(name) // must not panic
	})
}

func TestX509Identities(t *testing.T) {
	off := Config{}
	on := Config{X509Enabled: true, X509SuperUser: "CN=root"}
	assert.Nil(t, CertificateIdentities(off, "CN=alice"), "no x509 scheme without a secure port")
	assert.Equal(t, []wire.Id{{Scheme: "x509", ID: "CN=alice"}}, CertificateIdentities(on, "CN=alice"))
	assert.Equal(t, []wire.Id{{Scheme: "super", ID: "CN=root"}, {Scheme: "x509", ID: "CN=root"}}, CertificateIdentities(on, "CN=root"))
	assert.Equal(t, []wire.Id{{Scheme: "x509", ID: ""}}, CertificateIdentities(on, ""), "an empty subject is an id too")

	ids, code := Authenticate(on, "x509", nil, Client{Addr: "1.2.3.4", HasCert: true, CertSubject: "CN=alice"})
	assert.Equal(t, wire.ErrOK, code)
	assert.Equal(t, []wire.Id{{Scheme: "x509", ID: "CN=alice"}}, ids)
	_, code = Authenticate(on, "x509", nil, Client{Addr: "1.2.3.4"})
	assert.Equal(t, wire.ErrAuthFailed, code, "no certificate")
	_, code = Authenticate(off, "x509", nil, Client{Addr: "1.2.3.4", HasCert: true})
	assert.Equal(t, wire.ErrAuthFailed, code, "no x509 provider")

	alice := wire.Id{Scheme: "x509", ID: "CN=alice,O=Example"}
	acl := []wire.ACL{{Perms: wire.PermRead, ID: alice}}
	assert.True(t, checkACL(acl, wire.PermRead, []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}, alice}))
	assert.False(t, checkACL(acl, wire.PermRead, []wire.Id{{Scheme: "x509", ID: "CN=alice, O=Example"}}), "ids match exactly")
	assert.True(t, checkACL(acl, wire.PermRead, []wire.Id{{Scheme: "super", ID: "CN=root"}}))

	_, ok := fixupACL(acl, nil, off)
	assert.False(t, ok, "InvalidACL without the x509 provider, as ZooKeeper")
	got, ok := fixupACL(acl, nil, on)
	assert.True(t, ok)
	assert.Equal(t, acl, got)
	_, ok = fixupACL([]wire.ACL{{Perms: wire.PermRead, ID: wire.Id{Scheme: "x509", ID: "alice"}}}, nil, on)
	assert.False(t, ok, "not an X.500 name")
	got, ok = fixupACL(wire.CreatorAllACL, []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "super", ID: "CN=root"}, alice}, on)
	require.True(t, ok, "auth expands to the x509 id")
	assert.Equal(t, []wire.ACL{{Perms: wire.PermAll, ID: alice}}, got)
}
