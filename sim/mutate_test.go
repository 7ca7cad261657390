package sim

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Mutation testing: how many of the rules in mutants_test.go does the
// simulator's sweep (and zab's in-memory cluster tests) catch when one is
// broken? TestMutants copies the module to a temporary directory once, and
// for each mutant applies its patch there, compiles, runs every killer that
// builds the patched package, and puts the file back. A mutant is killed
// when any killer fails; it survives when all pass. It never runs by
// default:
//
//	ZABSIM_MUTATE=all go test ./sim -run TestMutants -timeout 0 -v
//	ZABSIM_MUTATE=name1,name2 go test ./sim -run TestMutants -timeout 0 -v
//	ZABSIM_MUTATE=list go test ./sim -run TestMutants -v   # the catalogue
//
// With all, the unpatched copy runs first: if it fails, nothing can be
// judged. The killers inherit the environment (ZABSIM_SEEDS sets a smaller
// or larger sweep than the CI budget) and run one after another: one go test
// at a time, on a shared machine. ZABSIM_KILLERS=zab (or sweep, a
// comma-separated list) runs only those.

// killer is one test command a mutant may fail.
type killer struct {
	name string
	pkg  string // the package pattern go test runs
	run  string // its -run, or every test
	// It runs for every mutant of a package its tests build.
	timeout time.Duration
}

var killers = []killer{
	// The CI promise: the seed sweep and the named scenarios (aimed
	// ones included).
	{name: "sweep", pkg: "./sim", run: "^(TestSeedSweep|TestScenarios|TestAimedScenarios)$", timeout: 40 * time.Minute},
	// The in-memory cluster's tests, which cover some rules directly.
	// They take seconds; a mutant can make one loop and grow to
	// gigabytes, so the bound is short.
	{name: "zab", pkg: "./zab", timeout: 5 * time.Minute},
}

// Verdicts of one mutant.
const (
	verdictKilled      = "killed"
	verdictSurvived    = "survived"
	verdictNotApplied  = "did-not-apply"
	verdictNotCompiled = "did-not-compile"
	verdictNotRun      = "not run" // ZABSIM_KILLERS chose no killer that builds it
)

// killerResult is what one killer said of one mutant.
type killerResult struct {
	ran    bool
	failed bool
	what   string // the failing tests and their first failure, or why it did not run
}

type mutantResult struct {
	name    string
	verdict string
	detail  string // for did-not-apply and did-not-compile
	killers []killerResult
	took    time.Duration
}

