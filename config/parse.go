package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/partition"
)

// Key is any typed handle (each embeds its *Spec), or a *Spec.
type Key interface{ spec() *Spec }

func (s *Spec) spec() *Spec { return s }

// valueParser types setting values one key at a time and collects every
// problem. Each key is parsed by the rule of its kind; the methods take
// typed handles, so only declared keys can be read.
type valueParser struct {
	st   *Settings
	k    *Keys
	errs []error
	bad  map[*Spec]bool // keys that already failed
	// secrets are the values no problem may show (Settings.secrets).
	secrets []string
}

func newParser(st *Settings) *valueParser { return &valueParser{st: st, k: st.keys} }

// ok reports whether key parsed without a problem, so dependent checks do
// not pile on.
func (p *valueParser) ok(h Key) bool { return !p.bad[h.spec()] }

// isSet reports whether the key has a value (a default counts).
func (p *valueParser) isSet(h Key) bool {
	_, set := p.st.values[h.spec().Name]
	return set
}

// userSet reports whether a layer above the defaults set the key.
func (p *valueParser) userSet(h Key) bool {
	o, set := p.st.origins[h.spec().Name]
	return set && o.Kind != OriginDefault
}

// fail records "key: "value" <msg> (from origin)"; a secret value is shown
// as "the value".
func (p *valueParser) fail(h Key, value, msg string) {
	s := h.spec()
	p.markBad(s)
	p.add(&Error{Key: s.Name, Origin: p.st.origins[s.Name], Msg: shown(s, value) + " " + msg})
}

// missing records that a needed key is not set, with why when not obvious.
func (p *valueParser) missing(h Key, why string) {
	s := h.spec()
	p.markBad(s)
	msg := errMissing
	if why != "" {
		msg += " (" + why + ")"
	}
	p.add(&Error{Key: s.Name, Msg: msg})
}

// add records a problem once: a key read again (by a rule) does not
// repeat its problem.
func (p *valueParser) add(err error) {
	if p.secrets == nil {
		p.secrets = p.st.secrets()
	}
	err = scrub(err, p.secrets)
	for _, e := range p.errs {
		if e.Error() == err.Error() {
			return
		}
	}
	p.errs = append(p.errs, err)
}

// problems returns the load's problems and the parser's, nil when there
// are none.
func (p *valueParser) problems() error {
	return problems(append(append([]error(nil), p.st.problems...), p.errs...))
}

func (p *valueParser) markBad(s *Spec) {
	if p.bad == nil {
		p.bad = map[*Spec]bool{}
	}
	p.bad[s] = true
}

// required reports whether the key is required for the command the
// settings were loaded for.
func (p *valueParser) required(h Key) bool { return h.spec().Required&p.st.command != 0 }

// need records key as missing when the command requires it and it is unset.
func (p *valueParser) need(h Key, why string) {
	if !p.isSet(h) && p.required(h) {
		p.missing(h, why)
	}
}

// raw returns the value untrimmed ("" when unset).
func (p *valueParser) raw(h Key) string { return p.st.values[h.spec().Name] }

// text returns the trimmed value ("" when unset).
func (p *valueParser) text(h Key) string { return strings.TrimSpace(p.raw(h)) }

// str returns the trimmed value ("" when unset).
func (p *valueParser) str(h StringKey) string { return p.text(h) }

func (p *valueParser) requiredString(h StringKey) string {
	v := p.str(h)
	if v == "" {
		if p.isSet(h) {
			p.fail(h, v, "is empty; want a non-empty string")
		} else {
			p.missing(h, "")
		}
	}
	return v
}

func (p *valueParser) nonEmpty(h StringKey) string {
	v := p.str(h)
	if v == "" && p.isSet(h) {
		p.fail(h, p.raw(h), "is empty; want a non-empty string")
	}
	return v
}

