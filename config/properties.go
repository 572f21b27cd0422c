package config

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// property is one key/value pair of a .properties file with the line it
// starts on.
type property struct {
	key, value string
	line       int
}

// parseProperties parses Java .properties text the way
// java.util.Properties.load does:
//   - natural lines end in \n, \r or \r\n; leading blanks (space, tab, form
//     feed) are skipped;
//   - a line whose first non-blank character is # or ! is a comment (a
//     trailing backslash does not continue a comment);
//   - a line ending in an odd number of backslashes continues on the next
//     line, whose leading blanks are dropped; at the end of input the
//     backslash is dropped;
//   - the key ends at the first unescaped '=', ':' or blank; blanks, then one
//     '=' or ':', then blanks separate it from the value; trailing blanks of
//     the value are kept;
//   - escapes \t \n \r \f and \uXXXX are decoded (UTF-16 surrogate pairs are
//     joined), a backslash before any other character yields that character.
//
// Unlike Java, which reads ISO-8859-1, the input is taken as UTF-8; input
// that is not valid UTF-8 is read as ISO-8859-1. A leading byte order mark is
// dropped. Duplicate keys: the last one wins, as in Java. A malformed \u
// escape is an error naming the line.
func parseProperties(data []byte) ([]property, error) {
	text := decodeText(data)
	var out []property
	lines := splitNaturalLines(text)
	for i := 0; i < len(lines); i++ {
		startLine := i + 1
		line := trimLeftBlank(lines[i])
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// Join continuation lines.
		var logical strings.Builder
		for {
			if endsInOddBackslashes(line) {
				logical.WriteString(line[:len(line)-1])
				i++
				if i >= len(lines) {
					break
				}
				line = trimLeftBlank(lines[i])
				continue
			}
			logical.WriteString(line)
			break
		}
		rawKey, rawValue := splitKeyValue(logical.String())
		key, err := unescapeProperty(rawKey)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", startLine, err)
		}
		value, err := unescapeProperty(rawValue)
		if err != nil {
			return nil, fmt.Errorf("line %d: key %q: %w", startLine, key, err)
		}
		out = append(out, property{key: key, value: value, line: startLine})
	}
	return out, nil
}

// decodeText returns data as a string: UTF-8 without a byte order mark, or
// ISO-8859-1 when data is not valid UTF-8.
func decodeText(data []byte) string {
	if utf8.Valid(data) {
		return strings.TrimPrefix(string(data), "\ufeff")
	}
	var b strings.Builder
	b.Grow(len(data))
	for _, c := range data {
		b.WriteRune(rune(c))
	}
	return b.String()
}

// splitNaturalLines splits on \n, \r and \r\n.
func splitNaturalLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			lines = append(lines, s[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, s[start:i])
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeftBlank(s string) string {
	i := 0
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return s[i:]
}

func endsInOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKeyValue splits a logical line (leading blanks already removed)
// into its still-escaped key and value.
func splitKeyValue(line string) (key, value string) {
	end := len(line)
	escaped := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if escaped {
			escaped = false
			continue
		}
		if c == '\\' {
			escaped = true
			continue
		}
		if c == '=' || c == ':' || isBlank(c) {
			end = i
			break
		}
	}
	key = line[:end]
	rest := trimLeftBlank(line[end:])
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = trimLeftBlank(rest[1:])
	}
	return key, rest
}

// unescapeProperty decodes the escapes of a properties key or value.
func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	var pendingHigh rune = -1 // a UTF-16 high surrogate waiting for its low half
	flushHigh := func() {
		if pendingHigh >= 0 {
			b.WriteRune(utf8.RuneError)
			pendingHigh = -1
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			flushHigh()
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size
			continue
		}
		if i+1 >= len(s) { // a lone trailing backslash is dropped
			break
		}
		next := s[i+1]
		if next == 'u' {
			if i+6 > len(s) {
				return "", fmt.Errorf("malformed \\uxxxx escape %q", s[i:])
			}
			var r rune
			for _, h := range s[i+2 : i+6] {
				d, ok := hexDigit(h)
				if !ok {
					return "", fmt.Errorf("malformed \\uxxxx escape %q", s[i:i+6])
				}
				r = r<<4 | d
			}
			i += 6
			switch {
			case utf16.IsSurrogate(r) && r < 0xdc00: // high half
				flushHigh()
				pendingHigh = r
			case utf16.IsSurrogate(r): // low half
				if pendingHigh >= 0 {
					b.WriteRune(utf16.DecodeRune(pendingHigh, r))
					pendingHigh = -1
				} else {
					b.WriteRune(utf8.RuneError)
				}
			default:
				flushHigh()
				b.WriteRune(r)
			}
			continue
		}
		flushHigh()
		switch next {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		default:
			r, size := utf8.DecodeRuneInString(s[i+1:])
			b.WriteRune(r)
			i += size - 1
		}
		i += 2
	}
	flushHigh()
	return b.String(), nil
}

func hexDigit(r rune) (rune, bool) {
	switch {
	case r >= '0' && r <= '9':
		return r - '0', true
	case r >= 'a' && r <= 'f':
		return r - 'a' + 10, true
	case r >= 'A' && r <= 'F':
		return r - 'A' + 10, true
	}
	return 0, false
}
