package cmd

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Canonical values of the choice keys, as SinkOptions reports them.
const (
	FormatJSON    = "json"
	FormatBytes   = "bytes"
	FormatAvro    = "avro"
	FormatParquet = "parquet"

	StoreS3    = "s3"
	StoreLocal = "local"

	PartitionerDefault = "default"

	CompressionNone = "none"
	CompressionGzip = "gzip"

	NullValuesFail   = "fail"
	NullValuesIgnore = "ignore"
	NullValuesWrite  = "write"

	IsolationReadCommitted   = "read_committed"
	IsolationReadUncommitted = "read_uncommitted"
)

// SinkOptions is the sink's configuration, typed and fully validated. It
// holds primitives only; cmd builds formats, stores and clients from it.
// The embedded groups are shared with SourceOptions.
type SinkOptions struct {
	Name    string
	GroupID string
	// GroupInstanceID is group.instance.id (static membership); "" for none.
	GroupInstanceID string
	// SessionTimeout is session.timeout.ms.
	SessionTimeout time.Duration
	// IsolationLevel is IsolationReadCommitted or IsolationReadUncommitted:
	// consumer.override.isolation.level when set, else isolation.level.
	IsolationLevel string
	KafkaSettings

	// What to read: exactly one of Topics and TopicsRegex is set.
	// TopicsRegex must match a whole topic name, as in Kafka Connect; it
	// compiles as `^(?:` + TopicsRegex + `)$`.
	Topics      []string
	TopicsRegex string

	LayoutSettings

	// Rotation. A zero duration means disabled. Location is nil when
	// timezone is unset.
	FlushSize              int64
	RotateInterval         time.Duration
	RotateScheduleInterval time.Duration
	Timezone               string
	Location               *time.Location
	Locale                 string

	StoreSettings
	FormatSettings
	IndexSettings
	// SnapshotInterval is offsets.snapshot.interval.ms (0: no snapshots);
	// GroupsRegex is groups.regex ("" for every group).
	SnapshotInterval time.Duration
	GroupsRegex      string

	NullValues string // NullValuesFail, NullValuesIgnore or NullValuesWrite

	// StoreKeys and StoreHeaders write parallel .keys and .headers
	// objects, in KeysFormat and HeadersFormat (FormatJSON, FormatBytes
	// (keys only), FormatAvro or FormatParquet).
	StoreKeys     bool
	StoreHeaders  bool
	KeysFormat    string
	HeadersFormat string
	// TombstonePartition is tombstone.encoded.partition.
	TombstonePartition  string
	SchemaCompatibility string // NONE, BACKWARD, FORWARD or FULL

	// ValueConverter and KeyConverter decode values and keys; a Class of ""
	// means the raw bytes. Avro and Parquet need a schema-aware value
	// converter.
	ValueConverter ConverterSettings
	KeyConverter   ConverterSettings

	// Connect's error handling.
	ErrorsTolerance      string // none or all
	DLQTopic             string // errors.deadletterqueue.topic.name
	DLQReplicationFactor int16  // errors.deadletterqueue.topic.replication.factor
	DLQContextHeaders    bool   // errors.deadletterqueue.context.headers.enable
	ErrorsLog            bool   // errors.log.enable
}

