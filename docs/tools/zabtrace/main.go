// Command zabtrace prints the annotated traces that docs/zab-walkthrough.md
// quotes, so that every excerpt there can be regenerated and checked:
//
//	go run ./docs/tools/zabtrace peer      # ZooKeeper 3.8.0's peer traffic, decoded
//	go run ./docs/tools/zabtrace election  # zabd's election package, three servers
//	go run ./docs/tools/zabtrace pipeline  # zabd's zab.Peer, an ensemble of one
//
// peer decodes the byte streams recorded between the two servers of a real
// ZooKeeper 3.8.0 ensemble (wire/testdata/golden/peer, written by
// wire/testdata/capture/capture.sh) with package wire. election and
// pipeline drive zabd's own deterministic state machines with fixed inputs,
// so their output is the same on every run. Run it from the repository root
// (or pass -captures).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	captures := flag.String("captures", "wire/testdata/golden/peer", "directory of the recorded peer streams")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: zabtrace [-captures dir] peer|election|pipeline")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), *captures); err != nil {
		fmt.Fprintln(os.Stderr, "zabtrace:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, what, captures string) error {
	switch what {
	case "peer":
		return renderPeerCaptures(w, captures)
	case "election":
		return renderElection(w)
	case "pipeline":
		return renderPipeline(w)
	}
	return fmt.Errorf("unknown trace %q: want peer, election or pipeline", what)
}