func TestMutants(t *testing.T) {
	sel := os.Getenv("ZABSIM_MUTATE")
	if sel == "" {
		t.Skip("mutation testing runs only with ZABSIM_MUTATE=all, =name,name or =list (docs/simulator.md, Mutation testing)")
	}
	if sel == "list" {
		t.Logf("the catalogue:\n%s", catalogueTable())
		return
	}
	if _, ok := t.Deadline(); ok {
		t.Fatal("TestMutants runs a sweep per mutant: run it with -timeout 0")
	}
	chosen, err := selectMutants(sel)
	require.NoError(t, err)

	root, err := filepath.Abs("..")
	require.NoError(t, err)
	work, err := os.MkdirTemp("", "zabd-mutants-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(work) })
	require.NoError(t, copyModule(root, work))
	// killer -> the module directories its tests build; only the killers
	// chosen have an entry.
	builds := map[string]map[string]bool{}
	for _, k := range killers {
		if chosenKiller(k.name) {
			builds[k.name], err = packageDirs(work, k.pkg)
			require.NoError(t, err)
		}
	}
	t.Logf("module copied to %s; %d mutants, killers %s", work, len(chosen), killerNames())

	if sel == "all" {
		base := runKillers(work, nil, builds)
		for i, kr := range base {
			if kr.failed {
				t.Fatalf("the unpatched code fails %s: nothing can be judged: %s", killers[i].name, kr.what)
			}
		}
		t.Logf("baseline: every killer passes on the unpatched code")
	}

	var results []mutantResult
	for _, m := range chosen {
		r := runMutant(work, m, builds)
		results = append(results, r)
		t.Logf("%s: %s in %v%s", r.name, r.verdict, r.took.Round(time.Second), describeKillers(r))
		switch r.verdict {
		case verdictNotApplied, verdictNotCompiled:
			t.Errorf("%s %s: %s", m.name, r.verdict, r.detail)
		}
	}
	t.Logf("results (ZABSIM_SEEDS=%q):\n%s", os.Getenv("ZABSIM_SEEDS"), resultsTable(results))
}

// TestMutantsApply checks the catalogue against the code on every run: each
// edit's text occurs exactly once where it is applied, so a change to the
// code that moves a mutant's anchor fails here, not silently in a long run.
func TestMutantsApply(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, m := range mutants {
		require.NotEmpty(t, m.rule, m.name)
		require.NotEmpty(t, m.edits, m.name)
		require.False(t, seen[m.name], "two mutants named %s", m.name)
		seen[m.name] = true
		if _, err := patched(root, m); err != nil {
			t.Errorf("%s: %v", m.name, err)
		}
	}
}

// chosenKiller reports whether ZABSIM_KILLERS (unset: every killer) names
// the killer.
func chosenKiller(name string) bool {
	sel := os.Getenv("ZABSIM_KILLERS")
	return sel == "" || slices.Contains(strings.Split(sel, ","), name)
}

// selectMutants returns the catalogue (all) or the named mutants, in
// catalogue order.
func selectMutants(sel string) ([]mutant, error) {
	if sel == "all" {
		return mutants, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(sel, ",") {
		want[strings.TrimSpace(n)] = true
	}
	var out []mutant
	for _, m := range mutants {
		if want[m.name] {
			out = append(out, m)
			delete(want, m.name)
		}
	}
	if len(want) > 0 {
		var names []string
		for _, m := range mutants {
			names = append(names, m.name)
		}
		return nil, fmt.Errorf("no mutant named %v; the catalogue: %s", slices.Sorted(maps.Keys(want)), strings.Join(names, ", "))
	}
	return out, nil
}

// patched returns the mutant's files with its edits applied, from the
// module at root: an error if an edit's text does not occur exactly once.
func patched(root string, m mutant) (map[string][]byte, error) {
	files := map[string][]byte{}
	for i, e := range m.edits {
		src, ok := files[e.file]
		if !ok {
			var err error
			if src, err = os.ReadFile(filepath.Join(root, e.file)); err != nil {
				return nil, err
			}
		}
		if n := bytes.Count(src, []byte(e.old)); n != 1 {
			return nil, fmt.Errorf("edit %d: its text occurs %d times in %s, not once: the code moved", i+1, n, e.file)
		}
		if e.old == e.new {
			return nil, fmt.Errorf("edit %d changes nothing", i+1)
		}
		files[e.file] = bytes.Replace(src, []byte(e.old), []byte(e.new), 1)
	}
	return files, nil
}

// runMutant patches the copy at work, judges the mutant, and puts the
// copy's files back.
func runMutant(work string, m mutant, builds map[string]map[string]bool) (r mutantResult) {
	start := time.Now()
	r.name = m.name
	defer func() { r.took = time.Since(start) }()
	files, err := patched(work, m)
	if err != nil {
		r.verdict, r.detail = verdictNotApplied, err.Error()
		return r
	}
	originals := map[string][]byte{}
	defer func() {
		for f, src := range originals {
			if err := os.WriteFile(filepath.Join(work, f), src, 0o644); err != nil {
				panic(fmt.Sprintf("restoring %s in the module copy: %v", f, err)) // every later mutant would be wrong
			}
		}
	}()
	for f, src := range files {
		orig, err := os.ReadFile(filepath.Join(work, f))
		if err == nil {
			originals[f] = orig
			err = os.WriteFile(filepath.Join(work, f), src, 0o644)
		}
		if err != nil {
			r.verdict, r.detail = verdictNotApplied, err.Error()
			return r
		}
	}
	var dirs []string
	for f := range files {
		dirs = append(dirs, filepath.ToSlash(filepath.Dir(f)))
	}
	var pkgs []string
	for _, k := range killers {
		if applies(k, dirs, builds) {
			pkgs = append(pkgs, k.pkg)
		}
	}
	if len(pkgs) == 0 {
		r.verdict, r.detail = verdictNotRun, "no chosen killer builds "+strings.Join(dirs, ", ")
		return r
	}
	// Compile every killer's tests first: a patch that does not build is
	// a broken catalogue entry, not a kill.
	if out, err := goCommand(work, append([]string{"test", "-count=1", "-run", "^$"}, pkgs...)...).CombinedOutput(); err != nil {
		r.verdict, r.detail = verdictNotCompiled, firstLines(string(out), 6)
		return r
	}
	r.killers = runKillers(work, dirs, builds)
	r.verdict = verdictSurvived
	for _, kr := range r.killers {
		if kr.failed {
			r.verdict = verdictKilled
		}
	}
	return r
}

// applies reports whether killer k runs for a mutant of the package
// directories dirs (nil: the unpatched baseline, where every killer runs).
func applies(k killer, dirs []string, builds map[string]map[string]bool) bool {
	b, chosen := builds[k.name]
	if dirs == nil || !chosen {
		return chosen
	}
	for _, d := range dirs {
		if b[d] {
			return true
		}
	}
	return false
}

// runKillers runs, one after another, every killer that applies.
func runKillers(work string, dirs []string, builds map[string]map[string]bool) []killerResult {
	out := make([]killerResult, len(killers))
	for i, k := range killers {
		if !applies(k, dirs, builds) {
			out[i] = killerResult{what: "n/a"}
			if _, chosen := builds[k.name]; !chosen {
				out[i].what = "not run"
			}
			continue
		}
		out[i] = runKiller(work, k)
	}
	return out
}

// testEvent is one line of go test -json (cmd/test2json).
type testEvent struct {
	Action string
	Test   string
	Output string
}

// runKiller runs one killer's tests and says which failed, and how.
func runKiller(work string, k killer) killerResult {
	args := []string{"test", "-json", "-count=1", "-timeout", k.timeout.String()}
	if k.run != "" {
		args = append(args, "-run", k.run)
	}
	cmd := goCommand(work, append(args, k.pkg)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err == nil {
		return killerResult{ran: true, what: "passed"}
	}
	output := map[string]*strings.Builder{} // by test; "" is the package's own
	var failed []string
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		var ev testEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Action {
		case "output":
			b := output[ev.Test]
			if b == nil {
				b = &strings.Builder{}
				output[ev.Test] = b
			}
			b.WriteString(ev.Output)
		case "fail":
			if ev.Test != "" {
				failed = append(failed, ev.Test)
			}
		}
	}
	// Name the innermost failures: a parent fails with its subtests.
	var leaves []string
	for _, f := range failed {
		if !slices.ContainsFunc(failed, func(g string) bool { return strings.HasPrefix(g, f+"/") }) {
			leaves = append(leaves, f)
		}
	}
	if len(leaves) == 0 {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return killerResult{ran: true, failed: true, what: "go test did not run: " + err.Error()}
		}
		pkg := stderr.String()
		if b := output[""]; b != nil {
			pkg += b.String()
		}
		return killerResult{ran: true, failed: true, what: "go test failed outside any test: " + firstFailure(pkg)}
	}
	// The sweep's own failure first: it is what the mutant is measured by.
	slices.SortStableFunc(leaves, func(a, b string) int {
		return cmp.Compare(sweepFirst(a), sweepFirst(b))
	})
	text := ""
	if b := output[leaves[0]]; b != nil {
		text = b.String()
	}
	what := leaves[0] + ": " + firstFailure(text)
	if more := leaves[1:]; len(more) > 0 {
		names := strings.Join(more[:min(3, len(more))], ", ")
		if len(more) > 3 {
			names += ", …"
		}
		what += fmt.Sprintf(" (and %d more failing tests: %s)", len(more), names)
	}
	return killerResult{ran: true, failed: true, what: what}
}

func sweepFirst(test string) int {
	if test == "TestSeedSweep" {
		return 0
	}
	return 1
}

var (
	sweepFailure   = regexp.MustCompile(`seed (\d+): FAILED\s*\n\s*(\S[^\n]*)`)
	requireMessage = regexp.MustCompile(`Messages:\s*(\S[^\n]*)`)
	requireError   = regexp.MustCompile(`Error:\s*(\S[^\n]*)`)
	testLogLine    = regexp.MustCompile(`\w+_test\.go:\d+: *\n?\s*(\S[^\n]*)`)
)

// firstFailure picks out what a failing test said first: the sweep's
// failing seed and its first failure, a require message, a t.Fatal line, a
// timeout or a panic.
func firstFailure(text string) string {
	var kept []string
	for _, line := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "=== ") && !strings.HasPrefix(t, "--- ") {
			kept = append(kept, line)
		}
	}
	text = strings.Join(kept, "\n")
	var s string
	switch {
	case strings.Contains(text, "panic: test timed out"):
		s = "timed out"
	case sweepFailure.MatchString(text):
		m := sweepFailure.FindStringSubmatch(text)
		s = "seed " + m[1] + ": " + m[2]
	case requireMessage.MatchString(text):
		s = requireMessage.FindStringSubmatch(text)[1]
	case requireError.MatchString(text):
		s = requireError.FindStringSubmatch(text)[1]
	case testLogLine.MatchString(text):
		s = testLogLine.FindStringSubmatch(text)[1]
	case strings.Contains(text, "panic:"):
		s = firstLines(text[strings.Index(text, "panic:"):], 1)
	case strings.Contains(text, "fatal error:"):
		s = firstLines(text[strings.Index(text, "fatal error:"):], 1)
	default:
		s = firstLines(text, 1)
	}
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}

