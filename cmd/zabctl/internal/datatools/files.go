package datatools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zabd/zabd/wire"
)

// versionDir returns where the version-2 files of dir are: dir/version-2
// when it exists, else dir itself (an operator may point at either).
func versionDir(dir string) (string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	if st, err := os.Stat(filepath.Join(dir, "version-2")); err == nil && st.IsDir() {
		return filepath.Join(dir, "version-2"), nil
	}
	return dir, nil
}

// namedFile is a log or snapshot file with the zxid its name carries.
type namedFile struct {
	Path string
	Name string
	Zxid int64
}

// listFiles returns dir's files named prefix.<hex zxid>, in zxid order.
func listFiles(dir, prefix string) ([]namedFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []namedFile
	for _, e := range entries {
		if z, ok := zxidFromName(e.Name(), prefix); ok && !e.IsDir() {
			files = append(files, namedFile{Path: filepath.Join(dir, e.Name()), Name: e.Name(), Zxid: z})
		}
	}
	slices.SortFunc(files, func(a, b namedFile) int { return compareInt(a.Zxid, b.Zxid) })
	return files, nil
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func zxidFromName(name, prefix string) (int64, bool) {
	hex, ok := strings.CutPrefix(name, prefix+".")
	if !ok || hex == "" {
		return 0, false
	}
	z, err := strconv.ParseUint(hex, 16, 64)
	return int64(z), err == nil
}

// parseZxid reads a zxid as 0x-prefixed hex or decimal (or epoch:counter).
func parseZxid(s string) (int64, error) {
	if e, c, ok := strings.Cut(s, ":"); ok {
		epoch, err1 := strconv.ParseUint(e, 0, 32)
		counter, err2 := strconv.ParseUint(c, 0, 32)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("zxid %q: want epoch:counter, hex (0x...) or decimal", s)
		}
		return int64(epoch<<32 | counter), nil
	}
	z, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("zxid %q: want hex (0x...), decimal or epoch:counter", s)
	}
	return int64(z), nil
}

func epochOf(zxid int64) int64 { return int64(uint64(zxid) >> 32) }

func zxidString(z int64) string { return wire.ZxidString(z) }
