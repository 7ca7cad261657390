package datatree

import (
	"strings"
	"unicode/utf8"
)

// lastSlash is the index of the last '/' in path, -1 when there is none.
func lastSlash(path string) int { return strings.LastIndexByte(path, '/') }

// parentOf is the parent of a path that has a '/': "/" for children of the root.
func parentOf(path string) string {
	i := lastSlash(path)
	if i <= 0 {
		return "/"
	}
	return path[:i]
}

// joinPath is the path of child name under parent.
func joinPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}

// validPath reports whether ZooKeeper's PathUtils.validatePath accepts path.
// Java checks UTF-16 chars; a rune outside the BMP is a surrogate pair there,
// and malformed UTF-8 decodes to U+FFFD, so both are refused here too.
func validPath(path string) bool {
	if path == "" || path[0] != '/' {
		return false
	}
	if len(path) == 1 {
		return true
	}
	if path[len(path)-1] == '/' {
		return false
	}
	// Components are checked one by one: empty ones ("//"), "." and "..".
	start := 1
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		comp := path[start:i]
		if comp == "" || comp == "." || comp == ".." {
			return false
		}
		start = i + 1
	}
	for _, r := range path {
		if !validPathRune(r) {
			return false
		}
	}
	return true
}

func validPathRune(r rune) bool {
	switch {
	case r == utf8.RuneError, r == 0,
		r > 0 && r <= 0x1f,
		r >= 0x7f && r <= 0x9f,
		r >= 0xd800 && r <= 0xf8ff,
		r >= 0xfff0:
		return false
	}
	return true
}

// isSpecialPath reports the paths ZooKeeper refuses to delete (DataTree.isSpecialPath).
func isSpecialPath(path string) bool {
	return path == "/" || path == zookeeperPath || path == quotaPath || path == configPath
}
