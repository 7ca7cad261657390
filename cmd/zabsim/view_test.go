package main

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// -html, -shiviz and -record draw one run; a sweep is refused them.
func TestRecordedOutputsNeedOneRun(t *testing.T) {
	code, _, errOut := zabsim("-seeds", "1..2", "-html", filepath.Join(t.TempDir(), "x.html"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "use them with -seed N or -schedule FILE")
}

// TestOneRunWritesItsViews: a seed's page, ShiViz log and record.
func TestOneRunWritesItsViews(t *testing.T) {
	dir := t.TempDir()
	page, shiviz, record := filepath.Join(dir, "run.html"), filepath.Join(dir, "run.shiviz"), filepath.Join(dir, "run.jsonl")
	code, out, errOut := zabsim("-seed", "2", "-html", page, "-shiviz", shiviz, "-record", record)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	for _, want := range []string{"view: " + page, "ShiViz log: " + shiviz, "record: " + record} {
		require.Contains(t, out, want)
	}
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	require.Contains(t, string(html), `<script type="application/json" id="run">{`)
	require.NotRegexp(t, `(?i)<script[^>]+src=|<link[^>]+href=|https?://`, string(html), "the page loads nothing from anywhere")
	log, err := os.ReadFile(shiviz)
	require.NoError(t, err)
	require.Regexp(t, `^server\d+ \{"server\d+":1\}\n`, string(log))
}

// TestAMinuteOfTenClientsStaysSmall: the page of 3 members × 10 clients ×
// a minute of simulated time (testdata/view-minute.json) stays under
// 5 MB.
func TestAMinuteOfTenClientsStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of simulated time: not with -short")
	}
	page := filepath.Join(t.TempDir(), "minute.html")
	code, out, errOut := zabsim("-schedule", "testdata/view-minute.json", "-shrink=false", "-html", page)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Regexp(t, `: (5\d|6\d)\.\d+s simulated`, out, "about a minute simulated")
	st, err := os.Stat(page)
	require.NoError(t, err)
	require.Less(t, st.Size(), int64(5<<20), "the page of a minute")
	t.Logf("a minute of 3 members and 10 clients: %.1f MB", float64(st.Size())/(1<<20))
	if browser := chromium(t, false); browser != "" {
		t.Logf("opened by %s and drawn after %s ms", browser, renderMs(t, browser, page))
	}
}

// TestTheViewShowsTheFailure looks at the page as a person would:
// headless Chromium (Debian's chromium) draws the page of a failing seed,
// and the screenshot holds the failure marker, the one colour (#ff0000)
// the page uses for nothing else; the page of the same seed passing holds
// none of it.
func TestTheViewShowsTheFailure(t *testing.T) {
	browser := chromium(t, true)
	dir := t.TempDir()
	failing, passing := filepath.Join(dir, "failing.html"), filepath.Join(dir, "passing.html")
	code, out, _ := zabsim("-seed", "1", "-bugs", "watch-after-reply", "-shrink=false", "-html", failing)
	require.Equal(t, 1, code, out)
	code, out, _ = zabsim("-seed", "1", "-html", passing)
	require.Equal(t, 0, code, out)
	require.Greater(t, markerPixels(t, browser, failing), 300, "the failing run's failure lines")
	require.Zero(t, markerPixels(t, browser, passing), "a passing run has no failure marker")
}

// chromium finds Debian's chromium (ZABD_CHROMIUM names another binary);
// without it the test skips, or, with need false, returns "".
func chromium(t *testing.T, need bool) string {
	t.Helper()
	name := os.Getenv("ZABD_CHROMIUM")
	if name == "" {
		name = "chromium"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		if need {
			t.Skipf("needs a headless browser: apt-get install chromium (or set ZABD_CHROMIUM); .ci/run installs it: %v", err)
		}
		return ""
	}
	return path
}

// headless runs the browser on page with args and returns what it printed.
func headless(t *testing.T, browser, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// --no-sandbox: CI runs as root, where Chromium's sandbox refuses to
	// start; the page is our own file and opens nothing else.
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--window-size=1400,900"}, args...)
	cmd := exec.CommandContext(ctx, browser, append(all, "file://"+page)...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", browser, out)
	return out
}

// markerPixels takes a screenshot of page and counts its pixels of the
// failure marker's colour.
func markerPixels(t *testing.T, browser, page string) int {
	t.Helper()
	shot := page + ".png"
	headless(t, browser, page, "--screenshot="+shot)
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 == 0xff && g>>8 == 0 && bl>>8 == 0 {
				n++
			}
		}
	}
	return n
}

// renderMs is how long after navigation the page had drawn its first
// frame, as the page itself recorded it.
func renderMs(t *testing.T, browser, page string) string {
	t.Helper()
	dom := string(headless(t, browser, page, "--virtual-time-budget=10000", "--dump-dom"))
	m := regexp.MustCompile(`data-render-ms="(\d+)"`).FindStringSubmatch(dom)
	require.NotNil(t, m, "the page drew a frame: %s", strings.TrimSpace(dom[:min(len(dom), 300)]))
	return m[1]
}
