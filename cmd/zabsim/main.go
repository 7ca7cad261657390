// Command zabsim runs the deterministic simulator and checks histories.
//
//	zabsim -seed N [-v] [-history FILE]      run one seed
//	zabsim -seeds A..B [-j N] [-history FILE] run a range, with a progress line on a terminal
//	zabsim -schedule FILE [-v] [-history F]  replay a (shrunk or hand-written) schedule
//	zabsim check FILE                        run every checker on a history file
//
// A failing run prints its failures, its schedule, the command that replays
// it and the smallest failing schedule the shrinker finds, as JSON for
// -schedule (-shrink=false skips the shrinking). With -seeds, -history
// writes one file per failing seed, named after FILE with the seed before
// its extension (h.jsonl → h.seed17.jsonl). Exit status: 0 when everything
// passed, 1 when a run or a check failed, 2 on bad usage; -h prints the
// usage and exits 0.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zabd/zabd/linearizability"
	"github.com/zabd/zabd/sim"
	"github.com/zabd/zabd/sim/faults"
	"github.com/zabd/zabd/zab/runlog"
	"github.com/zabd/zabd/zab/runlog/runview"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// synopsis is the first part of -h: every way to call zabsim.
const synopsis = `usage:
  zabsim -seed N [-v] [-history FILE] [flags]       run one seed
  zabsim -seeds A..B [-j N] [-history FILE] [flags] run a range of seeds; -history writes one
                                                    file per failing seed (h.jsonl -> h.seed17.jsonl)
  zabsim -schedule FILE [-v] [-history F] [flags]   replay a schedule (a shrunk one, or hand-written)
  zabsim check [-witness W] FILE                    run every checker on a history file

A failing run prints its failures, its schedule, the command that replays it and
the smallest failing schedule found, as JSON for -schedule (unless -shrink=false).
Exit status: 0 when everything passed, 1 when a run or a check failed, 2 on bad usage.

flags:
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "check" {
		return check(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("zabsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, on stdout for -h and on stderr for a mistake
	seed := fs.Int64("seed", 0, "run this one seed")
	seeds := fs.String("seeds", "", "run a range of seeds, A..B inclusive")
	schedule := fs.String("schedule", "", "replay the schedule in this JSON file")
	verbose := fs.Bool("v", false, "print the readable trace (with -seed or -schedule)")
	history := fs.String("history", "", "write the run's history (JSON Lines) to this file, and its committed txns beside it (NAME.witness.jsonl, for zabsim check -witness); with -seeds, one file per failing seed")
	shrink := fs.Bool("shrink", true, "shrink a failing run to a minimal failing schedule")
	checkers := fs.Bool("checkers", true, "run the history checkers at the end of each run (the invariants are always checked)")
	jobs := fs.Int("j", 1, "with -seeds: run this many seeds at once, at least 1 (each run stays single-threaded and deterministic)")
	html := fs.String("html", "", "with -seed or -schedule: write the run as one self-contained HTML page (roles, packets, votes, faults, operations, failures) to this file")
	shiviz := fs.String("shiviz", "", "with -seed or -schedule: write the run as a ShiViz log to this file (parser: "+runlog.ShiVizParser+")")
	record := fs.String("record", "", "with -seed or -schedule: write the run's record (JSON Lines, zab/runlog) to this file, for zabctl view")
	recipeBugs := fs.String("recipe-bugs", "", "comma-separated recipe mistakes to put back into the recipe clients (seeds that run a recipe): "+strings.Join(sim.RecipeBugNames(), ", "))
	bugs := fs.String("bugs", "", "comma-separated deliberately broken core behaviours to switch on: "+strings.Join(sim.BugNames(), ", "))
	usage := func(w io.Writer) {
		fmt.Fprint(w, synopsis)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return 0
		}
		usage(stderr)
		return 2
	}
	if *jobs < 1 {
		fmt.Fprintf(stderr, "zabsim: -j %d: want at least 1 run at a time\n", *jobs)
		return 2
	}
	opts := sim.Options{SkipCheckers: !*checkers}
	var err error
	if opts.Bugs, err = sim.ParseBugs(*bugs); err != nil {
		fmt.Fprintln(stderr, "zabsim:", err)
		return 2
	}
	if opts.RecipeBugs, err = sim.ParseRecipeBugs(*recipeBugs); err != nil {
		fmt.Fprintln(stderr, "zabsim:", err)
		return 2
	}
	var chosen []string // which of -seed, -seeds, -schedule were given
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "seed", "seeds", "schedule":
			chosen = append(chosen, f.Name)
		}
	})
	if len(chosen) != 1 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "zabsim: give exactly one of -seed N, -seeds A..B, -schedule FILE (or: zabsim check FILE)")
		usage(stderr)
		return 2
	}
	if *verbose {
		opts.Trace = stdout
	}
	out := outputs{history: *history, html: *html, shiviz: *shiviz, record: *record}
	switch chosen[0] {
	case "seeds":
		if out.recorded() {
			fmt.Fprintln(stderr, "zabsim: -html, -shiviz and -record draw one run; use them with -seed N or -schedule FILE")
			return 2
		}
		from, to, err := parseRange(*seeds)
		if err != nil {
			fmt.Fprintln(stderr, "zabsim:", err)
			return 2
		}
		return sweep(from, to, *jobs, opts, *shrink, *history, stdout, stderr)
	case "schedule":
		s, err := faults.Load(*schedule)
		if err != nil {
			fmt.Fprintln(stderr, "zabsim:", err)
			return 2
		}
		return one(s, fmt.Sprintf("-schedule %s", *schedule), opts, *shrink, out, stdout, stderr)
	default:
		return one(sim.ScheduleForSeed(*seed), fmt.Sprintf("-seed %d", *seed), opts, *shrink, out, stdout, stderr)
	}
}

// outputs are the files one run writes besides its report.
type outputs struct {
	history string // the history and its witness
	html    string // runview's page
	shiviz  string // a ShiViz log
	record  string // the run record as JSON Lines
}

func (o outputs) recorded() bool { return o.html != "" || o.shiviz != "" || o.record != "" }

// writeRecord writes the run's record in the forms asked for.
func (o outputs) writeRecord(r *runlog.Run, stdout io.Writer) error {
	for _, w := range []struct {
		path, what string
		write      func(io.Writer) error
	}{
		{o.html, "view", func(f io.Writer) error { return runview.Write(f, r) }},
		{o.shiviz, "ShiViz log", func(f io.Writer) error { return runlog.ShiViz(r, f) }},
		{o.record, "record", r.Write},
	} {
		if w.path == "" {
			continue
		}
		if err := runlog.WriteFile(w.path, w.write); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s\n", w.what, w.path)
	}
	return nil
}

// one runs a single schedule and reports on it.
func one(s *faults.Schedule, replay string, opts sim.Options, shrink bool, out outputs, stdout, stderr io.Writer) int {
	start := time.Now()
	recorded := opts
	recorded.Record = out.recorded()
	res := sim.Run(s, recorded)
	elapsed := time.Since(start)
	if res.Record != nil {
		if err := out.writeRecord(res.Record, stdout); err != nil {
			fmt.Fprintln(stderr, "zabsim:", err)
			return 1
		}
	}
	if historyFile := out.history; historyFile != "" {
		if err := writeHistory(historyFile, res); err != nil {
			fmt.Fprintln(stderr, "zabsim:", err)
			return 1
		}
		fmt.Fprintf(stdout, "check: %s\n", checkCommand(historyFile, s))
	}
	st := res.Stats
	fmt.Fprintf(stdout, "%s: %s simulated in %s (%.0f× real time), %d ops, %d events, %d crashes, %d refusals, %d damaged starts, %d snapshots\n",
		replay, st.SimTime.Round(time.Millisecond), elapsed.Round(time.Millisecond),
		st.SimTime.Seconds()/elapsed.Seconds(), st.Ops, st.Events, st.Crashes, st.Refusals, st.DamagedStarts, st.Snapshots)
	if a := sim.FormatAllowances(st.Allowances); a != "" {
		fmt.Fprintf(stdout, "trace conformance allowances taken (-v traces them): %s\n", a)
	}
	if st.RecipeCaveats > 0 {
		fmt.Fprintf(stdout, "note: %d time(s) a recipe did what it does not promise once a session expires: a hold began while an expired holder still believed it held, or a barrier was left early (ZooKeeper's caveat; -v traces them)\n", st.RecipeCaveats)
	}
	if st.NotPromised > 0 {
		fmt.Fprintf(stdout, "note: %d read(s) after a sync answered across a leader change missed a write (not promised by ZooKeeper, ZOOKEEPER-1675; -v traces them)\n", st.NotPromised)
	}
	if !res.Failed() {
		fmt.Fprintln(stdout, "ok")
		return 0
	}
	report(res, replay, opts, shrink, stdout)
	return 1
}

func report(res *sim.Result, replay string, opts sim.Options, shrink bool, out io.Writer) {
	var shrunk *sim.ShrinkResult
	if shrink {
		sh := sim.Shrink(res, opts, sim.ShrinkBudget{Runs: 300, Time: 5 * time.Minute})
		shrunk = &sh
	}
	fmt.Fprint(out, sim.Report(replay, res, opts, shrunk))
}

// sweep runs seeds from..to on jobs workers and reports every failure, in
// seed order whatever order the runs finish in; with historyFile set, each
// failing seed's history goes to seedHistoryFile(historyFile, seed).
func sweep(from, to int64, jobs int, opts sim.Options, shrink bool, historyFile string, stdout, stderr io.Writer) int {
	if opts.Trace != nil {
		fmt.Fprintln(stderr, "zabsim: -v prints one run's trace; use it with -seed N")
		return 2
	}
	defer sim.SetBatchGC()()
	progress := isTerminal(stderr)
	failed := 0
	meter := sim.StartMeter()
	var simTime time.Duration
	allowed := sim.Stats{}.Allowances // the allowances the conformance checker took
	ops := 0
	for seed, res := range runSeeds(from, to, jobs, opts) {
		simTime += res.Stats.SimTime
		allowed.Add(res.Stats.Allowances)
		ops += res.Stats.Ops
		if res.Failed() {
			failed++
			if progress {
				fmt.Fprint(stderr, "\r\033[K")
			}
			fmt.Fprintf(stdout, "seed %d: ", seed)
			report(res, fmt.Sprintf("-seed %d", seed), opts, shrink, stdout)
			if historyFile != "" {
				file := seedHistoryFile(historyFile, seed)
				if err := writeHistory(file, res); err != nil {
					fmt.Fprintln(stderr, "zabsim:", err)
					return 1
				}
				fmt.Fprintf(stdout, "history: %s\n", file)
			}
		}
		if progress {
			wall, _ := meter.Elapsed()
			el := wall.Seconds()
			fmt.Fprintf(stderr, "\rseed %d (%d/%d)  failed %d  %.0f× real time  %.0f ops/s ",
				seed, seed-from+1, to-from+1, failed, simTime.Seconds()/el, float64(ops)/el)
		}
	}
	if progress {
		fmt.Fprintln(stderr)
	}
	wall, _ := meter.Elapsed()
	fmt.Fprintf(stdout, "%d seeds, %d failed, %s, %s simulated: %s\n", to-from+1, failed, wall.Round(time.Millisecond),
		simTime.Round(time.Second), meter.Speed(simTime))
	if a := sim.FormatAllowances(allowed); a != "" {
		fmt.Fprintf(stdout, "trace conformance allowances taken: %s\n", a)
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// runSeeds runs the seeds from..to on jobs goroutines (each run is
// independent and single-threaded) and yields the results in seed order.
func runSeeds(from, to int64, jobs int, opts sim.Options) iter.Seq2[int64, *sim.Result] {
	return func(yield func(int64, *sim.Result) bool) {
		n := to - from + 1
		results := make([]chan *sim.Result, n)
		for i := range results {
			results[i] = make(chan *sim.Result, 1)
		}
		next := make(chan int64)
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			defer close(next)
			for i := int64(0); i < n; i++ {
				select {
				case next <- i:
				case <-stop:
					return
				}
			}
		}()
		for range jobs {
			go func() {
				for i := range next {
					results[i] <- sim.Run(sim.ScheduleForSeed(from+i), opts)
				}
			}()
		}
		for i := int64(0); i < n; i++ {
			if !yield(from+i, <-results[i]) {
				return
			}
		}
	}
}

func parseRange(s string) (from, to int64, err error) {
	a, b, ok := strings.Cut(s, "..")
	if ok {
		from, err = strconv.ParseInt(a, 10, 64)
		if err == nil {
			to, err = strconv.ParseInt(b, 10, 64)
		}
	}
	if !ok || err != nil || from > to {
		return 0, 0, fmt.Errorf("-seeds %q: want A..B with A <= B", s)
	}
	return from, to, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// seedHistoryFile names the history file of one seed of a sweep: the seed
// goes before the extension of the file given, "h.jsonl" → "h.seed17.jsonl",
// "out/h" → "out/h.seed17".
func seedHistoryFile(path string, seed int64) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.seed%d%s", strings.TrimSuffix(path, ext), seed, ext)
}

// writeHistory writes the run's history to path and its witness (the
// committed txns, see linearizability.Witness) beside it, to
// witnessFile(path).
func writeHistory(path string, res *sim.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	werr := linearizability.WriteHistory(f, res.LinearizabilityHistory())
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	wf, err := os.Create(witnessFile(path))
	if err != nil {
		return fmt.Errorf("witness: %w", err)
	}
	werr = linearizability.WriteWitness(wf, res.Witness)
	if err := errors.Join(werr, wf.Close()); err != nil {
		return fmt.Errorf("witness: %w", err)
	}
	return nil
}

// checkCommand is the zabsim check command that judges a history written
// from a run of sched as the simulator judged it (sim.CheckerOptions), with
// its witness.
func checkCommand(historyFile string, sched *faults.Schedule) string {
	opts := sim.CheckerOptions(sched)
	cmd := "go run ./cmd/zabsim check"
	if opts.Reaping {
		cmd += " -reaping"
	}
	if opts.TouchLag > 0 {
		cmd += " -touch-lag " + opts.TouchLag.String()
	}
	return cmd + " -witness " + witnessFile(historyFile) + " " + historyFile
}

// witnessFile names the witness written beside a history file:
// "h.jsonl" → "h.witness.jsonl".
func witnessFile(history string) string {
	ext := filepath.Ext(history)
	return strings.TrimSuffix(history, ext) + ".witness" + ext
}

func readWitness(path string) (linearizability.Witness, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return linearizability.ReadWitness(f, path)
}

// check runs every checker on a history file.
func check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zabsim check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	touchLag := fs.Duration("touch-lag", 0, "how late a learner may report a session's touches to the leader (an ensemble's history; the simulator uses 13 ticks); 0: one server")
	reaping := fs.Bool("reaping", false, "the servers reaped containers and TTL nodes by themselves (a generated run's history; a schedule with reap_interval_ms)")
	witness := fs.String("witness", "", "the run's committed txns (zabsim -history writes them beside the history as NAME.witness.jsonl): the writes and reads checkers try their order first, and search only if it does not explain the history")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: zabsim check FILE   run every checker of the linearizability package on a history file\n       zabsim check [-touch-lag D] [-reaping] [-witness W] FILE")
		fs.PrintDefaults()
	}
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fs.SetOutput(stdout)
		fs.Usage()
		return 0
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	opts := linearizability.Options{TouchLag: *touchLag, Reaping: *reaping}
	if *witness != "" {
		w, err := readWitness(*witness)
		if err != nil {
			fmt.Fprintln(stderr, "zabsim check:", err)
			return 2
		}
		opts.Witness = w
	}
	ok, err := linearizability.CheckFile(fs.Arg(0), opts, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "zabsim check:", err)
		return 2
	}
	if !ok {
		return 1
	}
	return 0
}
