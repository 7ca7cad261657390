package main

import (
	"fmt"
	"io"

	"github.com/zabd/zabd/cmd/zabctl/internal/datatools"
)

// subcommands are zabctl's own command groups, next to zkCli's commands.
var subcommands = map[string]map[string]func(args []string, stdout, stderr io.Writer) int{
	"log":      {"dump": datatools.LogDump, "verify": datatools.LogVerify, "truncate": datatools.LogTruncate},
	"snap":     {"dump": datatools.SnapDump, "digest": datatools.SnapDigest},
	"ensemble": {"status": ensembleStatus},
	"run":      {"view": runView},
}

// runGroup runs `zabctl GROUP VERB args...`.
func runGroup(group string, args []string, stdout, stderr io.Writer) int {
	verbs := subcommands[group]
	if len(args) == 0 || verbs[args[0]] == nil {
		fmt.Fprintf(stderr, "usage: zabctl %s %s ... (zabctl -h lists them)\n", group, verbNames(verbs))
		return 2
	}
	return verbs[args[0]](args[1:], stdout, stderr)
}

func verbNames(verbs map[string]func([]string, io.Writer, io.Writer) int) string {
	s := ""
	for _, v := range []string{"dump", "verify", "truncate", "digest", "status", "view"} {
		if verbs[v] != nil {
			if s != "" {
				s += "|"
			}
			s += v
		}
	}
	return s
}