// goCommand is go with args, run in the module copy, with the environment
// of this test minus the runner's own variables; the sweep reports its first
// failing seed without shrinking it.
func goCommand(work string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = work
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZABSIM_MUTATE=") && !strings.HasPrefix(kv, "ZABSIM_SHRINK=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ZABSIM_SHRINK=0")
	return cmd
}

// packageDirs lists the module directories (relative, slash-separated) of
// the packages pattern's tests build.
func packageDirs(work, pattern string) (map[string]bool, error) {
	out, err := goCommand(work, "list", "-test", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", pattern).Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps %s: %w", pattern, err)
	}
	dirs := map[string]bool{}
	for _, line := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(work, line)
		if err != nil {
			return nil, err
		}
		dirs[filepath.ToSlash(rel)] = true
	}
	return dirs, nil
}

// copyModule copies the module at root to dst, without its .git.
func copyModule(root, dst string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil // no symlinks or devices in the module
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " / ")
}

func killerNames() string {
	var names []string
	for _, k := range killers {
		names = append(names, k.name)
	}
	return strings.Join(names, ", ")
}

func describeKillers(r mutantResult) string {
	var b strings.Builder
	for i, kr := range r.killers {
		if kr.ran {
			fmt.Fprintf(&b, "\n  %s: %s", killers[i].name, kr.what)
		}
	}
	return b.String()
}

