package cmd

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/viper"
)

// SettingsSource says where a command's settings come from. Precedence,
// highest first: Flags, then Params, then the environment, then the file,
// then the key table's defaults.
type SettingsSource struct {
	// Command selects which keys are active; keys that only the other
	// command uses are accepted and reported as ignored.
	Command Command
	// ConfigFile is an optional path to a YAML, JSON, Kafka Connect REST
	// JSON or Java .properties file.
	ConfigFile string
	// Params are "-p key=value" overrides; any key may be set this way. A
	// later Param for the same key wins.
	Params []string
	// Flags maps keys to values given by dedicated flags (for example
	// --flush-size). They win over Params.
	Flags map[string]string
	// LookupEnv reads the environment (os.LookupEnv in production). Each
	// key is read from KAFKAS3_<KEY>, upper-cased with "." and "-" turned
	// into "_" (KAFKAS3_FLUSH_SIZE for flush.size). An empty variable counts
	// as unset. Nil means no environment.
	LookupEnv func(string) (string, bool)
}

// OriginKind says which layer set a value.
type OriginKind uint8

// The layers, lowest precedence first.
const (
	OriginDefault OriginKind = iota
	OriginFile
	OriginEnv
	OriginParam
	OriginFlag
)

// Origin is where one setting's value came from, for error messages.
type Origin struct {
	Kind OriginKind
	// Name is the file path, the environment variable, or the key set by -p
	// (never the value, which may be a secret).
	Name string
}

// String describes the origin: "default", "file orders.yaml",
// "environment KAFKAS3_FLUSH_SIZE", "-p flush.size" or "flag".
func (o Origin) String() string {
	switch o.Kind {
	case OriginFile:
		return "file " + o.Name
	case OriginEnv:
		return "environment " + o.Name
	case OriginParam:
		return "-p " + o.Name
	case OriginFlag:
		return "flag"
	default:
		return "default"
	}
}

// Settings is a loaded, merged configuration: every value a string, with
// where it came from. Key names are already checked; values are checked
// and typed by Sink (and later Source).
type Settings struct {
	command Command
	values  map[string]string
	origins map[string]Origin
	ignored []string
	// ignoredValues holds the values of ignored keys, for the few checks
	// made on them (connector.class).
	ignoredValues map[string]layerValue
	index         *keyIndex
}

// Command returns the command the settings were loaded for.
func (s *Settings) Command() Command { return s.command }

// Get returns the value of key and whether it is set (defaults count as set).
func (s *Settings) Get(key string) (string, bool) {
	v, ok := s.values[key]
	return v, ok
}

// Origin returns where key's value came from.
func (s *Settings) Origin(key string) Origin { return s.origins[key] }

