package zkcli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenizeAsZooKeeperMain(t *testing.T) {
	assert.Equal(t, []string{"create", "/a", "two words", "x'y"}, tokenize(`  create /a "two words" x'y`))
	assert.Equal(t, []string{"set", "/a", ""}, tokenize(`set /a ''`))
	assert.Empty(t, tokenize("   "))
}

func TestParseOptionsAsCommonsCli(t *testing.T) {
	spec := optionSpec{"s": false, "e": false, "v": true}
	p, err := parseOptions(spec, []string{"create", "-se", "/a", "-v", "3", "-5"})
	require.NoError(t, err)
	assert.Equal(t, []string{"create", "/a", "-5"}, p.args, "a negative number is an argument")
	assert.True(t, p.has("s") && p.has("e"))
	assert.Equal(t, "3", p.opts["v"])

	p, err = parseOptions(spec, []string{"set", "-v7", "/a", "--", "-s"})
	require.NoError(t, err)
	assert.Equal(t, "7", p.opts["v"])
	assert.Equal(t, []string{"set", "/a", "-s"}, p.args)

	_, err = parseOptions(spec, []string{"get", "-x", "/a"})
	assert.EqualError(t, err, "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -x")
	_, err = parseOptions(spec, []string{"set", "/a", "-v"})
	assert.EqualError(t, err, "org.apache.commons.cli.MissingArgumentException: Missing argument for option: v")
}

func TestValidatePathAsTheJavaClient(t *testing.T) {
	for path, want := range map[string]string{
		"/":           "",
		"/a/b":        "",
		"/a/.b":       "",
		"":            "Path length must be > 0",
		"a":           "Path must start with / character",
		"/a/":         "Path must not end with / character",
		"/a//b":       `Invalid path string "/a//b" caused by empty node name specified @3`,
		"/a/./b":      `Invalid path string "/a/./b" caused by relative paths not allowed @3`,
		"/a/..":       `Invalid path string "/a/.." caused by relative paths not allowed @4`,
		"/a\x01":      "Invalid path string \"/a\x01\" caused by invalid character @2",
		"/\U0001F600": "Invalid path string \"/\U0001F600\" caused by invalid character @1",
	} {
		err := validatePath(path)
		if want == "" {
			assert.NoError(t, err, path)
		} else {
			assert.EqualError(t, err, want, path)
		}
	}
}

func TestStatsTrackRoundTrip(t *testing.T) {
	st := parseStatsTrack("count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=5")
	assert.Equal(t, int64(10), st.get("count"))
	assert.Equal(t, int64(5), st.get("countHardLimit"))
	assert.Equal(t, "count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=5", st.String())
	assert.Equal(t, "count=-1,bytes=-1", statsTrack{}.String())
}

func FuzzTokenizeAndParse(f *testing.F) {
	f.Add(`create -s -e /a "x y" world:anyone:cdrwa`)
	f.Add(`setquota -n 10 /a`)
	f.Add("count=1,bytes=2=;x=;y")
	f.Fuzz(func(t *testing.T, line string) {
		words := tokenize(line)
		if len(words) > 0 {
			parseOptions(commands["create"].options, words)
		}
		validatePath(line)
		_ = parseStatsTrack(line).String()
	})
}
