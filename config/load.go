package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/viper"
)

// Input says where a command's settings come from. Precedence,
// highest first: Flags, then Params, then the environment, then the file,
// then the key table's defaults.
type Input struct {
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
	keys          *Keys
	// problems are the load's problems, reported again by Sink and Source.
	problems []error
}

// Command returns the command the settings were loaded for.
func (s *Settings) Command() Command { return s.command }

// Get returns the value of the key h names and whether it is set (defaults
// count as set). Output shows values through Effective, which masks
// secrets.
func (s *Settings) Get(h Key) (string, bool) {
	v, ok := s.values[h.spec().Name]
	return v, ok
}

// Origin returns where the value of the key h names came from.
func (s *Settings) Origin(h Key) Origin { return s.origins[h.spec().Name] }

// setKeys returns the set keys, sorted.
func (s *Settings) setKeys() []string {
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

// layerValue is one key set by one layer.
type layerValue struct {
	key    string
	value  string
	origin Origin
}

// Load reads the file, environment, -p parameters and flags of in, checks
// every key name against the declarations, rejects keys this version
// cannot honour, and merges the layers. Every error wraps ErrConfig.
//
// Problems with key names and layers do not stop the load: the returned
// Settings keeps them, and Sink and Source report them together with the
// problems of the values, so one run lists every problem. The error
// returned here lists the problems found so far. Settings is nil only when
// the file cannot be read or parsed.
func Load(in Input) (*Settings, error) {
	if in.Command != Sink && in.Command != Source {
		return nil, fmt.Errorf("config.Load: invalid command %d", in.Command)
	}
	st := &Settings{command: in.Command, values: map[string]string{}, origins: map[string]Origin{},
		ignoredValues: map[string]layerValue{}, keys: NewKeys()}
	layers, err := st.readLayers(in)
	if err != nil {
		return nil, err
	}
	if err := st.merge(layers); err != nil {
		return nil, err
	}
	st.checkUnsupported()
	st.checkSecurityOverrides()
	return st, problems(st.problems)
}

// readLayers reads the layers of in, lowest precedence first: file,
// environment, -p and flags. Unknown keys of a null file value and
// malformed -p arguments are recorded as problems.
func (st *Settings) readLayers(in Input) ([][]layerValue, error) {
	var file, env, params, flags []layerValue
	if in.ConfigFile != "" {
		entries, _, err := readConfigFile(in.ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("%w: config file %s: %w", ErrConfig, in.ConfigFile, err)
		}
		origin := Origin{Kind: OriginFile, Name: in.ConfigFile}
		for _, e := range entries {
			if e.null { // a null value leaves the key unset; its name must still be known
				if st.keys.Lookup(e.key) == nil {
					st.problems = append(st.problems, unknownKey(st.keys, e.key, origin))
				}
				continue
			}
			file = append(file, layerValue{key: e.key, value: e.value, origin: origin})
		}
	}
	if in.LookupEnv != nil {
		for _, s := range st.keys.All() {
			if s.Prefix {
				continue
			}
			name := EnvName(s.Name)
			if v, ok := in.LookupEnv(name); ok && v != "" {
				env = append(env, layerValue{key: s.Name, value: v, origin: Origin{Kind: OriginEnv, Name: name}})
			}
		}
	}
	for _, p := range in.Params {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			st.problems = append(st.problems, &Error{Key: "-p " + malformedParam(st.keys, p), Msg: "want key=value"})
			continue
		}
		params = append(params, layerValue{key: k, value: v, origin: Origin{Kind: OriginParam, Name: k}})
	}
	flagKeys := make([]string, 0, len(in.Flags))
	for k := range in.Flags {
		flagKeys = append(flagKeys, k)
	}
	sort.Strings(flagKeys)
	for _, k := range flagKeys {
		flags = append(flags, layerValue{key: k, value: in.Flags[k], origin: Origin{Kind: OriginFlag}})
	}
	layers := [][]layerValue{file, env, params, flags}
	for _, layer := range layers {
		st.canonicalize(layer)
	}
	return layers, nil
}

// canonicalize renames, in one layer, the values set under another name of
// a key (Spec.AlsoNamed) to the key's declared name; the origin keeps the
// name the user wrote. Both names set in the layer with different values
// is a problem naming both.
func (st *Settings) canonicalize(layer []layerValue) {
	written := map[string]layerValue{}
	for _, lv := range layer {
		written[lv.key] = lv
	}
	for i, lv := range layer {
		name := st.keys.Canonical(lv.key)
		if name == lv.key {
			continue
		}
		if other, ok := written[name]; ok && other.value != lv.value {
			st.problems = append(st.problems, &Error{Key: lv.key, Origin: lv.origin,
				Msg: fmt.Sprintf("is another name for %s, which is also set, to another value (from %s); set only %s", name, other.origin, name)})
		}
		layer[i].key = name
	}
}