// Sink types and validates the settings for `kafkas3 sink`. It reports
// every problem it finds at once; each wraps ErrConfig and names the key,
// the value and what is allowed.
func (s *Settings) Sink() (*SinkOptions, error) {
	if s.command != CommandSink {
		return nil, fmt.Errorf("Settings.Sink: settings were loaded for %s", s.command)
	}
	p := &valueParser{st: s}
	o := &SinkOptions{}

	p.connectorClass([]string{"io.confluent.connect.s3.S3SinkConnector", "S3SinkConnector"},
		"is not the S3 sink connector; want io.confluent.connect.s3.S3SinkConnector (kafkas3 sink replaces it)")

	o.Name = p.requiredString("name")
	o.KafkaSettings = p.kafka()
	o.GroupID = p.str("group.id")
	if o.GroupID == "" && o.Name != "" {
		o.GroupID = "connect-" + o.Name
	}
	o.GroupInstanceID = p.str("group.instance.id")
	o.SessionTimeout = p.millis("session.timeout.ms")
	o.IsolationLevel = p.choice("isolation.level")
	if v := p.choice("consumer.override.isolation.level"); v != "" {
		o.IsolationLevel = v
	}
	o.Topics, o.TopicsRegex = p.topicSelection(true)
	o.LayoutSettings = p.layout()

	o.FlushSize = p.int("flush.size")
	p.need("flush.size", "")
	o.RotateInterval = p.millis("rotate.interval.ms")
	o.RotateScheduleInterval = p.millis("rotate.schedule.interval.ms")
	o.Timezone, o.Location = p.timezone()
	if o.RotateScheduleInterval > 0 && o.Timezone == "" {
		p.missing("timezone", "rotate.schedule.interval.ms is set")
	}
	o.Locale = p.locale()

	o.StoreSettings = p.store()
	o.FormatSettings = p.format("")
	o.IndexSettings = p.index(o.LayoutSettings)
	o.SnapshotInterval = p.millis("offsets.snapshot.interval.ms")
	o.GroupsRegex = p.regex("groups.regex")
	o.NullValues = p.choice("behavior.on.null.values")
	o.StoreKeys = p.bool("store.kafka.keys")
	o.StoreHeaders = p.bool("store.kafka.headers")
	o.KeysFormat = p.choice("keys.format.class")
	if o.KeysFormat == "" {
		o.KeysFormat = FormatAvro
	}
	if v := p.str("headers.format.class"); v != "" && p.spec("format.class").isChoice(v, FormatBytes) {
		p.fail("headers.format.class", v, "cannot hold headers (an array of {key, value}); want avro, parquet or json")
	} else if o.HeadersFormat = p.choice("headers.format.class"); o.HeadersFormat == "" {
		o.HeadersFormat = FormatAvro
	}
	o.TombstonePartition = p.tombstonePartition(o.DirectoryDelim)
	if o.NullValues == NullValuesWrite && !o.StoreKeys && p.ok("store.kafka.keys") {
		p.fail("behavior.on.null.values", "write", "needs store.kafka.keys=true (a tombstone is archived as its key)")
	}
	o.Envelope = p.envelope(o)
	o.SchemaCompatibility = p.choice("schema.compatibility")
	o.ValueConverter = p.converter("value.converter")
	o.KeyConverter = p.converter("key.converter")
	const schemaful = "io.confluent.connect.avro.AvroConverter, or org.apache.kafka.connect.json.JsonConverter with value.converter.schemas.enable=true"
	if (o.Format == FormatAvro || o.Format == FormatParquet) && !o.Envelope && !o.ValueConverter.Schemaful() && p.ok("value.converter") {
		if o.ValueConverter.Class == "" {
			p.missing("value.converter", "format.class "+o.Format+" needs values with a schema: set "+schemaful)
		} else {
			p.fail("value.converter", p.str("value.converter"), "gives values without a schema, but format.class "+o.Format+" needs one; want "+schemaful)
		}
	}
	o.ErrorsTolerance = p.choice("errors.tolerance")
	o.DLQTopic = p.str("errors.deadletterqueue.topic.name")
	if o.DLQTopic != "" {
		switch {
		case !validTopicName(o.DLQTopic):
			p.fail("errors.deadletterqueue.topic.name", o.DLQTopic, "is not a Kafka topic name; want letters, digits, '.', '_' and '-' (at most 249)")
		case o.ErrorsTolerance != "all" && p.ok("errors.tolerance"):
			p.fail("errors.deadletterqueue.topic.name", o.DLQTopic, "needs errors.tolerance=all (with none the sink stops at the first bad record)")
		case slices.Contains(o.Topics, o.DLQTopic):
			p.fail("errors.deadletterqueue.topic.name", o.DLQTopic, "is one of the archived topics (topics)")
		}
	}
	o.DLQReplicationFactor = int16(p.int("errors.deadletterqueue.topic.replication.factor"))
	o.DLQContextHeaders = p.bool("errors.deadletterqueue.context.headers.enable")
	o.ErrorsLog = p.bool("errors.log.enable")

	if err := problems(p.errs); err != nil {
		return nil, err
	}
	return o, nil
}

