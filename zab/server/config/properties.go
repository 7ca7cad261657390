package config

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// property is one key=value pair of a properties file with the line it
// started on, so that errors can point at it.
type property struct {
	Key   string
	Value string
	Line  int
}

// readProperties splits a Java properties file into key/value pairs in file
// order. It follows java.util.Properties.load where real zoo.cfg files depend
// on it: '#' and '!' comments, '=' or ':' or blanks between key and value,
// a trailing backslash continuing a logical line, and the \t \n \r \f \uXXXX
// escapes. Keys and values are trimmed, as ZooKeeper trims them.
func readProperties(r io.Reader, file string) ([]property, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var props []property
	lineNo := 0
	for sc.Scan() {
		lineNo++
		start := lineNo
		logical := strings.TrimLeft(sc.Text(), " \t\f")
		if logical == "" || logical[0] == '#' || logical[0] == '!' {
			continue
		}
		for endsWithContinuation(logical) && sc.Scan() {
			lineNo++
			logical = logical[:len(logical)-1] + strings.TrimLeft(sc.Text(), " \t\f")
		}
		if endsWithContinuation(logical) {
			logical = logical[:len(logical)-1]
		}
		rawKey, rawValue := splitKeyValue(logical)
		key, err := unescape(rawKey)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: key %q: %w", file, start, rawKey, err)
		}
		value, err := unescape(rawValue)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", file, start, key, err)
		}
		props = append(props, property{Key: strings.TrimSpace(key), Value: strings.TrimSpace(value), Line: start})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: after line %d: %w", file, lineNo, err)
	}
	return props, nil
}

// endsWithContinuation reports whether s ends in an odd number of
// backslashes, which joins the next physical line to it.
func endsWithContinuation(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKeyValue splits a logical line at the first unescaped '=', ':' or
// blank; blanks around the separator belong to neither side.
func splitKeyValue(s string) (key, value string) {
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	if i >= len(s) {
		return s, ""
	}
	key, rest := s[:i], strings.TrimLeft(s[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

// unescape resolves the escapes of a properties file. An unknown escape
// stands for the character itself, as in Java.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if len(s)-(i+1) < 4 {
				return "", fmt.Errorf("malformed \\u escape %q", s[i-1:])
			}
			var r rune
			for _, h := range s[i+1 : i+5] {
				v, ok := hexValue(h)
				if !ok {
					return "", fmt.Errorf("malformed \\u escape %q", s[i-1:i+5])
				}
				r = r<<4 | v
			}
			b.WriteRune(r)
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

func hexValue(h rune) (rune, bool) {
	switch {
	case h >= '0' && h <= '9':
		return h - '0', true
	case h >= 'a' && h <= 'f':
		return h - 'a' + 10, true
	case h >= 'A' && h <= 'F':
		return h - 'A' + 10, true
	}
	return 0, false
}
