package kafkaauth

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// JAAS is the one login module of a sasl.jaas.config value:
// `<module class> <flag> key=value ... ;`.
type JAAS struct {
	Module  string
	Flag    string
	Options map[string]string
}

// errJAAS is wrapped by every ParseJAAS error.
var errJAAS = errors.New("is not a JAAS login line")

// jaasFlag reports whether f is a control flag JAAS defines.
func jaasFlag(f string) bool {
	switch strings.ToLower(f) {
	case "required", "requisite", "sufficient", "optional":
		return true
	}
	return false
}

// ParseJAAS parses a sasl.jaas.config value as Kafka does: exactly one
// login module, a control flag, options whose values are bare words or
// double-quoted strings (with backslash escapes), and a closing ';'.
// Errors name the part that is wrong, never an option's value.
func ParseJAAS(s string) (JAAS, error) {
	lx := &jaasLexer{s: s}
	var j JAAS
	var err error
	if j.Module, err = lx.word("the login module class"); err != nil {
		return j, err
	}
	if j.Flag, err = lx.word("the control flag"); err != nil {
		return j, err
	}
	if !jaasFlag(j.Flag) {
		return j, fmt.Errorf("%w: the control flag after %s is not one of required, requisite, sufficient, optional", errJAAS, j.Module)
	}
	j.Options = map[string]string{}
	for {
		lx.space()
		if lx.eof() {
			return j, fmt.Errorf("%w: it does not end with ';'", errJAAS)
		}
		if lx.peek() == ';' {
			lx.pos++
			break
		}
		if err := lx.option(j.Options); err != nil {
			return j, err
		}
	}
	lx.space()
	if !lx.eof() {
		return j, fmt.Errorf("%w: it holds more than one login module; Kafka clients take exactly one", errJAAS)
	}
	return j, nil
}

// Unknown returns the options of j that are not in known, sorted.
func (j JAAS) Unknown(known ...string) []string {
	var out []string
	for k := range j.Options {
		if !slices.Contains(known, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// jaasLexer reads the tokens of a JAAS line.
type jaasLexer struct {
	s   string
	pos int
}

func (lx *jaasLexer) eof() bool  { return lx.pos >= len(lx.s) }
func (lx *jaasLexer) peek() byte { return lx.s[lx.pos] }

// space skips white space and /* */ and // comments.
func (lx *jaasLexer) space() {
	for !lx.eof() {
		rest := lx.s[lx.pos:]
		switch {
		case rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r':
			lx.pos++
		case strings.HasPrefix(rest, "//"):
			if i := strings.IndexByte(rest, '\n'); i >= 0 {
				lx.pos += i + 1
			} else {
				lx.pos = len(lx.s)
			}
		case strings.HasPrefix(rest, "/*"):
			if i := strings.Index(rest[2:], "*/"); i >= 0 {
				lx.pos += i + 4
			} else {
				lx.pos = len(lx.s)
			}
		default:
			return
		}
	}
}

// isWordByte reports whether c may be part of a bare word.
func isWordByte(c byte) bool {
	return c > ' ' && c != '=' && c != ';' && c != '"'
}

// word reads a bare word; what names it in an error.
func (lx *jaasLexer) word(what string) (string, error) {
	lx.space()
	start := lx.pos
	for !lx.eof() && isWordByte(lx.peek()) {
		lx.pos++
	}
	if lx.pos == start {
		return "", fmt.Errorf("%w: %s is missing", errJAAS, what)
	}
	return lx.s[start:lx.pos], nil
}

// option reads key=value into opts.
func (lx *jaasLexer) option(opts map[string]string) error {
	key, err := lx.word("an option name")
	if err != nil {
		return err
	}
	lx.space()
	if lx.eof() || lx.peek() != '=' {
		return fmt.Errorf("%w: option %s has no '=' and value", errJAAS, key)
	}
	lx.pos++
	lx.space()
	var val string
	if !lx.eof() && lx.peek() == '"' {
		if val, err = lx.quoted(key); err != nil {
			return err
		}
	} else if val, err = lx.word("the value of option " + key); err != nil {
		return err
	}
	if _, dup := opts[key]; dup {
		return fmt.Errorf("%w: option %s is set twice", errJAAS, key)
	}
	opts[key] = val
	return nil
}

// quoted reads a double-quoted value of option key.
func (lx *jaasLexer) quoted(key string) (string, error) {
	lx.pos++ // the opening quote
	var b strings.Builder
	for !lx.eof() {
		c := lx.peek()
		lx.pos++
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if lx.eof() {
				break
			}
			e := lx.peek()
			lx.pos++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", fmt.Errorf("%w: the value of option %s has no closing '\"'", errJAAS, key)
}
