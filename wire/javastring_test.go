package wire

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// What ZooKeeper 3.8 answers to a sync on "/" + these bytes (the reply echoes
// the path as Java read and wrote it), observed on Debian's 3.8.0 with Java
// 17; the differential test keeps checking it against the real server.
var javaStringCases = []struct{ in, out string }{
	{"a\xe2\x82", "a\ufffd"},                         // a three-byte sequence cut short: one U+FFFD
	{"\xe2\x82A", "\ufffdA"},                         // the same, followed by ASCII
	{"\xc0\x80", "\ufffd\ufffd"},                     // overlong NUL: C0 never starts a sequence
	{"\xe0\x80\x80", "\ufffd\ufffd\ufffd"},           // overlong: E0 needs A0..BF next
	{"\xed\xa0\x80x", "\ufffdx"},                     // an encoded surrogate: one U+FFFD for all three
	{"\xed\xa0", "\ufffd"},                           // its first two bytes
	{"\xed\xa0A", "\ufffdA"},                         // ... followed by ASCII
	{"\xf0\x9f\x98", "\ufffd"},                       // a four-byte sequence cut short
	{"\xf0\x9fA", "\ufffdA"},                         // ... and cut by ASCII
	{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"}, // above U+10FFFF: F4 needs 80..8F
	{"\xf5\x80", "\ufffd\ufffd"},
	{"\xff\xfeA", "\ufffd\ufffdA"},
	{"\x80\xbf", "\ufffd\ufffd"},
	{"a\x00b", "a\x00b"},
	{"日本語", "日本語"},
	{"\U0001f600", "\U0001f600"}, // valid: a surrogate pair in Java
}

func TestJavaStringDecoding(t *testing.T) {
	for _, c := range javaStringCases {
		require.Equal(t, c.out, decodeJavaString([]byte(c.in)), "%x", c.in)
	}
}

// Java writes a character beyond the BMP as two three-byte surrogates, and
// ZooKeeper's sync on "/\U0001f600" echoes exactly that; read back, each
// surrogate is one U+FFFD.
func TestJavaStringEncoding(t *testing.T) {
	cesu := "\xed\xa0\xbd\xed\xb8\x80"
	require.Equal(t, "/"+cesu, string(appendJavaString(nil, "/\U0001f600")))
	require.Equal(t, "a"+cesu+"b", string(appendJavaString(nil, "a\U0001f600b")))
	require.Equal(t, "\ufffd\ufffd", decodeJavaString([]byte(cesu)))
	require.Equal(t, "/日本語\uffff", string(appendJavaString(nil, "/日本語\uffff")))
	// Bytes no Java String can hold are sent as they are, so that tests
	// can send what a non-Java client might.
	require.Equal(t, "/\xff\xf0\x9f", string(appendJavaString(nil, "/\xff\xf0\x9f")))

	e := NewEncoder(nil)
	e.WriteString("\U00010000")
	require.Equal(t, []byte{0, 0, 0, 6, 0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80}, e.Bytes())
}

// Decoding gives valid UTF-8 and leaves valid UTF-8 alone; the codec is
// stable once a string has been through it.
func TestJavaStringProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.SampledFrom(interestingBytes), 0, 12).Draw(t, "bytes")
		s := decodeJavaString(b)
		require.True(t, utf8.ValidString(s), "%x -> %x", b, s)
		if utf8.Valid(b) {
			require.Equal(t, string(b), s)
		}
		again := decodeJavaString(appendJavaString(nil, decodeJavaString(appendJavaString(nil, s))))
		require.Equal(t, decodeJavaString(appendJavaString(nil, s)), again)
	})
}

// interestingBytes are the bytes at the edges of UTF-8's ranges.
var interestingBytes = []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf,
	0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf8, 0xff}

// TestJavaStringDecodingMatchesJDK compares decodeJavaString with Java's own
// decoder on every string of up to four interesting bytes, every one- and
// two-byte string, and random longer ones.
func TestJavaStringDecodingMatchesJDK(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: starts a JVM")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("skipping: no java on PATH (Debian's default-jdk-headless runs it)")
	}
	var inputs [][]byte
	var gen func(prefix []byte, n int)
	gen = func(prefix []byte, n int) {
		if n == 0 {
			inputs = append(inputs, bytes.Clone(prefix))
			return
		}
		for _, b := range interestingBytes {
			gen(append(prefix, b), n-1)
		}
	}
	for n := 1; n <= 4; n++ {
		gen(nil, n)
	}
	for i := range 1 << 16 {
		inputs = append(inputs, []byte{byte(i >> 8), byte(i)}, []byte{byte(i)})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, 1+rng.IntN(16))
		for i := range b {
			b[i] = byte(rng.Uint32())
			if rng.IntN(2) == 0 {
				b[i] = 0x80 | b[i]&0x3f // continuation bytes, to make long sequences likely
			}
		}
		inputs = append(inputs, b)
	}
	var stdin strings.Builder
	for _, in := range inputs {
		stdin.WriteString(hex.EncodeToString(in))
		stdin.WriteByte('\n')
	}
	cmd := exec.Command(java, "testdata/jdk/DecodeStrings.java")
	cmd.Stdin = strings.NewReader(stdin.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && strings.Contains(stderr.String(), "jdk.compiler") {
		t.Skipf("skipping: this java cannot run a source file (needs a JDK): %s", stderr.String())
	}
	require.NoError(t, err, "java: %s", stderr.String())
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(inputs))
	mismatches := 0
	for i, in := range inputs {
		want := lines[i]
		if got := hex.EncodeToString([]byte(decodeJavaString(in))); got != want {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("%x: Java reads %s, decodeJavaString %s", in, want, got)
			}
		}
	}
	require.Zero(t, mismatches, "of %d strings", len(inputs))
}

// FuzzJavaString: any bytes decode to valid UTF-8, valid UTF-8 unchanged,
// and a decoded string survives being written and read back unless it holds
// a character beyond the BMP.
func FuzzJavaString(f *testing.F) {
	for _, c := range javaStringCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := decodeJavaString(b)
		if !utf8.ValidString(s) || utf8.Valid(b) && s != string(b) {
			t.Fatalf("%x decoded as %x", b, s)
		}
		back := decodeJavaString(appendJavaString(nil, s))
		beyondBMP := strings.ContainsFunc(s, func(r rune) bool { return r > 0xffff })
		if !beyondBMP && back != s {
			t.Fatalf("%x: %x read back as %x", b, s, back)
		}
	})
}
