package zkcli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chzyer/readline"
)

// RunTerminal runs the interactive shell on a terminal: zkCli's prompt,
// line editing, history kept in ~/.zabctl_history, and tab completion of
// command names and znode paths (zkCli's JLine completer does the same).
func (sh *Shell) RunTerminal() error {
	historyFile := ""
	if home, err := os.UserHomeDir(); err == nil {
		historyFile = filepath.Join(home, ".zabctl_history")
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:          sh.Prompt(),
		HistoryFile:     historyFile,
		AutoComplete:    completer{sh},
		InterruptPrompt: "^C",
		EOFPrompt:       "quit",
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	// Events and output go through readline so the prompt is redrawn
	// below them.
	sh.outMu.Lock()
	sh.out, sh.err = rl.Stdout(), rl.Stderr()
	sh.outMu.Unlock()
	for !sh.quit {
		rl.SetPrompt(sh.Prompt())
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		sh.ExecuteLine(strings.TrimSpace(line))
	}
	return nil
}

// completer completes the word under the cursor: a command name in first
// position, else a znode path from the server's children of its parent.
type completer struct{ sh *Shell }

func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	text := string(line[:pos])
	start := strings.LastIndexAny(text, " \t") + 1
	word := text[start:]
	var candidates []string
	switch {
	case strings.TrimSpace(text[:start]) == "":
		candidates = commandNames()
	case strings.HasPrefix(word, "/"):
		candidates = c.paths(word)
	default:
		return nil, 0
	}
	var out [][]rune
	for _, cand := range candidates {
		if strings.HasPrefix(cand, word) {
			out = append(out, []rune(cand[len(word):]))
		}
	}
	return out, len([]rune(word))
}

// paths lists the children of word's parent as full paths, quickly or
// not at all (completion must never hang the prompt).
func (c completer) paths(word string) []string {
	sess := c.sh.sess
	if sess == nil {
		return nil
	}
	dir := word[:strings.LastIndexByte(word, '/')+1]
	parent := strings.TrimSuffix(dir, "/")
	if parent == "" {
		parent = "/"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	children, _, err := sess.Children(ctx, parent, false)
	if err != nil {
		return nil
	}
	slices.Sort(children)
	out := make([]string, len(children))
	for i, ch := range children {
		out[i] = dir + ch
	}
	return out
}

// IsTerminal reports whether stdin is a terminal.
func IsTerminal() bool { return readline.DefaultIsTerminal() }
