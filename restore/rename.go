package restore

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kafkas3/kafkas3/partition"
)

// fullMatch returns a regexp that matches only whole strings, like Java's
// Matcher.matches(), which Kafka uses for topics.regex and Connect's
// RegexRouter. A nil re gives nil.
func fullMatch(re *regexp.Regexp) (*regexp.Regexp, error) {
	if re == nil {
		return nil, nil
	}
	full, err := regexp.Compile(`^(?:` + re.String() + `)$`)
	if err != nil {
		return nil, fmt.Errorf("%w: regex %q: %w", ErrInvalidConfig, re.String(), err)
	}
	return full, nil
}

// renamer maps an archived topic name to its target, like Connect's
// RegexRouter: when the regex matches the whole name, the name becomes the
// replacement with groups expanded; otherwise it is kept.
type renamer struct {
	re       *regexp.Regexp // full-match form
	template string         // Go regexp.Expand template
}

// newRenamer builds a renamer from a Java-style replacement ("copy_of_$0",
// "$1-restored", "${name}", "\$" for a literal dollar; Go's "${0}" is
// accepted too). An empty
// replacement gives a renamer that keeps names.
func newRenamer(re *regexp.Regexp, replacement string) (*renamer, error) {
	if replacement == "" {
		return &renamer{}, nil
	}
	if re == nil {
		re = regexp.MustCompile(`.*`)
	}
	full, err := fullMatch(re)
	if err != nil {
		return nil, err
	}
	tmpl, err := javaReplacement(replacement, full)
	if err != nil {
		return nil, err
	}
	return &renamer{re: full, template: tmpl}, nil
}

// Target returns the target topic for source, and an error when the result
// is not a legal topic name.
func (r *renamer) Target(source string) (string, error) {
	if r.re == nil {
		return source, nil
	}
	m := r.re.FindStringSubmatchIndex(source)
	if m == nil {
		return source, nil
	}
	target := string(r.re.ExpandString(nil, r.template, source, m))
	if err := partition.ValidateTopic(target); err != nil {
		return "", fmt.Errorf("%w: topic rename of %q gives %q: %w", ErrInvalidConfig, source, target, err)
	}
	return target, nil
}

// javaReplacement turns a java.util.regex replacement string into a Go
// Expand template. Java reads "$12" as group 12 only when the pattern has
// that many groups (else group 1 followed by "2"); Go would read "$12x" as
// the group named "12x", so every reference is written as ${...}.
func javaReplacement(repl string, re *regexp.Regexp) (string, error) {
	groups := re.NumSubexp()
	names := map[string]bool{}
	for _, n := range re.SubexpNames() {
		if n != "" {
			names[n] = true
		}
	}
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch c {
		case '\\':
			i++
			if i >= len(repl) {
				return "", fmt.Errorf("%w: topic rename %q ends with a lone backslash", ErrInvalidConfig, repl)
			}
			if repl[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(repl[i])
			}
		case '$':
			i++
			if i >= len(repl) {
				return "", fmt.Errorf("%w: topic rename %q ends with a lone '$'", ErrInvalidConfig, repl)
			}
			switch {
			case repl[i] == '{':
				end := strings.IndexByte(repl[i:], '}')
				if end < 0 {
					return "", fmt.Errorf("%w: topic rename %q has an unclosed ${", ErrInvalidConfig, repl)
				}
				name := repl[i+1 : i+end]
				if n, err := strconv.Atoi(name); err == nil && n >= 0 && n <= groups {
					// ${0}: Go's spelling of a numbered group, accepted too.
				} else if !names[name] {
					return "", fmt.Errorf("%w: topic rename %q names group %q, which the regex %q does not have",
						ErrInvalidConfig, repl, name, re.String())
				}
				b.WriteString("${" + name + "}")
				i += end
			case repl[i] >= '0' && repl[i] <= '9':
				n := int(repl[i] - '0')
				if n > groups {
					return "", fmt.Errorf("%w: topic rename %q refers to group %d; the regex has %d", ErrInvalidConfig, repl, n, groups)
				}
				for i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9' {
					next := n*10 + int(repl[i+1]-'0')
					if next > groups {
						break
					}
					n = next
					i++
				}
				fmt.Fprintf(&b, "${%d}", n)
			default:
				return "", fmt.Errorf("%w: topic rename %q: '$' must be followed by a group number or {name}; write \\$ for a dollar",
					ErrInvalidConfig, repl)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