// resultsTable is the run's results as a Markdown table.
func resultsTable(results []mutantResult) string {
	var b strings.Builder
	b.WriteString("| mutant | verdict |")
	for _, k := range killers {
		fmt.Fprintf(&b, " %s |", k.name)
	}
	b.WriteString("\n|---|---|")
	for range killers {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	killed := 0
	for _, r := range results {
		if r.verdict == verdictKilled {
			killed++
		}
		fmt.Fprintf(&b, "| `%s` | %s |", r.name, r.verdict)
		for i := range killers {
			cell := ""
			switch {
			case r.killers != nil:
				cell = r.killers[i].what
			case i == 0:
				cell = r.detail
			}
			fmt.Fprintf(&b, " %s |", strings.ReplaceAll(cell, "|", `\|`))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n%d of %d killed\n", killed, len(results))
	return b.String()
}

// catalogueTable is the catalogue as a Markdown table.
func catalogueTable() string {
	var b strings.Builder
	b.WriteString("| mutant | file | rule it breaks |\n|---|---|---|\n")
	for _, m := range mutants {
		var files []string
		for _, e := range m.edits {
			if !slices.Contains(files, e.file) {
				files = append(files, e.file)
			}
		}
		rule := m.rule
		if m.equivalent != "" {
			rule += " Equivalent in the simulator: " + m.equivalent + "."
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", m.name, strings.Join(files, ", "), rule)
	}
	return b.String()
}

// TestFirstFailure: the runner's summary of a failing test names the sweep's
// seed and first failure, a require message, or a t.Fatal line (its message
// on the next line when the call began with a newline), never go test's own
// framing.
func TestFirstFailure(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"=== RUN   TestSeedSweep\n    sweep_test.go:131: seed 17: FAILED\n          invariant: Agreement at 1.5s: servers 1 and 2\n        seed: 17\n",
			"seed 17: invariant: Agreement at 1.5s: servers 1 and 2"},
		{"    scenario_test.go:219: \n        \tError Trace:\tx.go:1\n        \tError:      \tShould be false\n        \tMessages:   \t[liveness at 40s: no leader]\n",
			"[liveness at 40s: no leader]"},
		{"=== RUN   TestInteraction/sync_trunc\n    interaction_test.go:32: \n        testdata/interaction/sync_trunc.txt:40: deliver\n        expected:\n",
			"testdata/interaction/sync_trunc.txt:40: deliver"},
		{"    quorum_test.go:12: committed 0x5, want 0x4\n--- FAIL: TestQuorum (0.00s)\n", "committed 0x5, want 0x4"},
		{"panic: test timed out after 40m0s\n", "timed out"},
	} {
		require.Equal(t, c.want, firstFailure(c.text))
	}
}