// int parses an integer within the key's bounds; unset gives 0.
func (p *valueParser) int(h IntKey) int64 {
	v, set := p.st.values[h.Name]
	if !set {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	switch {
	case err != nil:
		p.fail(h, v, "is not an integer; want "+intRange(h.Spec))
		return 0
	case n < h.Min || n > h.Max:
		p.fail(h, v, "is out of range; want "+intRange(h.Spec))
		return 0
	}
	return n
}

// millis parses a millisecond count; -1 and 0 mean disabled (zero).
func (p *valueParser) millis(h IntKey) time.Duration {
	n := p.int(h)
	if n <= 0 {
		return 0
	}
	if n > maxDurationMillis {
		p.fail(h, p.raw(h), "is out of range; want at most "+strconv.FormatInt(maxDurationMillis, 10))
		return 0
	}
	return time.Duration(n) * time.Millisecond
}

const maxDurationMillis = int64(1<<63-1) / int64(time.Millisecond)

// intRange describes a key's integer bounds: "an integer > 0",
// "an integer >= 0", "an integer from -1 to 9".
func intRange(s *Spec) string {
	switch {
	case s.Max == maxInt64 && s.Min == 1:
		return "an integer > 0"
	case s.Max == maxInt64:
		return fmt.Sprintf("an integer >= %d", s.Min)
	default:
		return fmt.Sprintf("an integer from %d to %d", s.Min, s.Max)
	}
}

func (p *valueParser) bool(h BoolKey) bool {
	v := p.text(h)
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false", "":
		return false
	}
	p.fail(h, v, "is not a boolean; want true or false")
	return false
}

// choice returns the canonical name of the key's value, or "" when unset
// or invalid. Values are matched ignoring case, by name or class name.
func (p *valueParser) choice(h ChoiceKey) string {
	v := p.text(h)
	if v == "" {
		return ""
	}
	c, ok := h.Match(v)
	if !ok {
		p.fail(h, v, "is not allowed; want one of "+choiceList(h.Spec, false))
		return ""
	}
	if c.Unsupported {
		p.fail(h, v, "is not supported yet by this version; want one of "+choiceList(h.Spec, true))
		return ""
	}
	return c.Name
}

// choiceList lists a choice key's names; supportedOnly leaves out the
// recognised but unsupported ones.
func choiceList(s *Spec, supportedOnly bool) string {
	var names []string
	for _, c := range s.Choices {
		if supportedOnly && c.Unsupported {
			continue
		}
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// list splits a comma-separated value, trimming items and dropping empty
// ones, as Kafka's LIST type does.
func (p *valueParser) list(h ListKey) []string {
	var out []string
	for _, item := range strings.Split(p.raw(h), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func (p *valueParser) hostPorts(h ListKey) []string {
	v := p.raw(h)
	if strings.TrimSpace(v) == "" {
		p.missing(h, "")
		return nil
	}
	items := p.list(h)
	for _, hp := range items {
		host, port, err := net.SplitHostPort(hp)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			p.fail(h, v, fmt.Sprintf("has %q, which is not host:port; want comma-separated host:port pairs", hp))
			return nil
		}
	}
	return items
}

// topicNameRule is what a Kafka topic name may be, for error messages.
const topicNameRule = "want letters, digits, '.', '_' and '-' (at most 249)"

func (p *valueParser) topics(h ListKey) []string {
	items := p.list(h)
	for _, t := range items {
		if partition.ValidateTopic(t) != nil {
			p.fail(h, p.raw(h), fmt.Sprintf("has %q, which is not a Kafka topic name; "+topicNameRule, t))
			return nil
		}
	}
	return items
}

func (p *valueParser) regex(h StringKey) string {
	v := p.str(h)
	if v == "" {
		return ""
	}
	if _, err := regexp.Compile(`^(?:` + v + `)$`); err != nil {
		p.fail(h, v, fmt.Sprintf("does not compile (%v); want a regular expression in RE2 syntax", err))
		return ""
	}
	return v
}

// endpoint normalises store.url: https:// is added when there is no scheme.
func (p *valueParser) endpoint(h StringKey) string {
	v := p.str(h)
	if v == "" {
		return ""
	}
	full := v
	if !strings.Contains(v, "://") {
		full = "https://" + v
	}
	u, err := url.Parse(full)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		p.fail(h, v, "is not an endpoint URL; want http(s)://host[:port]")
		return ""
	}
	return full
}
