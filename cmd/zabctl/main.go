package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/zabd/zabd/cmd/zabctl/internal/zkcli"
	"github.com/zabd/zabd/zab/server"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is zabctl with its arguments and streams; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && subcommands[args[0]] != nil {
		return runGroup(args[0], args[1:], stdout, stderr)
	}
	return runShell(args, stdin, stdout, stderr)
}

// runShell is the zkCli part: global options as zkCli parses them (in any
// order, up to the first word that is not an option), then a command or
// the interactive shell.
func runShell(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts := zkcli.Options{Server: "localhost:2181", Timeout: 30 * time.Second, Version: server.Version}
	var cmd []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, bool) {
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "Error: no argument found for option %s\n", a)
				return "", false
			}
			i++
			return args[i], true
		}
		switch a {
		case "-server":
			v, ok := value()
			if !ok {
				return 2
			}
			opts.Server = v
		case "-timeout":
			v, ok := value()
			if !ok {
				return 2
			}
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				fmt.Fprintf(stderr, "zabctl: -timeout %q: want a positive number of milliseconds\n", v)
				return 2
			}
			opts.Timeout = time.Duration(ms) * time.Millisecond
		case "-r":
			opts.ReadOnly = true
		case "-waitforconnection":
			opts.WaitForConnection = true
		case "-o":
			v, ok := value()
			if !ok {
				return 2
			}
			if v != "json" && v != "text" {
				fmt.Fprintf(stderr, "zabctl: -o %q: want json or text\n", v)
				return 2
			}
			opts.JSON = v == "json"
		case "-client-configuration":
			if _, ok := value(); !ok {
				return 2
			}
			fmt.Fprintln(stderr, "zabctl: -client-configuration is ignored (no TLS or SASL client options yet)")
		case "-h", "-help", "--help":
			usage(stdout)
			return 0
		default:
			if len(a) > 0 && a[0] == '-' {
				fmt.Fprintf(stderr, "zabctl: unknown option %s (zabctl -h lists them)\n", a)
				return 2
			}
			cmd = args[i:]
			i = len(args)
		}
	}

	if len(cmd) > 0 {
		return oneShot(opts, cmd, stdout, stderr)
	}
	sh := zkcli.NewShell(opts, stdout, stderr)
	fmt.Fprintf(stdout, "Connecting to %s\n", opts.Server)
	if err := sh.Connect(opts.Server); err != nil {
		fmt.Fprintf(stderr, "zabctl: %v\n", err)
		return 1
	}
	defer sh.Close()
	fmt.Fprintln(stdout, "Welcome to ZooKeeper!")
	if stdin == os.Stdin && zkcli.IsTerminal() {
		if err := sh.RunTerminal(); err != nil {
			fmt.Fprintf(stderr, "zabctl: %v\n", err)
			return 1
		}
	} else {
		sh.RunLines(stdin)
	}
	return sh.ExitCode()
}

// oneShot runs one command. Unlike zkCli it first waits for a connection
// (so a dead server is one clear line, not a ConnectionLoss per request)
// and closes its session at the end.
func oneShot(opts zkcli.Options, cmd []string, stdout, stderr io.Writer) int {
	opts.WaitForConnection, opts.QuietStates = true, true
	sh := zkcli.NewShell(opts, stdout, stderr)
	if err := sh.Connect(opts.Server); err != nil {
		fmt.Fprintf(stderr, "zabctl: %v\n", err)
		return 1
	}
	sh.Execute(cmd)
	if !sh.Quit() {
		sh.Close()
	}
	return sh.ExitCode()
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  zabctl [-server host:port[,...]] [-timeout ms] [-r] [-waitforconnection] [-o json|text] [cmd args...]
      zkCli's commands (help lists them); interactive without a command
  zabctl log dump [-from ZXID] [-to ZXID] [-session ID] [-o json] FILE|DIR...
  zabctl log verify DIR
  zabctl log truncate [-force] DIR ZXID
  zabctl snap dump [-o json] FILE
  zabctl snap digest FILE
  zabctl ensemble status -server host:port[,...] [-watch DURATION] [-o json]
  zabctl run view [-o run.html] [-shiviz FILE] [-title T] MEMBER.jsonl...
`)
}