// validLocale accepts Java-style locale tags: en, en_US, de-CH, sr_Latn_RS:
// a language of 2 to 8 letters, then parts of 1 to 8 letters or digits
// joined by '_' or '-'.
func validLocale(s string) bool {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' })
	if len(parts) == 0 || strings.Count(s, "_")+strings.Count(s, "-") != len(parts)-1 {
		return false
	}
	for i, part := range parts {
		if len(part) < 1 || len(part) > 8 || (i == 0 && len(part) < 2) {
			return false
		}
		for _, r := range part {
			letter := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
			if !letter && (i == 0 || r < '0' || r > '9') {
				return false
			}
		}
	}
	return true
}

// valueParser types setting values one key at a time and collects every
// problem. Each key is parsed by the rule of its key-table kind.
type valueParser struct {
	st   *Settings
	errs []error
	bad  map[string]bool // keys that already failed
}

func (p *valueParser) spec(key string) *keySpec {
	s := p.st.index.exact[key]
	if s == nil {
		panic("cmd: key " + key + " is not in the key table") // programming error, caught by tests
	}
	return s
}

// ok reports whether key parsed without a problem, so dependent checks do
// not pile on.
func (p *valueParser) ok(key string) bool { return !p.bad[key] }

func (p *valueParser) shown(key, value string) string {
	if p.spec(key).secret {
		return "the value"
	}
	return strconv.Quote(value)
}

// fail records "key: "value" <msg> (from origin)".
func (p *valueParser) fail(key, value, msg string) {
	if p.bad == nil {
		p.bad = map[string]bool{}
	}
	p.bad[key] = true
	p.errs = append(p.errs, &ConfigError{Key: key, Origin: p.st.origins[key], Msg: p.shown(key, value) + " " + msg})
}

// missing records that a needed key is not set, with why when not obvious.
func (p *valueParser) missing(key, why string) {
	if p.bad == nil {
		p.bad = map[string]bool{}
	}
	p.bad[key] = true
	msg := errMissing
	if why != "" {
		msg += " (" + why + ")"
	}
	p.errs = append(p.errs, &ConfigError{Key: key, Msg: msg})
}

// raw returns the value untrimmed ("" when unset).
func (p *valueParser) raw(key string) string {
	p.spec(key)
	return p.st.values[key]
}

// str returns the trimmed value ("" when unset).
func (p *valueParser) str(key string) string { return strings.TrimSpace(p.raw(key)) }

func (p *valueParser) requiredString(key string) string {
	v := p.str(key)
	if v == "" {
		if _, set := p.st.values[key]; set {
			p.fail(key, v, "is empty; want a non-empty string")
		} else {
			p.missing(key, "")
		}
	}
	return v
}

func (p *valueParser) nonEmpty(key string) string {
	v := p.str(key)
	if v == "" {
		if _, set := p.st.values[key]; set {
			p.fail(key, p.raw(key), "is empty; want a non-empty string")
		}
	}
	return v
}

