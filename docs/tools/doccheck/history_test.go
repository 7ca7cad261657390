package doccheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The documentation says what is true now; how it got there belongs in
// commit messages. historyRules are the marks of the latter that a reader
// of a page can do nothing with: the work sessions that produced it, the
// tracker's issue numbers, commit hashes and the dates of measurements or
// hunts. ZooKeeper's JIRA ids (ZOOKEEPER-1234) are facts about ZooKeeper
// and stay.
var historyRules = []struct {
	name string
	re   *regexp.Regexp
}{
	{"a work session", regexp.MustCompile(`(?i)\b(this|last|previous|next) session\b`)},
	{"an issue number", regexp.MustCompile(`(?i)\bissues?\s+#?\d+\b`)},
	{"an issue reference", regexp.MustCompile(`(^|[\s(\[,;])#\d+\b`)},
	{"a date", regexp.MustCompile(`\b20\d\d-[01]\d-[0-3]\d\b`)},
}

// hexWord is a candidate commit hash: 7 to 40 lowercase hex digits. It is
// one only when it stands alone (see commitHashes) and holds both a digit
// and a letter: all-digit words are numbers, all-letter ones are words.
var hexWord = regexp.MustCompile(`[0-9a-f]{7,40}`)

// commitHashes returns the words of line that look like commit hashes: hex
// words that are not part of a longer word, a path, a file name (log.1a2b3c4d)
// or a 0x-prefixed number (a zxid, a session id, a digest).
func commitHashes(line string) []string {
	var found []string
	for _, loc := range hexWord.FindAllStringIndex(line, -1) {
		start, end := loc[0], loc[1]
		if start > 0 && strings.ContainsRune("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_.-/", rune(line[start-1])) {
			continue
		}
		if end < len(line) && strings.ContainsRune("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-/", rune(line[end])) {
			continue
		}
		w := line[start:end]
		if strings.ContainsAny(w, "0123456789") && strings.ContainsAny(w, "abcdef") {
			found = append(found, w)
		}
	}
	return found
}

// historyTalk returns one line per mark of history in a Markdown text,
// "LINE: what: the line". Fenced code blocks are left out: they hold
// program output and data, where hex words are digests and ids.
func historyTalk(text string) []string {
	var out []string
	for i, line := range outsideFences(text) {
		trimmed := strings.TrimSpace(line)
		for _, r := range historyRules {
			if m := r.re.FindString(line); m != "" {
				out = append(out, fmt.Sprintf("%d: %s %q: %s", i+1, r.name, strings.TrimSpace(m), trimmed))
			}
		}
		for _, h := range commitHashes(line) {
			out = append(out, fmt.Sprintf("%d: a commit hash %q: %s", i+1, h, trimmed))
		}
	}
	return out
}

// outsideFences returns text's lines with those of fenced code blocks
// (``` or ~~~, fences included) blanked, so that line numbers stay.
func outsideFences(text string) []string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
			lines[i] = ""
		}
	}
	return lines
}

// markdownFiles returns README.md and every .md file under docs/, relative
// to the repository root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDocsTellNoHistory: no page says which session wrote it, which issue
// asked for it, which commit changed it or on which day it was measured.
func TestDocsTellNoHistory(t *testing.T) {
	for _, f := range markdownFiles(t) {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, hit := range historyTalk(string(text)) {
			t.Errorf("%s:%s", f, hit)
		}
	}
}

// TestHistoryTalkRules pins what the rules catch and what they leave alone.
func TestHistoryTalkRules(t *testing.T) {
	caught := []string{
		"The long hunt on this session's final code.",
		"The next session changed the election.",
		"as the last session found",
		"asked for by issue 12",
		"the aim of issue #16",
		"fixed in a7ed3e6, then 1fc6ad6–b42fba8",
		"(see #12)",
		"measured on 2026-11-25",
		"the first run on `d00c34f`",
	}
	for _, line := range caught {
		if len(historyTalk(line)) == 0 {
			t.Errorf("not caught: %q", line)
		}
	}
	kept := []string{
		"ZOOKEEPER-1154 and ZOOKEEPER-4394",
		"zxid 0x100000064, session 0x19b76daa8000000, checksum 0x3ddc15cb",
		"`snapshot.10000005d` and `log.100000001`",
		"txns 0x100000096..0x10000012c",
		"a session's timeout; the client's session id",
		"point 17 of [compatibility.md](compatibility.md#rolling-migration)",
		"1,000,000 znodes, 186 MB, 64,736 crash points",
		"deadbeef and 12345678",
		"```\nfixed in a7ed3e6\n```",
	}
	for _, line := range kept {
		if hits := historyTalk(line); len(hits) != 0 {
			t.Errorf("false alarm on %q: %v", line, hits)
		}
	}
}
