package config

import (
	"net/url"
	"strconv"
	"strings"
)

// Masked is what output shows instead of a secret value.
const Masked = "********"

// minScrub is the shortest secret searched for in foreign error text.
const minScrub = 4

// Setting is one key of an effective configuration, as `kafkas3 config`
// prints it.
type Setting struct {
	Key string
	// Value is the value for display: a secret is Masked, a URL's password
	// is replaced (see Display). It is "" when the key is unset.
	Value string
	Set   bool
	// Origin is where the value came from; the zero Origin (default) for
	// defaults and unset keys.
	Origin Origin
	Secret bool
	// Ignored marks a key that was set but has no effect for the command.
	Ignored bool
}

// Effective returns every key the command uses, in declaration order,
// with its value and where it came from, then the set keys that are
// ignored. Secret values are masked; nothing here is the raw value of a
// secret key.
func (s *Settings) Effective() []Setting {
	var out []Setting
	for _, spec := range s.keys.All() {
		if spec.Prefix || spec.Status == Ignored || spec.Commands&s.command == 0 {
			continue
		}
		v, set := s.values[spec.Name]
		out = append(out, Setting{Key: spec.Name, Value: Display(spec, v), Set: set, Origin: s.origins[spec.Name], Secret: spec.Secret})
	}
	for _, key := range s.ignored {
		lv := s.ignoredValues[key]
		spec := s.keys.Lookup(key)
		secret := spec.Secret || (spec.Prefix && secretLooking(key))
		value := Display(spec, lv.value)
		if secret && lv.value != "" {
			value = Masked
		}
		out = append(out, Setting{Key: key, Value: value, Set: true, Origin: lv.origin, Secret: secret, Ignored: true})
	}
	return out
}

// secretLooking reports whether a key of an ignored family (Connect's
// consumer.override.sasl.jaas.config, value.converter.schema.registry.ssl.
// keystore.password, ...) names a credential, so its value is masked
// like a declared secret's.
func secretLooking(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"password", "secret", "jaas.config", "user.info", "token", "credential", "private.key", "key.pem"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// Display is value as output may show it: Masked for a secret key (when
// set), and with the password of any URL in it replaced ("user:xxxxx@"),
// since registry URLs may carry credentials.
func Display(spec *Spec, value string) string {
	if spec != nil && spec.Secret {
		if value == "" {
			return ""
		}
		return Masked
	}
	return redactURLs(value)
}

// redactURLs replaces the password of each comma-separated URL in v.
func redactURLs(v string) string {
	if !strings.Contains(v, "@") || !strings.Contains(v, "://") {
		return v
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil {
			if strings.Contains(p, "@") {
				parts[i] = Masked // unparseable, with what may be credentials
			}
			continue
		}
		if _, has := u.User.Password(); has {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// shown is value quoted for an error message, or "the value" for a secret
// key; URL passwords are replaced.
func shown(s *Spec, value string) string {
	if s.Secret {
		return "the value"
	}
	return strconv.Quote(redactURLs(value))
}

// secrets returns the values output must never show: every set secret
// key's value and the password of every URL in any value.
func (s *Settings) secrets() []string {
	var out []string
	for key, v := range s.values {
		// Secrets shorter than minScrub are masked where a key's own value
		// is shown, but not searched for in other text (they would mask
		// common words).
		if spec := s.keys.Lookup(key); spec != nil && spec.Secret && len(strings.TrimSpace(v)) >= minScrub {
			out = append(out, v, strings.TrimSpace(v))
		}
		for _, p := range strings.Split(v, ",") {
			if u, err := url.Parse(strings.TrimSpace(p)); err == nil {
				if pw, has := u.User.Password(); has && len(pw) >= minScrub {
					out = append(out, pw)
				}
			}
		}
	}
	return out
}

// scrubbed is an error whose text has the settings' secrets masked; it
// unwraps to the original, so errors.Is still sees its chain.
type scrubbed struct {
	err error
	msg string
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrub returns err with every secret in its text masked, or err itself
// when its text holds none.
func scrub(err error, secrets []string) error {
	msg := err.Error()
	hit := false
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) {
			msg, hit = strings.ReplaceAll(msg, s, Masked), true
		}
	}
	if !hit {
		return err
	}
	return &scrubbed{err: err, msg: msg}
}