// Keys returns the set keys, sorted.
func (s *Settings) Keys() []string {
	keys := make([]string, 0, len(s.values))
	for k := range s.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Ignored returns the keys that were set but have no effect here: Kafka
// Connect-only keys and keys of the other command, sorted. The caller logs
// them in one info line.
func (s *Settings) Ignored() []string { return append([]string(nil), s.ignored...) }

// ConfigError is one problem with one setting. It wraps ErrConfig.
type ConfigError struct {
	Key    string
	Origin Origin // zero (default) when the problem is that a key is missing
	Msg    string
}

// Error formats "key: message (from origin)".
func (e *ConfigError) Error() string {
	if e.Origin.Kind == OriginDefault {
		return e.Key + ": " + e.Msg
	}
	return fmt.Sprintf("%s: %s (from %s)", e.Key, e.Msg, e.Origin)
}

// Unwrap returns ErrConfig.
func (e *ConfigError) Unwrap() error { return ErrConfig }

// ConfigErrors is every problem found in one pass. It wraps each of them,
// so errors.Is(err, ErrConfig) holds.
type ConfigErrors []error

// Error lists the problems, one per line.
func (e ConfigErrors) Error() string {
	if len(e) == 1 {
		return e[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d configuration problems:", len(e))
	for _, err := range e {
		b.WriteString("\n  ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the problems.
func (e ConfigErrors) Unwrap() []error { return e }

func problems(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return ConfigErrors(errs)
}

// layerValue is one key set by one layer.
type layerValue struct {
	key    string
	value  string
	origin Origin
}

// LoadSettings reads the file, environment, -p parameters and flags of src,
// checks every key name against the key table, rejects keys this version
// cannot honour, and merges the layers. Every error wraps ErrConfig; all
// problems found are reported together.
func LoadSettings(src SettingsSource) (*Settings, error) {
	if src.Command != CommandSink && src.Command != CommandSource {
		return nil, fmt.Errorf("LoadSettings: invalid command %d", src.Command)
	}
	ix := newKeyIndex()
	var errs []error
	var file, env, params, flags []layerValue

	if src.ConfigFile != "" {
		entries, _, err := readConfigFile(src.ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("%w: config file %s: %w", ErrConfig, src.ConfigFile, err)
		}
		origin := Origin{Kind: OriginFile, Name: src.ConfigFile}
		for _, e := range entries {
			if e.null { // a null value leaves the key unset; its name must still be known
				if ix.lookup(e.key) == nil {
					errs = append(errs, unknownKey(ix, e.key, origin))
				}
				continue
			}
			file = append(file, layerValue{key: e.key, value: e.value, origin: origin})
		}
	}
	if src.LookupEnv != nil {
		for i := range ix.specs {
			s := &ix.specs[i]
			if s.prefix {
				continue
			}
			name := envName(s.key)
			if v, ok := src.LookupEnv(name); ok && v != "" {
				env = append(env, layerValue{key: s.key, value: v, origin: Origin{Kind: OriginEnv, Name: name}})
			}
		}
	}
	for _, p := range src.Params {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			errs = append(errs, fmt.Errorf("%w: -p %q: want key=value", ErrConfig, redactParam(p)))
			continue
		}
		params = append(params, layerValue{key: k, value: v, origin: Origin{Kind: OriginParam, Name: k}})
	}
	flagKeys := make([]string, 0, len(src.Flags))
	for k := range src.Flags {
		flagKeys = append(flagKeys, k)
	}
	sort.Strings(flagKeys)
	for _, k := range flagKeys {
		flags = append(flags, layerValue{key: k, value: src.Flags[k], origin: Origin{Kind: OriginFlag}})
	}

	st := &Settings{command: src.Command, values: map[string]string{}, origins: map[string]Origin{},
		ignoredValues: map[string]layerValue{}, index: ix}

	// Classify every key: active and unsupported keys are merged, ignored
	// ones are only listed, unknown and rejected ones are errors. The merge
	// uses one viper instance with "::" as key delimiter, so dotted keys stay
	// flat (topics and topics.dir do not collide). File, environment and -p
	// are merged into viper's config layer in rising precedence; flags go
	// into its override layer; table defaults into its default layer.
	v := viper.NewWithOptions(viper.KeyDelimiter("::"))
	ignored := map[string]bool{}
	for _, layer := range [][]layerValue{file, env, params, flags} {
		merged := map[string]any{}
		for _, lv := range layer {
			spec := ix.lookup(lv.key)
			switch {
			case spec == nil:
				errs = append(errs, unknownKey(ix, lv.key, lv.origin))
				continue
			case spec.status == statusRejected:
				if strings.TrimSpace(lv.value) != "" {
					errs = append(errs, &ConfigError{Key: lv.key, Origin: lv.origin,
						Msg: "not supported: " + lowerFirst(strings.TrimSuffix(spec.doc, "."))})
				}
				continue
			case spec.status == statusIgnored || spec.commands&src.Command == 0:
				ignored[lv.key] = true
				st.ignoredValues[lv.key] = lv
				continue
			}
			if lv.origin.Kind == OriginFlag {
				v.Set(lv.key, lv.value)
			} else {
				merged[lv.key] = lv.value
			}
			st.origins[lv.key] = lv.origin
		}
		if len(merged) > 0 {
			if err := v.MergeConfigMap(merged); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrConfig, err)
			}
		}
	}
	for i := range ix.specs {
		s := &ix.specs[i]
		if s.prefix || s.status != statusActive || s.commands&src.Command == 0 || s.def == "" {
			continue
		}
		v.SetDefault(s.key, s.def)
		if _, ok := st.origins[s.key]; !ok {
			st.origins[s.key] = Origin{Kind: OriginDefault}
		}
	}
	for key := range st.origins {
		st.values[key] = v.GetString(key)
	}

	// Unsupported keys are fine at their default value only.
	for _, key := range st.Keys() {
		spec := ix.lookup(key)
		if spec.status != statusUnsupported {
			continue
		}
		val := st.values[key]
		if sameAsDefault(spec, val) {
			continue
		}
		shown := "a value"
		if !spec.secret {
			shown = strconv.Quote(val)
		}
		want := "leave it unset"
		if spec.def != "" {
			want = fmt.Sprintf("leave it unset or %q", spec.def)
		}
		errs = append(errs, &ConfigError{Key: key, Origin: st.origins[key],
			Msg: fmt.Sprintf("%s is not supported yet by this version (%s); %s", shown, lowerFirst(strings.TrimSuffix(spec.doc, ".")), want)})
	}

	for k := range ignored {
		st.ignored = append(st.ignored, k)
	}
	sort.Strings(st.ignored)
	if len(errs) > 0 {
		return nil, problems(errs)
	}
	return st, nil
}

// sameAsDefault reports whether val means the same as spec's default.
func sameAsDefault(spec *keySpec, val string) bool {
	val = strings.TrimSpace(val)
	switch spec.kind {
	case kindInt:
		a, err1 := strconv.ParseInt(val, 10, 64)
		b, err2 := strconv.ParseInt(spec.def, 10, 64)
		return err1 == nil && err2 == nil && a == b
	case kindBool:
		return strings.EqualFold(val, spec.def)
	}
	return strings.EqualFold(val, spec.def)
}

func unknownKey(ix *keyIndex, key string, origin Origin) error {
	msg := "unknown key"
	if s := suggestKey(ix, key); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return &ConfigError{Key: key, Origin: origin, Msg: msg}
}

// suggestKey returns the known key nearest to key by edit distance, or ""
// when none is close. Case differences count as near: keys are
// case-sensitive, as in Kafka Connect.
func suggestKey(ix *keyIndex, key string) string {
	lower := strings.ToLower(key)
	best, bestD := "", -1
	for i := range ix.specs {
		s := &ix.specs[i]
		if s.prefix {
			continue
		}
		d := editDistance(lower, s.key)
		if bestD < 0 || d < bestD {
			best, bestD = s.key, d
		}
	}
	limit := 2
	if l := len(key) / 4; l > limit {
		limit = l
	}
	if bestD >= 0 && bestD <= limit {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// redactParam shortens a malformed -p argument so that a secret pasted
// into it is not echoed whole.
func redactParam(p string) string {
	if len(p) > 40 {
		return p[:40] + "..."
	}
	return p
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// errMissing is the message for a required key that is not set.
const errMissing = "required key is not set"