// int parses an integer within the key's bounds; unset gives 0.
func (p *valueParser) int(key string) int64 {
	s := p.spec(key)
	v, set := p.st.values[key]
	if !set {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	switch {
	case err != nil:
		p.fail(key, v, "is not an integer; want "+intRange(s))
		return 0
	case n < s.min || n > s.max:
		p.fail(key, v, "is out of range; want "+intRange(s))
		return 0
	}
	return n
}

// millis parses a millisecond count; -1 and 0 mean disabled (zero).
func (p *valueParser) millis(key string) time.Duration {
	n := p.int(key)
	if n <= 0 {
		return 0
	}
	if n > int64(maxDurationMillis) {
		p.fail(key, p.st.values[key], "is out of range; want at most "+strconv.FormatInt(int64(maxDurationMillis), 10))
		return 0
	}
	return time.Duration(n) * time.Millisecond
}

const maxDurationMillis = int64(1<<63-1) / int64(time.Millisecond)

// intRange describes a key's integer bounds: "an integer > 0",
// "an integer >= 0", "an integer from -1 to 9".
func intRange(s *keySpec) string {
	switch {
	case s.max == maxInt64 && s.min == 1:
		return "an integer > 0"
	case s.max == maxInt64:
		return fmt.Sprintf("an integer >= %d", s.min)
	default:
		return fmt.Sprintf("an integer from %d to %d", s.min, s.max)
	}
}

func (p *valueParser) bool(key string) bool {
	v := p.str(key)
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false", "":
		return false
	}
	p.fail(key, v, "is not a boolean; want true or false")
	return false
}

// choice returns the canonical name of the key's value, or "" when unset
// or invalid. Values are matched ignoring case, by name or class name.
func (p *valueParser) choice(key string) string {
	s := p.spec(key)
	v := p.str(key)
	if v == "" {
		return ""
	}
	c, ok := s.matchChoice(v)
	if !ok {
		p.fail(key, v, "is not allowed; want one of "+choiceList(s, false))
		return ""
	}
	if c.unsupported {
		p.fail(key, v, "is not supported yet by this version; want one of "+choiceList(s, true))
		return ""
	}
	return c.name
}

// choiceList lists a choice key's names; supportedOnly leaves out the
// recognised but unsupported ones.
func choiceList(s *keySpec, supportedOnly bool) string {
	var names []string
	for _, c := range s.choices {
		if supportedOnly && c.unsupported {
			continue
		}
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

// list splits a comma-separated value, trimming items and dropping empty
// ones, as Kafka's LIST type does.
func (p *valueParser) list(key string) []string {
	var out []string
	for _, item := range strings.Split(p.raw(key), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func (p *valueParser) hostPorts(key string) []string {
	v, set := p.st.values[key]
	if !set || strings.TrimSpace(v) == "" {
		p.missing(key, "")
		return nil
	}
	items := p.list(key)
	for _, hp := range items {
		host, port, err := net.SplitHostPort(hp)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			p.fail(key, v, fmt.Sprintf("has %q, which is not host:port; want comma-separated host:port pairs", hp))
			return nil
		}
	}
	return items
}

// validTopicName applies Kafka's rule for topic names: 1 to 249 of
// letters, digits, '.', '_' and '-', and not "." or "..".
func validTopicName(t string) bool {
	if t == "" || len(t) > 249 || t == "." || t == ".." {
		return false
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func (p *valueParser) topics(key string) []string {
	items := p.list(key)
	for _, t := range items {
		if !validTopicName(t) {
			p.fail(key, p.st.values[key], fmt.Sprintf("has %q, which is not a Kafka topic name; want letters, digits, '.', '_' and '-' (at most 249)", t))
			return nil
		}
	}
	return items
}

func (p *valueParser) regex(key string) string {
	v := p.str(key)
	if v == "" {
		return ""
	}
	if _, err := regexp.Compile(`^(?:` + v + `)$`); err != nil {
		p.fail(key, v, fmt.Sprintf("does not compile (%v); want a regular expression in RE2 syntax", err))
		return ""
	}
	return v
}

// endpoint normalises store.url: https:// is added when there is no scheme.
func (p *valueParser) endpoint(key string) string {
	v := p.str(key)
	if v == "" {
		return ""
	}
	full := v
	if !strings.Contains(v, "://") {
		full = "https://" + v
	}
	u, err := url.Parse(full)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		p.fail(key, v, "is not an endpoint URL; want http(s)://host[:port]")
		return ""
	}
	return full
}
