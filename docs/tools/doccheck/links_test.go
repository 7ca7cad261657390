package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown inline link or image: [text](target) or ![alt](target).
var mdLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)

// inlineCode is a code span, whose text is not Markdown.
var inlineCode = regexp.MustCompile("`[^`]*`")

// slug is the anchor GitHub gives a heading: lower case, punctuation other
// than '-' and '_' dropped, spaces turned into hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdownText is a Markdown file's lines outside fenced code blocks, with
// code spans blanked; anchors are its headings' slugs (a repeated heading
// gets -1, -2, … as on GitHub).
func markdownText(text string) (lines []string, anchors map[string]bool) {
	anchors = map[string]bool{}
	seen := map[string]int{}
	for _, line := range outsideFences(text) {
		if h := strings.TrimLeft(line, "#"); len(h) < len(line) && strings.HasPrefix(h, " ") {
			s := slug(strings.ReplaceAll(strings.TrimSpace(h), "`", ""))
			if n := seen[s]; n > 0 {
				anchors[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				anchors[s] = true
			}
			seen[s]++
		}
		lines = append(lines, inlineCode.ReplaceAllString(line, ""))
	}
	return lines, anchors
}

// TestDocsLinksResolve: every relative link of README.md and docs/**/*.md
// names a file of the repository, and its #anchor a heading of that file.
func TestDocsLinksResolve(t *testing.T) {
	anchorsOf := map[string]map[string]bool{}
	linesOf := map[string][]string{}
	load := func(rel string) (map[string]bool, error) {
		if a, ok := anchorsOf[rel]; ok {
			return a, nil
		}
		text, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		linesOf[rel], anchorsOf[rel] = markdownText(string(text))
		return anchorsOf[rel], nil
	}
	for _, f := range markdownFiles(t) {
		if _, err := load(f); err != nil {
			t.Fatal(err)
		}
		for i, line := range linesOf[f] {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				rel := f
				if path != "" {
					rel = filepath.Clean(filepath.Join(filepath.Dir(f), path))
					if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
						t.Errorf("%s:%d: link to %s: no such file", f, i+1, target)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(rel, ".md") {
					t.Errorf("%s:%d: link to %s: an anchor in a file that is not Markdown", f, i+1, target)
					continue
				}
				anchors, err := load(rel)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors[anchor] {
					t.Errorf("%s:%d: link to %s: %s has no heading #%s", f, i+1, target, rel, anchor)
				}
			}
		}
	}
}

// TestSlugsAreGitHubs pins the anchor rule on headings of these pages.
func TestSlugsAreGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"zoo.cfg":                           "zoocfg",
		"Passwords — and why they are weak": "passwords--and-why-they-are-weak",
		"zabd ensemble (N=3)":               "zabd-ensemble-n3",
		"Start-up, in order":                "start-up-in-order",
		"Ensemble invariants (sim/invariants.go), after every step": "ensemble-invariants-siminvariantsgo-after-every-step",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}
