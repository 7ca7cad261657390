package zkcli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client/session"
)

// Exit codes, as zkCli's: 0 when the last command succeeded, 1 when it
// failed, 127 for an unknown command; 2 for zabctl's own usage errors.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitNotFound = 127
)

// cliError is a failed command: its message for stderr and its exit code.
type cliError struct {
	msg  string
	code int
}

func (e cliError) Error() string { return e.msg }

// Options are the command line's global options.
type Options struct {
	Server            string        // host:port[,host:port...]
	Timeout           time.Duration // session timeout
	ReadOnly          bool
	JSON              bool // -o json
	WaitForConnection bool
	// QuietStates leaves state events (SyncConnected, Closed...) unprinted,
	// for one-shot commands.
	QuietStates bool
	// ConnectWait bounds how long a request waits for a connection
	// (default: the session timeout).
	ConnectWait time.Duration
	// Version is what the version command prints after "ZooKeeper CLI version: ".
	Version string
}

// Shell runs zkCli commands against one session at a time.
type Shell struct {
	opts Options

	outMu sync.Mutex // command output and events share stdout
	out   io.Writer
	err   io.Writer

	sess         *session.Session
	host         string
	history      map[int]string
	count        int
	printWatches bool
	exitCode     int
	quit         bool
}

// NewShell makes a shell writing to out and errOut; it connects with Connect.
func NewShell(opts Options, out, errOut io.Writer) *Shell {
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.ConnectWait == 0 {
		opts.ConnectWait = opts.Timeout
	}
	return &Shell{opts: opts, out: out, err: errOut, history: map[int]string{}, printWatches: true}
}

// Connect starts a session to hosts (a comma-separated host:port list),
// closing the current one first.
func (sh *Shell) Connect(hosts string) error {
	sh.Close()
	sh.host = hosts
	servers := splitServers(hosts)
	s, err := session.New(session.Options{Servers: servers, Timeout: sh.opts.Timeout, ReadOnly: sh.opts.ReadOnly, OnEvent: sh.printEvent})
	if err != nil {
		return err
	}
	sh.sess = s
	if sh.opts.WaitForConnection {
		ctx, cancel := context.WithTimeout(context.Background(), sh.opts.Timeout)
		defer cancel()
		if err := s.WaitConnected(ctx); err != nil {
			s.Close(ctx)
			return fmt.Errorf("cannot connect to %s: %s", hosts, strings.TrimPrefix(err.Error(), wire.ErrConnectionLoss.Error()+": "))
		}
	}
	return nil
}

func splitServers(hosts string) []string {
	var servers []string
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			if !strings.Contains(h, ":") {
				h += ":2181"
			}
			servers = append(servers, h)
		}
	}
	return servers
}

// Close ends the session.
func (sh *Shell) Close() {
	if sh.sess != nil {
		ctx, cancel := sh.ctx()
		defer cancel()
		sh.sess.Close(ctx)
	}
}

// ExitCode is the exit code the last command left.
func (sh *Shell) ExitCode() int { return sh.exitCode }

// Quit reports whether quit was run.
func (sh *Shell) Quit() bool { return sh.quit }

// Prompt is zkCli's prompt: "[zk: host(STATE) n] ".
func (sh *Shell) Prompt() string {
	state := "CLOSED"
	if sh.sess != nil {
		state = sh.sess.State().String()
	}
	return fmt.Sprintf("[zk: %s(%s) %d] ", sh.host, state, sh.count)
}

// ctx bounds one command's requests, including the waits for a connection.
func (sh *Shell) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), sh.opts.ConnectWait)
}

// ExecuteLine runs one line of interactive input, numbering it in the
// history as zkCli does (empty lines are skipped).
func (sh *Shell) ExecuteLine(line string) {
	if line == "" {
		return
	}
	sh.history[sh.count] = line
	sh.Execute(tokenize(line))
	sh.count++
}

