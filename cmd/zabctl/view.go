package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/zabd/zabd/zab/runlog"
	"github.com/zabd/zabd/zab/runlog/runview"
)

// runView merges the run records of real members (zoo.cfg runRecordFile)
// into one run and writes runview's page and, if asked, a ShiViz log.
func runView(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run view", flag.ContinueOnError)
	fs.SetOutput(stderr)
	page := fs.String("o", "run.html", "write the page to this file")
	shiviz := fs.String("shiviz", "", "also write a ShiViz log to this file (parser: "+runlog.ShiVizParser+")")
	title := fs.String("title", "", "the page's title (default: the first record's)")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: zabctl run view [-o run.html] [-shiviz FILE] [-title T] MEMBER.jsonl...")
		return 2
	}
	var records []*runlog.Run
	for _, path := range fs.Args() {
		r, skipped, err := readMemberRecord(path)
		if err != nil {
			fmt.Fprintln(stderr, "zabctl:", err)
			return 1
		}
		if skipped > 0 {
			fmt.Fprintf(stderr, "zabctl: %s: skipped %d line(s) cut short (a member killed while writing)\n", path, skipped)
		}
		records = append(records, r)
	}
	run, err := runlog.Merge(records)
	if err != nil {
		fmt.Fprintln(stderr, "zabctl:", err)
		return 1
	}
	if *title != "" {
		run.Title = *title
	}
	if err := runlog.WriteFile(*page, func(w io.Writer) error { return runview.Write(w, run) }); err != nil {
		fmt.Fprintln(stderr, "zabctl:", err)
		return 1
	}
	fmt.Fprintf(stdout, "view: %s (%d members, %d sessions, %d events)\n", *page, len(run.Members), len(run.Clients), len(run.Events))
	if *shiviz != "" {
		if err := runlog.WriteFile(*shiviz, func(w io.Writer) error { return runlog.ShiViz(run, w) }); err != nil {
			fmt.Fprintln(stderr, "zabctl:", err)
			return 1
		}
		fmt.Fprintf(stdout, "ShiViz log: %s\n", *shiviz)
	}
	return 0
}

func readMemberRecord(path string) (*runlog.Run, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return runlog.ReadMember(f, path)
}
