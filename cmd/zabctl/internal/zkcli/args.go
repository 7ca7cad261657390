package zkcli

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"
)

// tokenize splits a command line as ZooKeeperMain does: words separated by
// white space, where a word that starts with a quote runs to the matching
// quote and loses both quotes.
func tokenize(line string) []string {
	var words []string
	for _, m := range argsPattern.FindAllStringSubmatch(line, -1) {
		w := m[1]
		if len(w) >= 2 && (w[0] == '"' || w[0] == '\'') && w[len(w)-1] == w[0] {
			w = w[1 : len(w)-1]
		}
		words = append(words, w)
	}
	return words
}

var argsPattern = regexp.MustCompile(`\s*([^"'\s]\S*|"[^"]*"|'[^']*')\s*`)

// optionSpec describes a command's options: each letter (or word, for
// reconfig) and whether it takes a value.
type optionSpec map[string]bool

// parsedArgs is a command line split into options and arguments; args[0]
// is the command.
type parsedArgs struct {
	args []string
	opts map[string]string
}

func (p parsedArgs) has(o string) bool { _, ok := p.opts[o]; return ok }

// parseOptions parses args as Apache commons-cli's DefaultParser does for
// zkCli's commands: options may appear anywhere, short flags may be joined
// ("-se"), a value may follow its option or be attached ("-v1"), "--" ends
// the options, and a negative number is an argument.
func parseOptions(spec optionSpec, args []string) (parsedArgs, error) {
	p := parsedArgs{opts: map[string]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.args = append(p.args, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || isNumber(a) {
			p.args = append(p.args, a)
			continue
		}
		name := a[1:]
		if takesValue, ok := spec[name]; ok {
			if takesValue {
				if i+1 >= len(args) {
					return p, parseError("MissingArgumentException", "Missing argument for option: "+name)
				}
				i++
				p.opts[name] = args[i]
			} else {
				p.opts[name] = ""
			}
			continue
		}
		// Joined short flags, or a short option with its value attached.
		first := name[:1]
		if takesValue, ok := spec[first]; ok && takesValue {
			p.opts[first] = name[1:]
			continue
		}
		for j := 0; j < len(name); j++ {
			o := name[j : j+1]
			takesValue, ok := spec[o]
			if !ok {
				return p, parseError("UnrecognizedOptionException", "Unrecognized option: "+a)
			}
			if takesValue {
				if rest := name[j+1:]; rest != "" {
					p.opts[o] = rest
				} else if i+1 < len(args) {
					i++
					p.opts[o] = args[i]
				} else {
					return p, parseError("MissingArgumentException", "Missing argument for option: "+o)
				}
				break
			}
			p.opts[o] = ""
		}
	}
	return p, nil
}

// parseError is a commons-cli ParseException as zkCli prints it (its
// CliParseException wraps the exception, so the class name shows).
func parseError(class, msg string) error {
	return cliError{msg: "org.apache.commons.cli." + class + ": " + msg, code: 1}
}

func isNumber(s string) bool {
	var f float64
	_, err := fmt.Sscan(s, &f)
	return err == nil
}

// validatePath checks a path as the Java client does before sending it
// (PathUtils.validatePath), with its messages; offsets count UTF-16 units.
func validatePath(path string) error {
	switch {
	case path == "":
		return cliError{msg: "Path length must be > 0", code: 1}
	case path[0] != '/':
		return cliError{msg: "Path must start with / character", code: 1}
	case path == "/":
		return nil
	case strings.HasSuffix(path, "/"):
		return cliError{msg: "Path must not end with / character", code: 1}
	}
	chars := utf16.Encode([]rune(path))
	reason := ""
	last := uint16('/')
	for i := 1; i < len(chars); last, i = chars[i], i+1 {
		c := chars[i]
		atEnd := i+1 == len(chars)
		switch {
		case c == 0:
			reason = fmt.Sprintf("null character not allowed @%d", i)
		case c == '/' && last == '/':
			reason = fmt.Sprintf("empty node name specified @%d", i)
		case c == '.' && last == '.':
			if chars[i-2] == '/' && (atEnd || chars[i+1] == '/') {
				reason = fmt.Sprintf("relative paths not allowed @%d", i)
			}
		case c == '.':
			if chars[i-1] == '/' && (atEnd || chars[i+1] == '/') {
				reason = fmt.Sprintf("relative paths not allowed @%d", i)
			}
		case c > 0 && c <= 0x1f, c >= 0x7f && c <= 0x9f, c >= 0xd800 && c <= 0xf8ff, c >= 0xfff0:
			reason = fmt.Sprintf("invalid character @%d", i)
		}
		if reason != "" {
			return cliError{msg: fmt.Sprintf("Invalid path string \"%s\" caused by %s", path, reason), code: 1}
		}
	}
	return nil
}