// merge classifies every key of the layers and merges the values: active
// and unsupported keys are merged, ignored ones are only listed, unknown
// and rejected ones are problems. The merge uses one viper instance with
// "::" as key delimiter, so dotted keys stay flat (topics and topics.dir do
// not collide). File, environment and -p are merged into viper's config
// layer in rising precedence; flags go into its override layer; defaults
// into its default layer.
func (st *Settings) merge(layers [][]layerValue) error {
	v := viper.NewWithOptions(viper.KeyDelimiter("::"))
	ignored := map[string]bool{}
	for _, layer := range layers {
		merged := map[string]any{}
		for _, lv := range layer {
			if !st.classify(lv, ignored) {
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
				return fmt.Errorf("%w: %w", ErrConfig, err)
			}
		}
	}
	for _, s := range st.keys.All() {
		if s.Prefix || s.Status != Active || s.Commands&st.command == 0 || s.Default == "" {
			continue
		}
		v.SetDefault(s.Name, s.Default)
		if _, ok := st.origins[s.Name]; !ok {
			st.origins[s.Name] = Origin{Kind: OriginDefault}
		}
	}
	for key := range st.origins {
		st.values[key] = v.GetString(key)
	}
	for k := range ignored {
		st.ignored = append(st.ignored, k)
	}
	sort.Strings(st.ignored)
	return nil
}

// classify reports whether lv is a key to merge; unknown and refused keys
// become problems, ignored ones are recorded in ignored.
func (st *Settings) classify(lv layerValue, ignored map[string]bool) bool {
	spec := st.keys.Lookup(lv.key)
	switch {
	case spec == nil:
		st.problems = append(st.problems, unknownKey(st.keys, lv.key, lv.origin))
		return false
	case spec.Status == Rejected:
		if strings.TrimSpace(lv.value) != "" {
			st.problems = append(st.problems, &Error{Key: lv.key, Origin: lv.origin,
				Msg: "not supported: " + lowerFirst(strings.TrimSuffix(spec.Doc, "."))})
		}
		return false
	case spec.Status == Ignored || spec.Commands&st.command == 0:
		ignored[lv.key] = true
		st.ignoredValues[lv.key] = lv
		return false
	}
	return true
}

// checkUnsupported records a problem for every key not supported yet that
// is set to anything but its default.
func (st *Settings) checkUnsupported() {
	for _, key := range st.setKeys() {
		spec := st.keys.Lookup(key)
		if spec.Status != Unsupported {
			continue
		}
		val := st.values[key]
		if sameAsDefault(spec, val) {
			continue
		}
		want := "leave it unset"
		if spec.Default != "" {
			want = fmt.Sprintf("leave it unset or %q", spec.Default)
		}
		shownVal := "a value"
		if !spec.Secret {
			shownVal = strconv.Quote(redactURLs(val))
		}
		st.problems = append(st.problems, &Error{Key: key, Origin: st.origins[key],
			Msg: fmt.Sprintf("%s is not supported yet by this version (%s); %s", shownVal, lowerFirst(strings.TrimSuffix(spec.Doc, ".")), want)})
	}
}

// checkSecurityOverrides refuses Connect's per-connector client overrides
// of the Kafka security keys (consumer.override.sasl.jaas.config, ...):
// the override families are otherwise ignored, and kafkas3's clients
// would silently connect without the credentials or TLS they carry.
func (st *Settings) checkSecurityOverrides() {
	for _, key := range st.ignored {
		for _, prefix := range []string{"consumer.override.", "producer.override.", "admin.override."} {
			suffix, ok := strings.CutPrefix(key, prefix)
			if spec := st.keys.Lookup(suffix); !ok || spec == nil || spec.Prefix ||
				(suffix != "security.protocol" && !strings.HasPrefix(suffix, "sasl.") && !strings.HasPrefix(suffix, "ssl.")) {
				continue
			}
			st.problems = append(st.problems, &Error{Key: key, Origin: st.ignoredValues[key].origin,
				Msg: "is a Kafka Connect per-connector override, which kafkas3 does not apply (its Kafka clients would connect without it); set " + suffix + " instead"})
		}
	}
}

// sameAsDefault reports whether val means the same as spec's default.
func sameAsDefault(spec *Spec, val string) bool {
	val = strings.TrimSpace(val)
	if spec.Kind == KindInt {
		a, err1 := strconv.ParseInt(val, 10, 64)
		b, err2 := strconv.ParseInt(spec.Default, 10, 64)
		return err1 == nil && err2 == nil && a == b
	}
	return strings.EqualFold(val, spec.Default)
}

func unknownKey(ix *Keys, key string, origin Origin) error {
	msg := "unknown key"
	if s := suggestKey(ix, key); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return &Error{Key: key, Origin: origin, Msg: msg}
}

// suggestKey returns the known key nearest to key by edit distance, or ""
// when none is close. Case differences count as near: keys are
// case-sensitive, as in Kafka Connect.
func suggestKey(ix *Keys, key string) string {
	lower := strings.ToLower(key)
	best, bestD := "", -1
	for _, s := range ix.All() {
		if s.Prefix {
			continue
		}
		d := editDistance(lower, s.Name)
		if bestD < 0 || d < bestD {
			best, bestD = s.Name, d
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

// malformedParam describes a -p argument without "=" without echoing a
// value that may be a secret: a lone known key that is not secret is
// quoted whole; when the argument starts with a key followed by a blank or
// ':' (a mistyped key=value), only that key is shown if it is known and
// not secret; anything else is described by its length only.
func malformedParam(keys *Keys, p string) string {
	name, rest, cut := strings.Cut(strings.TrimSpace(p), " ")
	if !cut {
		name, rest, cut = strings.Cut(name, ":")
	}
	name = strings.TrimSpace(name)
	if s := keys.Lookup(name); s != nil {
		if !cut && !s.Secret {
			return strconv.Quote(name)
		}
		if cut && strings.TrimSpace(rest) != "" {
			return fmt.Sprintf("%q followed by a value (not shown)", name)
		}
		return strconv.Quote(name)
	}
	return fmt.Sprintf("(an argument of %d characters, not shown: not a known key)", len(p))
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