// Execute runs one command (args[0] is its name) and records its exit code;
// errors go to stderr.
func (sh *Shell) Execute(args []string) {
	err := sh.run(args)
	sh.exitCode = exitOK
	if err != nil {
		var ce cliError
		if !errors.As(err, &ce) {
			ce = cliError{msg: err.Error(), code: exitFailed}
		}
		sh.exitCode = ce.code
		sh.printErr(ce.msg)
	}
}

func (sh *Shell) run(args []string) error {
	if len(args) == 0 {
		sh.usage()
		return cliError{msg: "No command entered", code: exitFailed}
	}
	name := args[0]
	cmd, ok := commands[name]
	if !ok {
		sh.usage()
		return cliError{msg: "Command not found: Command not found " + name, code: exitNotFound}
	}
	if cmd.local != nil {
		if done, err := cmd.local(sh, args); done || err != nil {
			return err
		}
	}
	if sh.sess == nil || sh.sess.State() == session.Closed {
		sh.printOut("Not connected")
		return nil
	}
	if cmd.exec == nil {
		return nil
	}
	p, err := parseOptions(cmd.options, args)
	if err != nil {
		return err
	}
	ctx, cancel := sh.ctx()
	defer cancel()
	return cmd.exec(sh, ctx, p)
}

// usage prints zkCli's command list to stderr.
func (sh *Shell) usage() {
	var b strings.Builder
	b.WriteString("ZooKeeper -server host:port -client-configuration properties-file cmd args\n")
	for _, name := range commandNames() {
		fmt.Fprintf(&b, "\t%s %s\n", name, commands[name].usage)
	}
	sh.writeErr(b.String())
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// printHistory prints the last ten lines and this one, as zkCli's history.
func (sh *Shell) printHistory() {
	for i := max(sh.count-10, 0); i <= sh.count; i++ {
		sh.printOut(fmt.Sprintf("%d - %s", i, sh.history[i]))
	}
}

func (sh *Shell) redo(args []string) error {
	if len(args) < 2 {
		return nil
	}
	i, err := strconv.ParseInt(args[1], 0, 32)
	if err != nil {
		return cliError{msg: fmt.Sprintf("For input string: \"%s\"", args[1]), code: exitFailed}
	}
	if int(i) >= sh.count || i < 0 {
		return cliError{msg: "Command index out of range", code: exitFailed}
	}
	line := sh.history[int(i)]
	words := tokenize(line)
	if len(words) > 0 && words[0] == "redo" {
		return cliError{msg: "No redoing redos", code: exitFailed}
	}
	sh.history[sh.count] = line
	sh.Execute(words)
	if sh.exitCode != exitOK {
		// The inner command printed its error; keep its exit code.
		return cliError{code: sh.exitCode}
	}
	return nil
}

func (sh *Shell) printOut(line string) {
	sh.writeOut(line + "\n")
}

func (sh *Shell) writeOut(s string) {
	sh.outMu.Lock()
	defer sh.outMu.Unlock()
	io.WriteString(sh.out, s)
}

func (sh *Shell) printErr(line string) {
	if line == "" {
		return
	}
	sh.writeErr(line + "\n")
}

func (sh *Shell) writeErr(s string) {
	sh.outMu.Lock()
	defer sh.outMu.Unlock()
	io.WriteString(sh.err, s)
}

// printEvent prints a watch or state event as zkCli's watcher does.
func (sh *Shell) printEvent(ev session.Event) {
	if !sh.printWatches || (sh.opts.QuietStates && ev.Type == wire.EventNone) {
		return
	}
	if sh.opts.JSON {
		sh.printJSON(map[string]any{"event": eventJSON(ev)})
		return
	}
	path := ev.Path
	if ev.Type == wire.EventNone {
		path = "null"
	}
	sh.writeOut(fmt.Sprintf("\nWATCHER::\n\nWatchedEvent state:%s type:%s path:%s\n", ev.State, ev.Type, path))
}

// RunLines runs every line of r as interactive input (zkCli without JLine).
func (sh *Shell) RunLines(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for !sh.quit && sc.Scan() {
		sh.ExecuteLine(sc.Text())
	}
}
